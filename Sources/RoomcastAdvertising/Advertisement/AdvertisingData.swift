/// The decoded AD structures of one advertisement or scan response
/// (Core 5.4 Vol 3 Part C §11, Supplement to the Core Specification Part A).
///
/// Decoding never fails: every well-formed structure is decoded, every problem
/// lands in `issues`, and a structure whose length runs past the end stops the walk
/// (its boundary, and so every later one, is unknown).
public struct AdvertisingData: Sendable, Equatable {
    /// Flags (type 0x01), first octet.
    public var flags: UInt8?
    /// Shortened Local Name (type 0x08).
    public var shortName: String?
    /// Complete Local Name (type 0x09).
    public var completeName: String?
    /// Service UUIDs from the 16/32/128-bit lists (types 0x02-0x07), in order of appearance.
    public var serviceUUIDs: [BluetoothUUID] = []
    /// Service Data (types 0x16, 0x20, 0x21), in order of appearance.
    public var serviceData: [ServiceData] = []
    /// Manufacturer Specific Data (type 0xFF), in order of appearance.
    public var manufacturerData: [ManufacturerData] = []
    /// TX Power Level (type 0x0A) in dBm.
    public var txPowerLevel: Int8?
    /// Appearance (type 0x19).
    public var appearance: UInt16?
    /// Well-formed structures seen (of any type).
    public var structureCount = 0
    /// What was malformed, in input order.
    public var issues: [ADIssue] = []

    public init() {}

    /// The name to show: the complete name, else the shortened one.
    public var localName: String? { completeName ?? shortName }

    /// The first service data for a 16-bit UUID.
    @inlinable public func serviceData(uuid16: UInt16) -> ServiceData? {
        let target = BluetoothUUID(uuid16: uuid16)
        for s in serviceData where s.uuid == target { return s }
        return nil
    }

    /// The first manufacturer data of a company.
    @inlinable public func manufacturerData(company: UInt16) -> ManufacturerData? {
        for m in manufacturerData where m.companyID == company { return m }
        return nil
    }

    /// Decodes the AD structures in `bytes` (advertising data or scan response data).
    public static func decode(_ bytes: [UInt8]) -> AdvertisingData {
        var ad = AdvertisingData()
        decode(bytes, into: &ad)
        return ad
    }

    /// Decodes `bytes` into `ad`, which ends up as `decode(bytes)` would return it; its arrays keep
    /// their storage. The agent decodes every advertisement into the same value, so the arrays of
    /// one advertisement (its manufacturer data above all) are not allocated and freed each time.
    public static func decode(_ bytes: [UInt8], into ad: inout AdvertisingData) {
        ad.reset()
        let n = bytes.count
        var i = 0
        while i < n {
            let length = Int(bytes[i])
            if length == 0 {
                // Zero padding. Core Vol 3 Part C §11 ends the significant part here, but
                // Android scan records and some controllers concatenate the zero-padded
                // advertising data with the scan response, so skip it and go on.
                i += 1
                continue
            }
            guard length <= n - i - 1 else {
                let type: UInt8? = i + 1 < n ? bytes[i + 1] : nil
                ad.issues.append(ADIssue(offset: i, adType: type,
                                         problem: .overrun(length: length, available: n - i - 1)))
                break
            }
            let type = bytes[i + 1]
            let payload = bytes[(i + 2)..<(i + 1 + length)]
            ad.structureCount += 1
            ad.decodeStructure(type: type, payload: payload, offset: i)
            i += 1 + length
        }
    }

    /// Empty again, as `init()`, keeping the arrays' storage.
    private mutating func reset() {
        flags = nil
        shortName = nil
        completeName = nil
        serviceUUIDs.empty()
        serviceData.empty()
        manufacturerData.empty()
        txPowerLevel = nil
        appearance = nil
        structureCount = 0
        issues.empty()
    }

