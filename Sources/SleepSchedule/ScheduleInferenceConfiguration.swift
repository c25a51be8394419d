import SleepDomain

/// Which instant of a session counts as "going to bed".
package enum BedtimeSource: String, Sendable, Hashable, Codable, CaseIterable, NamedChoice {
    /// The session start (in bed). Default: the warm-up must precede getting into bed.
    case sessionStart
    /// The analyzer's sleep onset, falling back to the session start when there is none.
    case sleepOnset
}

/// Knobs of the schedule inference. Defaults work; `validate()` says what is wrong otherwise.
package struct ScheduleInferenceConfiguration: Hashable, Sendable, Codable {
    /// Fewer usable nights than this (after outliers are dropped) → the default schedule.
    package var minimumNights: Int = 3
    /// A group (weekday / weekend) needs this many nights for its own estimate; otherwise it
    /// takes the estimate of all nights together.
    package var minimumNightsPerGroup: Int = 3
    /// Only sessions that ended within this many days before `now` count.
    package var lookbackDays: Int = 28
    package var bedtimeSource: BedtimeSource = .sessionStart
    /// Wake dates on these days make a weekend night (default Saturday and Sunday mornings,
    /// i.e. Friday and Saturday nights).
    package var weekendWakeDays: WeekdayMask = .saturdayAndSunday
    /// Outlier rule: a night is dropped when its bedtime or its wake time lies further from the
    /// circular median than max(`outlierFloorMinutes`, `outlierSpreadMultiplier` × 1.4826 × MAD).
    package var outlierFloorMinutes: Double = 90
    package var outlierSpreadMultiplier: Double = 3
    /// Below this mean resultant length (bedtime or wake) the nights are too irregular to infer
    /// from (R = 0.5 is a circular SD of about 4.5 h) and the default schedule is used.
    package var minimumRegularity: Double = 0.5
    /// Sessions longer than this are not nights (a sensor left occupied); skipped as invalid.
    package var maximumSessionHours: Double = 20
    /// Used when there is neither a manual schedule nor enough nights.
    package var defaultSchedule = ManualSchedule(every: SleepTimes(
        bedtime: TimeOfDay(hour: 22, minute: 30)!, wake: TimeOfDay(hour: 7, minute: 0)!))

    package init() {}

    package func validate() throws(ScheduleError) {
        guard minimumNights >= 1 else { throw .invalidConfiguration("minimumNights must be ≥ 1, is \(minimumNights)") }
        guard minimumNightsPerGroup >= 1 else {
            throw .invalidConfiguration("minimumNightsPerGroup must be ≥ 1, is \(minimumNightsPerGroup)")
        }
        guard lookbackDays >= 1 else { throw .invalidConfiguration("lookbackDays must be ≥ 1, is \(lookbackDays)") }
        guard weekendWakeDays != .everyDay else {
            throw .invalidConfiguration("weekendWakeDays cannot be every day (no weekday would remain)")
        }
        guard outlierFloorMinutes.isFinite, outlierFloorMinutes > 0 else {
            throw .invalidConfiguration("outlierFloorMinutes must be > 0, is \(outlierFloorMinutes)")
        }
        guard outlierSpreadMultiplier.isFinite, outlierSpreadMultiplier > 0 else {
            throw .invalidConfiguration("outlierSpreadMultiplier must be > 0, is \(outlierSpreadMultiplier)")
        }
        guard minimumRegularity.isFinite, (0...1).contains(minimumRegularity) else {
            throw .invalidConfiguration("minimumRegularity must be in 0…1, is \(minimumRegularity)")
        }
        guard maximumSessionHours.isFinite, maximumSessionHours > 0, maximumSessionHours <= 48 else {
            throw .invalidConfiguration("maximumSessionHours must be in (0, 48], is \(maximumSessionHours)")
        }
    }
}
