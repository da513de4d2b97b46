import Foundation

/// One fuzzed decoder. libFuzzer owns argv, so the harness is chosen with
/// `ROOMCAST_FUZZ_TARGET` (see scripts/fuzz.sh and docs/reliability.md).
enum FuzzTarget: String, CaseIterable, Sendable {
    /// AD structures and beacon frames through `AdvertisementDecoder` (RoomcastAdvertising).
    case ad
    /// MQTT payloads and topics: `WireFormat.decode` of every wire type, `MessageLogLine.decode`, `Topics.parse`.
    case wire
    /// H4 byte streams: `H4Framer`, `HCIPacket`/`HCIEvent` decoding, `ExtendedReportAssembler` (RoomcastHCI).
    case hci
    /// Whole btsnoop captures through `BTSnoopReader`, as `--source replay:` reads them.
    case btsnoop
    /// YAML/JSON config text through `ConfigLoader` for the agent, aggregator and advertising configs.
    case config
    /// One MQTT message (topic NUL payload) through `InputIntake` and `AggregatorCore.handle` into fusion.
    case intake
    /// The retained lease payload through `LeaseElection.observe`.
    case lease
    /// The retained receiver calibration payload, decoded by the intake and resumed by `FusionEngine`.
    case calibration
    /// ESPresense device messages (topic NUL payload) through `ESPresenseInput`.
    case espresense
    /// The learned-rooms state file through `LearnedRooms.decode`, then restored, taught and written again.
    case learned

    static let environmentKey = "ROOMCAST_FUZZ_TARGET"

    /// The target named in the environment, or nil with a message on standard error.
    static func fromEnvironment() -> FuzzTarget? {
        let name = ProcessInfo.processInfo.environment[environmentKey] ?? ""
        guard let t = FuzzTarget(rawValue: name) else {
            let known = allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("roomcast-fuzz: set \(environmentKey)=\(known)\n".utf8))
            return nil
        }
        return t
    }

    /// Runs one input. Returning means the input was handled; a broken invariant traps
    /// (`FuzzCheck`), which libFuzzer reports as a crash and saves.
    func run(_ bytes: [UInt8]) {
        switch self {
        case .ad: AdvertisingHarness.run(bytes)
        case .wire: WireHarness.run(bytes)
        case .hci: HCIHarness.run(bytes)
        case .btsnoop: BTSnoopHarness.run(bytes)
        case .config: ConfigHarness.run(bytes)
        case .intake: IntakeHarness.run(bytes)
        case .lease: LeaseHarness.run(bytes)
        case .calibration: CalibrationHarness.run(bytes)
        case .espresense: ESPresenseHarness.run(bytes)
        case .learned: LearnedRoomsHarness.run(bytes)
        }
    }
}
