import Crypto
import Foundation
import SleepDomain

/// A characteristic's value as HAP's JSON carries it.
public enum HAPValue: Sendable, Hashable, Codable {
    case bool(Bool)
    case int(Int)
    case string(String)

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int.self) { self = .int(value) }
        else { self = .string(try container.decode(String.self)) }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        }
    }

    /// A switch's `On` as written: true/false or 1/0.
    public var asBool: Bool? {
        switch self {
        case .bool(let value): value
        case .int(let value) where value == 0 || value == 1: value == 1
        default: nil
        }
    }
}

/// What a characteristic stands for in the hub: where its value comes from and where a write goes.
public enum HAPRole: Sendable, Hashable {
    case identify
    case constant(HAPValue)
    /// Someone in bed on this side (OccupancyDetected 0/1).
    case occupancy(serial: String, side: BedSide)
    /// The side's power stage on or off.
    case power(serial: String, side: BedSide)
    /// The side's alarm enabled (as MQTT's alarm switch).
    case alarm(serial: String, side: BedSide)
    /// Momentary: snoozes a ringing alarm, then reads off again.
    case snooze(serial: String, side: BedSide)
    /// Momentary: stops a ringing alarm, then reads off again.
    case stopAlarm(serial: String, side: BedSide)
}

/// A characteristic's address: accessory ID and instance ID.
public struct HAPCharacteristicID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let aid: Int
    public let iid: Int
    public init(aid: Int, iid: Int) {
        self.aid = aid
        self.iid = iid
    }
    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.aid, lhs.iid) < (rhs.aid, rhs.iid) }
    public var description: String { "\(aid).\(iid)" }
}

public struct HAPCharacteristic: Sendable, Hashable {
    public let id: HAPCharacteristicID
    /// Apple's short type UUID (`25` for On).
    public let type: String
    public let format: String
    public let permissions: [String]
    public let role: HAPRole

    public var readable: Bool { permissions.contains("pr") }
    public var writable: Bool { permissions.contains("pw") }
    public var notifies: Bool { permissions.contains("ev") }
}

/// One pod side as the bridge shows it.
public struct HAPPodSide: Sendable, Hashable {
    public let serial: String
    public let side: BedSide
    public let aid: Int
    public let firmware: String
    public init(serial: String, side: BedSide, aid: Int, firmware: String) {
        self.serial = serial
        self.side = side
        self.aid = aid
        self.firmware = firmware
    }
}

/// The accessory database `/accessories` serves: the bridge (aid 1) and per pod side an
/// accessory with an Occupancy Sensor, Switches for power and alarm, and momentary Snooze and
/// Stop-alarm switches, each with Accessory Information. Instance IDs are fixed per position, so
/// a controller's cached database stays right across restarts; `digest` changes only with the
/// structure (what `c#` follows).
public struct HAPAccessoryDatabase: Sendable {
    public static let manufacturer = "podbridge"
    public let characteristics: [HAPCharacteristicID: HAPCharacteristic]
    private let accessories: [Accessory]

    struct Accessory: Sendable, Codable {
        let aid: Int
        let services: [Service]
    }

    struct Service: Sendable, Codable {
        let iid: Int
        let type: String
        let primary: Bool?
        let characteristicIDs: [Int]
    }

