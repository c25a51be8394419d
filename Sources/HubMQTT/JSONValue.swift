import Foundation

/// A JSON value built in code: discovery configs and state payloads have many shapes, and
/// a typed tree keeps them readable while encoding explicit `null`s (Home Assistant's
/// templates read a missing key as an error, a `null` as "unknown").
public indirect enum JSONValue: Sendable, Hashable, Encodable, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// A number, or `null` when there is none.
    public static func number(_ value: Double?, places: Int) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        let scale = pow(10, Double(places))
        return .number((value * scale).rounded() / scale)
    }

    public static func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let s): try container.encode(s)
        case .number(let n):
            if n.rounded() == n, abs(n) < 1e15 { try container.encode(Int64(n)) } else { try container.encode(n) }
        case .bool(let b): try container.encode(b)
        case .null: try container.encodeNil()
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }

    /// Compact JSON with sorted keys (stable payloads: a retained message re-published
    /// unchanged is byte-for-byte the same).
    public var encoded: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(self)) ?? Data("null".utf8))
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}
