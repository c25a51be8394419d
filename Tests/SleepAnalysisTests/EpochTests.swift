import Foundation
import Testing
@testable import SleepAnalysis
import SleepDomain

@Suite struct EpochTests {
    @Test func epochsAlignToWallClockHalfMinutes() {
        #expect(epochStart(containing: 601254420.076) == 601254420)
        #expect(epochStart(containing: 601254449.999) == 601254420)
        #expect(epochStart(containing: 601254450) == 601254450)
        #expect(epochStart(containing: 45) == 30)
    }

    @Test func analyzerGridStartsOnAHalfMinuteAndCoversEveryBeat() throws {
        // Beats every second from 100.5 s to 399.5 s: epochs 90…390 (11 epochs).
        let beats = (0..<300).map { 100.5 + Double($0) }
        let sessions = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!).analyze(beats: beats, vitals: [])
        let s = try #require(sessions.first)
        #expect(sessions.count == 1)
        #expect(s.start == 90)
        #expect(s.end == 420)
        #expect(s.epochs.count == 11)
        #expect(s.epochs.allSatisfy { $0.start.truncatingRemainder(dividingBy: 30) == 0 })
    }

    @Test func steadyBeatsGiveTheirRateAndNoVariability() throws {
        let beats = (0..<600).map { 0.25 + Double($0) } // 60 bpm, 10 minutes
        let f = EpochFeatureExtractor(timeZone: TimeZone(identifier: "UTC")!)
            .features(gridStart: 0, count: 20, beats: beats, vitals: [])
        let mid = f[10]
        #expect(abs(try #require(mid.heartRate) - 60) < 1e-9)
        #expect(try #require(mid.rmssd) < 1e-6)
        #expect(try #require(mid.pnn50) == 0)
        #expect(try #require(mid.heartRateSD) < 1e-6)
        #expect(mid.rejectedBeats == 0)
        #expect(mid.quality == 1)
    }

    @Test func gapsInBeatsGiveNoValuesRatherThanGuesses() throws {
        // 60 bpm, but no beats at all from 300 s to 600 s.
        let beats = (0..<900).map { 0.25 + Double($0) }.filter { $0 < 300 || $0 > 600 }
        let f = EpochFeatureExtractor(timeZone: TimeZone(identifier: "UTC")!)
            .features(gridStart: 0, count: 30, beats: beats, vitals: [])
        #expect(f[15].heartRate == nil)
        #expect(f[15].rmssd == nil)
        #expect(f[15].beats == 0)
        #expect(f[15].quality == 0)
        // The interval spanning the gap is rejected, not counted as a 300-s beat.
        #expect(f[20].rejectedBeats == 1)
        #expect(f[25].heartRate != nil)
    }

    @Test func ectopicBeatsAreRejectedFromHRV() throws {
        var beats = (0..<300).map { Double($0) }
        beats[150] = 149.6 // premature beat: 0.6 s then 1.4 s
        let intervals = BeatIntervals(beats: beats)
        #expect(intervals.clean.filter { !$0 }.count == 2)
        let f = EpochFeatureExtractor(timeZone: TimeZone(identifier: "UTC")!)
            .features(gridStart: 0, count: 10, beats: beats, vitals: [])
        #expect(try #require(f[5].rmssd) < 1e-6)
    }

    @Test func clockHourIsInTheSleepersTimeZone() {
        let utc = EpochFeatureExtractor(timeZone: TimeZone(identifier: "UTC")!)
        let paris = EpochFeatureExtractor(timeZone: TimeZone(identifier: "Europe/Paris")!)
        // 2024-01-15 23:30:00 UTC
        #expect(abs(utc.clockHour(1705361400) - 23.5) < 1e-9)
        #expect(abs(paris.clockHour(1705361400) - 0.5) < 1e-9)
    }

    @Test func normalScoresAreRankBasedAndKeepMissingValues() throws {
        let z = NightNormalization.normalScores([3, nil, 1, 2, 2])
        #expect(z[1] == nil)
        #expect(try #require(z[2]) < 0)
        #expect(abs(try #require(z[3])) < 1e-9) // ties at the median get 0
        #expect(z[3] == z[4])
        #expect(abs(try #require(z[0]) + z[2]!) < 1e-9)
        #expect(abs(StandardNormal.quantile(0.975) - 1.959964) < 1e-5)
    }
}
