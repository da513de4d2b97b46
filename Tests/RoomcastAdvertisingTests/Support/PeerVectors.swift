import Foundation
import Shared
import TestSupport
@testable import RoomcastAdvertising

/// Checks the peer projects' vectors (Tests/TestSupport/Vectors) against our decoders.
/// Each `check…` maps one vector to the format it exercises and compares what we decode
/// with what the peer's test asserts, in our units.
enum PeerVectors {
    static let decoder = BeaconDecoder()

    static func scan(_ ad: [UInt8]) -> (AdvertisingData, BeaconScan) {
        let data = AdvertisingData.decode(ad)
        return (data, decoder.decode(data))
    }

    static func hexBytes(_ s: String?) -> [UInt8] { Hex.decode(s ?? "") ?? [] }

    // MARK: bluetooth-data-tools (generic GAP decode)

    static func gap(_ v: TestVectors.Vector) -> VectorResult {
        let parts = (v.json["hex_parts"] as? [String]) ?? [v.hex ?? ""]
        var complete: String?, short: String?, tx: Int?
        var uuids: [String] = []
        var sd: [String: String] = [:], mfg: [String: String] = [:]
        var issues: [ADIssue] = []
        for p in parts {
            // The peer parses advertising data and scan response separately and merges them.
            let ad = AdvertisingData.decode(hexBytes(p))
            complete = ad.completeName ?? complete
            short = ad.shortName ?? short
            uuids += ad.serviceUUIDs.map(\.description)
            for s in ad.serviceData { sd[s.uuid.description] = Hex.encode(s.data) }
            for m in ad.manufacturerData { mfg[String(m.companyID)] = Hex.encode(m.data) }
            tx = ad.txPowerLevel.map(Int.init) ?? tx
            issues += ad.issues
        }
        let e = J.dict(v.expect) ?? [:]
        var c = Checker()
        if e.keys.contains("local_name") { c.equal(complete ?? short, J.string(e["local_name"]), "local_name") }
        if let want = e["service_uuids"] as? [String] { c.equal(uuids, want, "service_uuids") }
        if let want = J.dict(e["service_data"]) { c.equal(sd, want.compactMapValues(J.hex), "service_data") }
        if let want = J.dict(e["manufacturer_data"]) { c.equal(mfg, want.compactMapValues(J.hex), "manufacturer_data") }
        if e.keys.contains("tx_power") { c.equal(tx, J.int(e["tx_power"]), "tx_power") }
        for raw in (v.json["expect_raw"] as? [String]) ?? [] where raw.contains("Invalid BLE GAP AD structure") {
            c.expect(!issues.isEmpty, "expected an issue to be reported")
            if let r = raw.range(of: "at offset "), let n = Int(raw[r.upperBound...].prefix(while: \.isNumber)) {
                c.expect(issues.contains { $0.offset == n }, "expected an issue at offset \(n), got \(issues)")
            }
        }
        return VectorResult(file: "bluetooth_data_tools_gap", source: v.source, format: "gap", outcome: c.outcome)
    }

    // MARK: beacontools

    static let beacontoolsFrames: [String: String] = [
        "EddystoneUIDFrame": "eddystone-uid", "EddystoneURLFrame": "eddystone-url", "EddystoneTLMFrame": "eddystone-tlm",
        "EddystoneEncryptedTLMFrame": "eddystone-etlm", "EddystoneEIDFrame": "eddystone-eid",
        "IBeaconAdvertisement": "ibeacon", "EstimoteTelemetryFrameA": "estimote-telemetry-a",
        "EstimoteTelemetryFrameB": "estimote-telemetry-b", "EstimoteNearable": "estimote-nearable",
        "ExposureNotificationFrame": "exposure-notification", "CJMonitorAdvertisement": "cj-monitor",
    ]

    /// Our name for a beacon in beacontools' terms (Estimote telemetry split by sub-frame).
    static func btName(_ b: Beacon) -> String {
        if case .estimoteTelemetry(let t) = b {
            if case .a = t.subframe { return "estimote-telemetry-a" } else { return "estimote-telemetry-b" }
        }
        return b.format
    }

    static func format(forPeerFrame f: String?) -> String {
        guard let f, let ours = beacontoolsFrames[f] else { return "rejection" }
        return ours.hasPrefix("estimote-telemetry") ? "estimote-telemetry" : ours.hasPrefix("eddystone") ? "eddystone" : ours
    }

