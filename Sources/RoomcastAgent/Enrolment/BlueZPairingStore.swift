import Foundation
import Shared

/// The Identity Resolving Keys of the devices paired with this computer, read from BlueZ's
/// pairing store: `<dir>/<adapter address>/<device address>/info`, a GLib key file.
///
/// Byte order: bluetoothd writes `[IdentityResolvingKey] Key=` with `store_irk` (src/adapter.c),
/// which prints the 16 bytes of the kernel's mgmt New IRK event in buffer order, and every mgmt
/// field is little-endian (doc/mgmt-protocol.rst); its own AES (`bt_crypto_e`, src/shared/crypto.c)
/// swaps the buffer before use. So the file holds the key least significant byte first, the
/// reverse of the Core specification's notation, which `IRKConfig.key` uses by default: each key
/// is reversed here, and printed most significant byte first.
public enum BlueZPairingStore {
    /// bluetoothd's `STORAGEDIR`.
    public static let defaultDirectory = "/var/lib/bluetooth"

    /// One paired device that gave its IRK.
    public struct Device: Sendable, Equatable {
        public var adapter: String
        public var address: String
        /// `[General] Name=` (the name the phone gave), if any.
        public var name: String?
        /// 16 bytes, most significant first.
        public var key: [UInt8]
    }

    /// What the store held.
    public struct Contents: Sendable, Equatable {
        public var devices: [Device]
        /// Paired devices without an `[IdentityResolvingKey]` (classic-only pairings, or a phone that
        /// did not distribute one).
        public var withoutKey: [String]
        /// Paired devices whose `[IdentityResolvingKey]` holds no 32 hex digits: a damaged store.
        public var badKey: [String] = []
    }

    /// Why the store could not be read; says what to do.
    public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Reads every adapter's paired devices under `directory`.
    public static func read(directory: String = defaultDirectory) throws(ReadError) -> Contents {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir), isDir.boolValue else {
            throw ReadError(description: "no BlueZ pairing store at \(directory): install bluez and pair the phone with bluetoothctl first (docs/fingerprints.md), or give the folder with --bluetooth-dir")
        }
        let adapters = try list(directory).filter(isAddress).sorted()
        var contents = Contents(devices: [], withoutKey: [])
        for adapter in adapters {
            for device in try list("\(directory)/\(adapter)").filter(isAddress).sorted() {
                guard let text = try info("\(directory)/\(adapter)/\(device)/info") else { continue }
                let file = KeyFile(text)
                guard let hex = file["IdentityResolvingKey", "Key"] else {
                    contents.withoutKey.append(device)
                    continue
                }
                guard let key = parseKey(hex) else {
                    contents.badKey.append(device)
                    continue
                }
                contents.devices.append(Device(adapter: adapter, address: device, name: file["General", "Name"], key: key))
            }
        }
        return contents
    }

    /// A device's `info` file, nil when it has none. A device folder that cannot be searched is
    /// a permission problem, not a device without a file; anything else names its own cause.
    static func info(_ path: String) throws(ReadError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            // None there, or an entry named like a device that is not a folder: no device.
            if e == ENOENT || e == ENOTDIR { return nil }
            if e == EACCES || e == EPERM { throw denied(path) }
            throw ReadError(description: "cannot read \(path): \(String(cString: strerror(e)))")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw ReadError(description: "cannot read \(path): not a regular file")
        }
        do {
            let data = try FileHandle(fileDescriptor: fd, closeOnDealloc: false).readToEnd() ?? Data()
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw ReadError(description: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// The key of a `Key=` value, most significant byte first; nil unless 32 hex digits.
    /// bluetoothd also accepts a `0x` prefix (`get_irk_info`).
    static func parseKey(_ value: String) -> [UInt8]? {
        var v = Substring(value.trimmingCharacters(in: .whitespaces))
        if v.hasPrefix("0x") || v.hasPrefix("0X") { v = v.dropFirst(2) }
        guard v.count == 32, let bytes = Hex.decode(String(v)), bytes.count == 16 else { return nil }
        return bytes.reversed()
    }

    static func list(_ path: String) throws(ReadError) -> [String] {
        do { return try FileManager.default.contentsOfDirectory(atPath: path) } catch {
            if access(path, R_OK | X_OK) != 0, errno == EACCES { throw denied(path) }
            throw ReadError(description: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    static func denied(_ path: String) -> ReadError {
        ReadError(description: "cannot read \(path): permission denied; BlueZ's pairing store is readable by root only: run sudo edge-agent irks import")
    }

    /// `AA:BB:CC:DD:EE:FF`, as bluetoothd names adapter and device folders.
    static func isAddress(_ name: String) -> Bool {
        let parts = name.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }

    /// The little of GLib's key-file format `info` files use: `[Group]` lines, `Key=Value` lines, `#` comments.
    struct KeyFile {
        var values: [String: [String: String]] = [:]

        init(_ text: String) {
            var group = ""
            for raw in text.split(whereSeparator: \.isNewline) {
                let line = raw.trimmingCharacters(in: .whitespaces)
                if line.isEmpty || line.hasPrefix("#") { continue }
                if line.hasPrefix("["), line.hasSuffix("]") {
                    group = String(line.dropFirst().dropLast())
                } else if let eq = line.firstIndex(of: "=") {
                    let key = line[..<eq].trimmingCharacters(in: .whitespaces)
                    values[group, default: [:]][key] = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
                }
            }
        }

        subscript(group: String, key: String) -> String? { values[group]?[key] }
    }
}
