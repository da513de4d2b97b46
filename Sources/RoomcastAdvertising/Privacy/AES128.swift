internal import CCrypto
import Synchronization

/// AES-128 in ECB mode over single 16-byte blocks: the Bluetooth security function `e`
/// (Core 5.4 Vol 3 Part H §2.2.1), backed by OpenSSL's libcrypto (`EVP_aes_128_ecb`).
///
/// The only type in this module that touches libcrypto. One cipher context per key, set up
/// once and reused; ECB has no chaining state, so each `encrypt` is independent.
final class AES128: Sendable {
    private let context: Mutex<OpaquePointer?>

    /// Nil when libcrypto cannot set up the cipher (out of memory).
    init?(key: [UInt8]) {
        precondition(key.count == 16, "AES-128 key must be 16 bytes")
        guard let ctx = EVP_CIPHER_CTX_new() else { return nil }
        let ok = key.withUnsafeBufferPointer { k in
            EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nil, k.baseAddress, nil) == 1
                && EVP_CIPHER_CTX_set_padding(ctx, 0) == 1
        }
        guard ok else {
            EVP_CIPHER_CTX_free(ctx)
            return nil
        }
        context = Mutex(ctx)
    }

    deinit {
        context.withLock { ctx in
            EVP_CIPHER_CTX_free(ctx)
            ctx = nil
        }
    }

    /// Encrypts one block. Bytes are in the specification's order: index 0 is the most
    /// significant octet, as in the Core's sample data.
    func encrypt(_ block: [UInt8]) -> [UInt8]? {
        precondition(block.count == 16)
        return context.withLock { ctx -> [UInt8]? in
            guard let ctx else { return nil }
            var out = [UInt8](repeating: 0, count: 32)
            var written: Int32 = 0
            let ok = out.withUnsafeMutableBufferPointer { o in
                block.withUnsafeBufferPointer { i in
                    EVP_EncryptUpdate(ctx, o.baseAddress, &written, i.baseAddress, 16) == 1
                }
            }
            guard ok, written == 16 else { return nil }
            return Array(out[0..<16])
        }
    }
}
