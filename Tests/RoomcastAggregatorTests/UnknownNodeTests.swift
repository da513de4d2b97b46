import Testing
import Shared
@testable import RoomcastAggregator

/// An agent whose `node` differs from the aggregator's `nodes:` in case only (`Kitchen-Pi`,
/// `kitchen-pi`) is refused with the name it most likely means: told to list a node it believes
/// listed, the user would look in the wrong place.
@Suite struct UnknownNodeTests {
    @Test func aNodeNameDifferentInCaseIsPointedToTheListedOne() {
        var intake = InputIntake(topics: Topics(), knownNodes: ["kitchen-pi", "office-pi"])
        guard case .failure(let why) = intake.accept(topic: Topics().nodeStatus("Kitchen-Pi"), payload: Array("online".utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(why.reason == .unknownNode)
        #expect(why.message == "node 'Kitchen-Pi' is not among this aggregator's nodes; did you mean 'kitchen-pi'? (node names are matched exactly, case too)")
        guard case .failure(let far) = intake.accept(topic: Topics().nodeStatus("garage-esp32"), payload: Array("online".utf8)) else { return }
        #expect(far.message.contains("list it under nodes:"))
    }
}
