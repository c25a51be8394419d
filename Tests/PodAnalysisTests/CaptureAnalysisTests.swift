import Foundation
import NightModel
import PodAnalysis
import PodProtocol
import SleepAnalysis
import Testing

/// A capture of a NightModel night as `podbridge stream --record` writes it: HELLO, the
/// SET_CLOCK exchange (anchor at tick `anchorTick`), then the streamed frames.
func makeCapture(_ config: NightConfig, seconds: Double, anchorTick: UInt64 = 700,
                 unixMillis: Int64 = anchorMillis) throws -> [UInt8] {
    var b = CaptureBuilder()
    let micros = UInt64(unixMillis) * 1000
    let info = PodInfo(firmware: FirmwareVersion(1, 2, 3), sides: 2, piezoChannelsPerSide: UInt8(config.channelsPerSide),
                       sampleRate: 500, capacitanceRateMilliHz: 2000, features: .all, bootCount: 4,
                       tick: anchorTick - 10, serial: "POD-TEST-1")
    try b.append(.hello(HelloRequest()), direction: .hubToPod, requestID: 1, receivedMicros: micros - 30_000)
    try b.append(.response(Response(request: .hello, status: .ok, body: .hello(info))), requestID: 1,
                 receivedMicros: micros - 28_000)
    try b.appendClockExchange(ClockAnchor(tick: anchorTick, unixMillis: unixMillis, utcOffsetMinutes: 120),
                              requestID: 2, receivedMicros: micros - 2_000)
    var stream = NightStream(config, firstTick: anchorTick)
    for m in stream.next(seconds: seconds) {
        try b.append(m, receivedMicros: micros)
    }
    return b.bytes
}

@Suite struct CaptureAnalysisTests {
    @Test func oneOccupiedSideGivesBeatsAndVitalsOnThatSideOnly() throws {
        let config = inBedNight(seed: 21, duration: 12 * 60, left: false, right: true, pump: true)
        let bytes = try makeCapture(config, seconds: 12 * 60)
        let result = try CaptureAnalysis(capture: bytes)
        #expect(result.anchors.count == 1 && result.serial == "POD-TEST-1")
        #expect(result.utcOffsetMinutes == 120)
        #expect(!result.truncatedTail && result.invalidFrames == 0)
        #expect(result.warnings(file: "x").isEmpty)

        let right = result.right, left = result.left
        let t0 = Double(anchorMillis / 1000)
        #expect(right.vitals.count == 720 && left.vitals.count == 720)
        #expect(right.vitals.first?.time == t0 && right.vitals.last?.time == t0 + 719)
        #expect(right.vitals.filter(\.present).count > 690)
        #expect(right.vitals.filter { $0.heartRate.value != nil }.count > 500)
        #expect(right.beats.count > 500)
        #expect(zip(right.beats, right.beats.dropFirst()).allSatisfy { $1 > $0 })
        // The empty side, next to a sleeper and the pump: nothing.
        #expect(left.vitals.allSatisfy { !$0.present && $0.heartRate.value == nil && $0.breathingRate.value == nil })
        #expect(left.beats.isEmpty)
        // The beats are the model's: 12 minutes at ~60 bpm, the J-peak 0.25 s after the R-wave.
        let truth = NightSimulator(config: config).truth.sides[1].beatTimes.map { $0 + t0 + BCGTemplate.jDelay }
        var matched = 0
        var j = 0
        for b in right.beats {
            while j + 1 < truth.count, truth[j + 1] <= b { j += 1 }
            if abs(truth[j] - b) < 0.05 || (j + 1 < truth.count && abs(truth[j + 1] - b) < 0.05) { matched += 1 }
        }
        #expect(Double(matched) / Double(right.beats.count) > 0.95)
        // And the stager takes them: a session on the occupied side only.
        let analyzer = SleepAnalyzer(rules: SessionRules(minDuration: 5 * 60), timeZone: TimeZone(identifier: "UTC")!)
        #expect(analyzer.analyze(beats: right.beats, vitals: right.vitals).count == 1)
        #expect(analyzer.analyze(beats: left.beats, vitals: left.vitals).isEmpty)
    }

    @Test func aCutShortTailIsReportedAndTheRestUsed() throws {
        let config = inBedNight(seed: 22, duration: 90, right: false)
        let bytes = try makeCapture(config, seconds: 90)
        let whole = try CaptureAnalysis(capture: bytes)
        let cut = try CaptureAnalysis(capture: Array(bytes.dropLast(10)))
        #expect(!whole.truncatedTail && cut.truncatedTail)
        #expect(cut.records == whole.records - 1)
        #expect(cut.warnings(file: "night.podcap").contains { $0.hasPrefix("night.podcap: the last record is cut short") })
        #expect(cut.left.vitals.count >= whole.left.vitals.count - 1)
        #expect(cut.left.vitals.filter(\.present).count > 60)
    }

    @Test func walksRecordsExactlyAsCaptureReadDoes() throws {
        let bytes = try makeCapture(inBedNight(seed: 23, duration: 5), seconds: 5)
        for cut in [0, 3, 11, 200] {
            let b = Array(bytes.dropLast(cut))
            let reference = try Capture.read(b)
            let a = try CaptureAnalysis(capture: b)
            #expect(a.records == reference.records.count)
            #expect(a.truncatedTail == reference.truncatedTail)
        }
    }

    @Test func damagedFramesAreCountedAndSkipped() throws {
        var bytes = try makeCapture(inBedNight(seed: 24, duration: 30, right: false), seconds: 30)
        // Flip a byte inside the payload of three records near the end (CRC fails).
        let records = try Capture.read(bytes).records
        var offset = Capture.magic.count
        var flipped = 0
        for (i, r) in records.enumerated() {
            if i >= records.count - 40, i % 10 == 0 { bytes[offset + 11 + 20] ^= 0x5A; flipped += 1 }
            offset += 11 + r.frame.count
        }
        let a = try CaptureAnalysis(capture: bytes)
        #expect(a.invalidFrames == flipped)
        #expect(a.warnings(file: "f").contains("f: \(flipped) damaged frame(s) skipped (CRC or framing)"))
    }

    @Test func errorsNameTheFile() throws {
        #expect(throws: CaptureAnalysisError.unreadable(.notACapture)) { try CaptureAnalysis(capture: Array("time,heart_rate\n".utf8)) }
        do {
            _ = try CaptureAnalysis(capture: [])
            Issue.record("an empty file is not a capture")
        } catch {
            #expect(error.message(file: "empty.podcap") == "empty.podcap: not a podbridge capture (magic bytes missing)")
        }
        // Streamed frames but no SET_CLOCK answer: nothing can be placed in time.
        var b = CaptureBuilder()
        var stream = NightStream(inBedNight(seed: 25, duration: 2), firstTick: 0)
        for m in stream.next(seconds: 2) { try b.append(m, receivedMicros: 1) }
        do {
            _ = try CaptureAnalysis(capture: b.bytes)
            Issue.record("a capture without an anchor must fail")
        } catch {
            #expect(error == .noClockAnchor(streamFrames: 48))
            #expect(error.message(file: "a.podcap").hasPrefix("a.podcap: no clock anchor"))
        }
        // A record header with an impossible direction byte.
        var bad = Capture.magic
        bad += [0, 0, 0, 0, 0, 0, 0, 0, 7, 4, 0, 1, 2, 3, 4]
        #expect(throws: CaptureAnalysisError.unreadable(.badDirection(offset: 8))) { try CaptureAnalysis(capture: bad) }
    }
}
