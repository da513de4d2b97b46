import Shared
import RoomcastConfig

extension AgentConfig {
    /// `scan:` how the adapter scans.
    public struct Scan: Codable, Sendable, Equatable {
        /// Active scanning asks for scan responses (more names, more radio traffic). Default false.
        public var active: Bool
        /// LE scan interval in milliseconds (2.5 ... 10240; default 100).
        public var intervalMs: Double
        /// LE scan window in milliseconds, at most the interval (default 100: scan continuously).
        public var windowMs: Double
        /// Restart the scan when no report arrived for this long, in seconds; 0 disables (default 60).
        public var restartAfterS: Double
        /// The live radio is read in bursts, resting this many milliseconds after each (0 ... 100;
        /// 0 hands every packet over as it comes, at more CPU). Unset: 100 where the kernel stamps
        /// each report's reception (`hci:`, a seqpacket socket), 50 where a report gets the time of
        /// the read (a UART, a stream socket), which must stay under a fast beacon's interval.
        public var burstWindowMs: Double?

        public init(active: Bool = false, intervalMs: Double = 100, windowMs: Double = 100, restartAfterS: Double = 60,
                    burstWindowMs: Double? = nil) {
            self.active = active
            self.intervalMs = intervalMs
            self.windowMs = windowMs
            self.restartAfterS = restartAfterS
            self.burstWindowMs = burstWindowMs
        }

        enum CodingKeys: String, CodingKey {
            case active, intervalMs = "interval_ms", windowMs = "window_ms", restartAfterS = "restart_after_s"
            case burstWindowMs = "burst_window_ms"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let d = Scan()
            active = try c.decode(Bool.self, forKey: .active, default: d.active)
            intervalMs = try c.decode(Double.self, forKey: .intervalMs, default: d.intervalMs)
            windowMs = try c.decode(Double.self, forKey: .windowMs, default: d.windowMs)
            restartAfterS = try c.decode(Double.self, forKey: .restartAfterS, default: d.restartAfterS)
            burstWindowMs = try c.decodeIfPresent(Double.self, forKey: .burstWindowMs)
        }
    }

    /// `ranging:` from RSSI to distance and proximity.
    public struct Ranging: Codable, Sendable, Equatable {
        public var filter: Filter
        /// Path-loss exponent n in d = 10^((power - rssi) / (10 n)). Default 2.5:
        /// between free space (2.0) and typical furnished rooms (2.7 ... 3.5),
        /// which keeps near readings honest without inflating far ones.
        public var pathLossExponent: Double
        /// Added to every RSSI this node measures, in dB (antenna/case calibration). Default 0.
        public var rxAdjustDb: Double
        /// RSSI at 1 m assumed when a beacon advertises none and no `beacons:` entry sets one. Default -59.
        public var defaultPower: Int
        /// Below this distance a beacon is "immediate", in metres (default 0.5).
        public var immediateM: Double
        /// Below this distance a beacon is "near", else "far", in metres (default 3.0).
        public var nearM: Double
        /// Forget a beacon not heard for this long, in seconds (default 30).
        public var forgetAfterS: Double

        public init(filter: Filter = Filter(), pathLossExponent: Double = 2.5, rxAdjustDb: Double = 0,
                    defaultPower: Int = -59, immediateM: Double = 0.5, nearM: Double = 3.0, forgetAfterS: Double = 30) {
            self.filter = filter
            self.pathLossExponent = pathLossExponent
            self.rxAdjustDb = rxAdjustDb
            self.defaultPower = defaultPower
            self.immediateM = immediateM
            self.nearM = nearM
            self.forgetAfterS = forgetAfterS
        }

        enum CodingKeys: String, CodingKey {
            case filter, pathLossExponent = "path_loss_exponent", rxAdjustDb = "rx_adjust_db",
                 defaultPower = "default_power", immediateM = "immediate_m", nearM = "near_m", forgetAfterS = "forget_after_s"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let d = Ranging()
            filter = try c.decode(Filter.self, forKey: .filter, default: d.filter)
            pathLossExponent = try c.decode(Double.self, forKey: .pathLossExponent, default: d.pathLossExponent)
            rxAdjustDb = try c.decode(Double.self, forKey: .rxAdjustDb, default: d.rxAdjustDb)
            defaultPower = try c.decode(Int.self, forKey: .defaultPower, default: d.defaultPower)
            immediateM = try c.decode(Double.self, forKey: .immediateM, default: d.immediateM)
            nearM = try c.decode(Double.self, forKey: .nearM, default: d.nearM)
            forgetAfterS = try c.decode(Double.self, forKey: .forgetAfterS, default: d.forgetAfterS)
        }
    }

    /// `ranging.filter:` how raw RSSI samples are smoothed.
    public struct Filter: Codable, Sendable, Equatable {
        public enum Kind: String, ConfigEnum {
            /// Median of the last `window` samples, then a 1-D Kalman filter.
            case medianKalman = "median_kalman"
            case kalman
            case median
            /// Raw RSSI.
            case none
        }

