import Foundation
import Shared

extension AdvertisingConfig {
    /// Every problem, each prefixed with its path (`regions[1].uuid: not a UUID`). Empty means valid.
    public func validate() -> [String] {
        var out: [String] = []
        var names = Set<String>()
        for (i, r) in regions.enumerated() {
            let p = "regions[\(i)]"
            if r.name.trimmingCharacters(in: .whitespaces).isEmpty { out.append("\(p).name: empty") }
            else if !names.insert(r.name).inserted { out.append("\(p).name: '\(r.name)' used twice") }
            switch (r.uuid, r.namespace) {
            case (nil, nil): out.append("\(p): give uuid (iBeacon/AltBeacon) or namespace (Eddystone)")
            case (.some, .some): out.append("\(p): give uuid or namespace, not both")
            default: break
            }
            if let u = r.uuid, UUID(uuidString: u) == nil { out.append("\(p).uuid: not a UUID: '\(u)'") }
            if let m = r.major, !(0...0xFFFF).contains(m) { out.append("\(p).major: \(m) is outside 0...65535") }
            if let m = r.minor, !(0...0xFFFF).contains(m) { out.append("\(p).minor: \(m) is outside 0...65535") }
            if r.major != nil, r.uuid == nil { out.append("\(p).major: needs uuid") }
            if r.minor != nil, r.major == nil { out.append("\(p).minor: needs major") }
            if let ns = r.namespace, Self.hexBytes(ns, 10) == nil { out.append("\(p).namespace: not 20 hex digits: '\(ns)'") }
            if let inst = r.instance {
                if Self.hexBytes(inst, 6) == nil { out.append("\(p).instance: not 12 hex digits: '\(inst)'") }
                if r.namespace == nil { out.append("\(p).instance: needs namespace") }
            }
        }
        var ids = Set<String>()
        for (i, k) in knownBeacons.enumerated() {
            let p = "known_beacons[\(i)]"
            if let problem = BeaconID.problem(with: k.id) {
                out.append("\(p).id: \(problem)")
            } else if !ids.insert(k.id).inserted {
                out.append("\(p).id: '\(k.id)' listed twice")
            }
            if let pw = k.power, !(-127...(-1)).contains(pw) { out.append("\(p).power: \(pw) dBm is not a plausible 1 m RSSI (-127...-1)") }
        }
        var irkNames = Set<String>()
        var irkKeys: [[UInt8]: Int] = [:]
        for (i, k) in irks.enumerated() {
            let p = "irks[\(i)]"
            // The value of an `irks` entry that is not valid is not echoed: a key written in the
            // wrong field (name and key swapped) would reach the log.
            if BeaconID.irk(k.name) == nil { out.append("\(p).name: must be lowercase letters, digits, '-', '_' or '.' (not shown: irks entries hold keys)") }
            else if !irkNames.insert(k.name.lowercased()).inserted { out.append("\(p).name: used twice (not shown: irks entries hold keys)") }
            if let key = Self.hexBytes(k.key.revealed, 16) {
                // One device under two names: the first resolves every address, the second never.
                let ordered = k.byteOrder == "lsb_first" ? Array(key.reversed()) : key
                if let first = irkKeys[ordered] { out.append("\(p).key: the same key as irks[\(first)]") }
                else { irkKeys[ordered] = i }
            } else {
                out.append("\(p).key: not 32 hex digits")  // never echo a key
            }
            if let o = k.byteOrder, o != "msb_first", o != "lsb_first" {
                out.append("\(p).byte_order: must be msb_first or lsb_first (not shown: irks entries hold keys)")
            }
        }
        for (i, b) in fingerprints.builtins.enumerated() where b != "all" && !FingerprintConfig.builtinNames.contains(b) {
            out.append("fingerprints.builtins[\(i)]: unknown '\(b)' (known: all, \(FingerprintConfig.builtinNames.joined(separator: ", ")))")
        }
        var ruleNames = Set<String>()
        for (i, r) in fingerprints.rules.enumerated() {
            out += Self.validate(rule: r, path: "fingerprints.rules[\(i)]", names: &ruleNames)
        }
        for (i, c) in ibeaconCompanyIds.enumerated() where !(0...0xFFFF).contains(c.value ?? -1) {
            out.append("ibeacon_company_ids[\(i)]: '\(c)' is not a company id 0...0xFFFF")
        }
        // Any address a stranger advertises takes an entry: the table must stay small.
        if !(1...1_000_000).contains(irkCacheSize) { out.append("irk_cache_size: must be 1 ... 1000000") }
        return out
    }