    static func beacontools(_ v: TestVectors.Vector) -> VectorResult {
        v.hexLevel == "ad_structures" ? beacontoolsAD(v) : beacontoolsHCI(v)
    }

    static func beacontoolsAD(_ v: TestVectors.Vector) -> VectorResult {
        let e = J.dict(v.expect) ?? [:]
        let (_, s) = scan(hexBytes(v.hex))
        var c = Checker()
        let frame = J.string(e["frame_type"])
        let fmt = format(forPeerFrame: frame)
        guard let frame else {
            c.expect(s.beacons.isEmpty, "expected no frame, got \(s.beacons.map(\.format))")
            return VectorResult(file: "beacontools", source: v.source, format: "rejection", outcome: c.outcome)
        }
        guard let b = s.beacons.first(where: { btName($0) == beacontoolsFrames[frame] }) else {
            c.expect(false, "no \(frame); got \(s.beacons.map(\.format)), rejections \(s.rejections)")
            return VectorResult(file: "beacontools", source: v.source, format: fmt, outcome: c.outcome)
        }
        compare(b, properties: e, &c)
        for raw in (v.json["expect_raw"] as? [String]) ?? [] where raw.hasPrefix("abs(frame.temperature - ") {
            // e.g. "abs(frame.temperature - 71) < 0.1"
            let want = Double(raw.dropFirst("abs(frame.temperature - ".count).prefix(while: { $0 != ")" }))
            if case .eddystone(.tlm(let t)) = b { c.close(t.temperature, want, "temperature", tolerance: 0.1) }
        }
        return VectorResult(file: "beacontools", source: v.source, format: fmt, outcome: c.outcome)
    }

