import Foundation

/// Checks a request's credentials against the configured token: `Authorization: Bearer <token>`,
/// or Basic with any user name and the token as password (what a browser's login prompt sends).
public struct HTTPAuthorization: Sendable {
    /// Nil: no token configured, so nothing protected is allowed.
    let token: [UInt8]?

    public init(token: String?) {
        self.token = token.map { Array($0.utf8) }
    }

    public var isConfigured: Bool { token != nil }

    public func allows(_ request: HTTPRequest) -> Bool {
        guard let token, let header = request.header("authorization") else { return false }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return false }
        switch parts[0].lowercased() {
        case "bearer":
            return Self.constantTimeEqual(Array(parts[1].utf8), token)
        case "basic":
            guard let data = Data(base64Encoded: String(parts[1])), let colon = data.firstIndex(of: UInt8(ascii: ":")) else { return false }
            return Self.constantTimeEqual(Array(data[(colon + 1)...]), token)
        default:
            return false
        }
    }

    /// Compares without an early exit, so the time taken says nothing about how much matched.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return diff == 0
    }
}
