import Foundation
import Testing
import Shared
@testable import RoomcastAdvertising
import RoomcastConfig

@Suite struct ConfigTests {
    static let json = """
    {
      "regions": [
        {"name": "office", "uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 100},
        {"name": "lab", "namespace": "12345678901234678901"}
      ],
      "known_beacons": [{"id": "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-0", "name": "Keys", "power": -61}],
      "irks": [{"name": "phone", "key": "ec0234a357c8ad05341010a60a397d9b"}],
      "fingerprints": {
        "builtins": ["ruuvi"],
        "rules": [{"name": "bike", "company_id": "0x0059", "manufacturer_prefix": "0102", "id": "constant", "value": "mine"}]
      },
      "ibeacon_company_ids": [89, "0x0118"]
    }
    """

    @Test func decodesSnakeCaseAndValidates() throws {
        let c = try JSONDecoder().decode(AdvertisingConfig.self, from: Data(Self.json.utf8))
        #expect(c.validate() == [])
        #expect(c.knownBeacons.first?.power == -61)
        #expect(c.fingerprints.rules.first?.companyId?.value == 0x59)
        #expect(c.ibeaconCompanyIds.map(\.value) == [89, 0x118])
        let empty = try JSONDecoder().decode(AdvertisingConfig.self, from: Data("{}".utf8))
        #expect(empty == AdvertisingConfig())
    }

