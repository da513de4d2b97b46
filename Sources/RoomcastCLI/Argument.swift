/// A positional argument, declared once and read typed: `String` when required, `String?`
/// when optional, `[String]` when it takes every remaining positional.
public struct Argument<Value: Sendable>: ArgumentDeclaration {
    public let spec: ArgumentSpec
    let read: @Sendable ([String]) -> Value

    public init(_ name: String, help: String) where Value == String {
        spec = ArgumentSpec(name, help: help)
        read = { $0.first ?? "" }
    }

    public init(_ name: String, help: String) where Value == String? {
        spec = ArgumentSpec(name, help: help, optional: true)
        read = { $0.first }
    }

    /// Every remaining positional; at least one unless `optional`.
    public init(_ name: String, help: String, optional: Bool = false) where Value == [String] {
        spec = ArgumentSpec(name, help: help, optional: optional, repeating: true)
        read = { $0 }
    }
}
/// Anything a command lists among its positional arguments.
public protocol ArgumentDeclaration: Sendable {
    var spec: ArgumentSpec { get }
}
extension ArgumentSpec: ArgumentDeclaration {
    public var spec: ArgumentSpec { self }
}
