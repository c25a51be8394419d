import Foundation
@testable import Hub
import SleepAnalysis
import SleepDomain
import Testing

/// A night carried across a hub restart: the tracker's open stay taken, archived, read back
/// by a new tracker, which ends the night as one that never stopped (the store's side:
/// SleepStoreTests.OpenStayStoreTests; the daemon's: HubDaemonTests).
@Suite struct OpenStayTests {
    static let rules = SessionTracker.Rules(maxGap: 600, preliminaryEvery: 1800)

    /// A sleeper with a slow heart-rate wander, some seconds without a reading, beats inside.
    static func seconds(from start: Double, count: Int, present: Bool = true) -> [SecondVitals] {
        (0..<count).map { i in
            let t = start + Double(i)
            guard present else {
                return SecondVitals(time: t, heartRate: .none(.absent), breathingRate: .none(.absent),
                                    movement: 0, present: false, quality: 0)
            }
            return SecondVitals(time: t, heartRate: i % 97 == 0 ? .none(.movement) : .value(55 + 3 * sin(t / 300)),
                                breathingRate: i % 41 == 0 ? .none(.warmingUp) : .value(13.5 + sin(t / 500)),
                                movement: i % 97 == 0 ? 3.2 : 0.1, present: true, quality: 0.9)
        }
    }

    static func output(from start: Double, count: Int, present: Bool = true) -> FrontEndOutput {
        FrontEndOutput(seconds: seconds(from: start, count: count, present: present),
                       beats: present ? stride(from: start + 0.3, to: start + Double(count), by: 1.09).map { $0 } : [])
    }

    static func ended(_ events: [SessionTracker.Event]) -> [SessionTracker.Night] {
        events.compactMap { if case .ended(let n) = $0 { n } else { nil } }
    }

