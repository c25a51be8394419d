import Foundation
import Testing
@testable import SleepSchedule
import SleepDomain

/// Presence-driven power replayed against the pod's power rule (`PresencePowerReplay`): the
/// side's power as the pod would have it, against when it was occupied.
@Suite struct PresencePowerTests {
    static let zone = Zones.berlin
    /// A Monday in January (no DST near).
    static let monday = date(2026, 1, 12)
    /// 22:30–07:30 every night.
    static func schedule(_ side: BedSide = .left) -> PodSchedule {
        PodSchedule(side: side, timeZoneIdentifier: zone.identifier,
                    powerWindows: [PowerWindow(days: .everyDay, on: t("22:30"), off: t("07:30"))], alarms: [])
    }

    /// `HH:mm` (or `HH:mm:ss`-less) on the evening of `monday + night` (before noon: the next morning).
    static func at(_ time: String, night: Int = 0) -> Date {
        let tod = t(time)
        let day = monday.adding(days: night + (tod.minuteOfDay < 12 * 60 ? 1 : 0))
        return instant(day, time, zone)
    }

    static func stay(_ from: String, _ to: String, night: Int = 0) -> DateInterval {
        DateInterval(start: at(from, night: night), end: at(to, night: night))
    }

    /// The session tracker's end: the last out-of-bed, decided 20 min later (its `maxGap`).
    static func ended(_ time: String, night: Int = 0) -> (end: Date, decidedAt: Date) {
        (at(time, night: night), at(time, night: night).addingTimeInterval(20 * 60))
    }

    static func replay(_ settings: PresencePowerSettings = PresencePowerSettings(), side: BedSide = .left,
                       nights: Int = 1, occupied: [DateInterval], sessionEnds: [(end: Date, decidedAt: Date)] = [],
                       restarts: [Date] = [], emptyNights: Int = 0) -> PresencePowerReplay.Outcome {
        PresencePowerReplay(schedule: schedule(side), settings: settings)
            .run(from: at("20:00"), to: at("20:00", night: nights), occupied: occupied, sessionEnds: sessionEnds,
                 restarts: restarts, emptyNights: emptyNights)
    }

    /// Seconds a sleeper lay in an unpowered bed.
    static func unpoweredInBed(_ o: PresencePowerReplay.Outcome, _ occupied: [DateInterval]) -> TimeInterval {
        PresencePowerReplay.Outcome.overlap(occupied, o.switchedOffByHub)
    }

    static func offs(_ o: PresencePowerReplay.Outcome) -> [PresencePowerCommand] { o.commands.filter { $0.action == .off } }

    @Test func earlyRiseSwitchesOffOnceTheBedHasBeenEmptyForTheHysteresis() throws {
        let occupied = [Self.stay("23:00", "06:00")]
        let o = Self.replay(occupied: occupied, sessionEnds: [Self.ended("06:00")])
        #expect(o.commands.count == 1)
        let off = try #require(o.commands.first)
        #expect(off.action == .off)
        #expect(off.reason == .bedLeft(emptyMinutes: 10))
        #expect(off.text == "left power off at 06:10: bed empty for 10 min")
        #expect(o.powered == [DateInterval(start: Self.at("22:30"), end: Self.at("06:10"))])
        #expect(Self.unpoweredInBed(o, occupied) == 0)
        // The clock alone heats the empty bed until 07:30.
        let clock = Self.replay(.clockOnly, occupied: occupied)
        #expect(clock.commands.isEmpty)
        #expect(clock.powered == [DateInterval(start: Self.at("22:30"), end: Self.at("07:30"))])
    }

    @Test func lateRisePastTheOffTimeKeepsThePowerOnInStepsThePodHolds() throws {
        let occupied = [Self.stay("23:00", "09:10")]
        let o = Self.replay(occupied: occupied, sessionEnds: [Self.ended("09:10")])
        let holds = o.commands.compactMap { c -> Date? in if case .holdUntil(let d) = c.action { return d } else { return nil } }
        #expect(holds == ["08:00", "08:30", "09:00", "09:30"].map { Self.at($0) })
        #expect(o.commands.first?.text == "left power kept on until 08:00: still in bed at the scheduled off 07:30")
        #expect(o.commands.first?.at == Self.at("07:25"))
        let off = try #require(Self.offs(o).first)
        #expect(off.reason == .leftAfterKeepOn(emptyMinutes: 10))
        #expect(off.at == Self.at("09:20"))
        #expect(Self.unpoweredInBed(o, occupied) == 0)
        #expect(PresencePowerReplay.Outcome.overlap(occupied, o.powered) == occupied[0].duration)
        // The clock alone leaves the sleeper 100 min in an unpowered bed.
        let clock = Self.replay(.clockOnly, occupied: occupied)
        #expect(occupied[0].duration - PresencePowerReplay.Outcome.overlap(occupied, clock.powered) == 100 * 60)
    }

