import Hub
import SleepAnalysis
import Testing

/// Session boundaries from per-second presence, in data time.
@Suite struct SessionTrackerTests {
    static func seconds(from start: Double, count: Int, present: Bool) -> [SecondVitals] {
        (0..<count).map { i in
            SecondVitals(time: start + Double(i), heartRate: present ? .value(60) : .none(.absent),
                         breathingRate: present ? .value(14) : .none(.absent), movement: 0, present: present, quality: 1)
        }
    }

    @Test func aShortAbsenceDoesNotSplitButALongOneEndsTheSession() {
        var tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1e9))
        var events: [SessionTracker.Event] = []
        events += tracker.add(FrontEndOutput(seconds: Self.seconds(from: 1000, count: 3600, present: true),
                                             beats: stride(from: 1000.5, to: 4600, by: 1).map { $0 }))
        events += tracker.add(FrontEndOutput(seconds: Self.seconds(from: 4600, count: 300, present: false)))  // bathroom
        events += tracker.add(FrontEndOutput(seconds: Self.seconds(from: 4900, count: 3600, present: true)))
        #expect(events == [.started(at: 1000)])
        #expect(tracker.isInSession)
        events = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 8500, count: 700, present: false)))
        guard case .ended(let night)? = events.first else {
            Issue.record("expected the session to end, got \(events)")
            return
        }
        #expect(night.start == 1000)
        #expect(night.end == 8500)  // up to the last present second, not into the absence
        #expect(night.seconds.count == 7500)
        #expect(night.beats.count == 3600)
        #expect(!tracker.isInSession)
    }

    @Test func beatsArrivingBeforeTheirSecondsAreKeptAndBeatsOutOfBedAreNot() {
        var tracker = SessionTracker(rules: .init(maxGap: 60, preliminaryEvery: 1e9))
        // Beats first (the front end emits seconds late), then the seconds they fall in.
        _ = tracker.add(FrontEndOutput(seconds: [], beats: [10.2, 11.2, 12.2, 20.5]))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 12, present: false)))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 12, count: 20, present: true)))
        let night = tracker.flush()
        #expect(night?.beats == [12.2, 20.5])
        #expect(night?.start == 12)
    }

    @Test func preliminarySnapshotsComeOnDataTime() {
        var tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1800))
        let events = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 3 * 3600, present: true)))
        let snapshots = events.compactMap { e -> SessionTracker.Night? in
            if case .preliminary(let n) = e { return n }
            return nil
        }
        #expect(snapshots.count == 5)
        #expect(snapshots.map(\.seconds.count) == [1801, 3601, 5401, 7201, 9001])
    }

    @Test func theNightSaysWhetherItsEntryAndExitWereSeen() {
        // Someone in bed from the first second: no entry seen; a flush is no exit either.
        var tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1800))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 3600, present: true)))
        #expect(tracker.flush()?.seen == [])

        // A minute or two read empty is the front end starting up under a sleeper already in bed.
        tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1800))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 240, present: false)))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 240, count: 3600, present: true)))
        #expect(tracker.flush()?.seen == [])

        // An empty bed, someone gets in, leaves for good: both seen; snapshots know the entry only.
        tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1800))
        var events = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 300, present: false)))
        events += tracker.add(FrontEndOutput(seconds: Self.seconds(from: 300, count: 3600, present: true)))
        #expect(tracker.openNight?.seen == [.entry])
        events += tracker.add(FrontEndOutput(seconds: Self.seconds(from: 3900, count: 700, present: false)))
        let nights = events.compactMap { e -> SessionTracker.Night? in
            switch e {
            case .preliminary(let n), .ended(let n): n
            case .started: nil
            }
        }
        #expect(nights.map(\.seen) == [[.entry], [.entry], [.entry, .exit]])

        // The next stay begins after the long absence that ended this one: its entry is seen.
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 4600, count: 1800, present: true)))
        #expect(tracker.flush()?.seen == [.entry])
        // And so is any return after someone left, however short the empty stretch (a flush
        // ended the last stay here, so this one opens after a single empty second).
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 6400, count: 1, present: false)))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 6401, count: 600, present: true)))
        #expect(tracker.flush()?.seen == [.entry])
    }

    @Test func aLinkDownForAWhileKeepsTheNightButNotForMostOfADay() {
        // Data stop for 30 min in the night, with the sleeper in bed before and after: one stay.
        var tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1e9))
        var events = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 3600, present: true)))
        events += tracker.add(FrontEndOutput(seconds: Self.seconds(from: 5400, count: 3600, present: true)))
        #expect(events == [.started(at: 0)])
        #expect(tracker.flush()?.seconds.count == 7200)

        // Data stop for 20 hours: the stay before ended unseen, and the next one begins unseen.
        tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1e9))
        events = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 300, count: 3600, present: true)))
        events += tracker.add(FrontEndOutput(seconds: Self.seconds(from: 3900 + 20 * 3600, count: 3600, present: true)))
        guard events.count == 3, case .ended(let first) = events[1] else {
            Issue.record("expected started, ended, started; got \(events)")
            return
        }
        #expect(events[0] == .started(at: 300) && events[2] == .started(at: 3900 + 20 * 3600))
        #expect(first.start == 300 && first.end == 3900 && first.seen == [])
        let next = tracker.flush()
        #expect(next?.seconds.count == 3600)
        #expect(next?.seen == [])

        // Data resume after an hour with the side empty: the stay is over, but nobody saw the
        // sleeper leave.
        tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1e9))
        events = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 3600, present: true)))
        events += tracker.add(FrontEndOutput(seconds: Self.seconds(from: 7200, count: 60, present: false)))
        guard events.count == 2, case .ended(let left) = events[1] else {
            Issue.record("expected started, ended; got \(events)")
            return
        }
        #expect(left.seen == [])
    }

    @Test func aStayEndedForAPodGoneInTheNightLeavesTheNextStayUnseen() {
        // The sleeper stepped out for 5 min (less than maxGap), then the pod went away; the hub
        // ends the stay by its clock. Data come back hours later with someone in bed: nobody saw
        // them get in, so the new stay's entry is not seen (not the 5 min before the outage).
        var tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1e9))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 3600, present: true)))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 3600, count: 300, present: false)))
        let gone = tracker.flush()
        #expect(gone?.start == 0 && gone?.end == 3600 && gone?.seen == [])
        #expect(!tracker.isInSession)
        let events = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 4 * 3600, count: 1800, present: true)))
        #expect(events == [.started(at: 4 * 3600)])
        #expect(tracker.flush()?.seen == [])
    }

    @Test func flushWithNobodyInBedGivesNothing() {
        var tracker = SessionTracker()
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: 0, count: 100, present: false)))
        #expect(tracker.flush() == nil)
    }
}
