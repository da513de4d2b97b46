import Testing

@Suite struct RoomcastHCITestsPlaceholder {
    @Test func builds() { #expect(Bool(true)) }
}
