import Testing

@Suite struct RoomcastAdvertisingTestsPlaceholder {
    @Test func builds() { #expect(Bool(true)) }
}
