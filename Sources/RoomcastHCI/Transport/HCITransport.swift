/// A way to exchange HCI packets with a controller: a raw HCI socket, an H4
/// byte stream (UART, unix socket), or a capture being replayed.
public protocol HCITransport: AnyObject, Sendable {
    /// What this transport talks to, for logs (`hci0`, `/tmp/bt-server-le`, a file).
    var name: String { get }
    /// Packets from the controller; ends on end of file, peer close or `shutdown()`.
    var frames: BoundedStream<HCIFrame> { get }
    /// Why `frames` ended, once it has; nil for a clean end (end of capture, shutdown).
    var terminationError: RadioError? { get }
    /// Sends one command to the controller.
    func send(_ command: HCICommand) throws(RadioError)
    /// Stops reading and releases the descriptor (idempotent).
    func shutdown()
}
