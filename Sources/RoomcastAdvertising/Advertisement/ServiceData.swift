/// One Service Data structure (AD types 0x16, 0x20, 0x21): a service UUID and its payload.
public struct ServiceData: Sendable, Equatable {
    public let uuid: BluetoothUUID
    /// The bytes after the UUID. A slice of the input: no copy on the hot path.
    public let data: ArraySlice<UInt8>

    public init(uuid: BluetoothUUID, data: ArraySlice<UInt8>) {
        self.uuid = uuid
        self.data = data
    }

    /// Payload byte at a zero-based position, nil past the end.
    @inlinable public subscript(at i: Int) -> UInt8? {
        i >= 0 && i < data.count ? data[data.startIndex + i] : nil
    }
}
