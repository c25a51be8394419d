import Foundation
import NightModel
import SleepDomain
import SleepSchedule

/// Presence-driven power against the clock alone (issue 46, docs/schedule.md §5): four weeks of
/// two sleepers whose presence the night model plays (bathroom trips, turn-overs), rising early,
/// on time and late past the off, one side away four nights and a night out of bed in the middle.
/// Each side's nights replay through `PresencePowerReplay` (the policy and the pod's own power
/// rule) once with every rule off and once with the defaults; the figures are the hours a side
/// had power with nobody in it and the minutes a sleeper lay in an unpowered bed, per side-night.
func runPresencePowerBench(options: BenchOptions) throws {
    let zone = TimeZone(identifier: "Europe/Berlin")!
    let nights = 28
    // Night 0 wakes on Monday 2026-01-12.
    let firstWake = CalendarDay(year: 2026, month: 1, day: 12)!
    struct Sleeper { var side: BedSide; var schedule: ManualSchedule; var away: Set<Int>; var outOfBed: [Int: (Double, Double)] }
    let sleepers = [
        Sleeper(side: .left, schedule: ManualSchedule(weekday: SleepTimes(bedtime: TimeOfDay("23:00")!, wake: TimeOfDay("07:00")!),
                                                      weekend: SleepTimes(bedtime: TimeOfDay("23:45")!, wake: TimeOfDay("08:30")!)),
                away: [], outOfBed: [:]),
        // Away four nights; on night 20 out of bed from 02:00 for 90 min (hours after the wake-day's midnight).
        Sleeper(side: .right, schedule: ManualSchedule(weekday: SleepTimes(bedtime: TimeOfDay("22:45")!, wake: TimeOfDay("06:30")!),
                                                       weekend: SleepTimes(bedtime: TimeOfDay("23:30")!, wake: TimeOfDay("08:00")!)),
                away: [9, 10, 11, 12], outOfBed: [20: (2, 3.5)]),
    ]
    var rng = SplitMix64(seed: 4600)
    let from = LocalTimeResolver.resolve(TimeOfDay("18:00")!, on: firstWake.adding(days: -1), in: zone).fireInstant
    let to = LocalTimeResolver.resolve(TimeOfDay("16:00")!, on: firstWake.adding(days: nights - 1), in: zone).fireInstant

    var clockEmpty = 0.0, presenceEmpty = 0.0, clockEmptyAll = 0.0, presenceEmptyAll = 0.0
    var clockUnpowered = 0.0, presenceUnpowered = 0.0, presenceOffByHub = 0.0
    var offsOnOccupied = 0, commands = 0, maxPerHour = 0, sideNights = 0
    var rises: [Double] = []
    let start = Date()
    for sleeper in sleepers {
        let pod = try PodScheduleConverter.convert(sleeper.schedule, side: sleeper.side, timeZoneIdentifier: zone.identifier)
        var occupied: [DateInterval] = []
        for n in 0..<nights {
            sideNights += 1
            if sleeper.away.contains(n) { continue }
            let wakeDay = firstWake.adding(days: n)
            let times = WeekdayMask.saturdayAndSunday.contains(wakeDay.weekday) ? sleeper.schedule.weekend : sleeper.schedule.weekday
            let midnight = LocalTimeResolver.resolve(TimeOfDay("00:00")!, on: wakeDay, in: zone).fireInstant
            let bedMinutes = Double(times.bedtime.minuteOfDay - (times.bedtime.minuteOfDay > 720 ? 1440 : 0)) + 20 * rng.gaussian()
            var riseMinutes = Double(times.wake.minuteOfDay) + 30 * rng.gaussian()
            let draw = rng.uniform()
            if draw < 0.2 { riseMinutes -= rng.uniform(60, 150) } else if draw < 0.35 { riseMinutes += rng.uniform(45, 150) }
            rises.append(riseMinutes)
            let bed = midnight.addingTimeInterval(bedMinutes * 60 - 60)
            let duration = (riseMinutes - bedMinutes) * 60 + 120
            let profile = SleeperProfile(getsIn: 60, getsOutBeforeEnd: 60)
            let night = NightSimulator(config: NightConfig(seed: 4600 + UInt64(n * 2 + sleeper.side.index), duration: duration,
                                                           sides: [SideConfig(occupied: true, sleeper: profile), .empty]))
            var runStart: Int?
            let present = night.truth.sides[0].present
            var stays: [DateInterval] = []
            for (s, p) in present.enumerated() {
                if p, runStart == nil { runStart = s }
                if !p, let r = runStart { stays.append(DateInterval(start: bed + Double(r), end: bed + Double(s))); runStart = nil }
            }
            if let r = runStart { stays.append(DateInterval(start: bed + Double(r), end: bed + Double(present.count))) }
            if let (h0, h1) = sleeper.outOfBed[n] {
                let out = DateInterval(start: midnight + h0 * 3600, end: midnight + h1 * 3600)
                stays = stays.flatMap { s -> [DateInterval] in
                    guard let cut = s.intersection(with: out), cut.duration > 0 else { return [s] }
                    return [DateInterval(start: s.start, end: cut.start), DateInterval(start: cut.end, end: s.end)].filter { $0.duration > 0 }
                }
            }
            occupied += stays
        }
        // The session tracker's ends: an absence longer than its 20 min, decided when it has lasted that long.
        var ends: [(end: Date, decidedAt: Date)] = []
        for (i, s) in occupied.enumerated() where i + 1 == occupied.count || occupied[i + 1].start.timeIntervalSince(s.end) > 1200 {
            ends.append((s.end, s.end + 1200))
        }
        // The warm-up: in each window someone lay down in, the heating before they did (wanted,
        // and the same with or without presence: nobody can know when the sleeper will come).
        let warmUps = replayWindows(pod, from: from, to: to, zone: zone).compactMap { w -> DateInterval? in
            guard let first = occupied.first(where: { $0.end > w.start && $0.start < w.end }) else { return nil }
            return first.start > w.start ? DateInterval(start: w.start, end: first.start) : nil
        }
        let clock = PresencePowerReplay(schedule: pod, settings: .clockOnly).run(from: from, to: to, occupied: occupied, sessionEnds: ends)
        let presence = PresencePowerReplay(schedule: pod, settings: PresencePowerSettings()).run(from: from, to: to, occupied: occupied, sessionEnds: ends)
        func emptyPowered(_ o: PresencePowerReplay.Outcome, excludingWarmUp: Bool) -> Double {
            var powered = o.powered
            if excludingWarmUp { powered = subtract(powered, warmUps) }
            return total(powered) - PresencePowerReplay.Outcome.overlap(powered, occupied)
        }
        clockEmpty += emptyPowered(clock, excludingWarmUp: true)
        presenceEmpty += emptyPowered(presence, excludingWarmUp: true)
        clockEmptyAll += emptyPowered(clock, excludingWarmUp: false)
        presenceEmptyAll += emptyPowered(presence, excludingWarmUp: false)
        clockUnpowered += total(occupied) - PresencePowerReplay.Outcome.overlap(occupied, clock.powered)
        presenceUnpowered += total(occupied) - PresencePowerReplay.Outcome.overlap(occupied, presence.powered)
        presenceOffByHub += PresencePowerReplay.Outcome.overlap(occupied, presence.switchedOffByHub)
        for c in presence.commands where c.action == .off {
            if occupied.contains(where: { $0.start <= c.at && c.at < $0.end }) { offsOnOccupied += 1 }
        }
        commands += presence.commands.count
        let times = presence.commands.map(\.at)
        for t in times { maxPerHour = max(maxPerHour, times.filter { $0 >= t && $0 < t + 3600 }.count) }
    }
    let elapsed = Date().timeIntervalSince(start)
    let perNight = Double(sideNights)
    func hours(_ s: Double) -> String { String(format: "%.2f", s / 3600 / perNight) }
    func minutes(_ s: Double) -> String { String(format: "%.1f", s / 60 / perNight) }
    let risesText = String(format: "%02d:%02d–%02d:%02d", Int(rises.min()! / 60), Int(rises.min()!) % 60,
                           Int(rises.max()! / 60), Int(rises.max()!) % 60)
    print("presence_power.nights: \(nights) nights × 2 sides (\(sideNights) side-nights; rises \(risesText); one side away 4 nights, 1 night out of bed 90 min)")
    print("presence_power.empty_bed_power: clock-only \(hours(clockEmpty)) h, presence \(hours(presenceEmpty)) h per side-night (after the warm-up: from the night's first lying down, or the whole window nobody lay in)")
    print("presence_power.empty_bed_power_cut: \(String(format: "%.0f", 100 * (1 - presenceEmpty / clockEmpty))) %")
    print("presence_power.empty_bed_power_with_warmup: clock-only \(hours(clockEmptyAll)) h, presence \(hours(presenceEmptyAll)) h per side-night (cut \(String(format: "%.0f", 100 * (1 - presenceEmptyAll / clockEmptyAll))) %; the heating before the sleeper lies down counted too)")
    print("presence_power.in_unpowered_bed: clock-only \(minutes(clockUnpowered)) min, presence \(minutes(presenceUnpowered)) min per side-night")
    print("presence_power.switched_off_while_occupied: \(offsOnOccupied) offs; \(String(format: "%.1f", presenceOffByHub / 60)) min in all lying down again before the on (the \(Int(PresencePowerRules().arrivalSeconds)) s arrival check)")
    print("presence_power.commands: \(String(format: "%.1f", Double(commands) / perNight)) per side-night, at most \(maxPerHour) in an hour")
    print("presence_power.replay: \(String(format: "%.1f", elapsed)) s for \(sideNights) side-nights, twice")
}

/// The pod's windows starting between `from` and `to`.
private func replayWindows(_ pod: PodSchedule, from: Date, to: Date, zone: TimeZone) -> [DateInterval] {
    var out: [DateInterval] = []
    var day = LocalDateTime(from, in: zone).date
    while day <= LocalDateTime(to, in: zone).date {
        for w in pod.powerWindows { if let i = LocalTimeResolver.interval(of: w, startingOn: day, in: zone) { out.append(i) } }
        day = day.next
    }
    return out
}

private func total(_ intervals: [DateInterval]) -> Double { intervals.reduce(0) { $0 + $1.duration } }

/// `a` without the parts covered by `b` (both disjoint).
private func subtract(_ a: [DateInterval], _ b: [DateInterval]) -> [DateInterval] {
    a.flatMap { x -> [DateInterval] in
        var pieces = [x]
        for y in b {
            pieces = pieces.flatMap { p -> [DateInterval] in
                guard let i = p.intersection(with: y), i.duration > 0 else { return [p] }
                return [DateInterval(start: p.start, end: i.start), DateInterval(start: i.end, end: p.end)].filter { $0.duration > 0 }
            }
        }
        return pieces
    }
}
