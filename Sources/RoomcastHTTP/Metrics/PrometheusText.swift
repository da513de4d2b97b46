/// Builds the Prometheus text exposition format, version 0.0.4 (prometheus.io/docs/instrumenting/
/// exposition_formats): `# HELP` and `# TYPE` once per family, then its samples.
public struct PrometheusText: Sendable {
    public typealias Labels = KeyValuePairs<String, String>
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public private(set) var text = ""
    private var families: Set<String> = []

    public init() {}

    public enum Kind: String, Sendable { case counter, gauge, histogram }

    /// Declares a family; samples follow with `sample`. A family declared twice is declared once.
    public mutating func family(_ name: String, _ kind: Kind, help: String) {
        guard families.insert(name).inserted else { return }
        text += "# HELP \(name) \(help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n"))\n"
        text += "# TYPE \(name) \(kind.rawValue)\n"
    }

    public mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    /// One family with one sample (the common case).
    public mutating func counter(_ name: String, help: String, _ value: Double, labels: [(String, String)] = []) {
        family(name, .counter, help: help)
        sample(name, labels, value)
    }

    public mutating func gauge(_ name: String, help: String, _ value: Double, labels: [(String, String)] = []) {
        family(name, .gauge, help: help)
        sample(name, labels, value)
    }

    /// A histogram's `_bucket` (cumulative, with `+Inf`), `_sum` and `_count` samples.
    public mutating func histogram(_ name: String, help: String, _ h: Histogram, labels: [(String, String)] = []) {
        family(name, .histogram, help: help)
        var cumulative: UInt64 = 0
        for (bound, count) in zip(h.bounds, h.counts) {
            cumulative += count
            sample(name + "_bucket", labels + [("le", Self.format(bound))], Double(cumulative))
        }
        sample(name + "_bucket", labels + [("le", "+Inf")], Double(h.count))
        sample(name + "_sum", labels, h.sum)
        sample(name + "_count", labels, Double(h.count))
    }

    /// A label value as the exposition format quotes it. By scalar: "\r\n" is one Character,
    /// and its line feed would have gone out raw, ending the line.
    static func escape(_ value: String) -> String {
        var out = String.UnicodeScalarView()
        for c in value.unicodeScalars {
            switch c {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            default: out.append(c)
            }
        }
        return String(out)
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
