/// The sub-type of a random device address (Core 5.4 Vol 6 Part B §1.3.2).
public enum RandomAddressKind: String, Sendable, Codable {
    case staticAddress = "static"
    case resolvablePrivate = "resolvable"
    case nonResolvablePrivate = "non_resolvable"
    case reserved
}
