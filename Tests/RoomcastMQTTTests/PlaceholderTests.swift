import Testing

@Suite struct RoomcastMQTTTestsPlaceholder {
    @Test func builds() { #expect(Bool(true)) }
}
