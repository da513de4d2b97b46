/// Estimote Telemetry: service data on UUID 0xFE9A, frame type 2
/// (github.com/Estimote/estimote-specs, estimote-telemetry.js). Sub-frame A carries motion,
/// sub-frame B carries environment and battery.
public struct EstimoteTelemetry: Sendable, Equatable {
    /// First 8 bytes of the 16-byte device identifier: stable per device.
    public var identifier: [UInt8]
    public var protocolVersion: UInt8
    public var subframe: Subframe

    public static let serviceUUID: UInt16 = 0xFE9A

    public enum Subframe: Sendable, Equatable {
        case a(MotionA)
        case b(EnvironmentB)
    }

    /// Sub-frame A: acceleration and motion.
    public struct MotionA: Sendable, Equatable {
        /// Acceleration in g (x, y, z).
        public var acceleration: [Double]
        /// Seconds spent in the previous motion state.
        public var previousMotionSeconds: Double
        /// Seconds spent in the current motion state.
        public var currentMotionSeconds: Double
        public var isMoving: Bool
        /// GPIO 0-3 input states.
        public var gpio: [Bool]
        /// Error flags; nil for protocol version 0, which does not send them here.
        public var firmwareError: Bool?
        public var clockError: Bool?
        /// Pressure in Pa (protocol version 2), nil when absent or not supported.
        public var pressure: Double?
    }

    /// Sub-frame B: magnetometer, light, uptime, temperature, battery.
    public struct EnvironmentB: Sendable, Equatable {
        /// Normalised magnetic field (x, y, z in -1...1); nil when not supported.
        public var magneticField: [Double]?
        /// Ambient light in lux; nil when not supported.
        public var ambientLight: Double?
        public var uptimeSeconds: Double
        public var temperature: Double
        /// Battery voltage in mV; nil when not measured.
        public var batteryMillivolts: Int?
        /// Battery level in percent (protocol version 1+); nil when unknown.
        public var batteryLevel: Int?
        /// Error flags; only protocol version 0 sends them in sub-frame B.
        public var firmwareError: Bool?
        public var clockError: Bool?
    }

    /// Decodes the service data bytes after the 0xFE9A UUID; nil for other Estimote frames.
    public static func decode(_ d: ArraySlice<UInt8>) -> EstimoteTelemetry? {
        let s = d.startIndex
        guard d.count >= 10, d[s] & 0x0F == 2 else { return nil }
        let version = d[s] >> 4
        let id = Array(d[(s + 1)..<(s + 9)])
        func at(_ i: Int) -> UInt8 { d[s + i] }
        switch at(9) & 0x03 {
        case 0:
            guard d.count >= 16 else { return nil }
            let acc = (10...12).map { Double(Int8(bitPattern: at($0))) * 2 / 127 }
            var pressure: Double?
            var fw: Bool?, clock: Bool?
            switch version {
            case 2:
                fw = at(15) & 0x04 != 0
                clock = at(15) & 0x08 != 0
                if d.count >= 20 {
                    let raw = UInt32(at(16)) | UInt32(at(17)) << 8 | UInt32(at(18)) << 16 | UInt32(at(19)) << 24
                    pressure = raw == 0xFFFF_FFFF ? nil : Double(raw) / 256
                }
            case 1:
                if d.count >= 17 {
                    fw = at(16) & 0x01 != 0
                    clock = at(16) & 0x02 != 0
                }
            default: break
            }
            return EstimoteTelemetry(identifier: id, protocolVersion: version, subframe: .a(MotionA(
                acceleration: acc, previousMotionSeconds: motionDuration(at(13)),
                currentMotionSeconds: motionDuration(at(14)), isMoving: at(15) & 0x03 == 1,
                gpio: (4...7).map { at(15) & (1 << $0) != 0 }, firmwareError: fw, clockError: clock,
                pressure: pressure)))
        case 1:
            guard d.count >= 20 else { return nil }
            let magnetic: [Double]? = at(10) == 0xFF && at(11) == 0xFF && at(12) == 0xFF
                ? nil : (10...12).map { Double(Int8(bitPattern: at($0))) / 128 }
            let light: Double? = at(13) == 0xFF
                ? nil : Double(1 << Int(at(13) >> 4)) * Double(at(13) & 0x0F) * 0.72
            let uptimeCount = Double(Int(at(14)) | Int(at(15) & 0x0F) << 8)
            let uptimeUnit: Double = [1, 60, 3600, 86400][Int(at(15) >> 4 & 0x03)]
            var rawTemp = Int(at(15) & 0xC0) >> 6 | Int(at(16)) << 2 | Int(at(17) & 0x03) << 10
            if rawTemp >= 2048 { rawTemp -= 4096 }
            let battery = Int(at(17)) >> 2 | Int(at(18)) << 6
            var level: Int?, fw: Bool?, clock: Bool?
            if version == 0 {
                fw = at(19) & 0x01 != 0
                clock = at(19) & 0x02 != 0
            } else if at(19) != 0xFF {
                level = Int(at(19))
            }
            return EstimoteTelemetry(identifier: id, protocolVersion: version, subframe: .b(EnvironmentB(
                magneticField: magnetic, ambientLight: light, uptimeSeconds: uptimeCount * uptimeUnit,
                temperature: Double(rawTemp) / 16, batteryMillivolts: battery == 0x3FFF ? nil : battery,
                batteryLevel: level, firmwareError: fw, clockError: clock)))
        default:
            return nil
        }
    }

    /// Motion-state duration byte: 6-bit count, 2-bit unit (s, min, h, days).
    static func motionDuration(_ b: UInt8) -> Double {
        Double(b & 0x3F) * [1, 60, 3600, 86400][Int(b >> 6)]
    }
}
