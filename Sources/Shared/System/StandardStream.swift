#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's standard output and error, written with write(2), whose failures are
/// handled here: Foundation's `FileHandle.write(_:)` traps on one, and with SIGPIPE ignored (as
/// libmosquitto and `ServiceLifecycle` do) a reader gone (`aggregator run 2>&1 | tee log`, then
/// Ctrl-C) is such a failure.
public enum StandardStream: Sendable {
    case output, error

    var descriptor: Int32 {
        switch self {
        case .output: STDOUT_FILENO
        case .error: STDERR_FILENO
        }
    }

    /// Writes all of `text`. Standard error that cannot be written is let go: the logs are lost,
    /// the work goes on. Standard output whose reader has gone (`| head`) ends the process as a
    /// SIGPIPE does, as any filter's would: what the output was for is over.
    public func write(_ text: String) {
        write(Array(text.utf8))
    }

    /// The same for bytes.
    public func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        do {
            try Syscall.writeAll(descriptor, bytes)
        } catch {
            guard self == .output, error.errno == EPIPE else { return }
            signal(SIGPIPE, SIG_DFL)
            raise(SIGPIPE)
        }
    }
}