    public init(bridgeName: String, bridgeSerial: String, firmware: String, sides: [HAPPodSide]) {
        var characteristics: [HAPCharacteristicID: HAPCharacteristic] = [:]
        var accessories: [Accessory] = []

        func add(_ aid: Int, _ iid: Int, _ type: String, _ format: String, _ perms: [String], _ role: HAPRole) -> Int {
            let id = HAPCharacteristicID(aid: aid, iid: iid)
            characteristics[id] = HAPCharacteristic(id: id, type: type, format: format, permissions: perms, role: role)
            return iid
        }
        func information(_ aid: Int, name: String, model: String, serial: String, firmware: String) -> Service {
            Service(iid: 1, type: "3E", primary: nil, characteristicIDs: [
                add(aid, 2, "14", "bool", ["pw"], .identify),
                add(aid, 3, "20", "string", ["pr"], .constant(.string(Self.manufacturer))),
                add(aid, 4, "21", "string", ["pr"], .constant(.string(model))),
                add(aid, 5, "23", "string", ["pr"], .constant(.string(name))),
                add(aid, 6, "30", "string", ["pr"], .constant(.string(serial))),
                add(aid, 7, "52", "string", ["pr"], .constant(.string(firmware))),
            ])
        }
        func named(_ aid: Int, _ iid: Int, _ type: String, primary: Bool, name: String, _ value: (Int, String, String, [String], HAPRole)) -> Service {
            Service(iid: iid, type: type, primary: primary, characteristicIDs: [
                add(aid, value.0, value.1, value.2, value.3, value.4),
                add(aid, value.0 + 1, "23", "string", ["pr"], .constant(.string(name))),
            ])
        }

        accessories.append(Accessory(aid: 1, services: [
            information(1, name: bridgeName, model: "podbridge hub", serial: bridgeSerial, firmware: firmware),
            Service(iid: 8, type: "A2", primary: nil, characteristicIDs: [add(1, 9, "37", "string", ["pr"], .constant(.string("1.1.0")))]),
        ]))
        for side in sides.sorted(by: { $0.aid < $1.aid }) {
            let (aid, serial, bed) = (side.aid, side.serial, side.side)
            let label = "Bed \(bed.rawValue)"
            accessories.append(Accessory(aid: aid, services: [
                information(aid, name: label, model: "Sleep pod side", serial: "\(serial)-\(bed.rawValue)", firmware: side.firmware),
                named(aid, 10, "86", primary: true, name: "\(label) in bed", (11, "71", "uint8", ["pr", "ev"], .occupancy(serial: serial, side: bed))),
                named(aid, 20, "49", primary: false, name: "\(label) power", (21, "25", "bool", ["pr", "pw", "ev"], .power(serial: serial, side: bed))),
                named(aid, 30, "49", primary: false, name: "\(label) alarm", (31, "25", "bool", ["pr", "pw", "ev"], .alarm(serial: serial, side: bed))),
                named(aid, 40, "49", primary: false, name: "\(label) snooze", (41, "25", "bool", ["pr", "pw", "ev"], .snooze(serial: serial, side: bed))),
                named(aid, 50, "49", primary: false, name: "\(label) stop alarm", (51, "25", "bool", ["pr", "pw", "ev"], .stopAlarm(serial: serial, side: bed))),
            ]))
        }
        self.characteristics = characteristics
        self.accessories = accessories
    }

    /// The characteristics with a role, e.g. every occupancy sensor.
    public func ids(where matches: (HAPRole) -> Bool) -> [HAPCharacteristicID] {
        characteristics.values.filter { matches($0.role) }.map(\.id).sorted()
    }

    /// Changes with what accessories, services and characteristics there are (not with values).
    public var digest: String {
        let text = accessories.map { accessory in
            "\(accessory.aid):" + accessory.services.map { service in
                "\(service.iid)/\(service.type)/" + service.characteristicIDs.map { iid in
                    let c = characteristics[HAPCharacteristicID(aid: accessory.aid, iid: iid)]!
                    return "\(iid)=\(c.type),\(c.format)"
                }.joined(separator: ";")
            }.joined(separator: "|")
        }.joined(separator: "\n")
        return SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// `/accessories`' body, each readable characteristic with its value now.
    public func json(value: (HAPCharacteristic) -> HAPValue?) -> [UInt8] {
        let body = AccessoriesBody(accessories: accessories.map { accessory in
            AccessoryJSON(aid: accessory.aid, services: accessory.services.map { service in
                ServiceJSON(iid: service.iid, type: service.type, primary: service.primary, characteristics: service.characteristicIDs.map { iid in
                    let c = characteristics[HAPCharacteristicID(aid: accessory.aid, iid: iid)]!
                    return CharacteristicJSON(iid: iid, type: c.type, format: c.format, perms: c.permissions,
                                              value: c.readable ? value(c) : nil,
                                              minValue: c.format == "uint8" ? 0 : nil, maxValue: c.format == "uint8" ? 1 : nil,
                                              minStep: c.format == "uint8" ? 1 : nil)
                })
            })
        })
        return HAPJSON.encode(body)
    }

    struct AccessoriesBody: Encodable { let accessories: [AccessoryJSON] }
    struct AccessoryJSON: Encodable { let aid: Int; let services: [ServiceJSON] }
    struct ServiceJSON: Encodable { let iid: Int; let type: String; let primary: Bool?; let characteristics: [CharacteristicJSON] }
    struct CharacteristicJSON: Encodable {
        let iid: Int
        let type: String
        let format: String
        let perms: [String]
        let value: HAPValue?
        let minValue: Int?
        let maxValue: Int?
        let minStep: Int?
    }
}

enum HAPJSON {
    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs cannot fail.
        return Array(try! encoder.encode(value))
    }
}
