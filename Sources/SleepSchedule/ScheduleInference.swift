import Foundation
import SleepDomain

/// Where the times in force for a group came from.
package enum ScheduleOrigin: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The user's manual schedule (always wins until cleared).
    case manual
    /// Inferred from this group's own nights.
    case inferred
    /// This group had too few nights; inferred from all nights together.
    case inferredPooled
    /// Not enough (or too irregular) nights; the configured default schedule.
    case fallbackDefault

    package var description: String {
        switch self {
        case .manual: return "manual"
        case .inferred: return "inferred"
        case .inferredPooled: return "inferred from all nights"
        case .fallbackDefault: return "default"
        }
    }
}

/// What the circular statistics gave for one set of nights.
package struct NightsEstimate: Hashable, Sendable {
    /// Nights offered (after naps, invalid and out-of-window sessions were skipped).
    package let nightsConsidered: Int
    /// Wake dates of the nights kept.
    package let usedWakeDates: [CalendarDay]
    /// Wake dates of the nights dropped as outliers.
    package let droppedWakeDates: [CalendarDay]
    /// The outlier threshold applied to bedtimes and to wake times, minutes from the median.
    package let bedtimeThresholdMinutes: Double
    package let wakeThresholdMinutes: Double
    /// Statistics over the kept nights.
    package let bedtime: CircularSummary
    package let wake: CircularSummary

    package var nightsUsed: Int { usedWakeDates.count }
    package var nightsDropped: Int { droppedWakeDates.count }

    /// The circular means rounded to the minute.
    package var times: SleepTimes { SleepTimes(bedtime: bedtime.mean, wake: wake.mean) }
}

/// The times in force for weekday or weekend nights and why.
package struct GroupDecision: Hashable, Sendable {
    package let group: NightGroup
    package let times: SleepTimes
    package let source: ScheduleOrigin
    /// What inference gives for this group (its own nights, or all nights when pooled); present
    /// even when a manual schedule wins, so `schedule infer` can show it. Nil without nights.
    package let estimate: NightsEstimate?
    /// One line: why these times.
    package let reason: String
}

/// The result of `ScheduleInference.infer`: the times per group plus the "why".
package struct ScheduleInferenceResult: Hashable, Sendable {
    package let weekday: GroupDecision
    package let weekend: GroupDecision
    package let weekendWakeDays: WeekdayMask
    package let timeZoneIdentifier: String
    /// Sessions handed in, and how many were skipped for each reason.
    package let sessionsGiven: Int
    package let skippedNaps: Int
    package let skippedInvalid: Int
    package let skippedOutsideWindow: Int
    /// Nights that entered the statistics.
    package let nightsConsidered: Int

    package func decision(for group: NightGroup) -> GroupDecision {
        group == .weekday ? weekday : weekend
    }

    /// The group a night waking on `day` belongs to.
    package func group(forWakeDay day: Weekday) -> NightGroup {
        weekendWakeDays.contains(day) ? .weekend : .weekday
    }

    /// The times in force per group as a schedule (manual or not), for conversion.
    package var schedule: ManualSchedule { ManualSchedule(weekday: weekday.times, weekend: weekend.times) }

    /// Lines a CLI can print: the input, then per group the times, source, nights used and
    /// dropped, circular mean and spread.
    package var explanation: [String] {
        var lines = [
            "time zone \(timeZoneIdentifier); \(sessionsGiven) sessions: \(nightsConsidered) nights used for statistics, "
                + "\(skippedNaps) nap\(skippedNaps == 1 ? "" : "s") skipped, \(skippedInvalid) invalid, \(skippedOutsideWindow) outside the window",
        ]
        for decision in [weekday, weekend] {
            let days = decision.group == .weekday ? WeekdayMask.everyDay.subtracting(weekendWakeDays) : weekendWakeDays
            lines.append("\(decision.group) nights (wake \(days)): \(decision.times) [\(decision.source)] — \(decision.reason)")
            if let e = decision.estimate {
                lines.append("  " + Self.describe(e))
            }
        }
        return lines
    }

    static func describe(_ e: NightsEstimate) -> String {
        func fmt(_ v: Double) -> String { v.isFinite ? String(Int(v.rounded())) : "∞" }
        func r(_ v: Double) -> String { String(Double(Int((v * 1000).rounded())) / 1000) }
        var text = "\(e.nightsUsed) of \(e.nightsConsidered) nights used"
        if e.nightsDropped > 0 {
            text += ", dropped as outliers: " + e.droppedWakeDates.map(\.description).joined(separator: " ")
        }
        text += "; bedtime mean \(e.bedtime.mean) (R \(r(e.bedtime.resultantLength)), SD \(fmt(e.bedtime.circularSDMinutes)) min, "
            + "cut ±\(fmt(e.bedtimeThresholdMinutes)) min)"
        text += "; wake mean \(e.wake.mean) (R \(r(e.wake.resultantLength)), SD \(fmt(e.wake.circularSDMinutes)) min, "
            + "cut ±\(fmt(e.wakeThresholdMinutes)) min)"
        return text
    }
}

