import Foundation
import Testing
import SleepDomain
@testable import SleepAnalysis

@Suite struct InputFormatTests {
    func beatsError(_ text: String) -> InputError? {
        do { _ = try InputFormats.parseBeats(text, file: "b.csv"); return nil } catch { return error as? InputError }
    }
    func vitalsError(_ text: String) -> InputError? {
        do { _ = try InputFormats.parseVitals(text, file: "v.csv"); return nil } catch { return error as? InputError }
    }

    @Test func beatsOnly() throws {
        let b = try InputFormats.parseBeats("beat_time\n601254420.076\n601254420.936\r\n\n", file: "b.csv")
        #expect(b.beats == [601254420.076, 601254420.936])
        #expect(b.breathing.isEmpty && b.movement.isEmpty)
    }

    @Test func beatsWithTheirOwnSignalTimes() throws {
        let text = """
        beat_time,signal_time,movement,breathing_rate
        100.2,100,0.5,14
        101.1,,,
        ,101,0.25,
        102.0,102,,50
        """
        let b = try InputFormats.parseBeats(text, file: "b.csv")
        #expect(b.beats == [100.2, 101.1, 102.0])
        #expect(b.movement == [TimedValue(time: 100, value: 0.5), TimedValue(time: 101, value: 0.25)])
        #expect(b.breathing == [TimedValue(time: 100, value: 14)]) // 50/min is implausible: left out
        #expect(b.skipped.columns == ["breathing_rate": .init(count: 1, firstLine: 5)])
        #expect(b.skipped.descriptions(file: "b.csv") == ["b.csv: 1 breathing_rate value outside 4–40 per minute skipped (first on line 5)"])
    }

