import Foundation

/// HAP's status codes in `/characteristics` answers (the specification's table 6-11).
public enum HAPStatus: Int, Sendable {
    case success = 0
    case insufficientPrivileges = -70401
    case communicationFailure = -70402
    case busy = -70403
    case readOnly = -70404
    case writeOnly = -70405
    case notificationNotSupported = -70406
    case notFound = -70409
    case invalidValue = -70410
}

/// `GET /characteristics?id=1.9,2.11`'s ids; nil when the query names none or is malformed.
public enum HAPCharacteristicQuery {
    public static func ids(query: String) -> [HAPCharacteristicID]? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == "id" else { continue }
            let decoded = String(parts[1]).removingPercentEncoding ?? String(parts[1])
            var ids: [HAPCharacteristicID] = []
            for item in decoded.split(separator: ",") {
                let numbers = item.split(separator: ".")
                guard numbers.count == 2, let aid = Int(numbers[0]), let iid = Int(numbers[1]) else { return nil }
                ids.append(HAPCharacteristicID(aid: aid, iid: iid))
            }
            return ids.isEmpty ? nil : ids
        }
        return nil
    }
}

/// `PUT /characteristics`' body: values to write and notifications to switch.
public struct HAPWriteRequest: Decodable, Sendable {
    public struct Item: Decodable, Sendable {
        public let aid: Int
        public let iid: Int
        public let value: HAPValue?
        public let ev: HAPValue?
        public var id: HAPCharacteristicID { HAPCharacteristicID(aid: aid, iid: iid) }
    }
    public let characteristics: [Item]

    public static func decode(_ body: [UInt8]) -> HAPWriteRequest? { try? JSONDecoder().decode(HAPWriteRequest.self, from: Data(body)) }
}

/// One entry of a `/characteristics` answer or an event.
public struct HAPCharacteristicResult: Encodable, Sendable {
    public let aid: Int
    public let iid: Int
    public let value: HAPValue?
    public let status: Int?

    public init(id: HAPCharacteristicID, value: HAPValue? = nil, status: HAPStatus? = nil) {
        aid = id.aid
        iid = id.iid
        self.value = value
        self.status = status?.rawValue
    }
}

/// The JSON bodies of `/characteristics` answers and `EVENT/1.0` messages.
public enum HAPCharacteristicsBody {
    struct Body: Encodable { let characteristics: [HAPCharacteristicResult] }

    public static func encode(_ results: [HAPCharacteristicResult]) -> [UInt8] { HAPJSON.encode(Body(characteristics: results)) }

    /// A read answer: 200 with values when all succeeded, else 207 with a status on every entry.
    public static func readAnswer(_ results: [(HAPCharacteristicID, Result<HAPValue, HAPStatusError>)]) -> (status: Int, body: [UInt8]) {
        let allGood = results.allSatisfy { if case .success = $0.1 { true } else { false } }
        let entries = results.map { id, result in
            switch result {
            case .success(let value): HAPCharacteristicResult(id: id, value: value, status: allGood ? nil : .success)
            case .failure(let error): HAPCharacteristicResult(id: id, status: error.status)
            }
        }
        return (allGood ? 200 : 207, encode(entries))
    }

    /// A write answer: 204 with no body when all succeeded, else 207 with a status on every entry.
    public static func writeAnswer(_ results: [(HAPCharacteristicID, HAPStatus)]) -> (status: Int, body: [UInt8]) {
        if results.allSatisfy({ $0.1 == .success }) { return (204, []) }
        return (207, encode(results.map { HAPCharacteristicResult(id: $0.0, status: $0.1) }))
    }
}

public struct HAPStatusError: Error, Sendable, Hashable {
    public let status: HAPStatus
    public init(_ status: HAPStatus) { self.status = status }
}
