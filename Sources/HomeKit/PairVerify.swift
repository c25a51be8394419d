import Crypto

/// One pair-verify exchange (M1–M4), the accessory's side: an ephemeral X25519 agreement, each
/// side's Ed25519 signature over both ephemeral keys, and on success the shared secret the
/// session's keys come from. A controller that is not paired gets an authentication error.
public struct PairVerify: Sendable {
    /// The accessory's ephemeral public key of this exchange.
    private var ephemeral: [UInt8]?
    private var controllerPublic: [UInt8]?
    private var sharedSecret: [UInt8]?

    public init() {}

    public struct Outcome: Sendable {
        public var response: TLV8
        /// M3 checked out: the session is encrypted from the next request on, for this controller.
        public var verified: (sharedSecret: [UInt8], controllerID: String)?
    }

    public mutating func handle(_ request: TLV8, state: HAPPairingState) -> Outcome {
        switch request.byte(.state) ?? 0 {
        case 1: return start(request, state: state)
        case 3: return finish(request, state: state)
        default: return Outcome(response: PairSetup.error(2, .unknown).response)
        }
    }

    private mutating func start(_ request: TLV8, state: HAPPairingState) -> Outcome {
        guard let theirs = request[.publicKey], let theirKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: theirs) else {
            return Outcome(response: PairSetup.error(2, .authentication).response)
        }
        let mine = Curve25519.KeyAgreement.PrivateKey()
        guard let secret = try? mine.sharedSecretFromKeyAgreement(with: theirKey) else {
            return Outcome(response: PairSetup.error(2, .authentication).response)
        }
        let secretBytes = secret.withUnsafeBytes { Array($0) }
        let minePublic = Array(mine.publicKey.rawRepresentation)
        ephemeral = minePublic
        controllerPublic = theirs
        sharedSecret = secretBytes
        let accessoryID = Array(state.accessoryID.utf8)
        let signature = (try? state.signingKey.signature(for: minePublic + accessoryID + theirs)).map(Array.init) ?? []
        var sub = TLV8()
        sub.append(.identifier, accessoryID)
        sub.append(.signature, signature)
        let key = HAPKeys.derive(secretBytes, salt: "Pair-Verify-Encrypt-Salt", info: "Pair-Verify-Encrypt-Info")
        var response = TLV8()
        response.append(.state, byte: 2)
        response.append(.publicKey, minePublic)
        response.append(.encryptedData, HAPKeys.seal(sub.encoded(), key: key, nonce: HAPKeys.nonce(label: "PV-Msg02")))
        return Outcome(response: response)
    }

    private mutating func finish(_ request: TLV8, state: HAPPairingState) -> Outcome {
        defer { ephemeral = nil; controllerPublic = nil; sharedSecret = nil }
        guard let ephemeral, let controllerPublic, let sharedSecret, let encrypted = request[.encryptedData] else {
            return Outcome(response: PairSetup.error(4, .authentication).response)
        }
        let key = HAPKeys.derive(sharedSecret, salt: "Pair-Verify-Encrypt-Salt", info: "Pair-Verify-Encrypt-Info")
        guard let plain = HAPKeys.open(encrypted, key: key, nonce: HAPKeys.nonce(label: "PV-Msg03")),
              let sub = try? TLV8.decode(plain), let identifier = sub[.identifier], let signature = sub[.signature],
              let controllerID = String(bytes: identifier, encoding: .utf8),
              let pairing = state.pairings[controllerID],
              let ltpk = try? Curve25519.Signing.PublicKey(rawRepresentation: pairing.publicKey),
              ltpk.isValidSignature(signature, for: controllerPublic + identifier + ephemeral) else {
            return Outcome(response: PairSetup.error(4, .authentication).response)
        }
        var response = TLV8()
        response.append(.state, byte: 4)
        return Outcome(response: response, verified: (sharedSecret, controllerID))
    }
}
