import Testing
import TestSupport

/// The skip-or-fail rule of `RequiredTool`, on programs that certainly are and are not there.
@Suite struct RequiredToolTests {
    static let absent = RequiredTool(name: "roomcast-no-such-tool", candidates: ["/nonexistent/roomcast-no-such-tool"],
                                     install: "apt install roomcast-no-such-package")

    @Test func aMissingToolSkipsOutsideCIAndRunsUnderIt() {
        #expect(!Self.absent.isInstalled)
        #expect(Self.absent.path == nil)
        // Under CI the test runs (and then fails in `require()`); elsewhere it is skipped.
        #expect(Self.absent.shouldRun == RequiredTool.isCI)
        #expect(Self.absent.skipReason.rawValue.contains("apt install roomcast-no-such-package"))
    }

    @Test func requiringAMissingToolNamesThePackage() {
        let error = #expect(throws: RequiredTool.Missing.self) { try Self.absent.require() }
        #expect(error?.description.contains("roomcast-no-such-tool is missing") == true)
        #expect(error?.description.contains("apt install roomcast-no-such-package") == true)
    }

    @Test func anInstalledToolIsFoundInCandidateOrder() throws {
        let sh = RequiredTool(name: "sh", candidates: ["/nonexistent/sh", "/bin/sh"], install: "always there")
        #expect(sh.isInstalled && sh.shouldRun)
        #expect(try sh.require() == "/bin/sh")
    }
}
