import Shared

/// Why the listener could not start, phrased for the operator.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var endpoint: String
    public var underlying: SystemCallError

    /// Whether waiting may mend it: a port another process holds, an address not up yet.
    public var isTransient: Bool { [98, 99].contains(underlying.errno) }  // EADDRINUSE, EADDRNOTAVAIL

    public var description: String {
        var text = "cannot listen on \(endpoint): \(underlying)"
        if underlying.errno == 98 { text += "; another process holds the port (change http.listen)" }  // EADDRINUSE
        if underlying.errno == 99 { text += "; no interface has that address (use 127.0.0.1 or 0.0.0.0)" }  // EADDRNOTAVAIL
        if underlying.errno == 13 { text += "; ports below 1024 need privileges (use 8267)" }  // EACCES
        return text
    }
}
