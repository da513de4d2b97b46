import Foundation

/// A headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
/// the browser reads commands on its descriptor 3 and writes replies on 4, each a JSON message
/// ending in NUL), so a test can run script in a live page and read what it shows. Blocking:
/// call it off the cooperative pool (`offPool`).
public final class HeadlessBrowser: @unchecked Sendable {
    private let process: ChildProcess
    private let commands: Int32
    private let replies: Int32
    private var nextID = 0
    private var pending: [UInt8] = []

    public struct ProtocolError: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    public init(chromium: String, directory: String) throws {
        var toBrowser: [Int32] = [0, 0], fromBrowser: [Int32] = [0, 0]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else { throw ProtocolError(description: "pipe: \(errno)") }
        process = try ChildProcess(chromium, [
            "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
            "--user-data-dir=\(directory)/chromium-profile", "about:blank",
        ], stdoutPath: "\(directory)/chromium.log", stderrPath: "\(directory)/chromium.log",
           descriptors: [3: toBrowser[0], 4: fromBrowser[1]])
        close(toBrowser[0])
        close(fromBrowser[1])
        commands = toBrowser[1]
        replies = fromBrowser[0]
    }

    /// Sends one command and waits for its reply's `result`.
    @discardableResult
    public func call(_ method: String, _ params: [String: Any] = [:], session: String? = nil,
                     timeout: Double = 30) throws -> [String: Any] {
        nextID += 1
        var message: [String: Any] = ["id": nextID, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            guard n > 0 else { throw ProtocolError(description: "write to the browser failed: \(errno)") }
            sent += n
        }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let end = pending.firstIndex(of: 0) {
                let text = Array(pending[..<end])
                pending.removeFirst(end + 1)
                guard let reply = try JSONSerialization.jsonObject(with: Data(text)) as? [String: Any],
                      reply["id"] as? Int == nextID else { continue }  // an event, or another reply
                if let error = reply["error"] { throw ProtocolError(description: "\(method): \(error)") }
                return reply["result"] as? [String: Any] ?? [:]
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw ProtocolError(description: "\(method): no reply within \(timeout) s") }
            var fds = [pollfd(fd: replies, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, Int32(left * 1000)) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = read(replies, &chunk, chunk.count)
            guard n > 0 else { throw ProtocolError(description: "the browser closed its pipe (see chromium.log)") }
            pending += chunk[..<n]
        }
    }

    /// Opens `url` in a new page; returns the session to evaluate in.
    public func open(_ url: String) throws -> String {
        let target = try call("Target.createTarget", ["url": url])
        guard let id = target["targetId"] as? String else { throw ProtocolError(description: "no targetId") }
        let attached = try call("Target.attachToTarget", ["targetId": id, "flatten": true])
        guard let session = attached["sessionId"] as? String else { throw ProtocolError(description: "no sessionId") }
        return session
    }

    /// The value of `expression` evaluated in the page of `session`.
    public func evaluate(_ expression: String, session: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true], session: session)
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Closes the browser (and kills it if it does not go).
    public func shutdown() {
        _ = try? call("Browser.close", timeout: 5)
        close(commands)
        close(replies)
        process.send(SIGKILL)
    }
}
