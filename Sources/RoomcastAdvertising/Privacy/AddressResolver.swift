import Shared
import Synchronization

/// Resolves resolvable private addresses against configured Identity Resolving Keys, so a
/// device whose address rotates keeps one id `irk:<name>`.
///
/// Results (hits and misses) are cached per address in a bounded FIFO: a phone advertises
/// many times per second from one address, and each miss would otherwise cost one AES
/// operation per key.
public final class AddressResolver: Sendable {
    private let keys: [(irk: IdentityResolvingKey, cipher: AES128)]
    private let cache: Mutex<Cache>
    private let stats = Atomic<Int>(0)

    /// Most addresses remembered.
    public let cacheLimit: Int

    public init(keys: [IdentityResolvingKey], cacheLimit: Int = 4096) {
        self.keys = keys.compactMap { k in AES128(key: k.key).map { (k, $0) } }
        self.cacheLimit = max(1, cacheLimit)
        self.cache = Mutex(Cache())
    }

    /// How many AES evaluations have run (for tests and the benchmark).
    public var aesEvaluations: Int { stats.load(ordering: .relaxed) }

    /// The key that `address` resolves with, or nil. Only random addresses whose two top bits
    /// are `01` are resolvable (Core 5.4 Vol 6 Part B §1.3.2.2).
    public func resolve(_ address: BLEAddress, type: BLEAddressType) -> IdentityResolvingKey? {
        guard type == .random, address.randomKind == .resolvablePrivate, !keys.isEmpty else { return nil }
        if let cached = cache.withLock({ $0.lookup(address.value) }) {
            return cached.map { keys[$0].irk }
        }
        var found: Int?
        for (i, k) in keys.enumerated() {
            stats.add(1, ordering: .relaxed)
            if let h = Self.ah(k.cipher, prand: address.prand), h == address.hash {
                found = i
                break
            }
        }
        let limit = cacheLimit
        cache.withLock { $0.insert(address.value, found, limit: limit) }
        return found.map { keys[$0].irk }
    }

    /// Number of addresses in the cache.
    public var cachedCount: Int { cache.withLock { $0.entries.count } }

    /// The random address hash function `ah` (Core 5.4 Vol 3 Part H §2.2.2):
    /// `ah(k, r) = e(k, padding || r) mod 2^24`, with `r` the 24-bit prand.
    public static func ah(irk: [UInt8], prand: UInt32) -> UInt32? {
        guard let c = AES128(key: irk) else { return nil }
        return ah(c, prand: prand)
    }

    static func ah(_ cipher: AES128, prand: UInt32) -> UInt32? {
        var block = [UInt8](repeating: 0, count: 16)
        block[13] = UInt8(truncatingIfNeeded: prand >> 16)
        block[14] = UInt8(truncatingIfNeeded: prand >> 8)
        block[15] = UInt8(truncatingIfNeeded: prand)
        guard let out = cipher.encrypt(block) else { return nil }
        return UInt32(out[13]) << 16 | UInt32(out[14]) << 8 | UInt32(out[15])
    }

    /// Address → index of the resolving key (nil inside: known miss), evicted oldest first.
    struct Cache: ~Copyable {
        var entries: [UInt64: Int?] = [:]
        var order: [UInt64] = []
        var head = 0

        func lookup(_ a: UInt64) -> Int?? { entries[a] }

        mutating func insert(_ a: UInt64, _ v: Int?, limit: Int) {
            guard entries[a] == nil else { return }
            if entries.count >= limit {
                // Ring buffer over insertion order: overwrite the oldest slot.
                let oldest = order[head]
                entries[oldest] = nil
                order[head] = a
                head = (head + 1) % order.count
            } else {
                order.append(a)
            }
            entries[a] = .some(v)
        }
    }
}
