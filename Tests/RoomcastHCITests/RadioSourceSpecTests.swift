import Glibc
@testable import RoomcastHCI
import Testing

@Suite struct RadioSourceSpecTests {
    @Test(arguments: [
        ("hci", RadioSourceSpec.hci(device: nil)),
        ("hci:hci0", .hci(device: "hci0")),
        ("hci:hci12", .hci(device: "hci12")),
        ("h4:/tmp/bt-server-le", .h4(path: "/tmp/bt-server-le", baud: nil)),
        ("h4:/dev/ttyUSB0@1000000", .h4(path: "/dev/ttyUSB0", baud: 1_000_000)),
        ("btsnoop:/data/a.btsnoop", .btsnoop(path: "/data/a.btsnoop", speed: .realtime)),
        ("btsnoop:/data/a.btsnoop@max", .btsnoop(path: "/data/a.btsnoop", speed: .max)),
        ("btsnoop:/data/a.btsnoop@2.5", .btsnoop(path: "/data/a.btsnoop", speed: .factor(2.5))),
        ("btsnoop:a.btsnoop@10x", .btsnoop(path: "a.btsnoop", speed: .factor(10))),
        // An `@` with a `/` after it is in the path (it was refused).
        ("btsnoop:/srv/u@host/cap.btsnoop", .btsnoop(path: "/srv/u@host/cap.btsnoop", speed: .realtime)),
        ("btsnoop:/srv/u@host/cap.btsnoop@max", .btsnoop(path: "/srv/u@host/cap.btsnoop", speed: .max)),
        ("h4:/run/u@x/bt.sock", .h4(path: "/run/u@x/bt.sock", baud: nil)),
    ])
    func parses(text: String, expected: RadioSourceSpec) throws {
        #expect(try RadioSourceSpec.parse(text) == expected)
    }

    @Test(arguments: ["", "usb:1", "hci:", "hci:eth0", "hci:hci", "h4:", "btsnoop:", "btsnoop:a@fast2", "btsnoop:a@0", "h4:/dev/x@-1"])
    func rejects(text: String) {
        #expect(throws: RadioError.invalidSource(text)) { try RadioSourceSpec.parse(text) }
    }

    @Test func speedCanBeSetApart() throws {
        #expect(try RadioSourceSpec.parse("btsnoop:x").with(speed: .max) == .btsnoop(path: "x", speed: .max))
        #expect(RadioSourceSpec.hci(device: nil).with(speed: .max) == .hci(device: nil))
        #expect(RadioSourceSpec.default == .hci(device: nil))
        #expect(ReplaySpeed("realtime") == .realtime)
        #expect(ReplaySpeed("nope") == nil)
    }

    @Test func errorMessagesSayHowToFix() {
        let permission = RadioError.permissionDenied(device: "hci0", call: "bind").description
        #expect(permission.contains("sudo setcap cap_net_raw+ep $(which edge-agent)"))
        #expect(permission.contains("AmbientCapabilities=CAP_NET_RAW`"))
        #expect(RadioError.adapterDown(device: "hci0").description.contains("power on"))
        #expect(RadioError.adapterBusy(device: "hci0").description.contains("busy"))
        #expect(!RadioError.permissionDenied(device: "hci0", call: "bind").isTransient)
        #expect(RadioError.adapterNotFound(device: "hci0", detail: "x").isTransient)
        // A serial controller needs the device's group, not a capability.
        let serial = RadioError.permissionDenied(device: "/dev/ttyAMA0", call: "open").description
        #expect(serial.contains("dialout") && serial.contains("DeviceAllow=") && !serial.contains("setcap"))
    }

    /// A speed the agent cannot set opened the line at 115200, and the agent then retried
    /// for good with "no answer" warnings that never named the speed.
    @Test func anUnsupportedSerialSpeedIsRefusedWithTheOnesThatWork() throws {
        #expect(try RadioSourceSpec.parse("h4:/dev/ttyAMA0@3000000") == .h4(path: "/dev/ttyAMA0", baud: 3_000_000))
        #expect(throws: RadioError.self) { try RadioSourceSpec.parse("h4:/dev/ttyAMA0@1200000") }
        do {
            _ = try RadioSourceSpec.parse("h4:/dev/ttyAMA0@1200000")
        } catch {
            #expect(error.description.contains("1200000 baud") && error.description.contains("1500000"))
            #expect(!error.isTransient)
        }
    }

