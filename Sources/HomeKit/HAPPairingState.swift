import Crypto
import Foundation

/// What the accessory keeps between runs: its identity (pairing ID, Ed25519 long-term key),
/// setup code and setup ID, the configuration number `c#`, the accessory IDs given to pod
/// sides, and the paired controllers. The service stores it as JSON with 0600 permissions;
/// it is never logged (its description hides the secrets).
public struct HAPPairingState: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The accessory's pairing ID, `XX:XX:XX:XX:XX:XX` (also the TXT record's `id`).
    public var accessoryID: String
    /// The Ed25519 long-term secret key's raw 32 bytes.
    public var longTermSecretKey: [UInt8]
    public var setupCode: SetupCode
    /// Four characters 0-9A-Z, part of the setup payload and `sh`.
    public var setupID: String
    /// The configuration number (`c#`), 1…65535, bumped when the accessory database changes.
    public var configurationNumber: Int
    /// A hash of the accessory database the current `c#` belongs to.
    public var databaseDigest: String
    /// Accessory IDs per pod side (`SERIAL/left`), stable across restarts.
    public var accessoryIDs: [String: Int]
    public var pairings: [String: Pairing]
    /// Failed pair-setup attempts (M4 with a wrong proof) since the last success.
    public var failedSetupAttempts: Int

    public struct Pairing: Codable, Sendable, Equatable {
        /// The controller's Ed25519 long-term public key.
        public var publicKey: [UInt8]
        public var isAdmin: Bool
        public init(publicKey: [UInt8], isAdmin: Bool) {
            self.publicKey = publicKey
            self.isAdmin = isAdmin
        }
    }

    /// The specification's limit: after 100 failed attempts the accessory refuses pair-setup
    /// (kTLVError_MaxTries) until it is reset.
    public static let maxFailedAttempts = 100

    public var isPaired: Bool { !pairings.isEmpty }

    /// A new identity with a random key, setup code and setup ID.
    public static func generate() -> HAPPairingState {
        var rng = SystemRandomNumberGenerator()
        let id = (0..<6).map { _ in String(format: "%02X", UInt8.random(in: 0...255, using: &rng)) }.joined(separator: ":")
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let setupID = String((0..<4).map { _ in alphabet.randomElement(using: &rng)! })
        return HAPPairingState(accessoryID: id, longTermSecretKey: HAPKeys.bytes(SymmetricKey(size: .bits256)),
                               setupCode: .random(), setupID: setupID, configurationNumber: 1, databaseDigest: "",
                               accessoryIDs: [:], pairings: [:], failedSetupAttempts: 0)
    }

    public var signingKey: Curve25519.Signing.PrivateKey {
        // 32 bytes stored by `generate()`; a file with another length is refused when read.
        try! Curve25519.Signing.PrivateKey(rawRepresentation: longTermSecretKey)
    }

    public var publicKey: [UInt8] { Array(signingKey.publicKey.rawRepresentation) }

    /// Checks what decoding cannot: key and ID shapes.
    public func validated() throws(HAPStateError) -> HAPPairingState {
        guard longTermSecretKey.count == 32 else { throw .invalid("the long-term key is not 32 bytes") }
        guard accessoryID.split(separator: ":").count == 6 else { throw .invalid("the accessory ID is not XX:XX:XX:XX:XX:XX") }
        guard setupID.count == 4 else { throw .invalid("the setup ID is not 4 characters") }
        guard (1...65535).contains(configurationNumber) else { throw .invalid("c# is outside 1…65535") }
        return self
    }

    /// Sets `c#` for the accessory database with `digest`: bumped (wrapping 65535 to 1) when it changed.
    public mutating func noteDatabase(digest: String) {
        guard digest != databaseDigest else { return }
        if !databaseDigest.isEmpty { configurationNumber = configurationNumber >= 65535 ? 1 : configurationNumber + 1 }
        databaseDigest = digest
    }

    /// The accessory ID for a pod side: the one given before, else the next free one (2 up; 1 is the bridge).
    public mutating func accessoryID(serial: String, side: String) -> Int {
        let key = "\(serial)/\(side)"
        if let id = accessoryIDs[key] { return id }
        let id = (accessoryIDs.values.max() ?? 1) + 1
        accessoryIDs[key] = id
        return id
    }

    /// Forgets every pairing (and the failure count); identity and setup code stay.
    public mutating func reset() {
        pairings = [:]
        failedSetupAttempts = 0
    }

    public var description: String {
        "HAPPairingState(id: \(accessoryID), c#: \(configurationNumber), pairings: \(pairings.count), secrets hidden)"
    }
}

public enum HAPStateError: Error, Equatable, CustomStringConvertible {
    case invalid(String)
    public var description: String {
        switch self { case .invalid(let why): "the HomeKit state is not valid: \(why)" }
    }
}
