import BigInt
import Crypto
import Foundation

/// The accessory's half of SRP-6a as HAP's pair-setup uses it: RFC 5054's 3072-bit group,
/// SHA-512, the user name `Pair-Setup` and the setup code as password; public keys, the shared
/// secret and u's inputs padded to the group's 384 bytes (as Apple's and aiohomekit's
/// controllers compute them). The big-number arithmetic is attaswift/BigInt's; hashing is swift-crypto's.
public struct SRPServer: Sendable {
    /// RFC 5054 appendix A, the 3072-bit group's prime.
    public static let modulus = BigUInt(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B"
            + "302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE6"
            + "49286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB9ED529077096966D"
            + "670C354E4ABC9804F1746C08CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF695581718"
            + "3995497CEA956AE515D2261898FA051015728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7D"
            + "B3970F85A6E1E4C7ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C"
            + "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF",
        radix: 16)!
    /// The group's generator.
    public static let generator = BigUInt(5)
    /// Bytes of a padded group element.
    public static let length = 384
    public static let username = "Pair-Setup"

    /// k = H(N | PAD(g)).
    static let multiplier = BigUInt(Data(hash(bytes(modulus), padded(generator))))
    /// H(N) xor H(g), the first term of the client's proof.
    static let groupHash: [UInt8] = zip(hash(bytes(modulus)), hash(bytes(generator))).map { $0 ^ $1 }

    public let salt: [UInt8]
    let verifier: BigUInt
    let privateKey: BigUInt
    /// B = k·v + g^b mod N, padded: what M2 carries.
    public let publicKey: [UInt8]

    /// - Parameters:
    ///   - password: the setup code as `XXX-XX-XXX`.
    ///   - salt: 16 random bytes.
    ///   - privateKey: b, 32 random bytes.
    public init(password: String, salt: [UInt8], privateKey: [UInt8]) {
        self.salt = salt
        let x = BigUInt(Data(Self.hash(salt, Self.hash(Array("\(Self.username):\(password)".utf8)))))
        verifier = Self.generator.power(x, modulus: Self.modulus)
        self.privateKey = BigUInt(Data(privateKey))
        let b = (Self.multiplier * verifier + Self.generator.power(self.privateKey, modulus: Self.modulus)) % Self.modulus
        publicKey = Self.padded(b)
    }

    /// A fresh server with random salt and private key.
    public init(password: String) {
        var rng = SystemRandomNumberGenerator()
        self.init(password: password,
                  salt: (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &rng) },
                  privateKey: (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &rng) })
    }

    /// The outcome of a correct client proof: the server's proof for M4 and the session key K.
    public struct Verified: Sendable {
        public let serverProof: [UInt8]
        public let sessionKey: [UInt8]
    }

    /// Checks the client's public key A and proof M1 (in constant time); nil when either is wrong.
    public func verify(clientPublicKey: [UInt8], clientProof: [UInt8]) -> Verified? {
        let a = BigUInt(Data(clientPublicKey))
        guard a % Self.modulus != 0, clientPublicKey.count <= Self.length else { return nil }
        let aBytes = Self.padded(a)
        let u = BigUInt(Data(Self.hash(aBytes, publicKey)))
        guard u != 0 else { return nil }
        let s = (a * verifier.power(u, modulus: Self.modulus)).power(privateKey, modulus: Self.modulus)
        let k = Self.hash(Self.padded(s))
        let expected = Self.hash(Self.groupHash, Self.hash(Array(Self.username.utf8)), salt, aBytes, publicKey, k)
        guard ConstantTime.equal(expected, clientProof) else { return nil }
        return Verified(serverProof: Self.hash(aBytes, expected, k), sessionKey: k)
    }

    static func hash(_ parts: [UInt8]...) -> [UInt8] {
        var sha = SHA512()
        for part in parts { sha.update(data: part) }
        return Array(sha.finalize())
    }

    static func bytes(_ n: BigUInt) -> [UInt8] { Array(n.serialize()) }

    static func padded(_ n: BigUInt) -> [UInt8] {
        let raw = bytes(n)
        return [UInt8](repeating: 0, count: max(0, length - raw.count)) + raw
    }
}

/// Secret comparison whose time does not depend on where the inputs differ.
public enum ConstantTime {
    public static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
