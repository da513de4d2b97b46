import Shared

/// Hex fixture to bytes; a typo in a fixture is a test bug, so it traps.
func bytes(_ hex: String) -> [UInt8] {
    guard let b = Hex.decode(hex) else { fatalError("bad hex fixture: \(hex)") }
    return b
}
