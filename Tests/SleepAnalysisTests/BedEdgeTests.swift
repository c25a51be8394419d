import Foundation
import Testing
import SleepDomain
@testable import SleepAnalysis

/// Nobody gets into or out of bed asleep: the epochs at a seen entry or exit are awake.
@Suite struct BedEdgeTests {
    static let start = 1_700_000_010.0
    let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)

    /// A still, steady sleeper for `minutes`, with `emptyBefore` and `emptyAfter` seconds of an
    /// empty bed around the stay, at 1 Hz.
    static func night(minutes: Int, emptyBefore: Int, emptyAfter: Int) -> [SecondVitals] {
        let inBed = emptyBefore..<(emptyBefore + minutes * 60)
        return (0..<(inBed.upperBound + emptyAfter)).map { i in
            let present = inBed.contains(i)
            // A slow wander, so the heart rate has a spread to stage by.
            let hr = 54 + 2 * sin(Double(i) / 400)
            return SecondVitals(time: start + Double(i), heartRate: present ? .value(hr) : .none(.absent),
                                breathingRate: present ? .value(13) : .none(.absent), movement: 0,
                                present: present, quality: present ? 1 : 0)
        }
    }

    @Test func theRowsAtAnEntryAnExitAndATripOutOfBedAreTheEdges() {
        // Epochs: in, in, out, in, in, in (a trip out of bed at 2).
        let empty = [false, false, true, false, false, false]
        let inBed = [0, 1, 3, 4, 5]
        #expect(SleepAnalyzer.bedEdgeRows(seenEmpty: empty, inBed: inBed, edges: []) == [1, 2])
        #expect(SleepAnalyzer.bedEdgeRows(seenEmpty: empty, inBed: inBed, edges: [.entry, .exit]) == [0, 1, 2, 4])
        #expect(SleepAnalyzer.bedEdgeRows(seenEmpty: [false, false, false], inBed: [0, 1, 2], edges: [.exit]) == [2])
        // A hole in the data at 2 (neither in bed nor seen empty) is no trip.
        #expect(SleepAnalyzer.bedEdgeRows(seenEmpty: [false, false, false, false, false, false], inBed: inBed, edges: []).isEmpty)
    }

    @Test func aSeenExitEndsTheNightAwakeAndAnUnseenOneDoesNot() throws {
        let vitals = Self.night(minutes: 90, emptyBefore: 600, emptyAfter: 600)
        let seen = try #require(analyzer.analyze(beats: [], vitals: vitals).first)
        #expect(seen.epochs.count == 180)
        #expect(seen.epochs.first?.stage == .awake)
        #expect(seen.epochs.first?.probabilities[.awake] == 1)
        #expect(seen.epochs.last?.stage == .awake)
        #expect(seen.epochs.last?.probabilities[.awake] == 1)

        // The same stay trimmed to its in-bed seconds (as the hub's session tracker hands it
        // over): the model alone calls its ends asleep, unless the edges are said to be seen.
        let trimmed = vitals.filter(\.present)
        let unseen = try #require(analyzer.analyze(beats: [], vitals: trimmed).first)
        #expect(unseen.epochs.first?.stage != .awake)
        #expect(unseen.epochs.last?.stage != .awake)
        let told = try #require(analyzer.analyze(AnalysisInput(vitals: trimmed, seen: [.entry, .exit])).first)
        #expect(told.epochs.map(\.stage) == seen.epochs.map(\.stage))
        #expect(told.epochs.map(\.probabilities) == seen.epochs.map(\.probabilities))
        // Only the edges change. The waking reaches at most the epoch next to each edge (measured:
        // P(awake) 0.41 next to the exit, which the night's wake share then counts as awake); the
        // middle of the night stays asleep.
        #expect(told.epochs[2..<178].allSatisfy { $0.stage != .awake })
        #expect(told.epochs.filter { $0.stage == .awake }.count
                == Int(told.epochs.reduce(0) { $0 + $1.probabilities.awake }.rounded()))
    }

    @Test func aShortEmptyStartIsTheFrontEndStartingUpNotAnEntry() throws {
        // A sleeper already in bed when the data begin reads empty for a minute or two.
        let started = try #require(analyzer.analyze(beats: [], vitals: Self.night(minutes: 90, emptyBefore: 240, emptyAfter: 0)).first)
        #expect(started.epochs.first?.stage != .awake)
        let entered = try #require(analyzer.analyze(beats: [], vitals: Self.night(minutes: 90, emptyBefore: 300, emptyAfter: 0)).first)
        #expect(entered.epochs.first?.stage == .awake)
        #expect(entered.epochs.last?.stage != .awake)
        #expect(!SleepAnalyzer.isEntry(emptySeconds: 0, occupiedBefore: true))
        #expect(SleepAnalyzer.isEntry(emptySeconds: 30, occupiedBefore: true))
        #expect(!SleepAnalyzer.isEntry(emptySeconds: 299, occupiedBefore: false))
    }

    @Test func afterSomeoneLeftAnyReturnIsAnEntry() throws {
        // A nap, an hour away, the night: the night's entry follows an exit, however the data began.
        let nap = Self.night(minutes: 30, emptyBefore: 0, emptyAfter: 3600)
        let rest = Self.night(minutes: 90, emptyBefore: 0, emptyAfter: 0).map {
            SecondVitals(time: $0.time + Double(nap.count), heartRate: $0.heartRate, breathingRate: $0.breathingRate,
                         movement: $0.movement, present: $0.present, quality: $0.quality)
        }
        let sessions = analyzer.analyze(beats: [], vitals: nap + rest)
        #expect(sessions.count == 2)
        #expect(sessions.map { $0.epochs.first?.stage != .awake } == [true, false])
        #expect(sessions.map { $0.epochs.last?.stage == .awake } == [true, false])
    }

    @Test func aTripOutOfBedIsAwakeOnBothSides() throws {
        var vitals = Self.night(minutes: 120, emptyBefore: 0, emptyAfter: 0)
        let out = 3600..<3900
        for i in out {
            vitals[i] = SecondVitals(time: vitals[i].time, heartRate: .none(.absent), breathingRate: .none(.absent),
                                     movement: 0, present: false, quality: 0)
        }
        let night = try #require(analyzer.analyze(beats: [], vitals: vitals).first)
        #expect(night.epochs.count == 240)
        let stages = night.epochs.map(\.stage)
        #expect(stages[119] == .awake)  // the epoch before leaving
        #expect(stages[130] == .awake)  // the epoch back in bed
        #expect(stages[0] != .awake && stages[239] != .awake)
        // The trip itself is out of bed: awake, as every out-of-bed epoch is.
        #expect(stages[120..<130].allSatisfy { $0 == .awake })
    }

    @Test func aHoleInTheDataIsNoTripOutOfBed() throws {
        // The pod's link drops for 5 minutes in the night: no seconds at all, then the sleeper
        // is there again. The hole is out of bed (unmeasured) but nobody was seen leaving.
        let vitals = Self.night(minutes: 120, emptyBefore: 0, emptyAfter: 0).filter { !(3600..<3900).contains(Int($0.time - Self.start)) }
        let night = try #require(analyzer.analyze(beats: [], vitals: vitals).first)
        // The hole has no epochs (its stage is unknown); the session still spans it.
        #expect(night.epochs.count == 230)
        #expect(night.end - night.start == 120 * 60)
        let hole = (Self.start + 3600)..<(Self.start + 3900)
        #expect(!night.epochs.contains { hole.contains($0.start + 15) })
        let before = try #require(night.epochs.last { $0.start < hole.lowerBound })
        let after = try #require(night.epochs.first { $0.start >= hole.upperBound })
        #expect(before.stage != .awake && after.stage != .awake, "\(night.epochs[115..<125].map(\.stage))")
        // The same five minutes seen empty are a trip (aTripOutOfBedIsAwakeOnBothSides).
    }

    @Test func aHoleInTheDataCountsNeitherAsSleepNorAsWaking() throws {
        // An hour without data in the middle of a still night, against the same night whole:
        // the hour is in the time in bed, but not in WASO, the awake minutes or the efficiency.
        let whole = try #require(analyzer.analyze(beats: [], vitals: Self.night(minutes: 240, emptyBefore: 0, emptyAfter: 0)).first)
        let vitals = Self.night(minutes: 240, emptyBefore: 0, emptyAfter: 0).filter { !(5400..<9000).contains(Int($0.time - Self.start)) }
        let holed = try #require(analyzer.analyze(beats: [], vitals: vitals).first)
        let m = holed.metrics
        #expect(m.timeInBedMinutes == 240 && m.unmeasuredMinutes == 60)
        #expect(m.timeInBedMinutes - m.unmeasuredMinutes
                == m.stageMinutes.awake + m.stageMinutes.core + m.stageMinutes.deep + m.stageMinutes.rem)
        #expect(m.wasoMinutes == whole.metrics.wasoMinutes && m.wasoMinutes < 5, "WASO \(m.wasoMinutes)")
        #expect(m.stageMinutes.awake < 5)
        #expect(m.sleepEfficiency > 0.95 && whole.metrics.sleepEfficiency > 0.95)
        #expect(whole.metrics.unmeasuredMinutes == 0)
        // The hypnogram shows the hole as columns without a stage.
        let text = HypnogramText.render(holed, width: 48)
        #expect(text.contains("no data for 60 min"))
        let rows = text.split(separator: "\n").prefix(4).map { Array($0.dropFirst(7).dropLast()) }
        let blank = (0..<rows[0].count).filter { c in rows.allSatisfy { $0[c] == " " } }
        #expect(blank.count == 12, "\(text)")  // 60 of 240 min at 5 min a column
    }

    @Test func researchRecordsTakenAsOneStayHaveNoEdges() throws {
        // A beats file is one in-bed span: its ends are where the recording began and stopped.
        let beats = stride(from: Self.start, to: Self.start + 2 * 3600, by: 1.1).map { $0 }
        let session = try #require(analyzer.analyze(AnalysisInput(beats: beats, inBed: .wholeSpan, seen: [.entry, .exit])).first)
        #expect(session.epochs.first?.probabilities[.awake] != 1)
        #expect(session.epochs.last?.probabilities[.awake] != 1)
    }
}
