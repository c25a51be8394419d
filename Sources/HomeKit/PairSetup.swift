import Crypto

/// One pair-setup exchange (M1–M6) on one connection, the accessory's side. It decides the
/// answers; the caller keeps the pairing state (and so the paired / attempts checks' inputs)
/// and stores what `Outcome.paired` carries.
public struct PairSetup: Sendable {
    private var srp: SRPServer?
    private var sessionKey: [UInt8]?

    public init() {}

    /// The answer to one request, and what the caller must do with its state.
    public struct Outcome: Sendable {
        public var response: TLV8
        /// M3 failed its proof: count it.
        public var failedAttempt = false
        /// M5 succeeded: store this controller as an admin pairing.
        public var paired: (id: String, publicKey: [UInt8])?
    }

    /// Answers `request` (a pair-setup TLV body) given the accessory's state now.
    public mutating func handle(_ request: TLV8, state: HAPPairingState) -> Outcome {
        let step = request.byte(.state) ?? 0
        switch step {
        case 1: return start(request, state: state)
        case 3: return verifyProof(request)
        case 5: return exchange(request, state: state)
        default: return Self.error(step &+ 1, .unknown)
        }
    }

    private mutating func start(_ request: TLV8, state: HAPPairingState) -> Outcome {
        srp = nil
        sessionKey = nil
        let method = request.byte(.method) ?? 0
        guard method == HAPPairingMethod.pairSetup.rawValue || method == HAPPairingMethod.pairSetupWithAuth.rawValue else {
            return Self.error(2, .unknown)
        }
        guard !state.isPaired else { return Self.error(2, .unavailable) }
        guard state.failedSetupAttempts < HAPPairingState.maxFailedAttempts else { return Self.error(2, .maxTries) }
        let server = SRPServer(password: state.setupCode.formatted)
        srp = server
        var response = TLV8()
        response.append(.state, byte: 2)
        response.append(.publicKey, server.publicKey)
        response.append(.salt, server.salt)
        return Outcome(response: response)
    }

    private mutating func verifyProof(_ request: TLV8) -> Outcome {
        guard let srp, let a = request[.publicKey], let proof = request[.proof] else { return Self.error(4, .unknown) }
        guard let verified = srp.verify(clientPublicKey: a, clientProof: proof) else {
            self.srp = nil
            var outcome = Self.error(4, .authentication)
            outcome.failedAttempt = true
            return outcome
        }
        sessionKey = verified.sessionKey
        var response = TLV8()
        response.append(.state, byte: 4)
        response.append(.proof, verified.serverProof)
        return Outcome(response: response)
    }

    private mutating func exchange(_ request: TLV8, state: HAPPairingState) -> Outcome {
        guard let sessionKey, let encrypted = request[.encryptedData] else { return Self.error(6, .unknown) }
        defer { self.sessionKey = nil; self.srp = nil }
        guard !state.isPaired else { return Self.error(6, .unavailable) }
        let key = HAPKeys.derive(sessionKey, salt: "Pair-Setup-Encrypt-Salt", info: "Pair-Setup-Encrypt-Info")
        guard let plain = HAPKeys.open(encrypted, key: key, nonce: HAPKeys.nonce(label: "PS-Msg05")),
              let sub = try? TLV8.decode(plain),
              let identifier = sub[.identifier], let ltpk = sub[.publicKey], let signature = sub[.signature],
              let controllerKey = try? Curve25519.Signing.PublicKey(rawRepresentation: ltpk),
              let pairingID = String(bytes: identifier, encoding: .utf8) else {
            return Self.error(6, .authentication)
        }
        let controllerX = HAPKeys.bytes(HAPKeys.derive(sessionKey, salt: "Pair-Setup-Controller-Sign-Salt",
                                                       info: "Pair-Setup-Controller-Sign-Info"))
        guard controllerKey.isValidSignature(signature, for: controllerX + identifier + ltpk) else {
            return Self.error(6, .authentication)
        }
        let accessoryX = HAPKeys.bytes(HAPKeys.derive(sessionKey, salt: "Pair-Setup-Accessory-Sign-Salt",
                                                      info: "Pair-Setup-Accessory-Sign-Info"))
        let accessoryID = Array(state.accessoryID.utf8)
        let accessorySignature = (try? state.signingKey.signature(for: accessoryX + accessoryID + state.publicKey)).map(Array.init) ?? []
        var subResponse = TLV8()
        subResponse.append(.identifier, accessoryID)
        subResponse.append(.publicKey, state.publicKey)
        subResponse.append(.signature, accessorySignature)
        var response = TLV8()
        response.append(.state, byte: 6)
        response.append(.encryptedData, HAPKeys.seal(subResponse.encoded(), key: key, nonce: HAPKeys.nonce(label: "PS-Msg06")))
        return Outcome(response: response, paired: (pairingID, ltpk))
    }

    /// An answer at `state` carrying only an error (also the server's busy answer).
    public static func error(_ state: UInt8, _ error: HAPTLVError) -> Outcome {
        var response = TLV8()
        response.append(.state, byte: state)
        response.append(.error, byte: error.rawValue)
        return Outcome(response: response)
    }
}
