/// An option declared once and read back typed:
///
/// ```swift
/// static let seconds = Option<Double>("seconds", value: "s", help: "How long to listen.", default: 30)
/// static let beacon = Option<String?>("beacon", value: "id", help: "The beacon held.")
/// let s = try command[seconds]   // Double: the default when not given; a bad value is a UsageError
/// ```
///
/// `Value` is the type read: `T` with a default, `T?` without one, `[T]` for a repeating option.
public struct Option<Value: Sendable>: OptionDeclaration {
    public private(set) var spec: OptionSpec
    /// Every value given, in order, to the value read; a failure names the text refused and why.
    let read: @Sendable ([String]) -> Result<Value, OptionValueFailure>

    init(spec: OptionSpec, read: @escaping @Sendable ([String]) -> Result<Value, OptionValueFailure>) {
        self.spec = spec
        self.read = read
    }

    /// An option with a default: reads the last value given, or `defaultValue`.
    /// Help shows `(default: <defaultValue>)` unless `shownDefault` says otherwise.
    public init(_ name: String, short: Character? = nil, value: String, help: String,
                default defaultValue: Value, shownDefault: String? = nil) where Value: OptionValue {
        self.init(spec: .option(name, short: short, value: value, help: help,
                                default: shownDefault ?? defaultValue.optionText)) { given in
            guard let text = given.last else { return .success(defaultValue) }
            return Self.convert(text, as: Value.self)
        }
    }

    /// An option without a default: reads the last value given, or nil. `shownDefault` is
    /// help text for a default the program works out itself (`the host name`).
    public init<T: OptionValue>(_ name: String, short: Character? = nil, value: String, help: String,
                                shownDefault: String? = nil, required: Bool = false) where Value == T? {
        self.init(spec: .option(name, short: short, value: value, help: help, default: shownDefault,
                                required: required)) { given in
            guard let text = given.last else { return .success(nil) }
            return Self.convert(text, as: T.self).map { $0 }
        }
    }

    /// A repeating option (`--beacon a --beacon b`): every value, in order.
    public init<T: OptionValue>(_ name: String, short: Character? = nil, value: String, help: String) where Value == [T] {
        self.init(spec: .option(name, short: short, value: value, help: help, repeating: true)) { given in
            var values: [T] = []
            for text in given {
                switch Self.convert(text, as: T.self) {
                case .success(let v): values.append(v)
                case .failure(let f): return .failure(f)
                }
            }
            return .success(values)
        }
    }

    /// The same option, its value replacing the config file's `path` (`Overrides(command)`).
    public func overriding(_ path: String) -> Option {
        var copy = self
        copy.spec.configPath = path
        return copy
    }

    static func convert<T: OptionValue>(_ text: String, as type: T.Type) -> Result<T, OptionValueFailure> {
        guard let value = T.fromOption(text) else { return .failure(OptionValueFailure(text: text, reason: nil)) }
        if let reason = T.problem(with: value) { return .failure(OptionValueFailure(text: text, reason: reason)) }
        return .success(value)
    }
}

/// A text an option could not take, and why when it converted but was refused.
struct OptionValueFailure: Error {
    var text: String
    var reason: String?
}

/// Anything a command lists among its options: an `OptionSpec`, an `Option` or a `Flag`.
public protocol OptionDeclaration: Sendable {
    var spec: OptionSpec { get }
}

extension OptionSpec: OptionDeclaration {
    public var spec: OptionSpec { self }
}

extension OptionDeclaration where Self == OptionSpec {
    /// A boolean flag such as `--dry-run`, untyped: for a command that never reads it back
    /// (help-only declarations, tests).
    public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .flag, help: help)
    }

    /// An option with a value such as `--config <file>`, untyped: for a command that never reads
    /// it back (help-only declarations, tests).
    public static func option(_ name: String, short: Character? = nil, value: String, help: String,
                              default defaultDescription: String? = nil, required: Bool = false,
                              repeating: Bool = false) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .option(valueName: value, repeating: repeating), help: help,
                   defaultDescription: defaultDescription, isRequired: required)
    }
}
