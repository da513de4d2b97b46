/// Input to `AdvertisementDecoder.report` that could not be read.
public enum DecodeInputError: Error, Equatable, CustomStringConvertible {
    case notHex
    case badAddress(String)
    case badAddressType(String)

    public var description: String {
        switch self {
        case .notHex: return "advertising data is not hex (an even number of 0-9a-f digits; ':', '-' and spaces are ignored)"
        case .badAddress(let a): return "'\(a.prefix(40))' is not a Bluetooth address (aa:bb:cc:dd:ee:ff)"
        case .badAddressType(let t): return "'\(t.prefix(40))' is not an address type (public, random, public_identity, random_identity)"
        }
    }
}
