/// Why a learn command was refused; `request` is the sender's token when it could be read.
public struct LearnCommandError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var request: String?

    public init(_ message: String, request: String? = nil) {
        self.message = message
        self.request = request
    }

    public var description: String { message }
}
