import Foundation

extension AgentConfig {
    /// A `regions:` entry: an iBeacon region (uuid, optional major/minor) or
    /// an Eddystone region (namespace, optional instance).
    public struct Region: Codable, Sendable, Equatable {
        public var name: String
        /// iBeacon proximity UUID.
        public var uuid: String?
        public var major: UInt16?
        public var minor: UInt16?
        /// Eddystone namespace, 20 hex digits.
        public var namespace: String?
        /// Eddystone instance, 12 hex digits.
        public var instance: String?

        public init(name: String, uuid: String? = nil, major: UInt16? = nil, minor: UInt16? = nil,
                    namespace: String? = nil, instance: String? = nil) {
            self.name = name
            self.uuid = uuid
            self.major = major
            self.minor = minor
            self.namespace = namespace
            self.instance = instance
        }

        /// `uuid` parsed; nil when absent or invalid (validation reports the latter).
        public var uuidValue: UUID? { uuid.flatMap(UUID.init(uuidString:)) }
    }

    /// An `irks:` entry: a name and a 16-byte identity resolving key as 32 hex digits.
    public struct IRK: Codable, Sendable, Equatable {
        public var name: String
        public var key: String

        public init(name: String, key: String) {
            self.name = name
            self.key = key
        }

        /// The key's 16 bytes, in the order written; nil when not 32 hex digits.
        public var keyBytes: [UInt8]? {
            guard let bytes = Hex.decode(key), bytes.count == 16 else { return nil }
            return bytes
        }
    }

    /// A `fingerprints:` entry: matches advertisements without a beacon frame.
    /// Every matcher given must match; at least one must be given.
    public struct FingerprintRule: Codable, Sendable, Equatable {
        /// The rule's name, used in the beacon id `fp:<name>-<value>`.
        public var name: String
        /// Company identifier of the manufacturer data (e.g. 0x004C).
        public var manufacturerID: UInt16?
        /// Hex bytes the manufacturer data must start with (after the company id).
        public var prefixHex: String?
        /// A 16-bit (`feaa`) or 128-bit service UUID the device advertises.
        public var serviceUUID: String?
        /// The advertised local name, exactly.
        public var localName: String?

        public init(name: String, manufacturerID: UInt16? = nil, prefixHex: String? = nil,
                    serviceUUID: String? = nil, localName: String? = nil) {
            self.name = name
            self.manufacturerID = manufacturerID
            self.prefixHex = prefixHex
            self.serviceUUID = serviceUUID
            self.localName = localName
        }

        enum CodingKeys: String, CodingKey {
            case name, manufacturerID = "manufacturer_id", prefixHex = "prefix_hex",
                 serviceUUID = "service_uuid", localName = "local_name"
        }

        /// `prefix_hex` as bytes; nil when absent or not hex.
        public var prefixBytes: [UInt8]? { prefixHex.flatMap(Hex.decode) }
    }
}
