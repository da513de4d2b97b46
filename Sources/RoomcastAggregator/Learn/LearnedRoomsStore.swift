#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import RoomcastFusion
import Shared

/// The learned-rooms state file (`learn.state_file`): read at start-up, written after every
/// finished label and forget. A write goes to a temporary file beside it, is synced, and
/// renamed over the old one, so a crash or a full disk leaves the previous file whole.
public struct LearnedRoomsStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// Why the file could not be read or written.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var path: String
        public var message: String
        public var description: String { "learned rooms '\(path)': \(message)" }
    }

    /// What was learned, or nil when there is no file yet.
    public func load() throws(Failure) -> LearnedRooms? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            if e == ENOENT { return nil }
            throw Failure(path: path, message: SystemCallError(call: "open", errno: e).description)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n: Int
            do { n = try Syscall.read(fd, into: &chunk) } catch { throw Failure(path: path, message: error.description) }
            if n == 0 { break }
            bytes += chunk[0..<n]
            // One byte past the limit is enough to refuse it.
            if bytes.count > LearnedRooms.maximumFileBytes { break }
        }
        do { return try LearnedRooms.decode(bytes) } catch {
            throw Failure(path: path, message: error.description)
        }
    }

    /// Writes `learned` atomically (temporary file, fsync, rename, fsync of the folder). The
    /// temporary file is this write's own (a random name, created exclusively): two containers
    /// whose aggregators are both process 1 may share the folder.
    /// Returns the bytes written.
    @discardableResult
    public func save(_ learned: LearnedRooms) throws(Failure) -> Int {
        removeLeftovers()
        let temporary = path + ".tmp-\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        let bytes = learned.encoded() + Array("\n".utf8)
        do throws(SystemCallError) {
            try Syscall.createDurably(temporary, bytes: bytes, mode: 0o640)
            do { try Syscall.call("rename") { rename(temporary, path) } } catch {
                unlink(temporary)
                throw error
            }
            // The rename is what a power cut could undo, and after the first save there is no
            // older file to fall back on.
            Syscall.syncFolder(of: path)
        } catch {
            throw Failure(path: path, message: error.description)
        }
        return bytes.count
    }

    /// Removes the temporary files of writes a crash cut short (killed between creating one
    /// and its rename), each with a name of its own: older than a minute, for a write in
    /// progress, even another process's, is younger.
    func removeLeftovers(now: Date = Date()) {
        let file = URL(fileURLWithPath: path)
        let folder = file.deletingLastPathComponent().path, prefix = file.lastPathComponent + ".tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            let leftover = folder + "/" + name
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: leftover))?[.modificationDate] as? Date,
                  now.timeIntervalSince(modified) > 60 else { continue }
            try? FileManager.default.removeItem(atPath: leftover)
        }
    }
}
