import Crypto
import Foundation
import Testing
@testable import HomeKit

/// The refusals of pair-setup, pair-verify and `/pairings`; the successful exchanges are
/// driven by aiohomekit in HomeKitControllerTests.
@Suite struct PairingTests {
    static func request(_ state: UInt8, method: HAPPairingMethod? = nil, _ more: [(HAPTLVType, [UInt8])] = []) -> TLV8 {
        var tlv = TLV8()
        tlv.append(.state, byte: state)
        if let method { tlv.append(.method, byte: method.rawValue) }
        for (type, value) in more { tlv.append(type, value) }
        return tlv
    }

    @Test func setupStartsWithSaltAndPublicKey() {
        var setup = PairSetup()
        let outcome = setup.handle(Self.request(1, method: .pairSetup), state: .generate())
        #expect(outcome.response.byte(.state) == 2)
        #expect(outcome.response[.salt]?.count == 16)
        #expect(outcome.response[.publicKey]?.count == 384)
        #expect(outcome.response.byte(.error) == nil)
    }

    @Test func noSetupWhilePaired() {
        var state = HAPPairingState.generate()
        state.pairings["controller"] = .init(publicKey: [UInt8](repeating: 1, count: 32), isAdmin: true)
        var setup = PairSetup()
        let outcome = setup.handle(Self.request(1, method: .pairSetup), state: state)
        #expect(outcome.response.byte(.error) == HAPTLVError.unavailable.rawValue)
    }

    @Test func wrongProofIsCountedAndTriesRunOut() {
        var state = HAPPairingState.generate()
        var setup = PairSetup()
        _ = setup.handle(Self.request(1, method: .pairSetup), state: state)
        let outcome = setup.handle(Self.request(3, [(.publicKey, [UInt8](repeating: 3, count: 384)), (.proof, [UInt8](repeating: 0, count: 64))]),
                                   state: state)
        #expect(outcome.response.byte(.state) == 4)
        #expect(outcome.response.byte(.error) == HAPTLVError.authentication.rawValue)
        #expect(outcome.failedAttempt)
        state.failedSetupAttempts = HAPPairingState.maxFailedAttempts
        #expect(setup.handle(Self.request(1, method: .pairSetup), state: state).response.byte(.error) == HAPTLVError.maxTries.rawValue)
    }

    @Test func m5WithoutM3IsRefused() {
        var setup = PairSetup()
        let outcome = setup.handle(Self.request(5, [(.encryptedData, [UInt8](repeating: 0, count: 40))]), state: .generate())
        #expect(outcome.response.byte(.error) != nil)
        #expect(outcome.paired == nil)
    }

    /// A controller with a valid key but no pairing gets an authentication error at M4.
    @Test func verifyRefusesAnUnpairedController() throws {
        let state = HAPPairingState.generate()
        var verify = PairVerify()
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let m2 = verify.handle(Self.request(1, [(.publicKey, Array(ephemeral.publicKey.rawRepresentation))]), state: state).response
        let accessoryPublic = try #require(m2[.publicKey])
        let secret = try ephemeral.sharedSecretFromKeyAgreement(with: .init(rawRepresentation: accessoryPublic)).withUnsafeBytes { Array($0) }
        let key = HAPKeys.derive(secret, salt: "Pair-Verify-Encrypt-Salt", info: "Pair-Verify-Encrypt-Info")
        // The accessory's M2 decrypts and its signature checks out with its long-term key.
        let sealed = try #require(m2[.encryptedData])
        let opened = try #require(HAPKeys.open(sealed, key: key, nonce: HAPKeys.nonce(label: "PV-Msg02")))
        let sub = try TLV8.decode(opened)
        let signing = try Curve25519.Signing.PublicKey(rawRepresentation: state.publicKey)
        let signature = try #require(sub[.signature])
        #expect(signing.isValidSignature(signature, for: accessoryPublic + Array(state.accessoryID.utf8) + Array(ephemeral.publicKey.rawRepresentation)))
        // A stranger's M3.
        let stranger = Curve25519.Signing.PrivateKey()
        let id = Array("stranger".utf8)
        var m3sub = TLV8()
        m3sub.append(.identifier, id)
        m3sub.append(.signature, Array(try stranger.signature(for: Array(ephemeral.publicKey.rawRepresentation) + id + accessoryPublic)))
        let m3 = Self.request(3, [(.encryptedData, HAPKeys.seal(m3sub.encoded(), key: key, nonce: HAPKeys.nonce(label: "PV-Msg03")))])
        let m4 = verify.handle(m3, state: state)
        #expect(m4.response.byte(.error) == HAPTLVError.authentication.rawValue)
        #expect(m4.verified == nil)
    }

    @Test func onlyAnAdminManagesPairings() {
        var state = HAPPairingState.generate()
        state.pairings["admin"] = .init(publicKey: [UInt8](repeating: 1, count: 32), isAdmin: true)
        let add = Self.request(1, method: .addPairing, [(.identifier, Array("guest".utf8)), (.publicKey, [UInt8](repeating: 2, count: 32)),
                                                      (.permissions, [0])])
        let added = PairingsRequest.handle(add, controllerID: "admin", state: &state)
        #expect(added.response.byte(.error) == nil && added.changed)
        #expect(state.pairings["guest"]?.isAdmin == false)
        let byGuest = Self.request(1, method: .addPairing, [(.identifier, Array("other".utf8)), (.publicKey, [UInt8](repeating: 3, count: 32)),
                                                          (.permissions, [1])])
        #expect(PairingsRequest.handle(byGuest, controllerID: "guest", state: &state).response.byte(.error) == HAPTLVError.authentication.rawValue)
        #expect(state.pairings["other"] == nil)
        let list = PairingsRequest.handle(Self.request(1, method: .listPairings), controllerID: "admin", state: &state).response
        #expect(list.items.filter { $0.type == HAPTLVType.identifier.rawValue }.count == 2)
        // Removing the last admin removes everyone.
        let removed = PairingsRequest.handle(Self.request(1, method: .removePairing, [(.identifier, Array("admin".utf8))]),
                                             controllerID: "admin", state: &state)
        #expect(removed.removed == ["admin", "guest"])
        #expect(!state.isPaired)
    }

    @Test func stateRoundTripsAndHidesSecrets() throws {
        var state = HAPPairingState.generate()
        state.pairings["c"] = .init(publicKey: [UInt8](repeating: 9, count: 32), isAdmin: true)
        let data = try JSONEncoder().encode(state)
        #expect(try JSONDecoder().decode(HAPPairingState.self, from: data).validated() == state)
        #expect(!String(describing: state).contains(state.setupCode.formatted))
    }

    @Test func configurationNumberFollowsTheDatabase() {
        var state = HAPPairingState.generate()
        state.noteDatabase(digest: "a")
        #expect(state.configurationNumber == 1)
        state.noteDatabase(digest: "a")
        #expect(state.configurationNumber == 1)
        state.noteDatabase(digest: "b")
        #expect(state.configurationNumber == 2)
        state.configurationNumber = 65535
        state.noteDatabase(digest: "c")
        #expect(state.configurationNumber == 1)
    }
}
