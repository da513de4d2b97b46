/// A hand-written encoder for the agent's hottest message. `JSONEncoder`
/// costs tens of microseconds per reading on Linux; an agent publishing a
/// few hundred readings a second spends most of its CPU there. The output
/// has the same keys, sorted, and decodes to the same value (tested).
extension BeaconReading {
    /// The reading as wire-format JSON bytes.
    public func fastJSON() -> [UInt8] {
        var w = FastJSONWriter()
        w.begin()
        w.key(#""address_type":"#); if let addressType { w.string(addressType) } else { w.skip() }
        w.key(#""distance":"#); w.number(distance)
        w.key(#""id":"#); w.string(id.rawValue)
        w.key(#""instance":"#); if let instance { w.string(instance) } else { w.skip() }
        w.key(#""interval":"#); if let interval { w.number(interval) } else { w.skip() }
        w.key(#""kind":"#); w.string(kind.rawValue)
        w.key(#""mac":"#); w.string(mac)
        w.key(#""major":"#); if let major { w.int(Int64(major)) } else { w.skip() }
        w.key(#""minor":"#); if let minor { w.int(Int64(minor)) } else { w.skip() }
        w.key(#""name":"#); if let name { w.string(name) } else { w.skip() }
        w.key(#""namespace":"#); if let namespace { w.string(namespace) } else { w.skip() }
        w.key(#""node":"#); w.string(node)
        w.key(#""power":"#); w.int(Int64(power))
        w.key(#""proximity":"#); w.string(proximity.rawValue)
        w.key(#""rssi":"#); w.int(Int64(rssi))
        w.key(#""rssi_filtered":"#); w.number(rssiFiltered)
        w.key(#""rssi_sd":"#); if let rssiSD { w.number(rssiSD) } else { w.skip() }
        w.key(#""samples":"#); if let samples { w.int(Int64(samples)) } else { w.skip() }
        w.key(#""seq":"#); w.uint(seq)
        w.key(#""telemetry":"#); if let telemetry, let bytes = try? WireFormat.encode(telemetry) { w.raw(bytes) } else { w.skip() }
        w.key(#""ts":"#); w.number(ts)
        w.key(#""tx_power":"#); if let txPower { w.int(Int64(txPower)) } else { w.skip() }
        w.key(#""url":"#); if let url { w.string(url) } else { w.skip() }
        w.key(#""uuid":"#); if let uuid { w.string(uuid) } else { w.skip() }
        w.key(#""v":"#); w.int(Int64(v))
        return w.end()
    }
}

/// Builds one flat JSON object; a key followed by `skip()` is left out.
struct FastJSONWriter {
    private var out: [UInt8] = []
    /// The key of the next value, quoted and with its colon (`"id":`), so starting a value is one
    /// copy; a StaticString, so keys cost no allocation.
    private var pendingKey: StaticString = ""
    private var first = true

    mutating func begin() {
        out.reserveCapacity(384)
        out.append(UInt8(ascii: "{"))
    }

    mutating func key(_ k: StaticString) {
        pendingKey = k
    }

    mutating func skip() { pendingKey = "" }

    private mutating func startValue() {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out.append(contentsOf: UnsafeBufferPointer(start: pendingKey.utf8Start, count: pendingKey.utf8CodeUnitCount))
    }

    mutating func string(_ s: String) {
        startValue()
        MessageLogLine.appendJSONString(s.utf8, to: &out)
    }

    mutating func int(_ n: Int64) {
        startValue()
        MessageLogLine.appendDecimal(n, to: &out)
    }

    /// Unsigned, so a `seq` above Int64.max stays positive (it decodes as UInt64; found by fuzzing).
    mutating func uint(_ n: UInt64) {
        startValue()
        MessageLogLine.appendDecimal(n, to: &out)
    }

    /// Finite numbers as JSONEncoder writes them (integral values without ".0");
    /// a non-finite one (never produced by the agent) becomes null.
    mutating func number(_ x: Double) {
        startValue()
        guard x.isFinite else { out.append(contentsOf: "null".utf8); return }
        if x == x.rounded(), abs(x) < 1e15 {
            MessageLogLine.appendDecimal(Int64(x), to: &out)
        } else if !Self.appendShortDecimal(x, to: &out) {
            out.append(contentsOf: x.description.utf8)
        }
    }

    /// Writes `x` as `x.description` does when `x` is exactly the double nearest a decimal of at most
    /// three fractional digits (the agent rounds its distances, RSSIs and intervals so), without the
    /// String `description` makes; false (nothing written) otherwise. Then that decimal is the
    /// shortest that reads back as `x` (any other of as many digits or fewer is at least 0.001 away,
    /// and below 1e12 an ulp is under 0.0002), so it is what `description`'s shortest-digits formatting
    /// gives, in positional notation for magnitudes from 0.001 to 1e12 (timestamps in seconds included).
    static func appendShortDecimal(_ x: Double, to out: inout [UInt8]) -> Bool {
        let magnitude = abs(x)
        guard magnitude >= 0.001, magnitude < 1e12 else { return false }
        var scale: Int64 = 10
        var digits = 1
        while digits <= 3 {
            let n = (magnitude * Double(scale)).rounded()
            if n / Double(scale) == magnitude {
                let m = Int64(n)
                let fraction = m % scale
                guard fraction != 0 else { return false }  // integral: not this path's
                if x < 0 { out.append(UInt8(ascii: "-")) }
                MessageLogLine.appendDecimal(UInt64(m / scale), to: &out)
                out.append(UInt8(ascii: "."))
                MessageLogLine.appendFraction(UInt64(fraction), digits: digits, to: &out)
                return true
            }
            scale *= 10
            digits += 1
        }
        return false
    }

    mutating func raw(_ bytes: [UInt8]) {
        startValue()
        out.append(contentsOf: bytes)
    }

    mutating func end() -> [UInt8] {
        out.append(UInt8(ascii: "}"))
        return out
    }
}
