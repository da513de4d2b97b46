import Shared

/// One line of `truth.jsonl`: where a beacon really was from `t0` to `t1`.
public struct TruthSpan: Codable, Sendable, Equatable {
    public var id: BeaconID
    public var t0: Double
    public var t1: Double
    /// nil = away (encoded as an explicit null).
    public var room: String?

    public init(id: BeaconID, t0: Double, t1: Double, room: String?) {
        self.id = id
        self.t0 = t0
        self.t1 = t1
        self.room = room
    }

    enum CodingKeys: String, CodingKey { case id, t0, t1, room }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(t0, forKey: .t0)
        try c.encode(t1, forKey: .t1)
        try c.encode(room, forKey: .room)
    }
}