    @Test func keepOnStopsAtItsLimitAndThePodEndsThePower() {
        var settings = PresencePowerSettings()
        settings.keepOnLimitMinutes = 60
        let o = Self.replay(settings, occupied: [Self.stay("23:00", "11:00")])
        let holds = o.commands.compactMap { c -> Date? in if case .holdUntil(let d) = c.action { return d } else { return nil } }
        #expect(holds == [Self.at("08:00"), Self.at("08:30")])
        #expect(Self.offs(o).isEmpty)
        #expect(o.powered.last?.end == Self.at("08:30"))
    }

    @Test func aNapAfterTheNightIsKeptOnAndABathroomTripTogglesNothing() {
        let occupied = [Self.stay("23:00", "07:00"), Self.stay("07:06", "08:20")]
        let o = Self.replay(occupied: occupied, sessionEnds: [Self.ended("08:20")])
        #expect(o.commands.allSatisfy { if case .holdUntil = $0.action { true } else { $0.at >= Self.at("08:20") } })
        #expect(Self.offs(o).map(\.at) == [Self.at("08:30")])
        #expect(Self.unpoweredInBed(o, occupied) == 0)
    }

    @Test func aNapOutsideThePodsWindowsGetsNoPowerFromTheHub() {
        let nap = DateInterval(start: Self.at("14:00", night: 1), end: Self.at("15:00", night: 1))
        let o = Self.replay(occupied: [Self.stay("23:00", "07:00"), nap], sessionEnds: [Self.ended("07:00")])
        #expect(o.commands.allSatisfy { $0.at < Self.at("11:59") })
        #expect(PresencePowerReplay.Outcome.overlap([nap], o.powered) == 0)
    }

    @Test func aNightOutOfBedInTheMiddleSwitchesOffAndOnAgain() throws {
        let occupied = [Self.stay("23:00", "02:00"), Self.stay("04:00", "07:00")]
        let o = Self.replay(occupied: occupied, sessionEnds: [Self.ended("02:00"), Self.ended("07:00")])
        #expect(o.commands.map(\.action) == [.off, .on, .off])
        #expect(o.commands.map(\.at) == [Self.at("02:10"), Self.at("04:00").addingTimeInterval(30), Self.at("07:10")])
        #expect(o.commands[1].text == "left power on at 04:00: back in bed")
        // Only the arrival's confirmation (30 s) in an unpowered bed; no off while occupied.
        #expect(Self.unpoweredInBed(o, occupied) == 30)
    }

    @Test func turningOverAndShortTripsToggleNothing() {
        var occupied: [DateInterval] = []
        var t = Self.at("23:00")
        // Every 20 min a 15-s dropout (turning over); around 01:00 and 04:00 an 8-min trip.
        for i in 0... {
            let next = min(t.addingTimeInterval(20 * 60), Self.at("07:00"))
            occupied.append(DateInterval(start: t, end: next))
            guard next < Self.at("07:00") else { break }
            t = next.addingTimeInterval(i == 5 || i == 14 ? 8 * 60 : 15)
        }
        let o = Self.replay(occupied: occupied)
        #expect(o.commands.map(\.at) == [occupied.last!.end.addingTimeInterval(600)])
    }

