import Foundation
import SleepDomain
import Testing
@testable import HomeKit

@Suite struct HAPAccessoryDatabaseTests {
    static let sides = [HAPPodSide(serial: "POD1", side: .left, aid: 2, firmware: "1.1.0"),
                        HAPPodSide(serial: "POD1", side: .right, aid: 3, firmware: "1.1.0")]

    @Test func bridgeAndEachSideWithTheirServices() throws {
        let db = HAPAccessoryDatabase(bridgeName: "podbridge", bridgeSerial: "AA:BB", firmware: "1.0", sides: Self.sides)
        let json = try JSONSerialization.jsonObject(with: Data(db.json { c in
            if case .constant(let v) = c.role { return v }
            return c.format == "uint8" ? .int(0) : .bool(false)
        })) as! [String: Any]
        let accessories = json["accessories"] as! [[String: Any]]
        #expect(accessories.map { $0["aid"] as! Int } == [1, 2, 3])
        let services = (accessories[1]["services"] as! [[String: Any]]).map { $0["type"] as! String }
        #expect(services == ["3E", "86", "49", "49", "49", "49"])
        let occupancy = try #require(db.characteristics[HAPCharacteristicID(aid: 2, iid: 11)])
        #expect(occupancy.role == .occupancy(serial: "POD1", side: .left))
        #expect(occupancy.type == "71" && occupancy.notifies)
        #expect(db.characteristics[HAPCharacteristicID(aid: 3, iid: 21)]?.role == .power(serial: "POD1", side: .right))
        // Identify is write-only: no value in the listing.
        let info = (accessories[0]["services"] as! [[String: Any]])[0]["characteristics"] as! [[String: Any]]
        #expect(info[0]["value"] == nil && info[0]["type"] as? String == "14")
    }

    @Test func digestFollowsStructureOnly() {
        let one = HAPAccessoryDatabase(bridgeName: "podbridge", bridgeSerial: "AA", firmware: "1.0", sides: Self.sides)
        let same = HAPAccessoryDatabase(bridgeName: "podbridge", bridgeSerial: "AA", firmware: "1.0", sides: Self.sides)
        let fewer = HAPAccessoryDatabase(bridgeName: "podbridge", bridgeSerial: "AA", firmware: "1.0", sides: [Self.sides[0]])
        #expect(one.digest == same.digest)
        #expect(one.digest != fewer.digest)
    }

    @Test func queryAndWriteBodies() throws {
        #expect(HAPCharacteristicQuery.ids(query: "id=1.9,2.11&ev=1") == [HAPCharacteristicID(aid: 1, iid: 9), HAPCharacteristicID(aid: 2, iid: 11)])
        #expect(HAPCharacteristicQuery.ids(query: "id=1.x") == nil)
        let write = try #require(HAPWriteRequest.decode(Array(#"{"characteristics":[{"aid":2,"iid":21,"value":false},{"aid":2,"iid":11,"ev":true}]}"#.utf8)))
        #expect(write.characteristics[0].value?.asBool == false)
        #expect(write.characteristics[1].ev?.asBool == true)
        #expect(HAPWriteRequest.decode(Array("{".utf8)) == nil)
        let answer = HAPCharacteristicsBody.writeAnswer([(HAPCharacteristicID(aid: 2, iid: 21), .success), (HAPCharacteristicID(aid: 9, iid: 9), .notFound)])
        #expect(answer.status == 207)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("-70409"))
    }
}

@Suite struct HAPHTTPMessageTests {
    @Test func requestsAreTakenWholeAndInOrder() throws {
        var buffer = Array("POST /pair-setup HTTP/1.1\r\nHost: x\r\nContent-Type: application/pairing+tlv8\r\nContent-Length: 3\r\n\r\n".utf8) + [6, 1, 1]
            + Array("GET /characteristics?id=1.9 HTTP/1.1\r\n".utf8)
        let first = try #require(try HAPHTTPRequest.take(from: &buffer))
        #expect(first.method == "POST" && first.path == "/pair-setup" && first.body == [6, 1, 1])
        #expect(try HAPHTTPRequest.take(from: &buffer) == nil)
        buffer += Array("\r\n".utf8)
        let second = try #require(try HAPHTTPRequest.take(from: &buffer))
        #expect(second.path == "/characteristics" && second.query == "id=1.9")
        #expect(buffer.isEmpty)
    }

    @Test func malformedRequestsAreErrors() {
        var bad = Array("NONSENSE\r\n\r\n".utf8)
        #expect(throws: HAPHTTPError.self) { try HAPHTTPRequest.take(from: &bad) }
        var huge = Array("PUT /characteristics HTTP/1.1\r\nContent-Length: 999999\r\n\r\n".utf8)
        #expect(throws: HAPHTTPError.self) { try HAPHTTPRequest.take(from: &huge) }
    }

    @Test func eventsUseEVENTslash1dot0() {
        let event = String(decoding: HAPHTTPResponse.encode(status: 200, contentType: HAPHTTPResponse.jsonType, body: Array("{}".utf8), event: true), as: UTF8.self)
        #expect(event == "EVENT/1.0 200 OK\r\nContent-Type: application/hap+json\r\nContent-Length: 2\r\n\r\n{}")
    }
}
