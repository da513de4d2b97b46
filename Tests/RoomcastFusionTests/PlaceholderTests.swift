import Testing

@Suite struct RoomcastFusionTestsPlaceholder {
    @Test func builds() { #expect(Bool(true)) }
}
