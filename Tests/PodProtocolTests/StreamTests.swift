import Testing
import PodProtocol
import SleepDomain

/// Byte streams as a real link delivers them: split anywhere, damaged, full of garbage.
@Suite struct StreamTests {
    /// A realistic stream: piezo blocks for both sides, capacitance, and the odd event.
    static func stream(frames count: Int, seed: UInt64) throws -> (wire: [UInt8], messages: [Message], boundaries: [Int]) {
        var rng = SplitMix64(seed: seed)
        var encoder = FrameEncoder()
        var wire: [UInt8] = []
        var messages: [Message] = []
        var boundaries: [Int] = []
        for _ in 0..<count {
            let m = RandomMessages.streamed(&rng)
            try encoder.encode(m, appendingTo: &wire)
            messages.append(m)
            boundaries.append(wire.count)
        }
        return (wire, messages, boundaries)
    }

    @Test func anySplitOfTheStreamGivesTheSameFrames() throws {
        let (wire, messages, _) = try Self.stream(frames: 200, seed: 1)
        var rng = SplitMix64(seed: 2)
        for chunking in 0..<4 {
            let decoder = FrameDecoder()
            var got: [Message] = []
            var i = 0
            while i < wire.count {
                let size = chunking == 0 ? 1 : Int.random(in: 1...(chunking * 700), using: &rng)
                let chunk = Array(wire[i..<min(i + size, wire.count)])
                chunk.withUnsafeBytes { decoder.decode($0) { got.append($0.message) } }
                i += size
            }
            #expect(got == messages)
            #expect(decoder.counters.frames == UInt64(messages.count))
            #expect(decoder.counters.droppedFrames == 0 && decoder.counters.crcErrors == 0)
        }
    }

    @Test func bitFlipsLoseOnlyTheDamagedFrames() throws {
        let (wire, messages, boundaries) = try Self.stream(frames: 300, seed: 3)
        var rng = SplitMix64(seed: 4)
        var damaged = wire
        var hitFrames = Set<Int>()
        for _ in 0..<40 {
            // The first and last frames stay intact so that every loss between shows as a gap.
            let at = Int.random(in: boundaries[0]..<boundaries[boundaries.count - 3], using: &rng)
            damaged[at] ^= UInt8(1 << Int.random(in: 0..<8, using: &rng))
            let frame = boundaries.firstIndex(where: { $0 > at })!
            hitFrames.insert(frame)
            // A flip that creates or destroys a delimiter also damages the frame after it.
            if damaged[at] == 0 || wire[at] == 0 { hitFrames.insert(frame + 1) }
        }
        let decoder = FrameDecoder()
        let got = decoder.decode(damaged).map(\.message)
        let intact = messages.enumerated().filter { !hitFrames.contains($0.offset) }.map(\.element)
        // Every undamaged frame arrives, in order; a damaged one never arrives altered.
        #expect(intact.allSatisfy { got.contains($0) })
        #expect(got.allSatisfy { messages.contains($0) })
        #expect(got.count >= intact.count)
        // Every damaged frame is accounted for: as a CRC error, malformed, or a sequence gap.
        #expect(decoder.counters.droppedFrames >= UInt64(messages.count - got.count))
    }

    @Test func garbageBetweenFramesCostsNothingButTheGarbage() throws {
        let (wire, messages, boundaries) = try Self.stream(frames: 100, seed: 5)
        var rng = SplitMix64(seed: 6)
        var noisy: [UInt8] = []
        var start = 0
        for end in boundaries {
            let garbage = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            noisy += garbage + [0]  // garbage, then the delimiter a real sender puts before a frame after noise
            noisy += wire[start..<end]
            start = end
        }
        let decoder = FrameDecoder()
        #expect(decoder.decode(noisy).map(\.message) == messages)
        #expect(decoder.counters.droppedFrames == 0)
    }

    @Test func truncatedFramesAreDroppedAndTheNextOneSurvives() throws {
        let (wire, messages, boundaries) = try Self.stream(frames: 50, seed: 8)
        var cut: [UInt8] = []
        var start = 0
        var kept: [Message] = []
        for (i, end) in boundaries.enumerated() {
            if i % 3 == 1 {
                cut += wire[start..<(start + (end - start) / 2)]
                cut.append(0)  // the link dropped the rest of this frame
            } else {
                cut += wire[start..<end]
                kept.append(messages[i])
            }
            start = end
        }
        let decoder = FrameDecoder()
        #expect(decoder.decode(cut).map(\.message) == kept)
        let cutIndices = boundaries.indices.filter { $0 % 3 == 1 }
        let lastKept = boundaries.indices.last { $0 % 3 != 1 }!
        // A lost frame shows as a sequence gap once a later frame arrives.
        #expect(decoder.counters.droppedFrames == UInt64(cutIndices.filter { $0 < lastKept }.count))
        #expect(decoder.counters.crcErrors + decoder.counters.malformed == UInt64(cutIndices.count))
    }

