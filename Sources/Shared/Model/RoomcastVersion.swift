/// The version both executables report (`--version`, telemetry, discovery).
public enum RoomcastVersion {
    public static let current = "0.1.0"
}
