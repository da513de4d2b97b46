import Foundation

/// gzip through the system's `gzip` binary: Foundation on Linux has no gzip API,
/// and this is only used by tools and tests, never on the data path.
public enum Gzip {
    /// Why (de)compression failed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    static let candidates = ["/bin/gzip", "/usr/bin/gzip"]

    static func executable() throws -> URL {
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "gzip not found in \(candidates.joined(separator: ", ")); install the gzip package")
        }
        return URL(fileURLWithPath: path)
    }

    /// The decompressed contents of a .gz file.
    public static func decompress(file: URL) throws -> Data {
        try run(["-dc", file.path], input: nil)
    }

    /// `data` gzip-compressed (deterministic: no name or time stamp in the header).
    public static func compress(_ data: Data) throws -> Data {
        try run(["-cn"], input: data)
    }

    private static func run(_ arguments: [String], input: Data?) throws -> Data {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inPipe = input.map { _ in Pipe() }
        if let inPipe { process.standardInput = inPipe }
        try process.run()
        // Feed stdin on another thread so a full stdout pipe cannot deadlock us.
        if let inPipe, let input {
            let writer = inPipe.fileHandleForWriting
            Thread.detachNewThread {
                writer.write(input)
                try? writer.close()
            }
        }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let why = String(decoding: errors, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw Failure(description: "gzip \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(why)")
        }
        return output
    }
}