        public var kind: Kind
        /// Samples in the median window (default 3).
        public var window: Int
        /// Kalman process noise Q, in dB² per second of elapsed time, so a beacon heard every
        /// 100 ms and one heard every 10 s are filtered alike (default 8).
        public var processNoise: Double
        /// Kalman measurement noise R of one median output, in dB² (default 16).
        public var measurementNoise: Double
        /// Samples further than this from the estimate are down-weighted, in dB (default 12).
        public var outlierDb: Double

        public init(kind: Kind = .medianKalman, window: Int = 3, processNoise: Double = 8,
                    measurementNoise: Double = 16, outlierDb: Double = 12) {
            self.kind = kind
            self.window = window
            self.processNoise = processNoise
            self.measurementNoise = measurementNoise
            self.outlierDb = outlierDb
        }

        enum CodingKeys: String, CodingKey {
            case kind, window, processNoise = "process_noise", measurementNoise = "measurement_noise", outlierDb = "outlier_db"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let d = Filter()
            kind = try c.decode(Kind.self, forKey: .kind, default: d.kind)
            window = try c.decode(Int.self, forKey: .window, default: d.window)
            processNoise = try c.decode(Double.self, forKey: .processNoise, default: d.processNoise)
            measurementNoise = try c.decode(Double.self, forKey: .measurementNoise, default: d.measurementNoise)
            outlierDb = try c.decode(Double.self, forKey: .outlierDb, default: d.outlierDb)
        }
    }

    /// `publish:` when readings go out.
    public struct Publish: Codable, Sendable, Equatable {
        /// Longest gap between two reports of a beacon still heard, in seconds (default 1.0).
        public var reportIntervalS: Double
        /// Report at once when the filtered RSSI moved this much, in dB (default 3).
        public var significantChangeDb: Double
        /// Report at once when the distance moved this much, in metres (default 0.5).
        public var significantChangeM: Double
        /// Node telemetry period, in seconds (default 60).
        public var telemetryIntervalS: Double

        public init(reportIntervalS: Double = 1.0, significantChangeDb: Double = 3, significantChangeM: Double = 0.5,
                    telemetryIntervalS: Double = 60) {
            self.reportIntervalS = reportIntervalS
            self.significantChangeDb = significantChangeDb
            self.significantChangeM = significantChangeM
            self.telemetryIntervalS = telemetryIntervalS
        }

        enum CodingKeys: String, CodingKey {
            case reportIntervalS = "report_interval_s", significantChangeDb = "significant_change_db",
                 significantChangeM = "significant_change_m", telemetryIntervalS = "telemetry_interval_s"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let d = Publish()
            reportIntervalS = try c.decode(Double.self, forKey: .reportIntervalS, default: d.reportIntervalS)
            significantChangeDb = try c.decode(Double.self, forKey: .significantChangeDb, default: d.significantChangeDb)
            significantChangeM = try c.decode(Double.self, forKey: .significantChangeM, default: d.significantChangeM)
            telemetryIntervalS = try c.decode(Double.self, forKey: .telemetryIntervalS, default: d.telemetryIntervalS)
        }
    }

    /// `advertise:` let the node itself transmit an iBeacon (for calibration).
    public struct Advertise: Codable, Sendable, Equatable {
        /// Default false.
        public var enabled: Bool
        /// iBeacon proximity UUID; required when enabled.
        public var uuid: String?
        public var major: UInt16
        public var minor: UInt16
        /// Measured power at 1 m advertised in the frame, dBm (default -59).
        public var power: Int
        /// Advertising interval in milliseconds (20 ... 10240; default 1000).
        public var intervalMs: Double

        public init(enabled: Bool = false, uuid: String? = nil, major: UInt16 = 0, minor: UInt16 = 0,
                    power: Int = -59, intervalMs: Double = 1000) {
            self.enabled = enabled
            self.uuid = uuid
            self.major = major
            self.minor = minor
            self.power = power
            self.intervalMs = intervalMs
        }

        enum CodingKeys: String, CodingKey {
            case enabled, uuid, major, minor, power, intervalMs = "interval_ms"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let d = Advertise()
            enabled = try c.decode(Bool.self, forKey: .enabled, default: d.enabled)
            uuid = try c.decodeIfPresent(String.self, forKey: .uuid)
            major = try c.decode(UInt16.self, forKey: .major, default: d.major)
            minor = try c.decode(UInt16.self, forKey: .minor, default: d.minor)
            power = try c.decode(Int.self, forKey: .power, default: d.power)
            intervalMs = try c.decode(Double.self, forKey: .intervalMs, default: d.intervalMs)
        }
    }

    /// `outputs:` extra topic layouts published besides Roomcast's own: one `true`/`false` key
    /// per `CompatibilityOutput` (`mqtt_room`, `espresense`; default false).
    public struct Outputs: Codable, Sendable, Equatable {
        /// The outputs turned on, in the order of `CompatibilityOutput.all`.
        public var enabled: [CompatibilityOutput]

        public init(enabled: [CompatibilityOutput] = []) {
            self.enabled = enabled
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: SettingCodingKey.self)
            enabled = try CompatibilityOutput.all.filter {
                try c.decode(Bool.self, forKey: SettingCodingKey(stringValue: $0.key), default: false)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: SettingCodingKey.self)
            for output in CompatibilityOutput.all {
                try c.encode(enabled.contains(output), forKey: SettingCodingKey(stringValue: output.key))
            }
        }
    }
}
