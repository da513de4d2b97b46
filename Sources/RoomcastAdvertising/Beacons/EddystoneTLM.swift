/// Plain Eddystone-TLM telemetry (version 0).
public struct EddystoneTLM: Sendable, Equatable {
    /// Battery voltage in mV; 0 means not supported.
    public var batteryMillivolts: UInt16
    /// Temperature, signed 8.8 fixed point; 0x8000 means not supported.
    public var temperatureRaw: Int16
    /// Advertising PDUs sent since power-on.
    public var advertisementCount: UInt32
    /// Time since power-on in 0.1 s units.
    public var uptimeTenths: UInt32

    /// Temperature in °C, nil when the beacon has no sensor.
    public var temperature: Double? {
        temperatureRaw == Int16(bitPattern: 0x8000) ? nil : Double(temperatureRaw) / 256
    }

    /// Seconds since power-on.
    public var uptime: Double { Double(uptimeTenths) / 10 }
}
