import Crypto
import Foundation

/// The key derivations and small seal/open helpers pairing and the session share: HKDF-SHA-512
/// to 32 bytes, ChaCha20-Poly1305 with HAP's nonces (4 zero bytes, then 8 bytes: a message
/// label such as `PS-Msg05`, or a little-endian counter). All of it is swift-crypto's.
enum HAPKeys {
    static func derive(_ secret: [UInt8], salt: String, info: String) -> SymmetricKey {
        HKDF<SHA512>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), salt: Array(salt.utf8),
                               info: Array(info.utf8), outputByteCount: 32)
    }

    static func bytes(_ key: SymmetricKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    static func nonce(label: String) -> ChaChaPoly.Nonce {
        // swiftlint:disable:next force_try
        try! ChaChaPoly.Nonce(data: [0, 0, 0, 0] + Array(label.utf8))
    }

    static func nonce(counter: UInt64) -> ChaChaPoly.Nonce {
        var bytes: [UInt8] = [0, 0, 0, 0]
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift))) }
        // swiftlint:disable:next force_try
        return try! ChaChaPoly.Nonce(data: bytes)
    }

    /// Ciphertext followed by the 16-byte tag.
    static func seal(_ plaintext: [UInt8], key: SymmetricKey, nonce: ChaChaPoly.Nonce, aad: [UInt8] = []) -> [UInt8] {
        // Sealing with a valid key and nonce cannot fail.
        let box = try! ChaChaPoly.seal(plaintext, using: key, nonce: nonce, authenticating: aad)
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// Nil when the tag does not match (wrong key, altered bytes) or the input is shorter than a tag.
    static func open(_ sealed: [UInt8], key: SymmetricKey, nonce: ChaChaPoly.Nonce, aad: [UInt8] = []) -> [UInt8]? {
        guard sealed.count >= 16,
              let box = try? ChaChaPoly.SealedBox(nonce: nonce, ciphertext: sealed.dropLast(16), tag: sealed.suffix(16)),
              let plain = try? ChaChaPoly.open(box, using: key, authenticating: aad) else { return nil }
        return Array(plain)
    }
}
