import NightModel
import SleepDomain
import PodProtocol
import Testing
@testable import VirtualPod

/// The virtual pod's sleeper feels the alarm and gets up (what smart wake is measured against).
@Suite struct AlarmSleeperTests {
    @Test func theSleeperGetsUpAfterThePodsAlarmAndTheTruthSaysWhen() throws {
        let pod = try PodLinkTests.pod(speed: 300)
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try HubLink(path: path)
        // Sunday 2026-01-04 23:58:30 at UTC+1; the left alarm on Monday 00:00, 90 s later.
        let sundayLate: Int64 = 1_767_567_510_000
        _ = try PodLinkTests.handshake(hub, unixMillis: sundayLate)
        let alarm = AlarmSetting(side: .left, days: .monday, time: TimeOfDay("00:00")!, intensity: 60,
                                 pattern: .rise, durationSeconds: 30)
        #expect(hub.request(.setAlarm(alarm))?.0.status == .ok)
        #expect(hub.request(.startStream(.capacitance))?.0.status == .ok)
        let planned = try #require(pod.groundTruth)
        // Wait (on frames, not time) until the alarm was heard and the sleeper is out of bed.
        let seen = hub.wait(deadline: 120) { _ in
            guard let r = pod.groundTruth?.alarmReactions.first, let up = r.gotUpAt else { return false }
            return pod.snapshot.simulatedSeconds > up + 30
        }
        #expect(seen != nil)
        let truth = try #require(pod.groundTruth)
        let reaction = try #require(truth.alarmReactions.first)
        #expect(truth.alarmReactions.count == 1)
        #expect(reaction.side == 0)
        let heard = Int(reaction.heardAt)
        // The stage the alarm found is the one the plan had at that second (in bed: gets in at 0).
        #expect(reaction.stage != nil && reaction.stage == planned.sides[0].stage[heard])
        let up = try #require(reaction.gotUpAt)
        #expect(up >= reaction.heardAt + 60 && up <= reaction.heardAt + 12 * 60)
        #expect(!truth.sides[0].present[Int(up) + 1] && planned.sides[0].present[Int(up) + 1])
        #expect(pod.alarmsFired.count == 1)
        // The truth files list it.
        let files = TruthFiles.render(truth: truth, playedSeconds: Int(pod.snapshot.simulatedSeconds),
                                      clock: TruthClock(clocks: pod.snapshot.appliedClocks, nightStartUnix: 0))
        let alarms = try #require(files.first { $0.name == "alarms.csv" }).text.split(separator: "\n")
        #expect(alarms.count == 2)
        #expect(alarms.first == "t,side,stage,got_up_t")
        let row = try #require(alarms.last).split(separator: ",", omittingEmptySubsequences: false)
        #expect(row.count == 4)
        #expect(abs((Double(row[0]) ?? 0) - 1_767_567_600) < 1, "heard at Monday 00:00 local")
        #expect(row[1] == "0" && row[2] == Substring(reaction.stage!.rawValue))
        #expect((Double(row[3]) ?? 0) - (Double(row[0]) ?? 0) >= 60)
    }
}
