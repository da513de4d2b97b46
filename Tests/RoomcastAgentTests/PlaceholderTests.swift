import Testing

@Suite struct RoomcastAgentTestsPlaceholder {
    @Test func builds() { #expect(Bool(true)) }
}
