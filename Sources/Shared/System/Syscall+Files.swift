#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Replacing a file so that a power cut leaves the old content or the new, never a part: the new
/// content goes into a file of its own (`createDurably`), which is renamed over the old, and the
/// rename is made to last (`syncFolder`). The learned-rooms state file and `edge-agent irks import
/// --write` both write so.
extension Syscall {
    /// Creates `path`, which must not exist (`O_EXCL`: never written through a link or a file
    /// someone placed there), with `mode`, writes `bytes` and fsyncs them. On failure the file is
    /// removed again.
    package static func createDurably(_ path: String, bytes: [UInt8], mode: mode_t) throws(SystemCallError) {
        let fd = try call("open") { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode) }
        do {
            try writeAll(fd, bytes)
            try call("fsync") { fsync(fd) }
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        close(fd)
    }

    /// Fsyncs the folder that holds `path`: a rename lives in the folder, and unsynced a power cut
    /// can undo it. Best effort: a folder that cannot be opened is left as it is.
    package static func syncFolder(of path: String) {
        var folder = path
        if let slash = folder.lastIndex(of: "/") {
            folder = String(folder[..<slash])
            if folder.isEmpty { folder = "/" }
        } else {
            folder = "."
        }
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