/// Infers a side's usual bedtime and wake time from its recent main sleep sessions.
///
/// Rules (documented in docs/schedule.md):
/// - naps, invalid sessions (end ≤ start, longer than `maximumSessionHours`) and sessions that
///   did not end within `lookbackDays` before `now` are skipped and counted;
/// - a night's clock times and its weekday are read on the wall clock of `timeZone` (the pod's
///   zone); the night belongs to the local date of its WAKE (session end);
/// - outliers: per group, a night whose bedtime or wake lies further from that variable's
///   circular median than max(floor, k × 1.4826 × median absolute circular deviation) is dropped;
/// - a group with ≥ `minimumNightsPerGroup` kept nights gets its own circular means; otherwise
///   all nights together are used if they keep ≥ `minimumNights`; otherwise the default;
/// - R below `minimumRegularity` for bedtime or wake also falls back to the default;
/// - a manual schedule wins over all of this.
package enum ScheduleInference {
    struct Night {
        let wakeDate: CalendarDay
        let bedMinute: Double
        let wakeMinute: Double
        let group: NightGroup
    }

    package static func infer(
        nights: [SleepNight],
        manual: ManualSchedule? = nil,
        now: Date,
        timeZone: TimeZone,
        configuration: ScheduleInferenceConfiguration = ScheduleInferenceConfiguration()
    ) throws(ScheduleError) -> ScheduleInferenceResult {
        try configuration.validate()
        var naps = 0, invalid = 0, outside = 0
        var usable: [Night] = []
        let windowStart = now.addingTimeInterval(-Double(configuration.lookbackDays) * 86_400)
        for night in nights {
            if night.isNap { naps += 1; continue }
            let startT = night.start.timeIntervalSince1970, endT = night.end.timeIntervalSince1970
            guard startT.isFinite, endT.isFinite, endT > startT,
                  endT - startT <= configuration.maximumSessionHours * 3600 else { invalid += 1; continue }
            guard night.end >= windowStart, night.end <= now else { outside += 1; continue }
            var bed = night.start
            if configuration.bedtimeSource == .sleepOnset, let onset = night.sleepOnset,
               onset.timeIntervalSince1970.isFinite, onset >= night.start, onset < night.end {
                bed = onset
            }
            let wakeLocal = LocalDateTime(night.end, in: timeZone)
            let bedLocal = LocalDateTime(bed, in: timeZone)
            let group: NightGroup = configuration.weekendWakeDays.contains(wakeLocal.date.weekday) ? .weekend : .weekday
            usable.append(Night(wakeDate: wakeLocal.date, bedMinute: bedLocal.minuteOfDay,
                                wakeMinute: wakeLocal.minuteOfDay, group: group))
        }
        usable.sort { $0.wakeDate < $1.wakeDate }

        let pooled = estimate(usable, configuration)
        func decide(_ group: NightGroup) -> GroupDecision {
            let mine = usable.filter { $0.group == group }
            let own = estimate(mine, configuration)
            var chosen: NightsEstimate?
            var source = ScheduleOrigin.fallbackDefault
            var reason: String
            if let own, own.nightsUsed >= configuration.minimumNightsPerGroup, own.nightsUsed >= configuration.minimumNights {
                chosen = own
                source = .inferred
                reason = "circular mean of this group's \(own.nightsUsed) nights"
            } else if let pooled, pooled.nightsUsed >= configuration.minimumNights {
                chosen = pooled
                source = .inferredPooled
                let used = own?.nightsUsed ?? 0
                reason = "only \(used) \(group) night\(used == 1 ? "" : "s") (need \(configuration.minimumNightsPerGroup)); "
                    + "circular mean of all \(pooled.nightsUsed) nights"
            } else {
                chosen = own ?? pooled
                let have = pooled?.nightsUsed ?? 0
                reason = "only \(have) usable night\(have == 1 ? "" : "s") (need \(configuration.minimumNights)); default schedule"
            }
            if let c = chosen, source != .fallbackDefault {
                let r = min(c.bedtime.resultantLength, c.wake.resultantLength)
                if r < configuration.minimumRegularity {
                    source = .fallbackDefault
                    reason = "nights too irregular (R \(String(format: "%.2f", r)) < \(configuration.minimumRegularity)); default schedule"
                }
            }
            var times = source == .fallbackDefault ? configuration.defaultSchedule.times(for: group) : chosen!.times
            if let manual {
                let inferredNote = source == .fallbackDefault ? "inference would fall back to the default"
                    : "inference would give \(times)"
                times = manual.times(for: group)
                source = .manual
                reason = "manual schedule set by the user wins until cleared (\(inferredNote))"
            }
            return GroupDecision(group: group, times: times, source: source, estimate: chosen, reason: reason)
        }

        return ScheduleInferenceResult(
            weekday: decide(.weekday), weekend: decide(.weekend),
            weekendWakeDays: configuration.weekendWakeDays, timeZoneIdentifier: timeZone.identifier,
            sessionsGiven: nights.count, skippedNaps: naps, skippedInvalid: invalid,
            skippedOutsideWindow: outside, nightsConsidered: usable.count)
    }

    /// Outlier rejection then circular statistics over `nights`; nil when there are none.
    static func estimate(_ nights: [Night], _ configuration: ScheduleInferenceConfiguration) -> NightsEstimate? {
        guard !nights.isEmpty else { return nil }
        let bedThreshold = threshold(nights.map(\.bedMinute), configuration)
        let wakeThreshold = threshold(nights.map(\.wakeMinute), configuration)
        var kept: [Night] = [], dropped: [Night] = []
        for n in nights {
            if CircularStatistics.distance(n.bedMinute, bedThreshold.center) > bedThreshold.limit
                || CircularStatistics.distance(n.wakeMinute, wakeThreshold.center) > wakeThreshold.limit {
                dropped.append(n)
            } else {
                kept.append(n)
            }
        }
        // The median is itself a sample with distance 0 to itself, so `kept` cannot be empty
        // unless the two medians come from different nights that are each the other's outlier;
        // then keep everything rather than invent a result from nothing.
        if kept.isEmpty { kept = nights; dropped = [] }
        guard let bed = CircularStatistics.summary(ofMinutes: kept.map(\.bedMinute)),
              let wake = CircularStatistics.summary(ofMinutes: kept.map(\.wakeMinute)) else { return nil }
        return NightsEstimate(
            nightsConsidered: nights.count, usedWakeDates: kept.map(\.wakeDate),
            droppedWakeDates: dropped.map(\.wakeDate), bedtimeThresholdMinutes: bedThreshold.limit,
            wakeThresholdMinutes: wakeThreshold.limit, bedtime: bed, wake: wake)
    }

    /// Center (circular median) and cut-off distance for one variable.
    static func threshold(_ minutes: [Double], _ c: ScheduleInferenceConfiguration) -> (center: Double, limit: Double) {
        let center = CircularStatistics.median(ofMinutes: minutes) ?? 0
        let mad = CircularStatistics.linearMedian(minutes.map { CircularStatistics.distance($0, center) }) ?? 0
        return (center, max(c.outlierFloorMinutes, c.outlierSpreadMultiplier * 1.4826 * mad))
    }
}