    /// Compares beacontools' frame attributes with ours.
    static func compare(_ b: Beacon, properties e: [String: Any], _ c: inout Checker) {
        switch b {
        case .eddystone(.uid(let tx, let ns, let inst)):
            if let w = J.string(e["namespace"]) { c.equal(Hex.encode(ns), w, "namespace") }
            if let w = J.string(e["instance"]) { c.equal(Hex.encode(inst), w, "instance") }
            if let w = J.int(e["tx_power"]) { c.equal(Int(tx), w, "tx_power") }
        case .eddystone(.url(let tx, let url, _)):
            c.equal(url, J.string(e["url"]), "url")
            if let w = J.int(e["tx_power"]) { c.equal(Int(tx), w, "tx_power") }
        case .eddystone(.tlm(let t)):
            if let w = J.int(e["voltage"]) { c.equal(Int(t.batteryMillivolts), w, "voltage") }
            if let w = J.double(e["temperature"]) { c.close(t.temperature, w, "temperature") }
            if let w = J.int(e["advertising_count"]) { c.equal(Int(t.advertisementCount), w, "advertising_count") }
            // beacontools names the raw 0.1 s counter "seconds_since_boot"; we report seconds.
            if let w = J.int(e["seconds_since_boot"]) { c.close(t.uptime * 10, Double(w), "seconds_since_boot (0.1 s units)") }
        case .eddystone(.encryptedTLM(let data, let salt, let mic)):
            c.equal(Hex.encode(data), J.hex(e["encrypted_data"]), "encrypted_data")
            c.equal(Int(salt), J.int(e["salt"]), "salt")
            c.equal(Int(mic), J.int(e["mic"]), "mic")
        case .eddystone(.eid(let tx, let eid)):
            c.equal(Hex.encode(eid), J.hex(e["eid"]), "eid")
            if let w = J.int(e["tx_power"]) { c.equal(Int(tx), w, "tx_power") }
        case .iBeacon(let i):
            c.equal(i.uuid.uuidString.lowercased(), J.string(e["uuid"]), "uuid")
            if let w = J.int(e["major"]) { c.equal(Int(i.major), w, "major") }
            if let w = J.int(e["minor"]) { c.equal(Int(i.minor), w, "minor") }
            if let w = J.int(e["tx_power"]) { c.equal(Int(i.measuredPower), w, "tx_power") }
        case .estimoteTelemetry(let t):
            c.equal(Hex.encode(t.identifier), J.string(e["identifier"]), "identifier")
            if let w = J.int(e["protocol_version"]) { c.equal(Int(t.protocolVersion), w, "protocol_version") }
            switch t.subframe {
            case .a(let a):
                if let w = J.doubles(e["acceleration"]) {
                    c.expect(zip(a.acceleration, w).allSatisfy { abs($0 - $1) < 1e-9 } && w.count == 3,
                             "acceleration: got \(a.acceleration), expected \(w)")
                }
                if e.keys.contains("is_moving") { c.equal(a.isMoving, J.bool(e["is_moving"]), "is_moving") }
                if let w = J.double(e["current_motion_state"]) { c.close(a.currentMotionSeconds, w, "current_motion_state") }
                if let w = J.double(e["previous_motion_state"]) { c.close(a.previousMotionSeconds, w, "previous_motion_state") }
                if let w = (e["gpio_states"] as? [Any])?.compactMap(J.int) { c.equal(a.gpio, w.map { $0 != 0 }, "gpio_states") }
                if e.keys.contains("has_firmware_error") { c.equal(a.firmwareError, J.bool(e["has_firmware_error"]), "has_firmware_error") }
                if e.keys.contains("has_clock_error") { c.equal(a.clockError, J.bool(e["has_clock_error"]), "has_clock_error") }
                if e.keys.contains("pressure") { c.close(a.pressure, J.double(e["pressure"]), "pressure") }
            case .b(let b):
                if e.keys.contains("magnetic_field") {
                    let w = J.isNull(e["magnetic_field"]) ? nil : J.doubles(e["magnetic_field"])
                    c.equal(b.magneticField, w, "magnetic_field")
                }
                if e.keys.contains("ambient_light") { c.close(b.ambientLight, J.double(e["ambient_light"]), "ambient_light") }
                if let w = J.double(e["uptime"]) { c.close(b.uptimeSeconds, w, "uptime") }
                if let w = J.double(e["temperature"]) { c.close(b.temperature, w, "temperature") }
                if e.keys.contains("battery_level") { c.equal(b.batteryLevel, J.int(e["battery_level"]), "battery_level") }
                if e.keys.contains("has_firmware_error") { c.equal(b.firmwareError, J.bool(e["has_firmware_error"]), "has_firmware_error") }
                if e.keys.contains("has_clock_error") { c.equal(b.clockError, J.bool(e["has_clock_error"]), "has_clock_error") }
            }
        case .estimoteNearable(let n):
            c.equal(Hex.encode(n.identifier), J.string(e["identifier"]), "identifier")
            if let w = J.double(e["temperature"]) { c.close(n.temperature, w, "temperature") }
            if let w = J.int(e["firmware_version"]) { c.equal(Int(n.firmwareVersion), w, "firmware_version") }
            if let w = J.int(e["hardware_version"]) { c.equal(Int(n.hardwareVersion), w, "hardware_version") }
            if e.keys.contains("is_moving") { c.equal(n.isMoving, J.bool(e["is_moving"]), "is_moving") }
        case .exposureNotification(let x):
            if let w = J.string(e["identifier"]) { c.equal(Hex.encode(x.rollingProximityIdentifier), w, "identifier") }
            if let w = J.hex(e["encrypted_metadata"]) { c.equal(Hex.encode(x.encryptedMetadata), w, "encrypted_metadata") }
        default:
            break
        }
    }

    static func beacontoolsHCI(_ v: TestVectors.Vector) -> VectorResult {
        let e = J.dict(v.expect) ?? [:]
        let consistent = J.bool(J.dict(v.json["hci_check"])?["consistent"]) ?? true
        let filters = (v.json["scanner_filters"] as? [String]) ?? []
        let frame = J.string(e["frame_type"])
        var c = Checker()
        let fmt = frame == nil ? "rejection" : format(forPeerFrame: frame)
        guard let r = ReportExtractor.extract(hexBytes(v.hex), toEnd: !consistent) else {
            c.equal(0, J.int(e["callback_count"]) ?? 0, "callback_count")
            return VectorResult(file: "beacontools", source: v.source, format: fmt, outcome: c.outcome)
        }
        let (_, s) = scan(r.ad)
        let passing = s.beacons.filter { b in beacontoolsFilters(filters, b, r) }
        c.equal(passing.count, J.int(e["callback_count"]) ?? 1, "callback_count")
        if let frame, let b = passing.first {
            c.equal(btName(b), beacontoolsFrames[frame], "frame_type")
            if let w = J.string(e["bt_addr"]) { c.equal(r.address.description, w, "bt_addr") }
            if let w = J.int(e["rssi"]) { c.equal(r.rssi, w, "rssi") }
            if let props = J.dict(e["properties"]) { compare(b, properties: props, &c) }
        }
        return VectorResult(file: "beacontools", source: v.source, format: fmt, outcome: c.outcome)
    }