    private mutating func decodeStructure(type: UInt8, payload: ArraySlice<UInt8>, offset: Int) {
        let count = payload.count
        let start = payload.startIndex
        func bad(_ expected: String) {
            issues.append(ADIssue(offset: offset, adType: type, problem: .badLength(length: count, expected: expected)))
        }
        switch type {
        case 0x00:
            issues.append(ADIssue(offset: offset, adType: type, problem: .reservedType))
        case 0x01:
            if count >= 1 { flags = payload[start] } else { bad("at least 1") }
        case 0x02, 0x03:
            if count % 2 != 0 { bad("a multiple of 2") }
            var j = start
            while j + 2 <= payload.endIndex {
                serviceUUIDs.append(BluetoothUUID(uuid16: UInt16(payload[j]) | UInt16(payload[j + 1]) << 8))
                j += 2
            }
        case 0x04, 0x05:
            if count % 4 != 0 { bad("a multiple of 4") }
            var j = start
            while j + 4 <= payload.endIndex {
                serviceUUIDs.append(BluetoothUUID(uuid32: Self.le32(payload, j)))
                j += 4
            }
        case 0x06, 0x07:
            if count % 16 != 0 { bad("a multiple of 16") }
            var j = start
            while j + 16 <= payload.endIndex {
                serviceUUIDs.append(BluetoothUUID(littleEndian: payload[j..<(j + 16)]))
                j += 16
            }
        case 0x08, 0x09:
            let name = decodeName(payload, offset: offset, type: type)
            if type == 0x08 { shortName = name ?? shortName } else { completeName = name ?? completeName }
        case 0x0A:
            if count == 1 { txPowerLevel = Int8(bitPattern: payload[start]) } else { bad("1") }
        case 0x16:
            if count >= 2 {
                let uuid = BluetoothUUID(uuid16: UInt16(payload[start]) | UInt16(payload[start + 1]) << 8)
                serviceData.append(ServiceData(uuid: uuid, data: payload[(start + 2)...]))
            } else { bad("at least 2") }
        case 0x20:
            if count >= 4 {
                serviceData.append(ServiceData(uuid: BluetoothUUID(uuid32: Self.le32(payload, start)),
                                               data: payload[(start + 4)...]))
            } else { bad("at least 4") }
        case 0x21:
            if count >= 16 {
                serviceData.append(ServiceData(uuid: BluetoothUUID(littleEndian: payload[start..<(start + 16)]),
                                               data: payload[(start + 16)...]))
            } else { bad("at least 16") }
        case 0x19:
            if count == 2 { appearance = UInt16(payload[start]) | UInt16(payload[start + 1]) << 8 } else { bad("2") }
        case 0xFF:
            if count >= 2 {
                let company = UInt16(payload[start]) | UInt16(payload[start + 1]) << 8
                manufacturerData.append(ManufacturerData(companyID: company, data: payload[(start + 2)...]))
            } else { bad("at least 2") }
        default:
            break // Other assigned types carry nothing the beacon path needs.
        }
    }

    private mutating func decodeName(_ payload: ArraySlice<UInt8>, offset: Int, type: UInt8) -> String? {
        // Some stacks pad names with NULs inside the structure.
        var end = payload.endIndex
        while end > payload.startIndex, payload[end - 1] == 0 { end -= 1 }
        let bytes = payload[payload.startIndex..<end]
        guard !bytes.isEmpty else {
            issues.append(ADIssue(offset: offset, adType: type, problem: .badLength(length: payload.count, expected: "a name")))
            return nil
        }
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        issues.append(ADIssue(offset: offset, adType: type, problem: .invalidUTF8))
        return String(decoding: bytes, as: UTF8.self)
    }

    @inline(__always)
    static func le32(_ p: ArraySlice<UInt8>, _ j: Int) -> UInt32 {
        UInt32(p[j]) | UInt32(p[j + 1]) << 8 | UInt32(p[j + 2]) << 16 | UInt32(p[j + 3]) << 24
    }
}

extension Array {
    /// Removes every element, keeping the storage: element by element from the end, which for the
    /// few elements of one advertisement costs less than `removeAll(keepingCapacity:)`'s generic
    /// range replacement (and nothing when empty).
    @inline(__always)
    mutating func empty() {
        while !isEmpty { removeLast() }
    }
}
