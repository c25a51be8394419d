import Testing
@testable import HomeKit

@Suite struct SetupCodeTests {
    @Test func trivialCodesAreRefused() {
        for digits in ["00000000", "11111111", "99999999", "12345678", "87654321"] { #expect(SetupCode(digits: digits) == nil) }
        #expect(SetupCode(digits: "1234567") == nil)
        #expect(SetupCode(digits: "1234567a") == nil)
    }

    @Test func formattedWithDashes() throws {
        let code = try #require(SetupCode(digits: "03145154"))
        #expect(code.formatted == "031-45-154")
        #expect(SetupCode(digits: "031-45-154") == code)
    }

    @Test func randomCodesAreValidAndVary() {
        let codes = Set((0..<20).map { _ in SetupCode.random().digits })
        #expect(codes.count > 1)
        #expect(codes.allSatisfy { SetupCode(digits: $0) != nil })
    }

    /// The payload's 9 characters computed in Python from the layout (category 2 << 31 | IP flag
    /// 2 << 27 | code, base 36); `sh` likewise from SHA-512.
    @Test func setupPayloadAndHash() throws {
        let code = try #require(SetupCode(digits: "03145154"))
        #expect(SetupPayload.uri(code: code, setupID: "7OSX") == "X-HM://0023ISYWY7OSX")
        #expect(SetupPayload.setupHash(setupID: "7OSX", accessoryID: "AA:BB:CC:DD:EE:FF") == "XIonQA==")
    }
}
