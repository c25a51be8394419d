import Testing
import SleepDomain
@testable import NightModel

/// The sleeper who answers the pod's alarm (what smart wake is measured against).
@Suite struct AlarmReactionTests {
    /// A one-sided 6-hour night; the first second after `from` the side is in `stage`.
    static func firstSecond(in stage: SleepStage, from: Int, _ sim: NightSimulator) -> Int? {
        let stages = sim.truth.sides[0].stage
        return (from..<stages.count).first { s in
            // Well inside a run of the stage, so the alarm does not land on its edge.
            s + 60 < stages.count && (s..<(s + 60)).allSatisfy { stages[$0] == stage }
        }
    }

    static func night(seed: UInt64 = 5, response: AlarmResponse? = nil) -> NightSimulator {
        var sleeper = SleeperProfile()
        sleeper.alarmResponse = response
        return NightSimulator(config: NightConfig(seed: seed, duration: 6 * 3600, sides: [SideConfig(sleeper: sleeper), .empty]))
    }

    @Test func lightSleepAlarmGetsThemUpWithinMinutesAndEmptiesTheBed() throws {
        var sim = Self.night()
        let s = try #require(Self.firstSecond(in: .core, from: 4 * 3600, sim))
        let before = sim.truth.sides[0]
        let reactionHeard = sim.alarmHeard(side: 0, at: Double(s) + 0.4)
        let reaction = try #require(reactionHeard)
        #expect(reaction.stage == .core)
        let up = try #require(reaction.gotUpAt)
        #expect(up >= Double(s) + 60 && up <= Double(s) + 4 * 60)
        let after = sim.truth.sides[0]
        let u = Int(up)
        // Unchanged before the alarm; awake in bed until up; out of bed for the rest of that stay.
        #expect(Array(after.stage[0..<s]) == Array(before.stage[0..<s]))
        #expect((s..<u).allSatisfy { after.stage[$0] == .awake && after.present[$0] })
        #expect(!after.present[u] && after.stage[u] == nil && after.heartRate[u] == nil)
        #expect(!after.beatTimes.contains { $0 >= up && $0 < up + 600 })
        #expect(sim.truth.alarmReactions == [reaction])
        // The bed the pod measures is empty: capacitance back near its empty level.
        let occupied = sim.capacitance(side: 0, at: Double(s) - 30)[0]
        let empty = sim.capacitance(side: 0, at: up + 120)[0]
        #expect(occupied - empty > 200)
    }

    @Test func deepSleepAlarmTakesLonger() throws {
        var sim = Self.night(seed: 6)
        let s = try #require(Self.firstSecond(in: .deep, from: 1800, sim))
        let reactionHeard = sim.alarmHeard(side: 0, at: Double(s))
        let reaction = try #require(reactionHeard)
        #expect(reaction.stage == .deep)
        let up = try #require(reaction.gotUpAt)
        #expect(up >= Double(s) + 6 * 60 && up <= Double(s) + 12 * 60)
    }

    @Test func anIgnoredAlarmLeavesThemAsleepAndTheNextOneGetsThemUp() throws {
        var sim = Self.night(response: AlarmResponse(ignoredAlarms: 1))
        let before = sim.truth.sides[0].stage
        let s = try #require(Self.firstSecond(in: .core, from: 4 * 3600, sim))
        let firstHeard = sim.alarmHeard(side: 0, at: Double(s))
        let first = try #require(firstHeard)
        #expect(first.gotUpAt == nil)
        #expect(sim.truth.sides[0].stage == before)
        let secondHeard = sim.alarmHeard(side: 0, at: Double(s + 300))
        let second = try #require(secondHeard)
        #expect(second.gotUpAt != nil)
        #expect(sim.truth.alarmReactions.count == 2)
    }

    @Test func anEmptySideOrUnknownSideChangesNothing() throws {
        var sim = Self.night()
        let before = sim.truth.sides[1].present
        let reactionHeard = sim.alarmHeard(side: 1, at: 4 * 3600)
        let reaction = try #require(reactionHeard)
        #expect(reaction.stage == nil && reaction.gotUpAt == nil)
        #expect(sim.truth.sides[1].present == before)
        let unknown = sim.alarmHeard(side: 2, at: 4 * 3600)
        #expect(unknown == nil)
    }

    @Test func theNightStaysDeterministicAcrossAnAlarm() throws {
        var a = Self.night(), b = Self.night()
        let s = try #require(Self.firstSecond(in: .core, from: 4 * 3600, a))
        _ = a.piezo(side: 0, count: s * 500)
        _ = b.piezo(side: 0, count: s * 500)
        a.alarmHeard(side: 0, at: Double(s))
        b.alarmHeard(side: 0, at: Double(s))
        #expect(a.piezo(side: 0, count: 600 * 500) == b.piezo(side: 0, count: 600 * 500))
        #expect(a.truth.alarmReactions == b.truth.alarmReactions)
    }
}
