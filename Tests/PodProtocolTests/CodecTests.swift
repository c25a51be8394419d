import Testing
import PodProtocol
import SleepDomain

/// Round trips over random messages and the edges of every field.
@Suite struct CodecTests {
    @Test func randomMessagesRoundTrip() throws {
        var rng = SplitMix64(seed: 42)
        var encoder = FrameEncoder()
        for _ in 0..<3_000 {
            let message = RandomMessages.any(&rng)
            let requestID = UInt16.random(in: 0...UInt16.max, using: &rng)
            let wire = try encoder.encode(message, requestID: requestID)
            #expect(!wire.dropLast().contains(0), "stuffed frame contains a delimiter")
            let frames = FrameDecoder().decode(wire)
            #expect(frames.count == 1)
            #expect(frames.first?.message == message)
            #expect(frames.first?.header.requestID == requestID)
        }
    }

    /// A pod's transmit queue grows frame by frame while its hub lags: each frame appended
    /// to a full buffer must grow it geometrically, not by the frame (which copied the whole
    /// queue per frame and froze the virtual pod's clock at 1800x).
    @Test func appendingToAFullBufferGrowsItGeometrically() {
        var queue = [UInt8](repeating: 0x55, count: 1 << 16)
        queue += [UInt8](repeating: 0x55, count: queue.capacity - queue.count)
        let before = queue.capacity
        let start = queue.count
        #expect(start == before)
        let frame: [UInt8] = [1, 0, 2, 3]
        frame.withUnsafeBytes { COBS.encode($0, appendingTo: &queue) }
        #expect(queue.capacity >= 2 * before, "capacity \(before) -> \(queue.capacity)")
        let grown = queue.capacity
        // The frames that fit in the room made are appended without growing it again.
        for _ in 0..<1000 { frame.withUnsafeBytes { COBS.encode($0, appendingTo: &queue) } }
        #expect(queue.capacity == grown)
        #expect(COBS.decode(Array(queue[start..<(start + 5)])) == frame)
    }

    @Test func cobsRoundTripsEveryLengthAroundBlockBoundaries() {
        var rng = SplitMix64(seed: 7)
        for length in [0, 1, 2, 253, 254, 255, 256, 507, 508, 509, 1024] {
            for zeros in [false, true] {
                let frame = (0..<length).map { _ in zeros ? UInt8.random(in: 0...3, using: &rng) : UInt8.random(in: 1...255, using: &rng) }
                let encoded = COBS.encode(frame)
                #expect(encoded.last == 0)
                #expect(encoded.count - 1 <= COBS.maxEncodedLength(length))
                #expect(COBS.decode(Array(encoded.dropLast())) == frame)
            }
        }
    }

