import Foundation
import RoomcastAdvertising
import Shared
import Testing
import TestSupport
@testable import RoomcastAgent
import RoomcastConfig
import RoomcastYAML

/// `edge-agent irks import` over a pairing store laid out as bluetoothd writes it.
@Suite struct IRKImportTests {
    /// An iPhone's `info` file as bluetoothd 5.66 writes it after `bluetoothctl pair` (keys made up
    /// but for the IRK). The IRK is the Core 5.4 Vol 3 Part H Appendix D.7 sample key
    /// ec0234a3 57c8ad05 341010a6 0a397d9b (most significant octet first), which bluetoothd's
    /// `store_irk` prints in mgmt (little-endian) buffer order: 9B7D390AA610103405ADC857A33402EC.
    /// With it the RPA 70:81:94:0D:FB:AA resolves (prand 708194, hash 0dfbaa).
    static let iPhoneInfo = """
        [General]
        Name=Alice's iPhone
        Class=0x7a020c
        SupportedTechnologies=BR/EDR;LE;
        Trusted=false
        Blocked=false
        Services=00001000-0000-1000-8000-00805f9b34fb;0000110a-0000-1000-8000-00805f9b34fb;

        [IdentityResolvingKey]
        Key=9B7D390AA610103405ADC857A33402EC

        [LinkKey]
        Key=5D2F0C7E11A4B9D3E6F87A1B2C3D4E5F
        Type=8
        PINLength=0

        [PeripheralLongTermKey]
        Key=0A1B2C3D4E5F60718293A4B5C6D7E8F9
        Authenticated=2
        EncSize=16
        EDiv=0
        Rand=0

        """
    /// A keyboard paired over BR/EDR only: no IRK.
    static let keyboardInfo = """
        [General]
        Name=Keyboard K380
        SupportedTechnologies=BR/EDR;

        [LinkKey]
        Key=00112233445566778899AABBCCDDEEFF
        Type=4
        PINLength=0

        """
    static let sampleKey = "ec0234a357c8ad05341010a60a397d9b"

