/// One Manufacturer Specific Data structure (AD type 0xFF): a company id and its payload.
public struct ManufacturerData: Sendable, Equatable {
    /// Bluetooth SIG company identifier (little-endian on air), e.g. 0x004C Apple.
    public let companyID: UInt16
    /// The bytes after the company id. A slice of the input: no copy on the hot path.
    public let data: ArraySlice<UInt8>

    public init(companyID: UInt16, data: ArraySlice<UInt8>) {
        self.companyID = companyID
        self.data = data
    }

    /// Payload byte at a zero-based position, nil past the end.
    @inlinable public subscript(at i: Int) -> UInt8? {
        i >= 0 && i < data.count ? data[data.startIndex + i] : nil
    }
}
