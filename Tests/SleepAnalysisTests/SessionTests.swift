import Foundation
import Testing
import SleepDomain
@testable import SleepAnalysis

@Suite struct SessionTests {
    let rules = SessionRules(maxGap: 10 * 60, minDuration: 15 * 60)

    func presence(_ runs: [(Bool, Int)]) -> [Bool] { runs.flatMap { [Bool](repeating: $0.0, count: $0.1) } }

    @Test func shortAbsenceDoesNotSplit() {
        // 60 min in bed, 10 min out (= maxGap), 60 min in bed: one session.
        let p = presence([(true, 120), (false, 20), (true, 120)])
        #expect(rules.sessions(present: p) == [0..<260])
    }

    @Test func longAbsenceSplits() {
        let p = presence([(true, 120), (false, 21), (true, 120)])
        #expect(rules.sessions(present: p) == [0..<120, 141..<261])
    }

    @Test func veryShortSessionsAreDroppedAndNapsKept() {
        // 5 min sitting on the bed, long gap, a 20-min nap, long gap, the night.
        let p = presence([(false, 4), (true, 10), (false, 100), (true, 40), (false, 300), (true, 600)])
        #expect(rules.sessions(present: p) == [114..<154, 454..<1054])
    }

    @Test func aHoleInTheDataIsNoAbsence() {
        // 40 epochs in bed, then 120 epochs (1 h) with no data at all, then 40 in bed: one stay,
        // as the hub's session tracker keeps it. The same hour seen empty is two stays.
        let present = presence([(true, 40), (false, 120), (true, 40)])
        let hole = [Bool](repeating: false, count: 200)
        #expect(rules.sessions(present: present, seenEmpty: hole) == [0..<200])
        let empty = present.map { !$0 }
        #expect(rules.sessions(present: present, seenEmpty: empty) == [0..<40, 160..<200])
        #expect(rules.sessions(present: present) == [0..<40, 160..<200])
        // A hole, then the side seen empty past maxGap after the stay: it ended (unseen).
        let holeThenEmpty = (0..<200).map { (80..<160).contains($0) }
        #expect(rules.sessions(present: present, seenEmpty: holeThenEmpty) == [0..<40, 160..<200])
        // Seen empty for less than maxGap, then a hole: one stay.
        let emptyThenHole = (0..<200).map { (40..<60).contains($0) }
        #expect(rules.sessions(present: present, seenEmpty: emptyThenHole) == [0..<200])
        // No data for longer than maxDataGap (3 h): two stays.
        let long = presence([(true, 40), (false, 400), (true, 40)])
        #expect(rules.sessions(present: long, seenEmpty: [Bool](repeating: false, count: 480)) == [0..<40, 440..<480])
    }

    @Test func vitalsPresenceDrivesSessions() throws {
        // 40 min present, 30 min absent, 40 min present, at 1 Hz.
        var vitals: [SecondVitals] = []
        for t in stride(from: 0.0, to: 6600, by: 1) {
            let present = t < 2400 || t >= 4200
            vitals.append(SecondVitals(time: 1_700_000_010 + t, heartRate: present ? .value(60) : .none(.absent),
                                       breathingRate: present ? .value(14) : .none(.absent),
                                       movement: 0, present: present, quality: present ? 1 : 0))
        }
        let analyzer = SleepAnalyzer(rules: rules, timeZone: TimeZone(identifier: "UTC")!)
        let sessions = analyzer.analyze(beats: [], vitals: vitals)
        #expect(sessions.count == 2)
        #expect(sessions[0].start == 1_700_000_010)
        #expect(sessions[0].epochs.count == 80)
        #expect(sessions[1].start == 1_700_000_010 + 4200)
        #expect(sessions.allSatisfy { $0.epochs.allSatisfy { $0.features.breathingRate == 14 } })
    }

    @Test func sessionBelongsToTheDateItEnds() throws {
        // 2024-03-09 22:00 to 2024-03-10 06:00 in New York.
        let ny = TimeZone(identifier: "America/New_York")!
        let start = 1710039600.0
        let beats = stride(from: start, to: start + 8 * 3600, by: 1).map { $0 + 0.5 }
        let s = try #require(SleepAnalyzer(timeZone: ny).analyze(beats: beats, vitals: []).first)
        #expect(s.wakeDate == CalendarDay("2024-03-10"))
        #expect(s.timeZone == "America/New_York")
    }
}
