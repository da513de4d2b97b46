import Testing
@testable import Shared

/// The reading encoder writes the agent's rounded numbers itself; what it writes is `description`'s.
@Suite struct FastJSONNumberTests {
    static func written(_ x: Double) -> String? {
        var out: [UInt8] = []
        return FastJSONWriter.appendShortDecimal(x, to: &out) ? String(decoding: out, as: UTF8.self) : nil
    }

    @Test func roundedValuesAreWrittenAsDescriptionWritesThem() {
        var checked = 0
        // Every value of one to three decimals in ranges the agent produces (distances, RSSIs,
        // intervals), rounded as the agent rounds them.
        for n in -200_000...200_000 {
            for scale in [10.0, 100.0, 1000.0] {
                let x = (Double(n) / scale * scale).rounded() / scale
                if let s = Self.written(x) {
                    #expect(s == x.description, "\(n) / \(scale)")
                    checked += 1
                }
            }
        }
        #expect(checked > 500_000)
    }

    @Test func timestampsAreWrittenAsDescriptionWritesThem() {
        // Milliseconds on Unix seconds, as readings carry them, over days around now and far ahead.
        for base in [1_767_225_600.0, 1_999_999_999.0, 99_999_999_999.0, 999_999_999_000.0] {
            for ms in stride(from: 0, to: 3_000_000, by: 7) {
                let x = WireFormat.milliseconds(base + Double(ms) / 1000)
                if let s = Self.written(x) { #expect(s == x.description, "\(x)") }
            }
        }
        #expect(Self.written(1_767_225_600.123) == "1767225600.123")
    }

    @Test func otherValuesAreLeftToDescription() {
        var g = SystemRandomNumberGenerator()
        for _ in 0..<200_000 {
            let x = Double.random(in: -1e10...1e10, using: &g) / Double([1, 7, 1000, 1e6, 1e9].randomElement(using: &g)!)
            if let s = Self.written(x) { #expect(s == x.description, "\(x)") }
            let rounded = (x * 1000).rounded() / 1000
            if let s = Self.written(rounded) { #expect(s == rounded.description, "\(rounded)") }
        }
        for x in [0.1 + 0.2, 1e-4, 0.0005, 1e9 + 0.5, 1e12 + 0.5, 999_999_999_999.875, 2.5, -0.001, 0.001, 999_999_999.999, .pi, -.pi, 1.0 / 3] {
            if let s = Self.written(x) { #expect(s == x.description, "\(x)") }
        }
        #expect(Self.written(0.1 + 0.2) == nil)
        #expect(Self.written(3) == nil)
        #expect(Self.written(0.0001) == nil)
        #expect(Self.written(-12.345) == "-12.345")
    }
}
