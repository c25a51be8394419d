import Foundation
import SleepAnalysis

/// The bytes a side's open stay is kept in (the store's `open_stays`), written at every
/// preliminary snapshot and at shutdown: about 50 bytes a second with its beats, 1.8 MB for
/// a 10-hour night, every value exactly as the tracker held it, so a night carried across a
/// restart is staged from the same numbers as one that never was.
///
/// Layout, little-endian: the magic "PBSTAY", version 1; the tracker's state (last present
/// second, last snapshot, entry seen, empty since or NaN, last second); the second count and
/// each second (time, heart rate and breathing rate as a tag 0 and the value or the tag of the
/// reason, movement, present, quality); the beat count and each beat time.
package enum OpenStayArchive {
    package enum Error: Swift.Error, Equatable, CustomStringConvertible {
        case malformed(String)
        package var description: String {
            switch self { case .malformed(let why): "not an open stay: \(why)" }
        }
    }

    private static let magic = Array("PBSTAY".utf8)
    private static let version: UInt8 = 1
    /// Tags 1… of a reading without a value, in a fixed order (never reorder: stored files use it).
    private static let reasons: [NoReadingReason] = [.absent, .movement, .lowQuality, .implausible, .warmingUp]

    package static func encode(_ stay: SessionTracker.OpenStay) -> Data {
        var w = Writer()
        w.bytes.reserveCapacity(40 + stay.seconds.count * 45 + stay.beats.count * 8)
        w.bytes += magic
        w.byte(version)
        w.double(stay.lastPresent)
        w.double(stay.lastSnapshot)
        w.byte(stay.entrySeen ? 1 : 0)
        w.double(stay.emptySince ?? .nan)
        w.double(stay.lastSecond)
        w.count(stay.seconds.count)
        for s in stay.seconds {
            w.double(s.time)
            w.reading(s.heartRate)
            w.reading(s.breathingRate)
            w.double(s.movement)
            w.byte(s.present ? 1 : 0)
            w.double(s.quality)
        }
        w.count(stay.beats.count)
        for b in stay.beats { w.double(b) }
        return Data(w.bytes)
    }

    package static func decode(_ data: Data) throws -> SessionTracker.OpenStay {
        var r = Reader(bytes: [UInt8](data))
        guard Array(try r.take(magic.count)) == magic else { throw Error.malformed("no PBSTAY magic") }
        let v = try r.byte()
        guard v == version else { throw Error.malformed("version \(v), this hub reads \(version)") }
        let lastPresent = try r.double(), lastSnapshot = try r.double()
        let entrySeen = try r.flag()
        let emptySince = try r.double()
        let lastSecond = try r.double()
        let secondCount = try r.count(atLeast: 8 + 1 + 1 + 8 + 1 + 8)
        var seconds: [SecondVitals] = []
        seconds.reserveCapacity(secondCount)
        for _ in 0..<secondCount {
            seconds.append(SecondVitals(time: try r.double(), heartRate: try r.reading(), breathingRate: try r.reading(),
                                        movement: try r.double(), present: try r.flag(), quality: try r.double()))
        }
        let beatCount = try r.count(atLeast: 8)
        let beats = try (0..<beatCount).map { _ in try r.double() }
        guard r.isAtEnd else { throw Error.malformed("\(r.remaining) bytes after the beats") }
        let times = seconds.map(\.time)
        guard zip(times, times.dropFirst()).allSatisfy({ $0 < $1 }), lastPresent.isFinite, lastSecond.isFinite,
              let first = times.first, first <= lastPresent, lastPresent <= lastSecond else {
            throw Error.malformed("its seconds are missing or out of order")
        }
        return SessionTracker.OpenStay(seconds: seconds, beats: beats, lastPresent: lastPresent, lastSnapshot: lastSnapshot,
                                       entrySeen: entrySeen, emptySince: emptySince.isNaN ? nil : emptySince,
                                       lastSecond: lastSecond)
    }

    private struct Writer {
        var bytes: [UInt8] = []
        mutating func byte(_ b: UInt8) { bytes.append(b) }
        mutating func double(_ d: Double) { withUnsafeBytes(of: d.bitPattern.littleEndian) { bytes += $0 } }
        mutating func count(_ n: Int) { withUnsafeBytes(of: UInt32(n).littleEndian) { bytes += $0 } }
        mutating func reading(_ r: Reading) {
            switch r {
            case .value(let v): byte(0); double(v)
            case .none(let why): byte(UInt8(OpenStayArchive.reasons.firstIndex(of: why)! + 1))
            }
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0
        var remaining: Int { bytes.count - at }
        var isAtEnd: Bool { at == bytes.count }
        mutating func take(_ n: Int) throws -> ArraySlice<UInt8> {
            guard n <= remaining else { throw Error.malformed("cut short at byte \(at)") }
            defer { at += n }
            return bytes[at..<(at + n)]
        }
        mutating func byte() throws -> UInt8 { try take(1).first! }
        mutating func flag() throws -> Bool {
            let b = try byte()
            guard b <= 1 else { throw Error.malformed("flag \(b) at byte \(at - 1)") }
            return b == 1
        }
        mutating func double() throws -> Double {
            let raw = try take(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return Double(bitPattern: raw)
        }
        /// A count, refused when the bytes left cannot hold that many items of `atLeast` bytes.
        mutating func count(atLeast itemSize: Int) throws -> Int {
            let raw = try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard Int(raw) <= remaining / itemSize else { throw Error.malformed("count \(raw) beyond the data") }
            return Int(raw)
        }
        mutating func reading() throws -> Reading {
            let tag = try byte()
            if tag == 0 { return .value(try double()) }
            guard Int(tag) <= OpenStayArchive.reasons.count else { throw Error.malformed("reading tag \(tag)") }
            return .none(OpenStayArchive.reasons[Int(tag) - 1])
        }
    }
}
