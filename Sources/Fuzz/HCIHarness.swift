import RoomcastAdvertising
import RoomcastHCI
import Shared

/// Fuzzes what the agent reads from an HCI socket or UART: an H4 byte stream cut into packets,
/// each decoded, advertising reports joined and run through the advertising decoder.
///
/// Input: raw H4 bytes (indicator, header, parameters, possibly several packets).
enum HCIHarness {
    static func run(_ input: [UInt8]) {
        // A single packet: decoding must not depend on the path taken, and no prefix of a
        // packet that decodes may decode too (STYLE.md: every truncated prefix throws).
        if let whole = try? HCIPacket.decode(h4: input, timestamp: 1) {
            FuzzCheck.require((try? HCIPacket.decode(h4: Array(input.dropLast()), timestamp: 1)) == nil,
                              "a truncated packet decoded")
            if case let .event(e) = whole {
                FuzzCheck.require((try? HCIEvent.decode(Array(input.dropFirst()), timestamp: 1)) == e,
                                  "HCIEvent.decode differs from HCIPacket.decode")
            }
        }
        if input.first == HCIPacketType.event.rawValue { checkReportFastPath(Array(input.dropFirst())) }

        // A stream: framing must not depend on how reads cut it.
        let packets = frames(input, chunk: input.count)
        let chunk = 1 + Int(input.first ?? 0) % 7
        FuzzCheck.require(frames(input, chunk: chunk) == packets, "framing depends on read size \(chunk)")

        var assembler = ExtendedReportAssembler(maxPending: 4, maxDataLength: 300)
        for p in packets.frames {
            var reader = ByteReader(p.bytes)
            guard let packet = try? HCIPacket.decode(type: p.type, from: &reader, timestamp: 1) else { continue }
            guard case let .event(event) = packet else { continue }
            for report in event.advertisingReports {
                guard let joined = assembler.add(report) else { continue }
                AdvertisingPipeline.run(joined)
            }
        }
        FuzzCheck.require(assembler.pendingCount <= 4, "assembler holds \(assembler.pendingCount) > maxPending")
    }

    /// The reader threads take report events by a path of their own (`LEMetaEvent.appendReports`),
    /// which must give what `HCIEvent.decode` gives: the same reports, the same refusals, and
    /// nothing left behind of an event it refused.
    static func checkReportFastPath(_ event: [UInt8]) {
        let decoded = Result { () throws(HCIDecodeError) in try HCIEvent.decode(event, timestamp: 1) }
        let earlier = AdvertisingReport(address: [1, 2, 3, 4, 5, 6], addressType: .public, eventType: AdvertisingEventType(legacy: 0),
                                        rssi: -60, data: [], timestamp: 0)
        var reports = [earlier]
        do {
            guard try LEMetaEvent.appendReports(ofEvent: ByteReader(event), timestamp: 1, into: &reports) else { return }
            guard case .success(.leMeta(.advertisingReports(let slow))) = decoded else {
                FuzzCheck.require(false, "the report fast path took an event HCIEvent.decode does not read as reports")
                return
            }
            FuzzCheck.require(reports == [earlier] + slow, "the report fast path differs from HCIEvent.decode")
        } catch {
            FuzzCheck.require(reports == [earlier], "the report fast path kept reports of an event it refused")
            if case .success(let e) = decoded { FuzzCheck.require(false, "the report fast path refused an event HCIEvent.decode reads: \(e)") }
        }
    }

    struct Framed: Equatable {
        var frames: [HCIFrameBytes] = []
        var failed = false
    }

    struct HCIFrameBytes: Equatable {
        var type: HCIPacketType
        var bytes: [UInt8]
    }

    /// Every packet the framer yields when fed `chunk` bytes at a time, and whether it threw.
    static func frames(_ input: [UInt8], chunk: Int) -> Framed {
        var framer = H4Framer()
        var out = Framed()
        var i = 0
        repeat {
            let end = min(input.count, i + max(chunk, 1))
            framer.append(input[i..<end])
            i = end
            do {
                while let p = try framer.next() { out.frames.append(HCIFrameBytes(type: p.type, bytes: p.bytes)) }
            } catch {
                out.failed = true
                return out
            }
        } while i < input.count
        return out
    }
}

/// The agent's step from an HCI advertising report to a decoded advertisement.
enum AdvertisingPipeline {
    static func run(_ report: AdvertisingReport) {
        let address = BLEAddress(report.address)
        FuzzCheck.require(address != nil, "report address is not 6 bytes")
        let type = BLEAddressType(hci: report.addressType.rawValue)
        let decoded = AdvertisingHarness.decoder.decode(report.data, address: address, addressType: type, rssi: report.rssi)
        AdvertisingHarness.check(decoded)
    }
}
