import Crypto
import Foundation

/// The 8-digit setup code a user types or scans, `XXX-XX-XXX`. The specification forbids the
/// trivial ones (all one digit, 12345678, 87654321).
public struct SetupCode: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The eight digits without dashes.
    public let digits: String

    public static let trivial: Set<String> = Set((0...9).map { String(repeating: String($0), count: 8) } + ["12345678", "87654321"])

    public init?(digits: String) {
        let plain = digits.replacingOccurrences(of: "-", with: "")
        guard plain.count == 8, plain.allSatisfy({ $0.isASCII && $0.isNumber }), !Self.trivial.contains(plain) else { return nil }
        self.digits = plain
    }

    public static func random() -> SetupCode {
        var rng = SystemRandomNumberGenerator()
        while true {
            let digits = String(format: "%08d", Int.random(in: 0...99_999_999, using: &rng))
            if let code = SetupCode(digits: digits) { return code }
        }
    }

    /// `XXX-XX-XXX`, the SRP password and what the user types.
    public var formatted: String {
        let d = Array(digits)
        return String(d[0..<3]) + "-" + String(d[3..<5]) + "-" + String(d[5..<8])
    }

    public var description: String { formatted }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let code = SetupCode(digits: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a valid setup code"))
        }
        self = code
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(formatted)
    }
}

/// The `X-HM://` setup payload a QR code carries: 9 base-36 characters packing version 0, the
/// accessory category, the IP transport flag and the setup code, then the 4-character setup ID.
public enum SetupPayload {
    /// Category 2, a bridge.
    public static let bridgeCategory = 2
    /// Flag 2: supports HAP over IP.
    static let ipFlag: UInt64 = 2

    public static func uri(code: SetupCode, setupID: String, category: Int = bridgeCategory) -> String {
        var value: UInt64 = 0
        value |= UInt64(category & 0xFF) << 31
        value |= ipFlag << 27
        value |= UInt64(code.digits)! & 0x7FF_FFFF
        var encoded = String(value, radix: 36, uppercase: true)
        encoded = String(repeating: "0", count: max(0, 9 - encoded.count)) + encoded
        return "X-HM://" + encoded + setupID
    }

    /// The TXT record's `sh`: base64 of the first 4 bytes of SHA-512(setup ID + accessory ID).
    public static func setupHash(setupID: String, accessoryID: String) -> String {
        Data(SHA512.hash(data: Array((setupID + accessoryID).utf8)).prefix(4)).base64EncodedString()
    }
}
