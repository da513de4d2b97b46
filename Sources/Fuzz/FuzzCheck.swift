/// Invariants a harness checks beyond "does not crash". A failure traps so libFuzzer keeps the input.
enum FuzzCheck {
    static func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                        file: StaticString = #fileID, line: UInt = #line) {
        if !condition() { fatalError("fuzz invariant: \(message())", file: file, line: line) }
    }
}