    /// A tracker that carries on an hour in bed from `start`, as a restarted hub's would.
    static func resumedAfterAnHour(from start: Double) throws -> SessionTracker {
        var first = SessionTracker(rules: rules)
        _ = first.add(output(from: start, count: 3600))
        return SessionTracker(rules: rules, resuming: try #require(first.openStay))
    }

    @Test func aStayCarriedAcrossARestartEndsAsTheUninterruptedOne() throws {
        let start = 1_794_866_400.0
        let before = Self.output(from: start, count: 5000), after = Self.output(from: start + 5000, count: 4000)
        let leaving = Self.output(from: start + 9000, count: 700, present: false)

        var whole = SessionTracker(rules: Self.rules)
        let straight = Self.ended(whole.add(before) + whole.add(after) + whole.add(leaving))

        var first = SessionTracker(rules: Self.rules)
        _ = first.add(before)
        let stay = try #require(first.openStay)
        let bytes = OpenStayArchive.encode(stay)
        #expect(try OpenStayArchive.decode(bytes) == stay)
        var second = SessionTracker(rules: Self.rules, resuming: try OpenStayArchive.decode(bytes))
        #expect(second.isInSession && second.sessionStart == start)
        let events = second.add(after) + second.add(leaving)
        #expect(!events.contains { if case .started = $0 { true } else { false } })
        #expect(Self.ended(events) == straight)
        #expect(straight.count == 1 && straight.first?.seconds.count == 9000)
        #expect(second.openStay == nil)
    }

    @Test func theRestartedFrontEndsStartUpUnderTheSleeperIsAHoleNotATrip() throws {
        // The hub was down two minutes; the new front end read the sleeper as empty for 100 s
        // (its capacitance baseline learnt with them in bed) before its presence override.
        let start = 1_794_866_400.0
        var tracker = try Self.resumedAfterAnHour(from: start)
        _ = tracker.add(Self.output(from: start + 3720, count: 100, present: false))
        _ = tracker.add(Self.output(from: start + 3820, count: 1800))
        let flushed = tracker.flush()
        let night = try #require(flushed)
        #expect(night.seconds.allSatisfy { $0.present }, "the start-up's empty seconds were taken as an absence")
        #expect(night.seconds.count == 3600 + 1800)
        let session = try #require(SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!).analyze(night.input).first)
        // No trip out of bed: no epoch there is awake for certain.
        let aroundRestart = session.epochs.filter { $0.start >= start + 3570 && $0.start < start + 3900 }
        #expect(!aroundRestart.isEmpty)
        let certain = aroundRestart.filter { $0.probabilities.awake == 1 }.map { $0.start - start }
        #expect(certain.isEmpty, "awake for certain at \(certain) s")
    }

    @Test func anEmptySideAfterTheRestartIsStillAnAbsence() throws {
        // Longer empty than a start-up: the sleeper got up while the hub was down, and back.
        let start = 1_794_866_400.0
        var tracker = try Self.resumedAfterAnHour(from: start)
        _ = tracker.add(Self.output(from: start + 3660, count: 400, present: false))
        _ = tracker.add(Self.output(from: start + 4060, count: 600))
        let flushed = tracker.flush()
        let night = try #require(flushed)
        #expect(night.seconds.filter { !$0.present }.count == 400)
        // And longer than maxGap: the stay ended when the sleeper left, the return is a new one.
        var gone = try Self.resumedAfterAnHour(from: start)
        let events = gone.add(Self.output(from: start + 3660, count: 900, present: false)) + gone.add(Self.output(from: start + 4560, count: 60))
        #expect(Self.ended(events).map(\.end) == [start + 3600])
        #expect(events.contains(.started(at: start + 4560)))
    }

    @Test func dataBeyondTheLongestHoleEndTheStayUnseen() throws {
        let start = 1_794_866_400.0
        var tracker = try Self.resumedAfterAnHour(from: start)
        let events = tracker.add(Self.output(from: start + 3600 + SessionRules.defaultMaxDataGap + 60, count: 60))
        #expect(Self.ended(events).map(\.seconds.count) == [3600])
        #expect(Self.ended(events).first?.seen == [])
        #expect(events.contains { if case .started = $0 { true } else { false } })
    }

    @Test func secondsNotAfterTheLastOneSeenAreLeftOut() throws {
        var tracker = SessionTracker(rules: Self.rules)
        _ = tracker.add(Self.output(from: 1000, count: 100))
        _ = tracker.add(Self.output(from: 1050, count: 100))  // a clock stepped back 50 s
        let flushed = tracker.flush()
        let night = try #require(flushed)
        let times = night.seconds.map(\.time)
        #expect(times == (0..<150).map { 1000 + Double($0) })
    }

    @Test func aDamagedArchiveIsRefusedNeverTrusted() throws {
        var tracker = SessionTracker(rules: Self.rules)
        _ = tracker.add(Self.output(from: 1000, count: 300))
        let bytes = OpenStayArchive.encode(try #require(tracker.openStay))
        #expect(throws: OpenStayArchive.Error.self) { try OpenStayArchive.decode(Data()) }
        #expect(throws: OpenStayArchive.Error.self) { try OpenStayArchive.decode(Data("not a stay".utf8)) }
        #expect(throws: OpenStayArchive.Error.self) { try OpenStayArchive.decode(bytes.dropLast(5)) }
        #expect(throws: OpenStayArchive.Error.self) { try OpenStayArchive.decode(bytes + Data([0])) }
        var version = bytes
        version[6] = 9
        #expect(throws: OpenStayArchive.Error.malformed("version 9, this hub reads 1")) { try OpenStayArchive.decode(version) }
        // Every truncation and every single flipped byte: an error or a stay, never a crash.
        for n in stride(from: 0, to: bytes.count, by: 97) { _ = try? OpenStayArchive.decode(bytes.prefix(n)) }
        for i in stride(from: 0, to: min(bytes.count, 4000), by: 7) {
            var damaged = bytes
            damaged[i] ^= 0xA5
            _ = try? OpenStayArchive.decode(damaged)
        }
    }
}