    private static func validate(rule r: FingerprintRuleConfig, path p: String, names: inout Set<String>) -> [String] {
        var out: [String] = []
        if BeaconID.fingerprint(r.name, "x") == nil || r.name != r.name.lowercased() || r.name.contains(":") {
            out.append("\(p).name: '\(r.name)' must be lowercase letters, digits, '-', '_' or '.'")
        } else if !names.insert(r.name).inserted {
            out.append("\(p).name: '\(r.name)' used twice")
        } else if let longest = Self.longestValue(r), BeaconID.fingerprint(r.name, longest) == nil {
            // The ids it makes, fp:<name>-<value>, must fit an id's 200 bytes, or the rule never matches.
            let bytes = "fp:\(r.name)-\(longest)".utf8.count
            out.append("\(p).name: its ids would be up to \(bytes) bytes, over an id's 200: shorten the name")
        }
        if let c = r.companyId, !(0...0xFFFF).contains(c.value ?? -1) { out.append("\(p).company_id: '\(c)' is not 0...0xFFFF") }
        if let m = r.manufacturerPrefix {
            if Hex.decode(m) == nil { out.append("\(p).manufacturer_prefix: not hex") }
            if r.companyId == nil { out.append("\(p).manufacturer_prefix: needs company_id") }
        }
        if let s = r.serviceUuid, !FingerprintConfig.isServiceUUID(s) { out.append("\(p).service_uuid: not a UUID: '\(s)'") }
        if let s = r.serviceDataPrefix {
            if Hex.decode(s) == nil { out.append("\(p).service_data_prefix: not hex") }
            if r.serviceUuid == nil { out.append("\(p).service_data_prefix: needs service_uuid") }
        }
        if r.companyId == nil && r.serviceUuid == nil && r.localName == nil && r.localNamePrefix == nil {
            out.append("\(p): needs at least one of company_id, service_uuid, local_name, local_name_prefix")
        }
        switch r.id {
        case "address", "local_name": break
        case "constant":
            if let v = r.value, BeaconID.fingerprint("x", v) != nil, v == v.lowercased() {} else {
                out.append("\(p).value: id 'constant' needs a lowercase value of letters, digits, '-', '_' or '.'")
            }
        case "manufacturer_bytes", "service_data_bytes":
            if r.id == "manufacturer_bytes", r.companyId == nil { out.append("\(p).id: manufacturer_bytes needs company_id") }
            if r.id == "service_data_bytes", r.serviceUuid == nil { out.append("\(p).id: service_data_bytes needs service_uuid") }
            // An advertisement carries at most 1650 bytes (extended advertising, Core 5.4 Vol 4 Part E §7.7.65.13).
            if !(0..<1650).contains(r.offset ?? -1) { out.append("\(p).offset: needs a byte offset 0...1649") }
            if !(1...32).contains(r.length ?? 0) { out.append("\(p).length: needs a byte count 1...32") }
        default:
            out.append("\(p).id: '\(r.id)' is not address, local_name, constant, manufacturer_bytes or service_data_bytes")
        }
        // Keys the chosen id does not read: left there, the rule identifies by something else.
        let bytesID = r.id == "manufacturer_bytes" || r.id == "service_data_bytes"
        if r.offset != nil, !bytesID { out.append("\(p).offset: only read with id manufacturer_bytes or service_data_bytes (id is '\(r.id)')") }
        if r.length != nil, !bytesID { out.append("\(p).length: only read with id manufacturer_bytes or service_data_bytes (id is '\(r.id)')") }
        if r.value != nil, r.id != "constant" { out.append("\(p).value: only read with id constant (id is '\(r.id)')") }
        return out
    }

    /// The longest value a rule's ids carry: 12 hex digits of an address, 64 characters of a
    /// name, the constant, or two hex digits a byte; nil when the rule is wrong anyway.
    private static func longestValue(_ r: FingerprintRuleConfig) -> String? {
        switch r.id {
        case "address": String(repeating: "0", count: 12)
        case "local_name": String(repeating: "_", count: 64)
        case "constant": r.value
        case "manufacturer_bytes", "service_data_bytes": (1...32).contains(r.length ?? 0) ? String(repeating: "0", count: 2 * r.length!) : nil
        default: nil
        }
    }
}
