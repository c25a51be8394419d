import ArgumentParser
import Foundation
import PodProtocol

/// `podbridge inspect`: what is in a capture file, or in raw bytes from the link.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "List the frames of a capture file (or a raw byte dump with --raw) and the decoder's counters.")

    @Argument(help: "A capture written by `podbridge stream --record` or the virtual pod.")
    var file: String

    @Flag(help: "The file holds raw link bytes (COBS frames and 0x00 delimiters), not a capture.")
    var raw = false

    @Option(help: "Print at most this many frames (0: only the summary).")
    var limit = 40

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit is a number of frames, 0 or more, not \(limit)") }
    }

    func run() throws {
        let data = try InputFile.bytes(file)
        var printed = 0
        var perType: [String: Int] = [:]
        func show(_ frame: DecodedFrame, time: UInt64?) {
            perType[Self.name(of: frame.message), default: 0] += 1
            guard printed < limit else { return }
            printed += 1
            let stamp = time.map { String(format: "%.3f ", Double($0) / 1e6) } ?? ""
            print("\(stamp)seq \(frame.header.sequence) id \(frame.header.requestID) \(Self.summary(of: frame.message))")
        }
        if raw {
            let decoder = FrameDecoder()
            for frame in decoder.decode(Array(data)) { show(frame, time: nil) }
            print(Self.describe(decoder.counters))
        } else {
            let capture: (records: [Capture.Record], truncatedTail: Bool)
            do { capture = try Capture.read(Array(data)) } catch { throw CommandFailure("\(file): \(error)") }
            var rejected = RejectedFrames()
            for record in capture.records {
                switch FrameDecoder.parse(frame: record.frame) {
                case .success(let frame): show(frame, time: record.receivedMicros)
                case .failure(let error): rejected.count(error)
                }
            }
            print("\(capture.records.count) records, \(rejected)\(capture.truncatedTail ? ", last record cut short" : "")")
        }
        for (name, count) in perType.sorted(by: { $0.key < $1.key }) { print("  \(name): \(count)") }
    }

    /// The message's kind, from its type code: describing the message and cutting the name
    /// out printed every sample of every piezo block first (33 s for a 78 MB capture).
    static func name(of message: Message) -> String {
        switch message {
        case .response(let r): "response(\(r.request))"
        case .unknown(let t, _): "unknown(0x\(String(t, radix: 16)))"
        case .malformed(let t, _): "malformed(0x\(String(t, radix: 16)))"
        default: MessageType(rawValue: message.typeCode).map { "\($0)" } ?? "0x\(String(message.typeCode, radix: 16))"
        }
    }

    static func summary(of message: Message) -> String {
        switch message {
        case .piezo(let p): "piezo \(p.side) tick \(p.firstTick) \(p.count)×\(p.channels) gain \(p.gain)"
        case .capacitance(let c): "capacitance \(c.side) tick \(c.tick) \(c.values)"
        default: plain(String(describing: message))
        }
    }

    /// A message's Swift description as a reader wants it: no module or enum prefixes, and an
    /// optional field's value itself (`maxMinor: 1`, not `maxMinor: Optional(1)`).
    static func plain(_ description: String) -> String {
        var text = description
        for prefix in ["PodProtocol.", "SleepDomain.", "MessageType.", "ResponseBody.", "Status."] {
            text = text.replacingOccurrences(of: prefix, with: "")
        }
        // Innermost first, so a nested optional unwraps too.
        while let match = text.firstMatch(of: /Optional\(([^()]*)\)/) {
            text.replaceSubrange(match.range, with: match.output.1)
        }
        return text
    }

    /// Every frame the decoder saw is in one count: the ones it passed on, and each reason
    /// it dropped one for (another protocol version or an incompatible flag included).
    static func describe(_ c: DecoderCounters) -> String {
        "bytes \(c.bytes) frames \(c.frames) crc_errors \(c.crcErrors) malformed \(c.malformed) oversize \(c.oversize) "
            + "bad_version \(c.badVersion) unsupported_flags \(c.unsupportedFlags) "
            + "dropped \(c.droppedFrames) (gaps \(c.sequenceGaps)) unknown \(c.unknownTypes) restarts \(c.senderRestarts)"
    }

    /// Capture records whose frame was rejected, by reason.
    struct RejectedFrames: CustomStringConvertible {
        var crc = 0, short = 0, version = 0, flags = 0

        mutating func count(_ error: FrameError) {
            switch error {
            case .crcMismatch: crc += 1
            case .tooShort: short += 1
            case .unsupportedVersion: version += 1
            case .unsupportedFlags: flags += 1
            }
        }

        var description: String {
            "\(crc) failed their CRC, \(short) too short, \(version) of another protocol version, "
                + "\(flags) with an unknown incompatible flag"
        }
    }
}
