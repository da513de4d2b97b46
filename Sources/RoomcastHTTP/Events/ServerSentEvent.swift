/// One Server-Sent Event (HTML Living Standard §9.2): an optional event name and its data.
public struct ServerSentEvent: Sendable, Equatable {
    public var name: String?
    public var data: String

    public init(name: String? = nil, data: String) {
        self.name = name
        self.data = data
    }

    /// The wire form: `event:` line, one `data:` line per line of data, a blank line.
    public var encoded: [UInt8] {
        var text = ""
        if let name { text += "event: \(name.filter { $0 != "\n" && $0 != "\r" })\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        text += "\n"
        return Array(text.utf8)
    }
}