    @Test func impossibleReadingsAreCountedPerColumnWithTheirFirstLine() throws {
        let text = """
        time,heart_rate,hrv_rmssd,breathing_rate
        1000,62,45,14
        1001,500,-3,14
        1002,61,40,0
        1003,12,,90
        1004,200,0,40
        """
        let v = try InputFormats.parseVitals(text, file: "v.csv")
        #expect(v.seconds.count == 5) // nothing else about those rows is lost
        #expect(v.seconds[4].heartRate == .value(200) && v.seconds[4].breathingRate == .value(40)) // the limits are kept
        #expect(v.hrv.map(\.value) == [45, 40, 0])
        #expect(v.skipped.descriptions(file: "v.csv") == [
            "v.csv: 2 heart_rate values outside 30–200 bpm skipped (first on line 3)",
            "v.csv: 2 breathing_rate values outside 4–40 per minute skipped (first on line 4)",
            "v.csv: 1 hrv_rmssd value below 0 ms skipped (first on line 3)",
        ])
        #expect(try InputFormats.parseVitals("time,heart_rate\n1,60\n", file: "v.csv").skipped.descriptions(file: "v.csv").isEmpty)
    }

    @Test func beatsErrorsNameFileAndLine() throws {
        #expect(beatsError("") == InputError(file: "b.csv", line: 1, kind: .empty))
        #expect(beatsError("beat_time\n") == InputError(file: "b.csv", line: 2, kind: .empty))
        #expect(beatsError("beat_time,pulse\n1,2\n") == InputError(file: "b.csv", line: 1, kind: .unknownColumn("pulse")))
        #expect(beatsError("time\n1\n") == InputError(file: "b.csv", line: 1, kind: .unknownColumn("time")))
        // A file without its header line (sleep-accel's heartrate.txt is `time,bpm` rows only).
        let headerless = try #require(beatsError("-556410.36066,57\n-556405.36066,58\n"))
        #expect(headerless == InputError(file: "b.csv", line: 1, kind: .noHeader(firstField: "-556410.36066", required: ["beat_time"])))
        #expect(headerless.description.hasPrefix("b.csv:1: the first line must be a header naming the columns (beat_time"))
        #expect(beatsError("beat_time,movement\n1,0\n") == InputError(file: "b.csv", line: 1, kind: .missingColumn("signal_time")))
        #expect(beatsError("beat_time\n1\n3\n2\n") == InputError(file: "b.csv", line: 4, kind: .unsorted(column: "beat_time")))
        #expect(beatsError("beat_time\n1\n1\n") == InputError(file: "b.csv", line: 3, kind: .duplicateTime(column: "beat_time")))
        #expect(beatsError("beat_time\n1\nx2\n") == InputError(file: "b.csv", line: 3, kind: .notANumber(column: "beat_time", text: "x2")))
        #expect(beatsError("beat_time\n1\nnan\n") == InputError(file: "b.csv", line: 3, kind: .notANumber(column: "beat_time", text: "nan")))
        #expect(beatsError("beat_time,signal_time\n1,2,3\n") == InputError(file: "b.csv", line: 2, kind: .wrongFieldCount(expected: 2, found: 3)))
        #expect(beatsError("beat_time\n1\n3\n2\n")?.description == "b.csv:4: times in column 'beat_time' go backwards")
    }

    @Test func vitals() throws {
        let text = """
        time,heart_rate,hrv_rmssd,breathing_rate,movement,present
        1000,62,45,14,0.1,1
        1001,,,,,0
        1002,250,,3,2,
        1003,,,,,
        """
        let v = try InputFormats.parseVitals(text, file: "v.csv")
        #expect(v.seconds.count == 4)
        #expect(v.seconds[0].heartRate == .value(62) && v.seconds[0].breathingRate == .value(14))
        #expect(v.seconds[0].present && v.seconds[0].movement == 0.1)
        #expect(!v.seconds[1].present && v.seconds[1].heartRate == .none(.absent))
        #expect(v.seconds[2].heartRate == .none(.implausible) && v.seconds[2].breathingRate == .none(.implausible))
        #expect(v.seconds[2].present) // empty `present` with a heart rate counts as present
        #expect(!v.seconds[3].present)
        #expect(v.hrv == [TimedValue(time: 1000, value: 45)])
        #expect(v.skipped.columns == ["heart_rate": .init(count: 1, firstLine: 4), "breathing_rate": .init(count: 1, firstLine: 4)])
        // Only `time` is required.
        #expect(try InputFormats.parseVitals("time\n1\n2\n", file: "v.csv").seconds.count == 2)
        // Without a movement column movement was not measured (its zeros are not stillness).
        #expect(try !InputFormats.parseVitals("time\n1\n2\n", file: "v.csv").hasMovement)
        #expect(try InputFormats.parseVitals("time,movement\n1,\n2,0.5\n", file: "v.csv").hasMovement)
    }

    @Test func vitalsErrors() {
        #expect(vitalsError("") == InputError(file: "v.csv", line: 1, kind: .empty))
        #expect(vitalsError("heart_rate\n60\n") == InputError(file: "v.csv", line: 1, kind: .missingColumn("time")))
        #expect(vitalsError("time,spo2\n1,98\n") == InputError(file: "v.csv", line: 1, kind: .unknownColumn("spo2")))
        #expect(vitalsError("time,time\n1,1\n") == InputError(file: "v.csv", line: 1, kind: .duplicateColumn("time")))
        #expect(vitalsError("time,heart_rate\n2,60\n1,60\n") == InputError(file: "v.csv", line: 3, kind: .unsorted(column: "time")))
        #expect(vitalsError("time,heart_rate\n2,60\n2,60\n") == InputError(file: "v.csv", line: 3, kind: .duplicateTime(column: "time")))
        #expect(vitalsError("time,heart_rate\n2,sixty\n") == InputError(file: "v.csv", line: 2, kind: .notANumber(column: "heart_rate", text: "sixty")))
        #expect(vitalsError("time,present\n2,yes\n") == InputError(file: "v.csv", line: 2, kind: .notABoolean(column: "present", text: "yes")))
        #expect(vitalsError("time,heart_rate\n,60\n") == InputError(file: "v.csv", line: 2, kind: .missingValue(column: "time")))
    }

    @Test func stagesRoundTrip() throws {
        let parsed = try InputFormats.parseStages("start,end,stage\n0,30,awake\n30,60,unscored\n60,90,rem\n", file: "s.csv")
        #expect(parsed.map(\.stage) == [.awake, nil, .rem])
        #expect(throws: InputError(file: "s.csv", line: 2, kind: .unknownStage("light"))) {
            try InputFormats.parseStages("start,end,stage\n0,30,light\n", file: "s.csv")
        }
        // An end that is no time, or not after its start, is refused: the scoring rule takes
        // each interval's middle, and `--reference` reads files from anywhere.
        #expect(throws: InputError(file: "s.csv", line: 3, kind: .timeOutOfRange(column: "end", text: "1e300"))) {
            try InputFormats.parseStages("start,end,stage\n0,30,awake\n30,1e300,core\n", file: "s.csv")
        }
        #expect(throws: InputError(file: "s.csv", line: 2, kind: .endNotAfterStart)) {
            try InputFormats.parseStages("start,end,stage\n30,30,awake\n", file: "s.csv")
        }
        #expect(InputError(file: "s.csv", line: 2, kind: .endNotAfterStart).description == "s.csv:2: 'end' is not after 'start'")
        // A stage block (a tracker's export) is its epochs, each scored once; rows must not overlap.
        let blocks = try InputFormats.parseStages("start,end,stage\n0,7200,core\n7200,7230,rem\n7230,7290,unscored\n", file: "b.csv")
        #expect(blocks.count == 240 + 1 + 2)
        #expect(blocks.prefix(240).allSatisfy { $0.stage == .core && $0.end - $0.start == 30 })
        #expect(blocks[1] == InputFormats.StagedInterval(start: 30, end: 60, stage: .core))
        #expect(blocks[240] == InputFormats.StagedInterval(start: 7200, end: 7230, stage: .rem))
        #expect(blocks.last == InputFormats.StagedInterval(start: 7260, end: 7290, stage: nil))
        // A block is bounded like every file's times: one row over 32 days is refused, not
        // split into 92 160 epochs (and 0 → 10^10 s, which the fuzzer sent, into 3·10^8).
        #expect(throws: InputError(file: "s.csv", line: 2, kind: .spanTooLong(column: "end", days: 32))) {
            try InputFormats.parseStages("start,end,stage\n0,2764800,core\n", file: "s.csv")
        }
        #expect(throws: InputError(file: "s.csv", line: 3, kind: .spanTooLong(column: "end", days: 31.5))) {
            try InputFormats.parseStages("start,end,stage\n0,30,core\n30,2721600,rem\n", file: "s.csv")
        }
        #expect(throws: InputError(file: "s.csv", line: 3, kind: .overlapsPrevious)) {
            try InputFormats.parseStages("start,end,stage\n0,60,awake\n30,90,core\n", file: "s.csv")
        }
        let session = SleepSession(start: 0, end: 60, wakeDate: CalendarDay("1970-01-01")!, timeZone: "UTC", isFinal: true,
                                   epochs: [Epoch(start: 0, stage: .core, probabilities: .certain(.core), features: EpochFeatures()),
                                            Epoch(start: 30, stage: .deep, probabilities: .certain(.deep), features: EpochFeatures())],
                                   metrics: SessionMetrics(epochs: []))
        #expect(InputFormats.epochsCSV([session]) == "start,end,stage\n0,30,core\n30,60,deep\n")
    }
}