    @Test func reportsEveryProblemWithItsPath() {
        var c = AdvertisingConfig()
        c.regions = [RegionConfig(name: "a", uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0"),
                     RegionConfig(name: "b", uuid: "not-a-uuid", minor: 3),
                     RegionConfig(name: "a", namespace: "1234", instance: "zz")]
        c.knownBeacons = [KnownBeaconConfig(id: "ibeacon:E2C5", name: "x"), KnownBeaconConfig(id: "mac:aabbccddeeff", power: 40)]
        c.irks = [IRKConfig(name: "Phone One", key: "abcd", byteOrder: "middle")]
        c.fingerprints = FingerprintConfig(builtins: ["tile"], rules: [FingerprintRuleConfig(name: "r", id: "payload")])
        c.ibeaconCompanyIds = [ConfigNumber("0x10000")]
        let problems = c.validate()
        let expected = [
            "regions[1].uuid: not a UUID: 'not-a-uuid'",
            "regions[1].minor: needs major",
            "regions[2].name: 'a' used twice",
            "regions[2].namespace: not 20 hex digits: '1234'",
            "regions[2].instance: not 12 hex digits: 'zz'",
            "known_beacons[1].power: 40 dBm is not a plausible 1 m RSSI (-127...-1)",
            "irks[0].name: must be lowercase letters, digits, '-', '_' or '.' (not shown: irks entries hold keys)",
            "irks[0].key: not 32 hex digits",
            "irks[0].byte_order: must be msb_first or lsb_first (not shown: irks entries hold keys)",
            "fingerprints.rules[0]: needs at least one of company_id, service_uuid, local_name, local_name_prefix",
            "fingerprints.rules[0].id: 'payload' is not address, local_name, constant, manufacturer_bytes or service_data_bytes",
            "ibeacon_company_ids[0]: '0x10000' is not a company id 0...0xFFFF",
        ]
        for e in expected { #expect(problems.contains(e), "missing: \(e)") }
        #expect(problems.contains { $0.hasPrefix("known_beacons[0].id: '") && $0.contains("' is not a beacon id") })
        #expect(problems.contains { $0.hasPrefix("fingerprints.builtins[0]: unknown 'tile'") })
        #expect(problems.count == expected.count + 2)
        // The key is a secret: never echoed.
        #expect(!problems.joined().contains("abcd"))
    }

    /// An offset past what an advertisement can carry is a config error naming its path; it
    /// loaded, and the first advertisement of the rule's company trapped on `offset + length`.
    @Test func aFingerprintOffsetPastAnyAdvertisementIsRefused() throws {
        var rule = FingerprintRuleConfig(name: "bike", id: "manufacturer_bytes")
        rule.companyId = 0x0059
        rule.offset = Int.max
        rule.length = 1
        var c = AdvertisingConfig()
        c.fingerprints = FingerprintConfig(rules: [rule])
        #expect(c.validate() == ["fingerprints.rules[0].offset: needs a byte offset 0...1649"])
        rule.offset = 1649
        c.fingerprints = FingerprintConfig(rules: [rule])
        #expect(c.validate().isEmpty)
        #expect(FingerprintRule.hexSlice([0xAA, 0xBB][...], Int.max, 1) == nil, "no overflow in the bounds check")
        #expect(FingerprintRule.hexSlice([0xAA, 0xBB][...], 1, Int.max) == nil)
        #expect(FingerprintRule.hexSlice([0xAA, 0xBB][...], 1, 1) == "bb")
    }

    /// Configs that loaded and then silently tracked the wrong thing, or nothing.
    @Test func rulesAndKeysThatCouldNeverWorkAreRefused() {
        var c = AdvertisingConfig()
        // A known beacon in a shape no advertisement gives (the hyphen left out) never matched,
        // and a list of known beacons turns tracking everything else off.
        c.knownBeacons = [KnownBeaconConfig(id: "eddystone:edd1ebeac04e5defa0170bdb87539b67")]
        // One key under two names: the second never resolves.
        c.irks = [IRKConfig(name: "alice", key: "ec0234a357c8ad05341010a60a397d9b"),
                  IRKConfig(name: "bob", key: "9b7d390aa6101034 05adc857a33402ec".replacingOccurrences(of: " ", with: ""), byteOrder: "lsb_first")]
        // Fullwidth digits passed the check and were dropped by the parser: a rule with no condition.
        var fullwidth = FingerprintRuleConfig(name: "x", id: "address")
        fullwidth.serviceUuid = "ＦＥ９５"
        // offset and length under id address: ignored, the rule identifies by address.
        var ignored = FingerprintRuleConfig(name: "bike", id: "address")
        ignored.companyId = 0x0059
        ignored.offset = 2
        ignored.length = 4
        // fp:<140 characters>-<64 hex digits> is over an id's 200 bytes: the rule never matches.
        var long = FingerprintRuleConfig(name: String(repeating: "n", count: 140), id: "manufacturer_bytes")
        long.companyId = 0x0059
        long.offset = 0
        long.length = 32
        c.fingerprints = FingerprintConfig(rules: [fullwidth, ignored, long])
        let problems = c.validate()
        #expect(problems.contains { $0.hasPrefix("known_beacons[0].id: '") && $0.contains("' is not a beacon id") })
        #expect(problems.contains("irks[1].key: the same key as irks[0]"))
        #expect(!problems.joined().contains("ec0234"), "a key is never echoed")
        #expect(problems.contains("fingerprints.rules[0].service_uuid: not a UUID: 'ＦＥ９５'"))
        #expect(problems.contains("fingerprints.rules[1].offset: only read with id manufacturer_bytes or service_data_bytes (id is 'address')"))
        #expect(problems.contains("fingerprints.rules[1].length: only read with id manufacturer_bytes or service_data_bytes (id is 'address')"))
        #expect(problems.contains("fingerprints.rules[2].name: its ids would be up to 208 bytes, over an id's 200: shorten the name"))
        #expect(problems.count == 6, "\(problems)")
        long.length = 20
        c = AdvertisingConfig()
        c.fingerprints = FingerprintConfig(rules: [long])
        #expect(c.validate().isEmpty, "fp:<140>-<40 hex digits> fits")
    }

    @Test func identifierRefusesInvalidConfig() {
        var c = AdvertisingConfig()
        c.regions = [RegionConfig(name: "x")]
        #expect(throws: AdvertisingConfigError.self) { try BeaconIdentifier(config: c) }
    }
}

@Suite struct BuiltInFingerprintNamesTests {
    @Test func sharedConfigKnowsEveryBuiltIn() {
        #expect(FingerprintConfig.builtinNames == BuiltInFingerprint.allCases.map(\.rawValue))
    }
}