    @Test func rawHCISocketWithoutKernelSupportSaysSo() async throws {
        // This machine's kernel has no AF_BLUETOOTH; on one with Bluetooth but no
        // adapter the error is also adapterNotFound. Either way it must be clear.
        do {
            let transport = try RadioSourceFactory.openTransport(.hci(device: "hci0"))
            transport.shutdown()
        } catch let error {
            switch error {
            case .adapterNotFound, .adapterDown, .permissionDenied, .adapterBusy: break
            default: Issue.record("unexpected \(error)")
            }
            #expect(!error.description.isEmpty)
        }
    }

    @Test func missingH4SocketIsAdapterNotFound() {
        #expect(throws: RadioError.adapterNotFound(device: "/nonexistent/h4.sock", detail: "no such socket or serial device")) {
            try RadioSourceFactory.openTransport(.h4(path: "/nonexistent/h4.sock", baud: nil))
        }
    }
}

/// What the kernel says on a Pi becomes the error a user can act on.
@Suite struct HCIErrnoMappingTests {
    @Test(arguments: [
        (EPERM, "permission"), (EACCES, "permission"), (EBUSY, "busy"), (EALREADY, "busy"),
        (ENODEV, "absent"), (ENETDOWN, "down"), (ERFKILL, "down"),
    ])
    func errnoBecomesAnActionableError(_ code: Int32, _ kind: String) {
        let error = HCISocket.map(errno: code, call: "bind", device: "hci0")
        switch (error, kind) {
        case (.permissionDenied, "permission"), (.adapterBusy, "busy"), (.adapterNotFound, "absent"), (.adapterDown, "down"): break
        default: Issue.record("errno \(code) gave \(error)")
        }
    }
}

/// "hciN" names the kernel's device N without asking libbluetooth (whose `hci_devid` fails alike
/// for an adapter that is down and one that is absent): `HCIGETDEVINFO` then tells them apart.
/// No Bluetooth in this machine's kernel, so the ioctl itself is exercised on a Pi only.
@Suite struct HCIDeviceNameTests {
    @Test func hciNIsReadAsTheDeviceIndex() {
        #expect(HCISocket.deviceNumber("hci0") == 0 && HCISocket.deviceNumber("hci12") == 12)
        #expect(HCISocket.deviceNumber("hci65535") == 65535)
        for other in ["hci", "hci+1", "hci-1", "hci1a", "hci65536", "00:11:22:33:44:55", "hci１"] {
            #expect(HCISocket.deviceNumber(other) == nil, "\(other)")
        }
    }

    /// No adapter up: the one the kernel has is named as down, whatever its number (hci1 after
    /// hci0 went, a USB adapter plugged in again), not reported as no adapter at all.
    @Test func theAdapterThatIsDownIsNamedWhateverItsNumber() {
        #expect(HCISocket.noAdapterUp(present: ["hci1"]) == .adapterDown(device: "hci1"))
        #expect(HCISocket.noAdapterUp(present: ["hci3", "hci2", "rfkill0"]) == .adapterDown(device: "hci2"))
        #expect(HCISocket.noAdapterUp(present: []) == .adapterNotFound(device: "hci", detail: "no Bluetooth adapter is present"))
    }
}

/// The raw socket's filter: every event the agent reads (Command Complete and Status, LE Meta,
/// Hardware Error) passes, and the two that carry link keys do not, so a phone paired with
/// bluetoothctl on this Pi while `--record` runs leaves no key in the capture.
@Suite struct HCISocketFilterTests {
    @Test func theEventsThatCarryLinkKeysAreNotRead() {
        let filter = HCISocket.eventFilter()
        func passes(_ event: UInt32) -> Bool {
            let word = event < 32 ? filter.event_mask.0 : filter.event_mask.1
            return word & (1 << (event % 32)) != 0
        }
        #expect(filter.type_mask == 1 << 4, "events only")
        for event: UInt32 in [0x0E, 0x0F, 0x10, 0x3E, 0x05, 0x1A] { #expect(passes(event), "event 0x\(String(event, radix: 16))") }
        for event: UInt32 in [0x15, 0x18] { #expect(!passes(event), "event 0x\(String(event, radix: 16))") }
    }
}
