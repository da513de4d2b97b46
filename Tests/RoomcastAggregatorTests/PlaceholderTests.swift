import Testing

@Suite struct RoomcastAggregatorTestsPlaceholder {
    @Test func builds() { #expect(Bool(true)) }
}