    @Test func anEmptySideIsSwitchedOffThenNotWarmedUntilSomeoneLiesInIt() throws {
        let guest = Self.stay("23:00", "07:00", night: 3)
        let o = Self.replay(nights: 4, occupied: [guest], sessionEnds: [Self.ended("07:00", night: 3)])
        let reasons = o.commands.map(\.reason)
        #expect(reasons == [.noShow(minutesSincePowerOn: 120), .away(nights: 1), .away(nights: 2), .away(nights: 3),
                            .backInBed, .bedLeft(emptyMinutes: 10)])
        #expect(o.commands[1].at == Self.at("22:30", night: 1))
        #expect(o.commands[1].text == "left power off at 22:30: away: nobody slept here for 1 night")
        #expect(o.commands[4].at == Self.at("23:00", night: 3).addingTimeInterval(30))
        #expect(Self.unpoweredInBed(o, [guest]) == 30)
        // Away needs a reading: presence unknown decides nothing.
        var policy = PresencePower(side: .left, schedule: Self.schedule(), emptyNights: 3)
        #expect(policy.tick(Self.at("22:31")).isEmpty)
        #expect(policy.presence(false, at: Self.at("22:32")).map(\.reason) == [.away(nights: 3)])
    }

    @Test func awaySetByTheUserIsSaidSo() throws {
        var settings = PresencePowerSettings()
        settings.away = true
        let o = Self.replay(settings, occupied: [])
        let off = try #require(o.commands.first)
        #expect(off.at == Self.at("22:30"))
        #expect(off.text == "left power off at 22:30: away (set by the user)")
    }

    @Test func awayClearedByTheOwnerSwitchesTheSideOnAgainAndStartsTheCountAfresh() throws {
        // Three empty nights: the side is off at 22:30 for away.
        var policy = PresencePower(side: .left, schedule: Self.schedule(), emptyNights: 3)
        _ = policy.presence(false, at: Self.at("22:29"))
        let off = policy.tick(Self.at("22:30"))
        #expect(off.map(\.reason) == [.away(nights: 3)])
        #expect(policy.switchedOffUntil == Self.at("07:30"))
        // A change that leaves away in force does nothing.
        var longer = PresencePowerSettings()
        longer.offWhenLeftMinutes = 20
        #expect(policy.update(settings: longer, now: Self.at("22:40")).isEmpty)
        // The owner says someone is back: on at once, and the count starts again.
        let on = policy.clearAway(now: Self.at("22:45"))
        #expect(on.map(\.action) == [.on])
        #expect(on.first?.text == "left power on at 22:45: away cleared")
        #expect(policy.emptyNights == 0)
        #expect(!policy.isAway)
        #expect(policy.switchedOffUntil == nil)
        // Still empty: the no-show rule may switch it off later, not away.
        #expect(policy.tick(Self.at("23:00")).isEmpty)
    }

    @Test func turningPresencePowerOffGivesBackThePowerTheHubTook() throws {
        var policy = PresencePower(side: .left, schedule: Self.schedule())
        _ = policy.presence(true, at: Self.at("23:00"))
        _ = policy.tick(Self.at("23:01"))
        _ = policy.presence(false, at: Self.at("05:50"))
        let off = policy.tick(Self.at("06:00"))
        #expect(off.map(\.reason) == [.bedLeft(emptyMinutes: 10)])
        let on = policy.turnOff(now: Self.at("06:05"))
        #expect(on.map(\.action) == [.on])
        #expect(on.first?.reason == .turnedOff)
        #expect(on.first?.text == "left power on at 06:05: presence-driven power turned off")
        // Past the window there is nothing to give back: the pod's own off has run.
        var later = PresencePower(side: .left, schedule: Self.schedule())
        _ = later.presence(true, at: Self.at("23:00"))
        _ = later.tick(Self.at("23:01"))
        _ = later.presence(false, at: Self.at("05:50"))
        _ = later.tick(Self.at("06:00"))
        #expect(later.turnOff(now: Self.at("08:00")).isEmpty)
    }

    @Test func twoSleepersLeavingAtDifferentTimesEachGetTheirOwnSide() {
        let left = [Self.stay("22:45", "06:05")], right = [Self.stay("23:30", "07:50")]
        let l = Self.replay(side: .left, occupied: left, sessionEnds: [Self.ended("06:05")])
        let r = Self.replay(side: .right, occupied: right, sessionEnds: [Self.ended("07:50")])
        #expect(l.commands.map(\.at) == [Self.at("06:15")])
        // In bed at 07:25, and only just out of it at 07:55 (it might be a bathroom trip): two holds.
        #expect(r.commands.map(\.action) == [.holdUntil(Self.at("08:00")), .holdUntil(Self.at("08:30")), .off])
        #expect(r.commands.last?.text == "right power off at 08:00: bed empty for 10 min after the scheduled off")
        #expect(Self.unpoweredInBed(l, left) == 0 && Self.unpoweredInBed(r, right) == 0)
        #expect(PresencePowerReplay.Outcome.overlap(right, r.powered) == right[0].duration)
    }

    @Test func aHubRestartedInTheNightCarriesOnFromTheStoreAndItsReadings() throws {
        let occupied = [Self.stay("23:00", "06:00")]
        // Restarted in bed at 03:00, and again after the sleeper left (06:05, before the hysteresis ran out).
        let o = Self.replay(occupied: occupied, sessionEnds: [Self.ended("06:00")],
                            restarts: [Self.at("03:00"), Self.at("06:05")])
        let off = try #require(Self.offs(o).first)
        #expect(o.commands.count == 1)
        // It does not know since when the side is empty until the session's end says so: at
        // 06:15, ten minutes after its first reading, never earlier than the hysteresis allows.
        #expect(off.at == Self.at("06:15"))
        #expect(Self.unpoweredInBed(o, occupied) == 0)
        // A restart in a side nobody slept in keeps counting nights from the store.
        let away = Self.replay(nights: 2, occupied: [], restarts: [Self.at("20:00", night: 1)], emptyNights: 0)
        #expect(away.commands.map(\.reason) == [.noShow(minutesSincePowerOn: 120), .away(nights: 1)])
    }

    @Test func commandsPerHourAreBoundedWhateverPresenceDoes() {
        // In 12 min, out 12 min, all night: every absence outlasts the hysteresis.
        var occupied: [DateInterval] = []
        var t = Self.at("22:30")
        while t < Self.at("07:30") { occupied.append(DateInterval(start: t, end: t.addingTimeInterval(720))); t += 1440 }
        let o = Self.replay(occupied: occupied)
        let times = o.commands.map(\.at)
        #expect(times.count > 6)
        for t in times { #expect(times.filter { $0 >= t && $0 < t.addingTimeInterval(3600) }.count <= 6) }
        // Every off was followed by its on as soon as someone lay down, budget or not.
        #expect(o.commands.filter { $0.action == .off }.count - o.commands.filter { $0.action == .on }.count <= 1)
    }

    @Test func noOffEverHitsAnOccupiedSideOverManyRandomNights() {
        var rng = SplitMix64(seed: 46)
        for _ in 0..<20 {
            var occupied: [DateInterval] = []
            var t = Self.at("22:00").addingTimeInterval(rng.uniform(0, 3 * 3600))
            let end = Self.at("06:00").addingTimeInterval(rng.uniform(0, 4 * 3600))
            while t < end {
                let stay = rng.uniform(5, 4 * 3600), gap = rng.uniform(2, 40 * 60)
                occupied.append(DateInterval(start: t, end: min(t + stay, end)))
                t = min(t + stay, end) + gap
            }
            let o = Self.replay(occupied: occupied)
            for c in o.commands where c.action == .off {
                #expect(!occupied.contains { $0.start <= c.at && c.at < $0.end })
                #expect(!occupied.contains { $0.end > c.at.addingTimeInterval(-9 * 60) && $0.start <= c.at })
            }
            // Each stay lies unpowered at most the arrival check (and one step) after an off.
            for stay in occupied { #expect(Self.unpoweredInBed(o, [stay]) <= 40) }
        }
    }

    @Test func settingsAreValidatedAndClockOnlyDecidesNothing() {
        var s = PresencePowerSettings()
        #expect(throws: Never.self) { try s.validate() }
        s.offWhenLeftMinutes = 1
        #expect(throws: ScheduleError.self) { try s.validate() }
        s = PresencePowerSettings(); s.noShowMinutes = 10
        #expect(throws: ScheduleError.self) { try s.validate() }
        var r = PresencePowerRules(); r.maxCommandsPerHour = 2
        #expect(throws: ScheduleError.self) { try r.validate() }
        let o = Self.replay(.clockOnly, nights: 3, occupied: [Self.stay("23:00", "06:00")])
        #expect(o.commands.isEmpty)
    }
}

@Suite struct PowerHoldTests {
    @Test func aHoldSplitsTheDayItStartedOnOutOfItsWindowWithTheLaterOff() throws {
        let schedule = PresencePowerTests.schedule()
        // Tuesday 07:25 in the night that began on Monday 22:30; held until 08:00.
        let now = PresencePowerTests.at("07:25")
        let held = try #require(PowerHold(side: .left, until: PresencePowerTests.at("08:00")).applied(to: schedule, now: now))
        #expect(held.powerWindows.count == 2)
        let monday = try #require(held.powerWindows.first { $0.days == .monday })
        #expect(monday.on == t("22:30") && monday.off == t("08:00"))
        #expect(held.powerWindows.contains { $0.days == WeekdayMask.everyDay.subtracting(.monday) && $0.off == t("07:30") })
        // Past its end, for another side, or a day long: nothing to hold.
        #expect(PowerHold(side: .left, until: now).applied(to: schedule, now: now) == nil)
        #expect(PowerHold(side: .right, until: PresencePowerTests.at("08:00")).applied(to: schedule, now: now) == nil)
        #expect(PowerHold(side: .left, until: PresencePowerTests.at("22:45", night: 1)).applied(to: schedule, now: now) == nil)
        // The pod, replaying the held schedule, switches off at 08:00, not 07:30.
        let replay = PresencePowerReplay(schedule: held, settings: .clockOnly)
            .run(from: PresencePowerTests.at("20:00"), to: PresencePowerTests.at("11:59"), occupied: [])
        #expect(replay.powered.map(\.end) == [PresencePowerTests.at("08:00")])
    }
}
