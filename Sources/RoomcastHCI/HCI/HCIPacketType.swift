/// The H4 packet indicator that precedes every HCI packet on a UART or a raw
/// HCI socket (Core 5.4 Vol 4 Part A §2, "UART Transport Layer").
public enum HCIPacketType: UInt8, Sendable, Hashable, CaseIterable {
    case command = 0x01
    case aclData = 0x02
    case synchronousData = 0x03
    case event = 0x04
    case isoData = 0x05
}
