import Crypto

/// The encrypted session after pair-verify: each frame is a 2-byte little-endian length (also the
/// frame's additional authenticated data), up to 1024 bytes of ChaCha20-Poly1305 ciphertext and
/// its 16-byte tag; each direction has its own key and a 64-bit frame counter as nonce.
public struct HAPSessionCipher: Sendable {
    public static let maxFrame = 1024
    /// Raw key bytes (swift-crypto's `SymmetricKey` is not `Sendable`).
    private let readKeyBytes: [UInt8]
    private let writeKeyBytes: [UInt8]
    private var readKey: SymmetricKey { SymmetricKey(data: readKeyBytes) }
    private var writeKey: SymmetricKey { SymmetricKey(data: writeKeyBytes) }
    private var inCounter: UInt64 = 0
    private var outCounter: UInt64 = 0

    /// - Parameters:
    ///   - sharedSecret: pair-verify's X25519 secret.
    ///   - isAccessory: the accessory decrypts with the controller's write key and encrypts with
    ///     the read key; a controller the other way round.
    public init(sharedSecret: [UInt8], isAccessory: Bool) {
        let controllerWrites = HAPKeys.derive(sharedSecret, salt: "Control-Salt", info: "Control-Write-Encryption-Key")
        let accessoryWrites = HAPKeys.derive(sharedSecret, salt: "Control-Salt", info: "Control-Read-Encryption-Key")
        readKeyBytes = HAPKeys.bytes(isAccessory ? controllerWrites : accessoryWrites)
        writeKeyBytes = HAPKeys.bytes(isAccessory ? accessoryWrites : controllerWrites)
    }

    /// `plaintext` as frames of at most 1024 bytes each.
    public mutating func seal(_ plaintext: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        repeat {
            let end = min(start + Self.maxFrame, plaintext.count)
            let aad = [UInt8(truncatingIfNeeded: end - start), UInt8(truncatingIfNeeded: (end - start) >> 8)]
            out += aad + HAPKeys.seal(Array(plaintext[start..<end]), key: writeKey, nonce: HAPKeys.nonce(counter: outCounter), aad: aad)
            outCounter += 1
            start = end
        } while start < plaintext.count
        return out
    }

    /// Takes every complete frame off the front of `buffer` and returns their plaintext; an
    /// incomplete frame stays for the next bytes. A frame that does not authenticate, or claims
    /// more than 1024 bytes, ends the session.
    public mutating func open(_ buffer: inout [UInt8]) throws(HAPSessionError) -> [UInt8] {
        var plain: [UInt8] = []
        while buffer.count >= 2 {
            let length = Int(buffer[0]) | Int(buffer[1]) << 8
            guard length <= Self.maxFrame else { throw .frameTooLong(length) }
            guard buffer.count >= 2 + length + 16 else { break }
            let aad = Array(buffer[0..<2])
            guard let frame = HAPKeys.open(Array(buffer[2..<(2 + length + 16)]), key: readKey,
                                           nonce: HAPKeys.nonce(counter: inCounter), aad: aad) else {
                throw .authentication(frame: inCounter)
            }
            inCounter += 1
            plain += frame
            buffer.removeFirst(2 + length + 16)
        }
        return plain
    }
}

public enum HAPSessionError: Error, Equatable {
    case frameTooLong(Int)
    /// The frame with this counter failed its tag.
    case authentication(frame: UInt64)
}
