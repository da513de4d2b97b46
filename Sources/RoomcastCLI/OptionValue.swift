/// A type an option's text converts to (`--seconds 30` → `Double`), and back for the
/// `(default: …)` of its help line.
public protocol OptionValue: Sendable {
    /// The value `text` stands for, or nil when it is not one (a usage error). A static
    /// function, not an initializer, so that `UInt64.init` stays unambiguous where Shared is imported.
    static func fromOption(_ text: String) -> Self?
    /// The value as a user would type it: how a default is shown in help.
    var optionText: String { get }
    /// Why a value that converted is still refused (a non-finite number), or nil.
    static func problem(with value: Self) -> String?
}

extension OptionValue {
    public static func problem(with value: Self) -> String? { nil }
}

extension OptionValue where Self: LosslessStringConvertible {
    public static func fromOption(_ text: String) -> Self? { Self(text) }
    public var optionText: String { description }
}

extension String: OptionValue {}
extension Int: OptionValue {}
extension Int8: OptionValue {}
extension UInt16: OptionValue {}
extension UInt64: OptionValue {}

extension Double: OptionValue {
    /// Whole numbers without the fraction (`30`, not `30.0`), as they would be typed.
    public var optionText: String {
        rounded() == self && abs(self) < 1e15 ? String(Int64(self)) : description
    }

    public static func problem(with value: Double) -> String? { value.isFinite ? nil : "must be a finite number" }
}