/// Times that no recording has: out of the Unix range, or spanning longer than a month
/// (the analyzer's epoch grid over them would not fit in memory).
@Suite struct InputTimeBoundsTests {
    @Test func aTimeOutsideUnixSecondsIsAnErrorNamingTheLine() {
        #expect(throws: InputError(file: "b.csv", line: 3, kind: .timeOutOfRange(column: "beat_time", text: "1e+300"))) {
            try InputFormats.parseBeats("beat_time\n601254420.0\n1e300\n", file: "b.csv")
        }
        #expect(throws: InputError(file: "v.csv", line: 2, kind: .timeOutOfRange(column: "time", text: "-5.0"))) {
            try InputFormats.parseVitals("time,heart_rate\n-5,60\n", file: "v.csv")
        }
    }

    @Test func aSpanLongerThanAMonthIsAnErrorNamingTheLine() throws {
        // The fuzzer's input (a beat 19 000 years after the first) is out of range; a beat
        // 40 days later is within it but spans too long.
        let fuzzed = "beat_time,signal_time,movement,breathing_rate\n601254420.076,601254420,0.2,14.5\n601254420.936,,,\n601254405262.,601254422,0.0,\n"
        #expect(throws: InputError(file: "b.csv", line: 4, kind: .timeOutOfRange(column: "beat_time", text: "601254405262.0"))) {
            try InputFormats.parseBeats(fuzzed, file: "b.csv")
        }
        let text = "beat_time\n601254420.076\n601254420.936\n\(601254420 + 40 * 86_400)\n"
        do {
            _ = try InputFormats.parseBeats(text, file: "b.csv")
            Issue.record("a 40-day file must be refused")
        } catch let error as InputError {
            #expect(error.line == 4)
            guard case .spanTooLong(column: "beat_time", _) = error.kind else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(error.description == "b.csv:4: the times in column 'beat_time' span 40.0 days; a file may span at most 31 (split it by night)")
        }
        // 31 days exactly is accepted; a second more is not.
        let month = InputFormats.maximumSpan
        _ = try InputFormats.parseVitals("time,heart_rate\n1000,60\n\(1000 + month),60\n", file: "v.csv")
        #expect(throws: InputError.self) {
            try InputFormats.parseVitals("time,heart_rate\n1000,60\n\(1000 + month + 1),60\n", file: "v.csv")
        }
    }
}
