import Foundation
import PodDevice
import PodProtocol
import Testing
import TestSupport

/// What `podbridge inspect` and `podbridge stream` tell a user about frames and pods they
/// cannot use (issue 10 item 6).
@Suite struct CommandErrorTests {
    /// A frame as the wire carries it (COBS, delimiter) with any version and flags.
    static func wire(_ message: Message, version: UInt8 = Wire.version, flags: UInt8 = 0, sequence: UInt16) throws -> [UInt8] {
        let header = FrameHeader(version: version, flags: FrameFlags(rawValue: flags), sequence: sequence,
                                 type: message.typeCode, requestID: 0)
        return COBS.encode(try FrameEncoder.frame(header: header, payload: payload(of: message)))
    }

    /// A message's payload, cut out of an ordinary frame.
    static func payload(of message: Message) throws -> [UInt8] {
        var encoder = FrameEncoder()
        let frame = COBS.decode(Array(try encoder.encode(message).dropLast())) ?? []
        return Array(frame[Wire.headerSize..<(frame.count - Wire.crcSize)])
    }

    static let reading = Message.capacitance(CapacitanceReading(side: .left, tick: 500, values: [1, 2, 3]))

    @Test func inspectRawCountsFramesOfAnotherVersionAndWithUnknownIncompatibleFlags() async throws {
        var bytes: [UInt8] = []
        bytes += try Self.wire(Self.reading, sequence: 0)
        bytes += try Self.wire(Self.reading, version: 2, sequence: 1)
        bytes += try Self.wire(Self.reading, version: 2, sequence: 2)
        bytes += try Self.wire(Self.reading, flags: 0x40, sequence: 3)
        bytes += try Self.wire(Self.reading, sequence: 4)
        bytes += try Self.wire(.hello(HelloRequest(maxMinor: 1)), sequence: 5)
        let file = CommandRunner.temporaryFile("link.bin")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let r = try await CommandRunner.run(["inspect", "--raw", file.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("frames 3 "), "\(r.stdout)")
        #expect(r.stdout.contains("bad_version 2 unsupported_flags 1"), "\(r.stdout)")
        // Each frame in words a reader knows, and the count per kind by its name.
        #expect(!r.stdout.contains("PodProtocol.") && !r.stdout.contains("SleepDomain."), "\(r.stdout)")
        #expect(r.stdout.contains("hello(HelloRequest(minVersion: 1, maxVersion: 1, maxMinor: 1))\n"), "\(r.stdout)")
        #expect(!r.stdout.contains("Optional("), "\(r.stdout)")
        #expect(r.stdout.contains("  capacitance: 2\n") && r.stdout.contains("  hello: 1\n"), "\(r.stdout)")
    }

    @Test func inspectOfACaptureNamesWhyEachFrameWasRejected() async throws {
        var capture = Capture.magic
        func record(_ wire: [UInt8]) {
            let frame = COBS.decode(Array(wire.dropLast())) ?? []
            capture += Capture.encode(Capture.Record(receivedMicros: 1, direction: .podToHub, frame: frame))
        }
        record(try Self.wire(Self.reading, sequence: 0))
        record(try Self.wire(Self.reading, version: 2, sequence: 1))
        record(try Self.wire(Self.reading, flags: 0x80, sequence: 2))
        var damaged = try FrameEncoder.frame(header: FrameHeader(sequence: 3, type: Self.reading.typeCode, requestID: 0),
                                             payload: Self.payload(of: Self.reading))
        damaged[9] ^= 0xFF
        capture += Capture.encode(Capture.Record(receivedMicros: 2, direction: .podToHub, frame: damaged))
        let file = CommandRunner.temporaryFile("night.podcap")
        try Data(capture).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let r = try await CommandRunner.run(["inspect", file.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("4 records, 1 failed their CRC, 0 too short, 1 of another protocol version, 1 with an unknown incompatible flag"),
                "\(r.stdout)")
    }

    @Test func streamSaysOnlyTheErrorOnAProtocolVersionMismatch() async throws {
        // A pod that speaks no version the hub does: it refuses HELLO with UNSUPPORTED_VERSION.
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let pod = Task {
            let decoder = FrameDecoder()
            var encoder = FrameEncoder()
            while let bytes = try? await pty.read() {
                for frame in decoder.decode(bytes) where frame.header.type == MessageType.hello.rawValue {
                    let answer = Message.response(Response(request: .hello, status: .unsupportedVersion, body: .none))
                    try? await pty.write(try encoder.encode(answer, requestID: frame.header.requestID))
                }
            }
        }
        defer { pod.cancel() }

        let r = try await CommandRunner.run(["stream", "--path", pty.path])
        #expect(r.status != 0)
        #expect(r.stderr.contains("Error: protocol version mismatch"), "stderr: \(r.stderr)")
        #expect(!r.stderr.lowercased().contains("usage"), "the usage text follows the error: \(r.stderr)")
        #expect(!r.stdout.lowercased().contains("usage"), "\(r.stdout)")
    }

    @Test func analyzeOfAFileThatIsNotACaptureSaysSoWithoutTheUsage() async throws {
        let file = CommandRunner.temporaryFile("beats.csv")
        try Data("beat_time\n1.0\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await CommandRunner.run(["analyze", "--capture", file.path])
        #expect(r.status != 0)
        #expect(r.stderr.contains("\(file.path): not a podbridge capture (magic bytes missing)"), "\(r.stderr)")
        #expect(!r.stderr.lowercased().contains("usage"), "\(r.stderr)")
    }

    /// A pod asked for by path that is not there is named in the table and fails the command
    /// (status 0 before: a script checking `devices --path` learnt nothing).
    @Test func devicesWithAPathThatIsNotThereSaysWhyAndFails() async throws {
        let r = try await CommandRunner.run(["devices", "--path", "/nonexistent-pod", "--no-hello"])
        #expect(r.status == 1, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stdout.contains("/nonexistent-pod") && r.stdout.contains("No such file or directory"), "\(r.stdout)")
    }
}
