import Shared
import RoomcastLogging

/// Creates radio sources and transports from a `RadioSourceSpec`.
public enum RadioSourceFactory {
    /// The source for `spec`: a replay for `btsnoop:`, a live controller otherwise.
    public static func make(_ spec: RadioSourceSpec, options: RadioOptions = RadioOptions(), logger: Logger = .silent,
                            clock: any TimeSource = SystemTimeSource()) -> any RadioSource {
        switch spec {
        case let .btsnoop(path, speed):
            ReplayRadioSource(path: path, speed: speed, bufferCapacity: options.bufferCapacity)
        case .hci, .h4:
            LiveRadioSource(spec: spec, options: options, logger: logger, clock: clock)
        }
    }

    /// Opens the HCI transport for `spec`; `recorder` receives every packet. A live transport
    /// reads in bursts and rests `burstWindow` seconds after each (nil: as long as how its reports
    /// are stamped allows, `FileDescriptorTransport.defaultBurstWindow(for:)`).
    public static func openTransport(_ spec: RadioSourceSpec, recorder: BTSnoopWriter? = nil,
                                     clock: any TimeSource = SystemTimeSource(), capacity: Int = 4096,
                                     burstWindow: Double? = 0) throws(RadioError) -> any HCITransport {
        switch spec {
        case let .hci(device):
            let (fd, name, stamped) = try HCISocket.open(device: device)
            return try FileDescriptorTransport(fd: fd, name: name, recorder: recorder, clock: clock, capacity: capacity,
                                               timestamps: stamped ? .hci : .readTime, burstWindow: burstWindow,
                                               mapWriteError: { HCISocket.map(errno: $0.errno, call: "write", device: name) })
        case let .h4(path, baud):
            let (fd, timestamps) = try H4Device.open(path: path, baud: baud)
            return try FileDescriptorTransport(fd: fd, name: path, recorder: recorder, clock: clock, capacity: capacity,
                                               timestamps: timestamps, burstWindow: burstWindow)
        case let .btsnoop(path, speed):
            return try BTSnoopReplayTransport(path: path, speed: speed)
        }
    }
}
