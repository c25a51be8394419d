import TestSupport
import Foundation
import Hub
import PodDevice
import PodProtocol
import SleepSchedule
import SleepStore
import Testing
import VirtualPod
import SleepDomain

/// The hub's DST rule (firmware-protocol.md §7.4, decided 2026-12-07) end to end: the schedule
/// service against the virtual pod over a real pty, on an accelerated hub clock that both run
/// on, through each New York transition. The hub never sends a time the transition skips, never
/// lets the pod meet a repeated one, and the alarm rings once.
@Suite struct DaylightSavingPushTests {
    static let lead = 300.0

    /// A manual schedule waking at `wake` every day, on both sides.
    func rig(_ serial: String, wake: String, bed: String, start: Date) async throws -> ScheduleRig {
        try await ScheduleRig(serial: serial, zone: "America/New_York", start: start, speed: 150,
                              configure: { $0.schedule.push.preTransitionLeadSeconds = Self.lead },
                              beforeStart: { store in
                                  for side in BedSide.allCases {
                                      try await store.setManualSchedule(ManualScheduleRecord(
                                          podSerial: serial, side: side, weekdayBedtime: bed, weekdayWake: wake,
                                          weekendBedtime: bed, weekendWake: wake, setAt: 0))
                                  }
                              })
    }

    func alarmPushes(_ rig: ScheduleRig, side: BedSide = .left) async throws -> [SchedulePushRecord] {
        try await rig.pushes().filter { $0.command == "set-alarm(\(side))" && $0.outcome == .ack }
    }

    @Test func springForwardSendsTheFirstMinuteAfterTheJumpAndTheAlarmRingsOnceAtIt() async throws {
        // 2026-03-08 07:00 UTC: 02:00 EST becomes 03:00 EDT; the alarm at 02:30 does not exist that day.
        let transition = Date(timeIntervalSince1970: 1_772_953_200)
        let rig = try await rig("VPOD-DST-SPRING", wake: "02:30", bed: "22:00", start: transition.addingTimeInterval(-2400))
        let t = Int64(transition.timeIntervalSince1970)
        #expect(await eventually {
            (try? await alarmPushes(rig).contains { $0.sentAt >= t + 3600 && $0.description.contains("02:30") }) ?? false
        }, "02:30 is sent again once the skipped hour is over")
        let pushes = try await alarmPushes(rig)
        #expect(pushes.first?.description.contains("02:30") == true, "before the window: as it is")
        let inWindow = pushes.filter { $0.sentAt >= t - Int64(Self.lead) && $0.sentAt < t + 3600 }
        #expect(!inWindow.isEmpty && inWindow.allSatisfy { $0.description.contains("03:00 ") }, "\(inWindow.map(\.description))")
        let all = try await rig.pushes()
        #expect(!all.contains { $0.sentAt >= t - Int64(Self.lead) && $0.sentAt < t + 3600 && $0.description.contains("02:") },
                "no skipped time sent in the window")
        // The pod rang once per side, at the jump (03:00 EDT = 07:00 UTC).
        let rang = rig.pod.alarmsFired.filter { $0.outcome == .started }
        #expect(rang.count == 2 && Set(rang.map(\.side)) == [.left, .right], "\(rang)")
        #expect(rang.allSatisfy { abs(Double($0.unixMillis ?? 0) / 1000 - transition.timeIntervalSince1970) < 60 })
        await rig.shutdown()
    }

    @Test func fallBackRingsTheFirstOccurrenceAndHoldsNoAlarmForTheRepeatedHour() async throws {
        // 2026-11-01 06:00 UTC: 02:00 EDT becomes 01:00 EST; 01:30 happens twice.
        let transition = Date(timeIntervalSince1970: 1_793_512_800)
        #expect(TimeZone(identifier: "America/New_York")!.nextDaylightSavingTimeTransition(after: transition - 3600) == transition)
        let rig = try await rig("VPOD-DST-FALL", wake: "01:30", bed: "21:00", start: transition.addingTimeInterval(-4200))
        let t = Int64(transition.timeIntervalSince1970)
        #expect(await eventually {
            (try? await alarmPushes(rig).contains { $0.sentAt >= t + 3600 && $0.description.contains("every day") }) ?? false
        }, "the whole week is sent again once the repeated hour is over")
        let pushes = try await alarmPushes(rig)
        let repeatedHour = pushes.filter { $0.sentAt >= t && $0.sentAt < t + 3600 }
        #expect(!repeatedHour.isEmpty && repeatedHour.allSatisfy { $0.description.contains("(Mon–Sat)") },
                "\(repeatedHour.map(\.description))")
        // Rang once per side, at the first 01:30 (EDT, 05:30 UTC), not again at 01:30 EST.
        let rang = rig.pod.alarmsFired.filter { $0.outcome == .started }
        #expect(rang.count == 2 && Set(rang.map(\.side)) == [.left, .right], "\(rang)")
        #expect(rang.allSatisfy { abs(Double($0.unixMillis ?? 0) / 1000 - (transition.timeIntervalSince1970 - 1800)) < 60 })
        await rig.shutdown()
    }
}