    @Test func largestPayloadFitsAndOneMoreByteIsRefused() throws {
        var encoder = FrameEncoder()
        let max = [UInt8](repeating: 0xAB, count: Wire.maxPayloadSize)
        let wire = try encoder.encode(.unknown(type: 0x7F, payload: max))
        let frames = FrameDecoder().decode(wire)
        #expect(frames.first?.message == .unknown(type: 0x7F, payload: max))
        #expect(throws: FrameEncoder.EncodingError.payloadTooLarge(Wire.maxPayloadSize + 1)) {
            try encoder.encode(.unknown(type: 0x7F, payload: max + [1]))
        }
    }

    @Test func longerPayloadThanKnownIsReadAndTheExtraIgnored() throws {
        // A v1.x sender appended a field to SET_POWER: a v1 receiver still reads the known ones.
        let header = FrameHeader(sequence: 0, type: MessageType.setPower.rawValue, requestID: 9)
        let frame = try FrameEncoder.frame(header: header, payload: [1, 1, 40, 0xEE, 0xEE])
        let decoded = FrameDecoder().decode(COBS.encode(frame))
        #expect(decoded.first?.message == .setPower(PowerCommand(side: .right, on: true, level: 40)))
    }

    @Test func shortOrOutOfRangePayloadsAreMalformedWithTheStatusThePodAnswers() throws {
        let cases: [(UInt8, [UInt8], Status)] = [
            (MessageType.setAlarm.rawValue, [0, 0x1F, 6], .badLength),
            (MessageType.setAlarm.rawValue, [2, 0x1F, 6, 0, 50, 0, 10, 0], .badValue),     // side 2
            (MessageType.setPowerSchedule.rawValue, [0, 0x7F, 24, 0, 7, 0, 50], .badValue), // 24:00
            (MessageType.setPowerSchedule.rawValue, [0, 0xFF, 22, 0, 7, 0, 50], .badValue), // mask bit 7
            (MessageType.setAlarm.rawValue, [0, 0x1F, 6, 0, 101, 0, 10, 0], .badValue),   // intensity 101
            (MessageType.setClock.rawValue, [0, 0, 0, 0, 0, 0, 0, 0, 0xE8, 0x03], .badValue), // offset +1000 min
            (MessageType.piezo.rawValue, [0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 2, 3], .badLength),
        ]
        for (type, payload, status) in cases {
            let frame = try FrameEncoder.frame(header: FrameHeader(sequence: 0, type: type, requestID: 1), payload: payload)
            let decoder = FrameDecoder()
            let message = try #require(decoder.decode(COBS.encode(frame)).first?.message)
            guard case .malformed(let t, let reason) = message else {
                Issue.record("expected malformed for \(payload), got \(message)")
                continue
            }
            #expect(t == type)
            #expect(reason.status == status, "\(payload)")
            #expect(decoder.counters.malformed == 1)
        }
    }

    @Test func unknownTypesAndFlagsFollowTheCompatibilityRules() throws {
        let decoder = FrameDecoder()
        var wire: [UInt8] = []
        wire += COBS.encode(try FrameEncoder.frame(header: FrameHeader(sequence: 0, type: 0x33), payload: [1, 2]))
        // Unknown compatible flag (bit 2): frame kept.
        wire += COBS.encode(try FrameEncoder.frame(header: FrameHeader(flags: FrameFlags(rawValue: 0x04), sequence: 1,
                                                                       type: MessageType.stopStream.rawValue), payload: []))
        // Unknown incompatible flag (bit 4): frame dropped.
        wire += COBS.encode(try FrameEncoder.frame(header: FrameHeader(flags: FrameFlags(rawValue: 0x10), sequence: 2,
                                                                       type: MessageType.stopStream.rawValue), payload: []))
        // Version 2 frame: dropped.
        wire += COBS.encode(try FrameEncoder.frame(header: FrameHeader(version: 2, sequence: 3, type: 0x0A), payload: []))
        let frames = decoder.decode(wire)
        #expect(frames.map(\.message) == [.unknown(type: 0x33, payload: [1, 2]), .stopStream])
        #expect(decoder.counters.unknownTypes == 1)
        #expect(decoder.counters.unsupportedFlags == 1)
        #expect(decoder.counters.badVersion == 1)
    }

    @Test func clockTimesParseAndPrint() {
        #expect(TimeOfDay("07:05")?.description == "07:05")
        #expect(TimeOfDay("24:00") == nil)
        #expect(TimeOfDay("7:05") == nil)
        #expect(TimeOfDay("07:60") == nil)
        #expect(TimeOfDay(wrapping: -10).description == "23:50")
        let overnight = PowerSchedule(side: .left, days: .everyDay, on: TimeOfDay("22:00")!, off: TimeOfDay("06:30")!, level: 1)
        #expect(overnight.crossesMidnight)
    }

    @Test func clockAnchorPlacesTicksInTime() {
        let anchor = ClockAnchor(tick: 1_000, unixMillis: 1_700_000_000_000, utcOffsetMinutes: 0)
        #expect(anchor.unixTime(ofTick: 1_500) == 1_700_000_001.0)
        #expect(anchor.unixTime(ofTick: 500) == 1_699_999_999.0)
    }
}