    /// beacontools' scanner filters, applied to our decoded frames: packet filters pick frame
    /// types, device filters (OR-ed) compare decoded fields.
    static func beacontoolsFilters(_ filters: [String], _ b: Beacon, _ r: ExtractedReport) -> Bool {
        var packetTypes: Set<String>?
        var deviceMatches: [Bool] = []
        for f in filters {
            if f.hasPrefix("packet_filter=") {
                let names = f.dropFirst("packet_filter=".count).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                    .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                packetTypes = Set(names.compactMap { beacontoolsFrames[$0] })
            } else if f.hasPrefix("device_filter=") {
                deviceMatches.append(deviceFilter(String(f.dropFirst("device_filter=".count)), b, r))
            }
        }
        if let packetTypes, !packetTypes.contains(btName(b)) { return false }
        return deviceMatches.isEmpty || deviceMatches.contains(true)
    }

    static func deviceFilter(_ f: String, _ b: Beacon, _ r: ExtractedReport) -> Bool {
        guard let open = f.firstIndex(of: "("), f.hasSuffix(")") else { return false }
        let name = String(f[..<open])
        let args = f[f.index(after: open)..<f.index(before: f.endIndex)].split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        var kv: [String: String] = [:]
        for a in args {
            let parts = a.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "' ")) }
            if parts.count == 2 { kv[parts[0]] = parts[1] } else { kv["_"] = parts.first }
        }
        switch (name, b) {
        case let ("EddystoneFilter", .eddystone(.uid(_, ns, inst))):
            return kv["namespace"].map { $0 == Hex.encode(ns) } ?? true && kv["instance"].map { $0 == Hex.encode(inst) } ?? true
        case let ("IBeaconFilter", .iBeacon(i)):
            return kv["major"].map { Int($0) == Int(i.major) } ?? true && kv["minor"].map { Int($0) == Int(i.minor) } ?? true
                && kv["uuid"].map { $0 == i.uuid.uuidString.lowercased() } ?? true
        case ("BtAddrFilter", _):
            return kv["_"] == r.address.description
        case let ("EstimoteFilter", .estimoteTelemetry(t)):
            return kv["protocol_version"].map { Int($0) == Int(t.protocolVersion) } ?? true
                && kv["identifier"].map { $0 == Hex.encode(t.identifier) } ?? true
        case let ("ExposureNotificationFilter", .exposureNotification(x)):
            return kv["identifier"].map { $0 == Hex.encode(x.rollingProximityIdentifier) } ?? true
        default:
            return false
        }
    }

    // MARK: ble_monitor

    static func bleMonitor(_ v: TestVectors.Vector) -> VectorResult {
        let e = J.dict(v.expect) ?? [:]
        let sensor = J.dict(e["sensor_msg"])
        let tracker = J.dict(e["tracker_msg"])
        let msg = sensor ?? tracker
        var c = Checker()
        guard let r = ReportExtractor.extract(hexBytes(v.hex)) else {
            return VectorResult(file: "ble_monitor", source: v.source, format: "hci-report", outcome: .mismatch(["report not extracted"]))
        }
        let (ad, s) = scan(r.ad)
        if let msg {
            if let mac = J.string(msg["mac"]) { c.equal(Hex.encode(r.address.bytes).uppercased(), mac, "mac") }
            if let rssi = J.int(msg["rssi"]) { c.equal(r.rssi, rssi, "rssi") }
        }
        let type = J.string(sensor?["type"]) ?? (tracker?["uuid"] != nil ? "iBeacon" : nil)
        var fmt = "hci-report"
        if type == "iBeacon" || type == "AltBeacon", let msg {
            fmt = type == "iBeacon" ? "ibeacon" : "altbeacon"
            let uuid = J.string(msg["uuid"])
            let b = s.beacons.first { $0.format == fmt }
            switch b {
            case .iBeacon(let i)?:
                c.equal(Hex.encode(withUnsafeBytes(of: i.uuid.uuid) { Array($0) }), uuid, "uuid")
                c.equal(Int(i.major), J.int(msg["major"]), "major")
                c.equal(Int(i.minor), J.int(msg["minor"]), "minor")
                c.equal(Int(i.measuredPower), J.int(msg["measured power"]), "measured power")
            case .altBeacon(let a)?:
                c.equal(Hex.encode(a.id1), uuid, "uuid")
                c.equal(Int(a.id2), J.int(msg["major"]), "major")
                c.equal(Int(a.id3), J.int(msg["minor"]), "minor")
                c.equal(Int(a.referenceRSSI), J.int(msg["measured power"]), "measured power")
            default:
                c.expect(false, "no \(fmt); got \(s.beacons.map(\.format))")
            }
        } else if sensor == nil, tracker == nil, e.keys.contains("sensor_msg"),
                  ad.manufacturerData.contains(where: { $0.companyID == BeaconDecoder.appleCompanyID }) {
            // An Apple frame the peer refuses: it must not become a beacon.
            fmt = "rejection"
            c.expect(s.beacons.isEmpty, "expected no beacon, got \(s.beacons.map(\.format))")
            c.expect(!s.rejections.isEmpty, "expected a rejection")
        } else if let mac = J.string(msg?["mac"]) {
            // A sensor: its readings are another decoder's business. What we owe it is a clean AD
            // walk, and a built-in fingerprint (if one fires) that names the same device.
            for f in BuiltInFingerprint.allCases {
                guard let id = f.match(ad, beacons: s.beacons) else { continue }
                fmt = "fingerprint:\(f.rawValue)"
                c.equal(id.rawValue, "fp:\(f.rawValue)-\(mac.lowercased())", "fingerprint")
            }
        } else {
            return VectorResult(file: "ble_monitor", source: v.source, format: "hci-report",
                                outcome: .notRelevant("sensor payload the peer decodes to nothing"))
        }
        // The peer asserts nothing about AD validity for sensors (some real ones send malformed
        // structures); for beacons a clean walk is part of the contract.
        if fmt != "hci-report" && !fmt.hasPrefix("fingerprint") {
            c.expect(ad.issues.isEmpty, "AD issues: \(ad.issues.map(\.description))")
        }
        return VectorResult(file: "ble_monitor", source: v.source, format: fmt, outcome: c.outcome)
    }

    // MARK: Android Beacon Library

    static func android(_ v: TestVectors.Vector) -> VectorResult {
        let e = J.dict(v.expect) ?? [:]
        var c = Checker()
        switch J.string(v.json["kind"]) {
        case "eddystone_url_decode"?:
            c.equal(EddystoneURLCodec.decode(hexBytes(v.hex)), J.string(e["url"]), "url")
            return VectorResult(file: "android_beacon_library", source: v.source, format: "eddystone-url-codec", outcome: c.outcome)
        case "eddystone_url_encode"?:
            let input = J.string(v.json["input_url"]) ?? ""
            c.equal(EddystoneURLCodec.encode(input).map(Hex.encode), J.string(e["compressed_hex"]), "compress")
            // Decoding gives the URL back up to the case of scheme and host.
            let decoded = EddystoneURLCodec.decode(hexBytes(v.hex))
            c.expect(decoded.map { lowerSchemeHost($0) == lowerSchemeHost(input) } ?? false,
                     "decode: got \(decoded ?? "nil"), expected \(input)")
            return VectorResult(file: "android_beacon_library", source: v.source, format: "eddystone-url-codec", outcome: c.outcome)
        default:
            break
        }
        let (ad, s) = scan(hexBytes(v.hex))
        let layout = J.string(v.json["beacon_layout"]) ?? ""
        let fmt: String
        if layout.contains("=1234") || layout.contains("0xaabb") || layout.contains("i:4-9") { fmt = "custom-layout" }
        else if layout.contains("feaa") || layout.contains("EDDYSTONE") { fmt = "eddystone" }
        else if layout.contains("fed8") { fmt = "uribeacon" }
        else { fmt = "altbeacon" }
        let b = s.beacons.first
        if e.keys.contains("beacon") {
            if J.isNull(e["beacon"]) { c.expect(s.beacons.isEmpty, "expected no beacon, got \(s.beacons.map(\.format))") }
            else { c.expect(b != nil, "expected a beacon") }
        }
        if let id1 = J.string(e["id1"]) {
            switch b {
            case .altBeacon(let a)?:
                c.equal(BeaconID.uuidString(a.id1), id1, "id1")
                c.equal(String(a.id2), J.string(e["id2"]), "id2")
                c.equal(String(a.id3), J.string(e["id3"]), "id3")
            default:
                c.expect(false, "no AltBeacon for id1 \(id1); got \(s.beacons.map(\.format))")
            }
        }
        if let w = J.int(e["txPower"]) { c.equal(b?.referencePower, w, "txPower (1 m)") }
        if let w = J.int(e["manufacturer"]) {
            if case .altBeacon(let a)? = b { c.equal(Int(a.companyID), w, "manufacturer") } else { c.expect(false, "no manufacturer") }
        }
        if let w = J.string(e["manufacturer_hex"]) {
            if case .altBeacon(let a)? = b { c.equal(String(format: "%04x", a.companyID), w, "manufacturer_hex") }
            else { c.expect(false, "no manufacturer") }
        }
        if let w = J.int(e["mfgReserved"]) {
            if case .altBeacon(let a)? = b { c.equal(a.reserved.map(Int.init), w, "mfgReserved") } else { c.expect(false, "no AltBeacon") }
        }
        if let w = J.int(e["dataFields[0]"]) {
            if case .altBeacon(let a)? = b { c.equal(Int(a.reserved ?? 0), w, "dataFields[0]") } else { c.expect(false, "no AltBeacon") }
        }
        if let w = J.int(e["dataFields.size"]) {
            if case .altBeacon(let a)? = b { c.equal(a.reserved == nil ? 0 : 1, w, "dataFields.size") } else { c.expect(false, "no AltBeacon") }
        }
        if let w = J.int(e["id1_length_bytes"]) {
            // i:4-20v — the scheme byte and the encoded URL, as far as the AD structure goes.
            if case .eddystone(.url(_, _, let enc))? = b { c.equal(enc.count, w, "id1_length_bytes") }
            else if case .uriBeacon(_, let u)? = b { c.equal(EddystoneURLCodec.encode(u)?.count, w, "id1_length_bytes") }
            else { c.expect(false, "no Eddystone-URL; got \(s.beacons.map(\.format))") }
        }
        if let w = J.string(e["url"]) {
            if case .uriBeacon(_, let u)? = b { c.equal(u, w, "url") } else { c.expect(false, "no UriBeacon") }
        }
        if e.keys.contains("reencoded_hex_equals_input_from_offset_11") {
            c.expect(s.beacons.contains { if case .eddystone(.tlm) = $0 { true } else { false } },
                     "no TLM; AD issues \(ad.issues.map(\.description))")
        }
        return VectorResult(file: "android_beacon_library", source: v.source, format: fmt, outcome: c.outcome)
    }

    static func lowerSchemeHost(_ url: String) -> String {
        guard let r = url.range(of: "://") else { return url.lowercased() }
        let rest = url[r.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        return (url[..<r.upperBound] + rest[..<slash]).lowercased() + rest[slash...]
    }

    // MARK: ibeacon-ble

    static func iBeaconBLE(_ v: TestVectors.Vector) -> VectorResult {
        if J.string(v.json["kind"]) == "distance_model" {
            return VectorResult(file: "ibeacon_ble", source: v.source, format: "distance",
                                outcome: .notRelevant("distance model: another engineer's module"))
        }
        let e = J.dict(v.expect) ?? [:]
        let company = UInt16(J.int(v.json["company_id"]) ?? 0)
        var data = AdvertisingData()
        let payload = hexBytes(v.hex)
        data.manufacturerData = [ManufacturerData(companyID: company, data: payload[...])]
        let s = decoder.decode(data)
        var c = Checker()
        let parsed = e["parsed"]
        if J.isNull(parsed) {
            c.expect(s.beacons.isEmpty, "expected no iBeacon, got \(s.beacons.map(\.format))")
            return VectorResult(file: "ibeacon_ble", source: v.source, format: "rejection", outcome: c.outcome)
        }
        guard case .iBeacon(let i)? = s.beacons.first else {
            c.expect(false, "no iBeacon; rejections \(s.rejections)")
            return VectorResult(file: "ibeacon_ble", source: v.source, format: "ibeacon", outcome: c.outcome)
        }
        if let w = J.string(e["uuid"]) { c.equal(i.uuid.uuidString.lowercased(), w, "uuid") }
        if let w = J.int(e["major"]) { c.equal(Int(i.major), w, "major") }
        if let w = J.int(e["minor"]) { c.equal(Int(i.minor), w, "minor") }
        if let w = J.int(e["power"]) { c.equal(Int(i.measuredPower), w, "power") }
        // The peer gives no distance for a measured power of 0; we give no reference power.
        if e.keys.contains("distance"), J.isNull(e["distance"]) { c.equal(s.beacons.first?.referencePower, nil, "power for distance") }
        return VectorResult(file: "ibeacon_ble", source: v.source, format: "ibeacon", outcome: c.outcome)
    }

    // MARK: aioblescan

    static func aioblescan(_ v: TestVectors.Vector) -> VectorResult {
        // {"EddyStone().decode": {...}}: the peer's decoder name, then its output.
        let outer = J.dict(v.expect) ?? [:]
        let e = outer.keys.sorted().first.flatMap { J.dict(outer[$0]) } ?? [:]
        var c = Checker()
        guard let r = ReportExtractor.extract(hexBytes(v.hex)) else {
            return VectorResult(file: "aioblescan", source: v.source, format: "hci-report", outcome: .mismatch(["not extracted"]))
        }
        c.equal(r.address.description, J.string(e["mac address"]), "mac address")
        c.equal(r.rssi, J.int(e["rssi"]), "rssi")
        let (ad, s) = scan(r.ad)
        var fmt = "eddystone"
        switch s.beacons.first {
        case .eddystone(.url(let tx, let url, _))?:
            c.equal(Int(tx), J.int(e["tx_power"]), "tx_power")
            c.equal(url, J.string(e["url"]), "url")
        case .eddystone(.uid(let tx, let ns, let inst))?:
            c.equal(Int(tx), J.int(e["tx_power"]), "tx_power")
            c.equal(Hex.encode(ns), J.hex(e["name space"]), "name space")
            c.equal(Hex.encode(inst), J.hex(e["instance"]), "instance")
        default:
            // ATC thermometer firmware: its readings are a sensor decoder's job; the built-in
            // fingerprint must name the device by the MAC it carries.
            fmt = "fingerprint:atc"
            let mac = (J.string(e["mac address"]) ?? "").replacingOccurrences(of: ":", with: "")
            c.equal(BuiltInFingerprint.atc.match(ad, beacons: s.beacons)?.rawValue, "fp:atc-\(mac)", "fingerprint")
        }
        return VectorResult(file: "aioblescan", source: v.source, format: fmt, outcome: c.outcome)
    }

    // MARK: PureSwift/Bluetooth

    static func pureSwift(_ v: TestVectors.Vector) -> VectorResult {
        let e = J.dict(v.expect) ?? [:]
        var c = Checker()
        guard let r = ReportExtractor.extract(hexBytes(v.hex)) else {
            return VectorResult(file: "pureswift_bluetooth", source: v.source, format: "hci-report", outcome: .mismatch(["not extracted"]))
        }
        let wantAddress = J.string(e["address"]) ?? (e["addresses"] as? [String])?.first
        if let w = wantAddress { c.equal(r.address.description, w.lowercased(), "address") }
        if let w = J.int(e["rssi"]) { c.equal(r.rssi, w, "rssi") }
        if let w = J.string(e["addressType"]) {
            c.equal(r.addressType.description, w.hasPrefix("public") ? "public" : "random", "addressType")
        }
        let ad = AdvertisingData.decode(r.ad)
        c.expect(ad.issues.isEmpty, "AD issues: \(ad.issues.map(\.description))")
        if let w = J.string(e["responseData_hex"]) { c.equal(Hex.encode(r.ad), w, "responseData") }
        if let note = J.dict(e["_annotated_by_peer"]) {
            if let name = J.string(note["local name"]) { c.equal(ad.localName, name, "local name") }
            if let flags = J.string(note["flags"]) { c.equal(ad.flags.map { String(format: "0x%02X", $0) }, flags, "flags") }
            if let uuids = note["16-bit UUIDs"] as? [String] {
                c.equal(ad.serviceUUIDs.compactMap(\.uuid16).map { String(format: "0x%04X", $0) }, uuids, "16-bit UUIDs")
            }
        }
        return VectorResult(file: "pureswift_bluetooth", source: v.source, format: "hci-report", outcome: c.outcome)
    }
}
