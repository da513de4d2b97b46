#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RoomcastHCI
import Shared

/// Fuzzes `edge-agent --source replay:<file>`: a btsnoop capture read record by record,
/// each record decoded and its advertising reports run through the advertising decoder.
///
/// Input: a whole btsnoop file. `BTSnoopReader` reads paths, so each input is written to one
/// scratch file (in /dev/shm when it exists, to keep the disk out of the loop).
enum BTSnoopHarness {
    static let path: String = {
        let dir = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return "\(dir)/roomcast-fuzz-\(getpid()).btsnoop"
    }()

    static func run(_ input: [UInt8]) {
        guard FileManager.default.createFile(atPath: path, contents: Data(input)) else {
            fatalError("cannot write \(path)")
        }
        // The smallest buffer the reader allows, so records cross refills.
        guard let reader = try? BTSnoopReader(path: path, chunkSize: 0) else { return }
        defer { reader.shutdown() }
        var assembler = ExtendedReportAssembler(maxPending: 4, maxDataLength: 300)
        var records = 0
        while let record = try? reader.next() {
            records += 1
            FuzzCheck.require(records <= input.count / BTSnoopFormat.recordHeaderLength,
                              "more records than the file can hold")
            let frame = record.frame
            var r = record.reader
            let viaReader = Result { () throws(HCIDecodeError) in
                try HCIPacket.decode(type: record.type, from: &r, timestamp: record.timestamp)
            }
            let viaFrame = Result { () throws(HCIDecodeError) in try frame.decode() }
            // Errors may differ in their offset (the reader's is into the capture buffer, the copy's
            // into the packet); the outcome may not.
            FuzzCheck.require((try? viaReader.get()) == (try? viaFrame.get()),
                              "record decodes differently through its frame copy: \(viaReader) vs \(viaFrame)")
            guard case let .success(.event(event)) = viaReader else { continue }
            for report in event.advertisingReports {
                guard let joined = assembler.add(report) else { continue }
                AdvertisingPipeline.run(joined)
            }
        }
    }
}
