import Testing
@testable import HomeKit

/// SRP-6a as pair-setup uses it, against a vector computed by an independent implementation
/// (aiohomekit 4.0.1's SrpClient and SrpServer, the controller the end-to-end tests use) with
/// RFC 5054's test salt, the 3072-bit group, SHA-512, fixed private keys a = 100…131 and
/// b = 1…32, user `Pair-Setup` and password `031-45-154`.
@Suite struct SRPServerTests {
    static let salt = hex("BEB25379D1A8581EB5A727673A2441EE")
    static let privateB = (1...32).map { UInt8($0) }
    static let expectedB = hex(
            "f612d55c4b2e9662739675082641116cf9d47a99f7a116d71caa9c7a4bb56977b41939688f4486aa5779fd997c85b7fc" +
            "d3e2655822a3a804ca13603aa5610e6f6605d59149b9e2d752bfcd70781790ffb4d463dcec929644cb95cd142774a1c0" +
            "90356595fbaf88177ead4408ba68ea6fa2b12506854fc215613246e230e91ffd4fc7c53236816192930b184c0782a714" +
            "802bbea788b28f3f1b62f8662dd331eccd1fa9ff748bd120c4162d09012bca7d5bde15e9a13b576302cd7beccec01cf5" +
            "030887ae1614b99f260685309ba698b62d3a91443c2fbebc0a11774ff9c9ebf2bd96b07223a629f9ca721631437cdd6a" +
            "62d17db29712a4adc756ae0f4e48e25b9a022309902b45feb8bfd2aced1fa72d3fd466f04fc5a7bc1bba38dc9b4a2b01" +
            "f2fa08675454babbcb9ba41d74247e7c3be4080ba65c451a3e0d0514b1f3298e906c00d717b0e1eb35ac0c667864f371" +
            "74f0ad42c1a2826577649e51700ac6bb89830fe6ae834f7ba9678695eef7538a9fcf7aacbe30c8dc2352976c001793d5")
    static let clientA = hex(
            "f8510fac61cb23b5ae48819f3bcc16d308ce1008cb50d81855bd1421d7a5019867d65582394afdb318ce54c71b24caff" +
            "c1e6e639ea2c88b94a922a5ece7fc64f50c91c24c2a75ff70d04d929406f2f05a3236687cae4902990eaa091bccb16ee" +
            "dfe0af8f82c4c0660c9c10dd4029f29dbba7db521d8adc9e847113f743dad145fa24dd1c660fbf086adf12741d35b847" +
            "5ddb8bd46151e4f8605b9d59774e20a9d8d283c4bd0aa166c7b5613ffb65ea04516bd8528094a8da0fe1dc80fe7417bd" +
            "0460ccdfa926a9ba4fbe246b1b61448cd828955f814f005f71037b6f7ccfbd9fd870163af1b3331ada727b471aabfd67" +
            "cf268c502afbfb2ced42b83cf6ccb43dfc5a53f8e4851a6b5742ddb2d1f53c9adfc406d4a8a393fdb97b61560951b6fe" +
            "35932c881a02a20f9c07ccd3fbbe84fcb3314b57bb87744c262446a84fdf42c7c5e7dd237841b6b6716fe7ca4bc3c78a" +
            "dbcb517749dba34191a013b295f11d48a49e3872f3ca1b7415671c3968fe3386996ab89fccb198a027e525aaacee1782")
    static let clientProof = hex(
            "82a4cca5d7f4f838165343ce7fd328ecd72c2c207d7e11cf88e0140a5f5f5052e473f4d5b28257b538cada2cfba34aa8" +
            "8c3905a30153a573dccdc94a166168fb")
    static let serverProof = hex(
            "ccf500d5fbcbb4cb8ac079230bf479dbc284053e90eb3ee549ccea5a7145ffd549befa8eff43aeacd15ccc42eb01ed44" +
            "7c7165ca36fe074d4a7f16e6e665a3d8")
    static let sessionKey = hex(
            "f5a3fb26eda728e160f72318951b4830ed492982fafefd549dbce2ae26811d7f7c90ca22c663182a70732b7b50dd0090" +
            "e3c3b7d33a3586080b662c8e1760fdfc")

    static func hex(_ text: String) -> [UInt8] {
        let chars = Array(text.utf8)
        return stride(from: 0, to: chars.count, by: 2).map { UInt8(String(decoding: chars[$0..<($0 + 2)], as: UTF8.self), radix: 16)! }
    }

    @Test func multiplierMatchesHomeKitsConstant() {
        // k = H(N | PAD(g)), the value aiohomekit ships as CLIENT_K_VALUE.
        #expect(String(SRPServer.multiplier, radix: 16) ==
            "a9c2e2559bf0ebb53f0cbbf62282906bede7f2182f00678211fbd5bde5b285033a4993503b87397f9be5ec02080fedbc0835587ad039060879b8621e8c3659e0")
    }

    @Test func publicKeyMatchesTheVector() {
        let server = SRPServer(password: "031-45-154", salt: Self.salt, privateKey: Self.privateB)
        #expect(server.publicKey.count == 384)
        #expect(server.publicKey == Self.expectedB)
    }

    @Test func correctProofGivesServerProofAndSessionKey() throws {
        let server = SRPServer(password: "031-45-154", salt: Self.salt, privateKey: Self.privateB)
        let verified = try #require(server.verify(clientPublicKey: Self.clientA, clientProof: Self.clientProof))
        #expect(verified.serverProof == Self.serverProof)
        #expect(verified.sessionKey == Self.sessionKey)
    }

    @Test func wrongPasswordOrProofIsRefused() {
        let other = SRPServer(password: "031-45-155", salt: Self.salt, privateKey: Self.privateB)
        #expect(other.verify(clientPublicKey: Self.clientA, clientProof: Self.clientProof) == nil)
        let server = SRPServer(password: "031-45-154", salt: Self.salt, privateKey: Self.privateB)
        var bent = Self.clientProof
        bent[63] ^= 1
        #expect(server.verify(clientPublicKey: Self.clientA, clientProof: bent) == nil)
    }

    /// A = 0 or A = N would make the shared secret predictable: refused.
    @Test func degeneratePublicKeyIsRefused() {
        let server = SRPServer(password: "031-45-154", salt: Self.salt, privateKey: Self.privateB)
        #expect(server.verify(clientPublicKey: [UInt8](repeating: 0, count: 384), clientProof: Self.clientProof) == nil)
        #expect(server.verify(clientPublicKey: SRPServer.padded(SRPServer.modulus), clientProof: Self.clientProof) == nil)
    }

    @Test func constantTimeEqual() {
        #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equal([1, 2], [1, 2, 3]))
    }
}
