import Foundation

#if FUZZING
// Built with -sanitize=fuzzer: libFuzzer provides `main` and calls this module's entry through
// LLVMFuzzerRunDriver, handing it the argv it owns (corpus dirs, -max_total_time, ...).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Chosen once; the callback is a C function pointer and cannot capture it.
let selectedTarget: FuzzTarget? = FuzzTarget.fromEnvironment()

@_cdecl("Fuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    guard selectedTarget != nil else { return 64 }
    var count = argc
    var values = argv
    return LLVMFuzzerRunDriver(&count, &values) { data, size in
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        selectedTarget?.run(bytes)
        return 0
    }
}
#else
/// A plain build replays inputs (crash files, corpus directories) through the same harnesses,
/// so a saved crash can be debugged without libFuzzer:
/// `roomcast-fuzz <target> <file or dir>...` (the target may also come from ROOMCAST_FUZZ_TARGET).
@main
struct FuzzCorpusRunner {
    static func main() {
        var args = Array(CommandLine.arguments.dropFirst())
        if args.first == "-h" || args.first == "--help" {
            print(usage)
            return
        }
        let target: FuzzTarget
        if let first = args.first, let t = FuzzTarget(rawValue: first) {
            target = t
            args.removeFirst()
        } else if let t = FuzzTarget.fromEnvironment() {
            target = t
        } else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(64)
        }
        var files: [String] = []
        for path in args { files += inputs(at: path) }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("roomcast-fuzz: cannot read \(file)\n".utf8))
                exit(66)
            }
            // Named first, so the input that traps is the last one printed.
            print("\(target.rawValue): \(file)")
            target.run(Array(data))
        }
        print("\(target.rawValue): \(files.count) input(s) ran without a crash")
    }

    static let usage = """
        USAGE: roomcast-fuzz [\(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|"))] <file or directory>...
        Replays inputs through a fuzz harness. Build with -DFUZZING -sanitize=fuzzer for libFuzzer (scripts/fuzz.sh).
        """

    /// A file, or every regular file under a directory, sorted.
    static func inputs(at path: String) -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue else { return [path] }
        let items = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
        return items.sorted().map { "\(path)/\($0)" }.filter {
            var d: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &d) && !d.boolValue
        }
    }
}
#endif
