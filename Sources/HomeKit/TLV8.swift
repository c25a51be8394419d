/// HAP's TLV8: one byte type, one byte length, up to 255 bytes of value. A longer value is
/// split into consecutive items of the same type, and a reader joins consecutive items of one
/// type back into one value; two values of one type in a row need a separator item between them.
public struct TLV8: Sendable, Equatable {
    /// The items in order, each with its whole (joined) value.
    public var items: [(type: UInt8, value: [UInt8])]

    public init(_ items: [(type: UInt8, value: [UInt8])] = []) { self.items = items }

    public static func == (lhs: TLV8, rhs: TLV8) -> Bool {
        lhs.items.count == rhs.items.count && zip(lhs.items, rhs.items).allSatisfy { $0.type == $1.type && $0.value == $1.value }
    }

    /// The first value of `type`.
    public subscript(type: HAPTLVType) -> [UInt8]? {
        items.first { $0.type == type.rawValue }?.value
    }

    /// The first value of `type` as one byte (state, method, error, permissions).
    public func byte(_ type: HAPTLVType) -> UInt8? {
        guard let value = self[type], value.count == 1 else { return nil }
        return value[0]
    }

    public mutating func append(_ type: HAPTLVType, _ value: [UInt8]) { items.append((type.rawValue, value)) }
    public mutating func append(_ type: HAPTLVType, byte: UInt8) { items.append((type.rawValue, [byte])) }

    /// The wire bytes: values over 255 bytes fragmented, empty values as a zero-length item.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        for item in items {
            if item.value.isEmpty {
                out += [item.type, 0]
                continue
            }
            var start = 0
            while start < item.value.count {
                let end = min(start + 255, item.value.count)
                out.append(item.type)
                out.append(UInt8(end - start))
                out += item.value[start..<end]
                start = end
            }
        }
        return out
    }

    /// Reads wire bytes, joining fragments (consecutive items of one type after a full 255-byte one).
    public static func decode(_ bytes: [UInt8]) throws(TLV8Error) -> TLV8 {
        var items: [(type: UInt8, value: [UInt8])] = []
        var index = 0
        var lastWasFull = false
        while index < bytes.count {
            guard index + 2 <= bytes.count else { throw .truncated(offset: index) }
            let type = bytes[index]
            let length = Int(bytes[index + 1])
            guard index + 2 + length <= bytes.count else { throw .truncated(offset: index) }
            let value = Array(bytes[(index + 2)..<(index + 2 + length)])
            if lastWasFull, let last = items.last, last.type == type {
                items[items.count - 1].value += value
            } else {
                items.append((type, value))
            }
            lastWasFull = length == 255
            index += 2 + length
        }
        return TLV8(items)
    }
}

/// Why a TLV8 body could not be read.
public enum TLV8Error: Error, Equatable {
    /// An item's header or value runs past the end, at this byte offset.
    case truncated(offset: Int)
}

/// The TLV types HAP's pairing uses (the specification's table 5-6).
public enum HAPTLVType: UInt8, Sendable {
    case method = 0x00
    case identifier = 0x01
    case salt = 0x02
    case publicKey = 0x03
    case proof = 0x04
    case encryptedData = 0x05
    case state = 0x06
    case error = 0x07
    case retryDelay = 0x08
    case certificate = 0x09
    case signature = 0x0A
    case permissions = 0x0B
    case fragmentData = 0x0C
    case fragmentLast = 0x0D
    case flags = 0x13
    case separator = 0xFF
}

/// The error codes HAP's pairing answers with (table 5-5).
public enum HAPTLVError: UInt8, Sendable, Error {
    case unknown = 0x01
    case authentication = 0x02
    case backoff = 0x03
    case maxPeers = 0x04
    case maxTries = 0x05
    case unavailable = 0x06
    case busy = 0x07
}

/// The pairing methods of `/pair-setup` and `/pairings` (table 5-4).
public enum HAPPairingMethod: UInt8, Sendable {
    case pairSetup = 0
    case pairSetupWithAuth = 1
    case pairVerify = 2
    case addPairing = 3
    case removePairing = 4
    case listPairings = 5
}
