import Foundation

/// Whether this test process runs under a sanitizer (`scripts/sanitizers.sh` sets the options
/// every instrumented process reads). There, each process runs several times slower: a test that
/// paces real processes (a capture replayed at a multiple of its speed) paces them slower.
public enum SanitizerRun {
    public static var isActive: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["ASAN_OPTIONS"] != nil || environment["TSAN_OPTIONS"] != nil
    }
}