    @Test func oversizeRunsAreDiscardedUpToTheNextDelimiter() throws {
        var wire = [UInt8](repeating: 0x55, count: 5_000)
        wire.append(0)
        var encoder = FrameEncoder()
        wire += try encoder.encode(.getStatus, requestID: 1)
        let decoder = FrameDecoder()
        #expect(decoder.decode(wire).map(\.message) == [.getStatus])
        #expect(decoder.counters.oversize == 1)
    }

    @Test func zeroLengthAndDelimiterOnlyInputIsHarmless() {
        let decoder = FrameDecoder()
        #expect(decoder.decode([]).isEmpty)
        #expect(decoder.decode([0, 0, 0, 0]).isEmpty)
        #expect(decoder.counters.frames == 0 && decoder.counters.malformed == 0)
    }

    @Test func sequenceGapsAreCountedAsDrops() throws {
        var encoder = FrameEncoder()
        var wire: [UInt8] = []
        for i in 0..<10 {
            let frame = try encoder.encode(.stopStream)
            if i != 3 && i != 4 && i != 7 { wire += frame }
        }
        // A pod reboot restarts the sequence at 0 with a BOOT event: not a drop.
        var rebooted = FrameEncoder()
        wire += try rebooted.encode(.event(PodEvent(tick: 0, kind: .boot, side: nil)))
        wire += try rebooted.encode(.stopStream)
        let decoder = FrameDecoder()
        #expect(decoder.decode(wire).count == 9)
        #expect(decoder.counters.sequenceGaps == 2)
        #expect(decoder.counters.droppedFrames == 3)
        #expect(decoder.counters.senderRestarts == 1)
    }

    @Test func sequenceWrapsWithoutAGap() throws {
        var encoder = FrameEncoder(firstSequence: 65_534)
        var wire: [UInt8] = []
        for _ in 0..<4 { wire += try encoder.encode(.stopStream) }
        let decoder = FrameDecoder()
        #expect(decoder.decode(wire).map(\.header.sequence) == [65_534, 65_535, 0, 1])
        #expect(decoder.counters.droppedFrames == 0)
    }

    @Test func randomBytesNeverTrapAndEveryByteIsCounted() {
        var rng = SplitMix64(seed: 9)
        let decoder = FrameDecoder()
        var total = 0
        for _ in 0..<200 {
            let junk = (0..<Int.random(in: 0...4_000, using: &rng)).map { _ in
                // Few zeros so that long runs exercise the oversize path too.
                Int.random(in: 0..<50, using: &rng) == 0 ? 0 : UInt8.random(in: 1...255, using: &rng)
            }
            total += junk.count
            _ = decoder.decode(junk)
        }
        #expect(decoder.counters.bytes == UInt64(total))
        #expect(decoder.counters.frames == 0)
    }

    @Test func captureRecordsRoundTripAndACutTailIsReported() throws {
        var encoder = FrameEncoder()
        var file = Capture.magic
        var records: [Capture.Record] = []
        for i in 0..<5 {
            let wire = try encoder.encode(.capacitance(CapacitanceReading(side: .left, tick: UInt64(i * 250), values: [1, 2, 3])))
            let frame = COBS.decode(Array(wire.dropLast()))!
            let record = Capture.Record(receivedMicros: 1_700_000_000_000_000 + UInt64(i) * 500_000,
                                        direction: i == 0 ? .hubToPod : .podToHub, frame: frame)
            records.append(record)
            file += Capture.encode(record)
        }
        let whole = try Capture.read(file)
        #expect(whole.records == records && !whole.truncatedTail)
        let cut = try Capture.read(Array(file.dropLast(3)))
        #expect(cut.records == Array(records.dropLast()) && cut.truncatedTail)
        #expect(throws: Capture.ReadError.notACapture) { try Capture.read([1, 2, 3]) }
        let parsed = try FrameDecoder.parse(frame: records[2].frame).get()
        #expect(parsed.message == .capacitance(CapacitanceReading(side: .left, tick: 500, values: [1, 2, 3])))
    }

    @Test("one late frame (10, 11, 5, 12, 13) is one out-of-order frame and no drop")
    func lateFrameIsNotADrop() throws {
        var bytes: [UInt8] = []
        for seq: UInt16 in [10, 11, 5, 12, 13] {
            var encoder = FrameEncoder(firstSequence: seq)
            bytes += try encoder.encode(.log(LogLine(tick: UInt64(seq), level: 1, text: "x")), requestID: 0)
        }
        let decoder = FrameDecoder()
        #expect(decoder.decode(bytes).count == 5)
        #expect(decoder.counters.outOfOrder == 1)
        #expect(decoder.counters.droppedFrames == 0)
        #expect(decoder.counters.sequenceGaps == 0)
    }

    @Test("an empty serial in a HELLO reply is unreadable, not a pod called \"\"")
    func emptySerialIsRejected() throws {
        var info = SpecVectors.info
        info.serial = ""
        var encoder = FrameEncoder()
        let bytes = try encoder.encode(.response(Response(request: .hello, status: .ok, body: .hello(info))), requestID: 1)
        let frames = FrameDecoder().decode(bytes)
        guard case .malformed(_, .invalidValue(let field))? = frames.first?.message else {
            Issue.record("accepted: \(String(describing: frames.first?.message))"); return
        }
        #expect(field == "serial length")
    }
}
