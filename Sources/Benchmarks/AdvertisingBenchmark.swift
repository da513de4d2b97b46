import Foundation
import RoomcastAdvertising
import Shared
import RoomcastCLI

/// Decode throughput of the advertising layer per format, on one core: AD walk + beacon
/// decode + identity (default config), then IRK resolution. Run a release build of
/// roomcast-bench; `--seconds S` sets the time per row (default 0.5).
enum AdvertisingBenchmark {
    static let seconds = Option<Positive>("seconds", value: "s", help: "Time per row.", default: 0.5)

    static let spec = CommandSpec("advertising", abstract: "decode throughput per beacon format",
                                  options: [seconds], run: benchmark(run))

    /// One row: a name and AD bytes.
    struct Case {
        let name: String
        let bytes: [UInt8]
    }

    static let cases: [Case] = [
        Case(name: "ibeacon", hex: "02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000640000c5"),
        Case(name: "altbeacon", hex: "02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509"),
        Case(name: "eddystone-uid", hex: "0201060303aafe1716aafe00e3123456789012346789010000000000010000"),
        Case(name: "eddystone-url", hex: "0201060303aafe1616aafe10ee037275752e76692f23416a7759414d4666"),
        Case(name: "eddystone-tlm", hex: "0201060303aafe1116aafe20000b1813000000146700002ac4"),
        Case(name: "estimote-telemetry", hex: "02010403039afe17169afe2247a038d5eb03264001d842ed73492566bc2e50"),
        Case(name: "exposure-notification", hex: "02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34"),
        Case(name: "apple-nearby (no beacon)", hex: "02011a020a0c0aff4c001005441cbd08c5"),
        Case(name: "named device (no beacon)", hex: "02010611079ecadc240ee5a92833343093f3a3b50100406e090950696e6554696d65"),
        Case(name: "malformed", hex: "02011a020a050aff4c0010050a1c77f95bff"),
    ]

    static func run(_ command: ParsedCommand) throws {
        let seconds = try command[Self.seconds].value
        let decoder = try AdvertisementDecoder()
        let address = BLEAddress(value: 0xC0_11_22_33_44_55)
        print("Advertising decode throughput (one core, \(seconds) s per row)")
        print(pad("format", 28) + pad("ads/s", 14, right: true) + pad("ns/ad", 10, right: true))
        for c in cases {
            let rate = measure(seconds: seconds) { n in
                var sink = 0
                for _ in 0..<n {
                    let d = decoder.decode(c.bytes, address: address, addressType: .random, rssi: -60)
                    sink &+= d.scan.beacons.count &+ (d.identity == nil ? 0 : 1) &+ d.data.structureCount
                }
                return sink
            }
            row(c.name, rate)
        }
        let adOnly = measure(seconds: seconds) { n in
            var sink = 0
            for _ in 0..<n { sink &+= AdvertisingData.decode(cases[0].bytes).structureCount }
            return sink
        }
        row("AD walk only (ibeacon)", adOnly)

        // IRK resolution: 10 keys, a rotating address (cache miss: up to 10 AES blocks) and a
        // repeated one (cache hit).
        let keys = (0..<10).compactMap { i in
            IdentityResolvingKey(name: "k\(i)", key: (0..<16).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) })
        }
        let resolver = AddressResolver(keys: keys, cacheLimit: 1024)
        var prand: UInt64 = 0x40_0000
        let miss = measure(seconds: seconds) { n in
            var sink = 0
            for _ in 0..<n {
                prand = prand &+ 1
                let a = BLEAddress(value: (0x40_0000 | (prand & 0x3F_FFFF)) << 24 | 0x123456)
                sink &+= resolver.resolve(a, type: .random) == nil ? 1 : 0
            }
            return sink
        }
        row("irk miss (10 keys)", miss)
        let hit = measure(seconds: seconds) { n in
            var sink = 0
            let a = BLEAddress(value: 0x40_0001_123456)
            for _ in 0..<n { sink &+= resolver.resolve(a, type: .random) == nil ? 1 : 0 }
            return sink
        }
        row("irk cache hit", hit)
    }

    /// Advertisements per second: doubles the batch until one batch takes long enough.
    static func measure(seconds: Double, _ body: (Int) -> Int) -> Double {
        let clock = ContinuousClock()
        _ = body(1000) // warm-up
        var n = 1000
        while true {
            var sink = 0
            let d = clock.measure { sink = body(n) }
            let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
            if s >= seconds || n >= 1 << 28 {
                if sink == Int.min { print("") } // keep the work observable
                return Double(n) / s
            }
            n = s < seconds / 8 ? n * 8 : n * 2
        }
    }

    static func row(_ name: String, _ rate: Double) {
        print(pad(name, 28) + pad(String(format: "%.0f", rate), 14, right: true)
              + pad(String(format: "%.0f", 1e9 / rate), 10, right: true))
    }

    static func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        guard s.count < width else { return s + " " }
        let fill = String(repeating: " ", count: width - s.count)
        return right ? fill + s : s + fill
    }
}

extension AdvertisingBenchmark.Case {
    init(name: String, hex: String) {
        self.init(name: name, bytes: Hex.decode(hex) ?? [])
    }
}
