import Foundation

/// A small JSON Schema (2020-12 subset) validator for the wire-contract
/// schemas in docs/schema: type (incl. type lists and "integer"), const, enum,
/// required, properties, items, minimum/maximum, minItems/maxItems, minLength,
/// pattern. Enough to hold the Swift encoders to the documented contract.
public struct JSONSchemaValidator {
    public let schema: [String: Any]

    public init(schema: [String: Any]) { self.schema = schema }

    /// Loads `docs/schema/<name>` from the repository this file lives in.
    public static func contract(_ name: String, file: String = #filePath) throws -> JSONSchemaValidator {
        var url = URL(fileURLWithPath: file)
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("docs/schema/\(name)")
            if FileManager.default.fileExists(atPath: candidate.path) {
                let obj = try JSONSerialization.jsonObject(with: Data(contentsOf: candidate))
                return JSONSchemaValidator(schema: obj as? [String: Any] ?? [:])
            }
        }
        throw CocoaError(.fileNoSuchFile)
    }

    /// Every violation, as `path: problem`.
    public func validate(json bytes: [UInt8]) -> [String] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
            return ["$: not JSON"]
        }
        var problems: [String] = []
        check(value, against: schema, path: "$", into: &problems)
        return problems
    }

    private func check(_ value: Any, against s: [String: Any], path: String, into problems: inout [String]) {
        if let t = s["type"] {
            let types = (t as? [String]) ?? [(t as? String) ?? ""]
            if !types.contains(where: { Self.matches(value, type: $0) }) {
                problems.append("\(path): expected \(types.joined(separator: "|"))"); return
            }
        }
        if let c = s["const"], !Self.equal(c, value) { problems.append("\(path): expected const \(c)") }
        if let e = s["enum"] as? [Any], !e.contains(where: { Self.equal($0, value) }) { problems.append("\(path): not in enum") }
        if let n = value as? NSNumber, !(value is Bool) {
            if let min = (s["minimum"] as? NSNumber)?.doubleValue, n.doubleValue < min { problems.append("\(path): below \(min)") }
            if let max = (s["maximum"] as? NSNumber)?.doubleValue, n.doubleValue > max { problems.append("\(path): above \(max)") }
        }
        if let str = value as? String {
            if let min = s["minLength"] as? Int, str.count < min { problems.append("\(path): shorter than \(min)") }
            if let p = s["pattern"] as? String, str.range(of: p, options: .regularExpression) == nil {
                problems.append("\(path): does not match \(p)")
            }
        }
        if let obj = value as? [String: Any] {
            for key in (s["required"] as? [String]) ?? [] where obj[key] == nil { problems.append("\(path).\(key): required") }
            if let props = s["properties"] as? [String: Any] {
                for (k, v) in obj {
                    if let sub = props[k] as? [String: Any] { check(v, against: sub, path: "\(path).\(k)", into: &problems) }
                }
            }
        }
        if let arr = value as? [Any] {
            if let min = s["minItems"] as? Int, arr.count < min { problems.append("\(path): fewer than \(min) items") }
            if let max = s["maxItems"] as? Int, arr.count > max { problems.append("\(path): more than \(max) items") }
            if let items = s["items"] as? [String: Any] {
                for (i, v) in arr.enumerated() { check(v, against: items, path: "\(path)[\(i)]", into: &problems) }
            }
        }
    }

    static func matches(_ v: Any, type: String) -> Bool {
        switch type {
        case "null": return v is NSNull
        case "boolean": return Self.isBool(v)
        case "string": return v is String
        case "object": return v is [String: Any]
        case "array": return v is [Any]
        case "number": return v is NSNumber && !isBool(v)
        case "integer":
            guard let n = v as? NSNumber, !isBool(v) else { return false }
            return n.doubleValue.rounded() == n.doubleValue
        default: return false
        }
    }

    static func isBool(_ v: Any) -> Bool {
        // JSONSerialization boxes true/false as a Boolean NSNumber whose type code is "c".
        guard let n = v as? NSNumber else { return false }
        return String(cString: n.objCType) == "c" && String(describing: type(of: n)).contains("Boolean")
    }

    static func equal(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case let (x as String, y as String): return x == y
        case let (x as NSNumber, y as NSNumber): return x == y
        default: return false
        }
    }
}