    static func store(_ devices: [String: String]) throws -> String {
        let root = NSTemporaryDirectory() + "bluez-\(UUID().uuidString.prefix(8))"
        for (address, info) in devices {
            let dir = "\(root)/DC:A6:32:01:02:03/\(address)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try info.write(toFile: "\(dir)/info", atomically: true, encoding: .utf8)
        }
        // bluetoothd's own files next to the devices, which are not devices.
        try "[General]\nDiscoverable=false\n".write(toFile: "\(root)/DC:A6:32:01:02:03/settings", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(root)/DC:A6:32:01:02:03/cache", withIntermediateDirectories: true)
        return root
    }

    @Test func bluezKeysAreReversedToTheSpecificationOrderAndResolveTheSampleAddress() throws {
        let root = try Self.store(["4C:57:CA:11:22:33": Self.iPhoneInfo, "F0:1D:BC:44:55:66": Self.keyboardInfo])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let contents = try BlueZPairingStore.read(directory: root)
        #expect(contents.withoutKey == ["F0:1D:BC:44:55:66"])
        let device = try #require(contents.devices.first)
        #expect(contents.devices.count == 1)
        #expect(Hex.encode(device.key) == Self.sampleKey)
        #expect(device.name == "Alice's iPhone")

        // What it prints loads as agent.yaml and resolves the phone's address.
        let yaml = IRKImport.yaml(IRKImport.entries(contents.devices))
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall-pi\n" + yaml)
        #expect(config.irks.map(\.name) == ["alice-s-iphone"])
        let resolver = AddressResolver(keys: config.irks.compactMap { IdentityResolvingKey(name: $0.name, hex: $0.key.revealed) })
        #expect(resolver.resolve(try #require(BLEAddress("70:81:94:0d:fb:aa")), type: .random)?.name == "alice-s-iphone")
    }

    @Test func keysMayHaveA0xPrefixAndBadOnesAreSkipped() {
        #expect(BlueZPairingStore.parseKey("0x9B7D390AA610103405ADC857A33402EC").map(Hex.encode) == Self.sampleKey)
        #expect(BlueZPairingStore.parseKey("9B7D390AA610103405ADC857A33402") == nil)
    }

    @Test func namesAreValidUniqueAndFallBackToTheAddress() {
        let key = { (b: UInt8) in [UInt8](repeating: b, count: 16) }
        let devices = [
            BlueZPairingStore.Device(adapter: "A", address: "4C:57:CA:11:22:33", name: "Pixel 8", key: key(1)),
            BlueZPairingStore.Device(adapter: "A", address: "4C:57:CA:11:22:34", name: "Pixel 8", key: key(2)),
            BlueZPairingStore.Device(adapter: "A", address: "4C:57:CA:11:22:35", name: nil, key: key(3)),
            BlueZPairingStore.Device(adapter: "B", address: "4C:57:CA:11:22:33", name: "Pixel 8", key: key(1)),
        ]
        #expect(IRKImport.entries(devices, taken: ["pixel-8"]).map(\.name) == ["pixel-8-2", "pixel-8-3", "device-4c57ca112235"])
        #expect(IRKImport.entries(devices, existingKeys: [key(1)]).map(\.name) == ["pixel-8", "device-4c57ca112235"])
    }

    @Test func aMissingStoreSaysWhatToDo() {
        let error = #expect(throws: BlueZPairingStore.ReadError.self) { try BlueZPairingStore.read(directory: "/nonexistent/bluetooth") }
        #expect(error?.description.contains("bluetoothctl") == true)
        #expect(BlueZPairingStore.denied("/var/lib/bluetooth").description.contains("sudo"))
    }

    /// A device's `info` that cannot be read is named with its own cause, not called "permission
    /// denied" (nor, for a device folder that cannot be searched, silently skipped).
    @Test func anUnreadableInfoIsNamedWithItsCause() throws {
        let root = try Self.store(["4C:57:CA:11:22:33": Self.iPhoneInfo])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let adapter = try #require(try FileManager.default.contentsOfDirectory(atPath: root).first)
        // A file named like a device is no device: skipped, not an error.
        try "x".write(toFile: "\(root)/\(adapter)/4C:57:CA:11:22:55", atomically: true, encoding: .utf8)
        #expect(try BlueZPairingStore.read(directory: root).devices.map(\.address) == ["4C:57:CA:11:22:33"])
        let odd = "\(root)/\(adapter)/4C:57:CA:11:22:44/info"
        try FileManager.default.createDirectory(atPath: odd, withIntermediateDirectories: true)
        let error = #expect(throws: BlueZPairingStore.ReadError.self) { try BlueZPairingStore.read(directory: root) }
        #expect(error?.description == "cannot read \(odd): not a regular file")
    }

    static let agentYAML = """
        # Hall receiver.
        node: hall-pi
        irks:
          - name: bob-watch   # Bob's watch
            key: "00112233445566778899aabbccddeeff"
        # Outputs for Home Assistant.
        outputs:
          mqtt_room: true

        """

    @Test func writeMergesIntoTheListKeepsTheRestAndABackup() throws {
        let root = try Self.store(["4C:57:CA:11:22:33": Self.iPhoneInfo])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/agent.yaml"
        try Self.agentYAML.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o640)
        let parsed = try EdgeAgentCLI.spec.parse(["irks", "import", "--bluetooth-dir", root, "-c", path, "--write"])
        guard case .run(let command) = parsed else { Issue.record("not a command: \(parsed)"); return }
        #expect(EdgeAgentCLI.importIRKs(command) == .success)
        let merged = try String(contentsOfFile: path, encoding: .utf8)
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: merged)
        #expect(config.irks.map(\.name) == ["bob-watch", "alice-s-iphone"])
        #expect(config.irks.last?.key.revealed == Self.sampleKey)
        #expect(config.outputs.enabled == [.mqttRoom])
        #expect(merged.contains("# Hall receiver.") && merged.contains("# Outputs for Home Assistant.") && merged.contains("# Bob's watch"))
        #expect(try String(contentsOfFile: path + ".bak", encoding: .utf8) == Self.agentYAML)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o640)
        #expect(try FileManager.default.attributesOfItem(atPath: path + ".bak")[.posixPermissions] as? Int == 0o640)
        #expect(!FileManager.default.fileExists(atPath: path + ".irks-import.tmp"))
        // Again: the key is there already, nothing changes.
        #expect(EdgeAgentCLI.importIRKs(command) == .success)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == merged)
    }

    /// A config reached through a symbolic link: the file it names is rewritten and keeps its
    /// mode, and the link stays a link. Read from the link, the mode was 0777, put on both files.
    @Test func writeThroughASymlinkKeepsTheTargetPrivate() throws {
        let root = try Self.store(["4C:57:CA:11:22:33": Self.iPhoneInfo])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let target = root + "/managed-agent.yaml", link = root + "/agent.yaml"
        try Self.agentYAML.write(toFile: target, atomically: true, encoding: .utf8)
        chmod(target, 0o600)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let parsed = try EdgeAgentCLI.spec.parse(["irks", "import", "--bluetooth-dir", root, "-c", link, "--write"])
        guard case .run(let command) = parsed else { Issue.record("not a command: \(parsed)"); return }
        #expect(EdgeAgentCLI.importIRKs(command) == .success)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: try String(contentsOfFile: target, encoding: .utf8))
        #expect(config.irks.map(\.name) == ["bob-watch", "alice-s-iphone"])
        #expect(try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: target + ".bak")[.posixPermissions] as? Int == 0o600)
    }

    /// A device name is the radio's: control characters in it (an escape sequence) are not copied
    /// into the printed YAML, which libyaml would refuse and the terminal would act on.
    @Test func aDeviceNameWithControlCharactersPrintsLoadableYAML() throws {
        let device = BlueZPairingStore.Device(adapter: "00:1A:7D:DA:71:13", address: "4C:57:CA:11:22:33",
                                              name: "Bob\u{1B}[2J\u{07}\r\u{85}watch", key: Array(repeating: 7, count: 16))
        let text = IRKImport.yaml(IRKImport.entries([device]))
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) })
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall-pi\n" + text)
        #expect(config.irks.map(\.name) == ["bob-2j-watch"])
    }

    /// The files `--write` creates (the backup, the new config before it takes the old one's
    /// mode) are readable by their owner only from the start, whatever the umask, and never
    /// written through something already at their path.
    @Test func theFilesWriteCreatesStartPrivate() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-irks-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try IRKImport.writePrivately(Array("irks: []\n".utf8), to: path)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "irks: []\n")
        #expect(throws: SystemCallError(call: "open", errno: EEXIST)) { try IRKImport.writePrivately(Array("x".utf8), to: path) }
    }

    @Test(arguments: [
        ("node: hall-pi\n", ["alice-s-iphone"]),
        ("node: hall-pi\nirks: []\nlog:\n  level: debug\n", ["alice-s-iphone"]),
        ("node: hall-pi\nirks:\n- name: w\n  key: \"00112233445566778899aabbccddeeff\"\nlog:\n  level: debug\n", ["w", "alice-s-iphone"]),
        // An `irks:` with no item under it yet: nothing, the file's end, or only a comment.
        ("node: hall-pi\nirks:\nlog:\n  level: info\n", ["alice-s-iphone"]),
        ("node: hall-pi\nirks:\n", ["alice-s-iphone"]),
        ("node: hall-pi\nirks:\n  # paste keys here\n", ["alice-s-iphone"]),
    ])
    func mergesIntoEveryFormOfTheList(_ yaml: String, _ names: [String]) throws {
        let entries = [IRKImport.Entry(name: "alice-s-iphone", key: Self.sampleKey, source: "test")]
        let merged = try IRKImport.merge(entries, into: yaml)
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: merged)
        #expect(config.irks.map(\.name) == names)
    }

    @Test func aConfigThatDoesNotLoadIsNotTouched() throws {
        let root = try Self.store(["4C:57:CA:11:22:33": Self.iPhoneInfo])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/agent.yaml"
        let broken = "node: hall-pi\nirks:\n  - name: [oops\n"
        try broken.write(toFile: path, atomically: true, encoding: .utf8)
        guard case .run(let command) = try EdgeAgentCLI.spec.parse(["irks", "import", "--bluetooth-dir", root, "-c", path, "--write"]) else {
            Issue.record("not a command"); return
        }
        #expect(EdgeAgentCLI.importIRKs(command) == .config)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == broken)
        #expect(!FileManager.default.fileExists(atPath: path + ".bak"))
        // A flow-style list is refused rather than rewritten.
        #expect(throws: IRKImport.MergeError.self) {
            try IRKImport.merge([IRKImport.Entry(name: "a", key: Self.sampleKey, source: "t")],
                                into: "node: n\nirks: [{name: b, key: \"00112233445566778899aabbccddeeff\"}]\n")
        }
    }

    /// A config saved with Windows line ends gets the keys, its line ends kept; a JSON config
    /// (which loads) is refused with the entries as JSON, not "does not load".
    @Test func windowsLineEndsAreMergedAndAJSONConfigIsRefusedClearly() throws {
        let entries = [IRKImport.Entry(name: "alice-s-iphone", key: Self.sampleKey, source: "test")]
        for yaml in ["node: hall-pi\r\nirks:\r\n", "node: hall-pi\r\nirks: []\r\nlog:\r\n  level: info\r\n",
                     "node: hall-pi\r\nirks:\r\n  - name: w\r\n    key: \"00112233445566778899aabbccddeeff\"\r\n"] {
            let merged = try IRKImport.merge(entries, into: yaml)
            #expect(try ConfigLoader.parse(AgentConfig.self, yaml: merged).irks.map(\.name).contains("alice-s-iphone"), "\(merged.debugDescription)")
            #expect(!merged.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "one kind of line end: \(merged.debugDescription)")
        }
        #expect { try IRKImport.merge(entries, into: "{\"node\": \"hall-pi\"}\n") } throws: { error in
            guard let merge = error as? IRKImport.MergeError else { return false }
            // The keys go to stdout, never into the error.
            return merge.description.contains("the config is JSON") && !merge.description.contains(Self.sampleKey)
                && merge.byHand?.contains("\"key\" : \"\(Self.sampleKey)\"") == true
        }
    }

    /// A key that is not 32 hex digits is a damaged store, said as such; with no key at all to
    /// add, `--write` says so rather than that the config already has every key.
    @Test func aDamagedKeyAndNothingToImportAreSaidAsTheyAre() async throws {
        let damaged = Self.iPhoneInfo.replacingOccurrences(of: "Key=9B7D390AA610103405ADC857A33402EC", with: "Key=ABC")
        let root = try Self.store(["4C:57:CA:11:22:33": damaged, "4C:57:CA:11:22:44": Self.keyboardInfo])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let contents = try BlueZPairingStore.read(directory: root)
        #expect(contents.devices.isEmpty && contents.badKey == ["4C:57:CA:11:22:33"] && contents.withoutKey == ["4C:57:CA:11:22:44"])
        let path = root + "/agent.yaml"
        try "node: hall-pi\n".write(toFile: path, atomically: true, encoding: .utf8)
        let run = try await BuiltExecutable.run("edge-agent", ["irks", "import", "--bluetooth-dir", root, "-c", path, "--write"])
        #expect(run.status == 0)
        #expect(run.stderr.contains("not 32 hex digits") && run.stderr.contains("no paired device gave an identity resolving key"),
                "\(run.stderr)")
        #expect(!run.stderr.contains("already has every"), "\(run.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "node: hall-pi\n")
    }
}
