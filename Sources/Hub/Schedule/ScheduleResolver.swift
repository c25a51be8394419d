import Foundation
import SleepSchedule
import SleepStore
import SleepDomain

/// What a side's schedule is and why: the manual schedule if the user set one, else the
/// inference over the side's stored main sleep sessions, else the configured default. Made
/// only by `ScheduleResolver.decide`; in the running hub only the schedule service calls that
/// (`ScheduleDriver`), and the API, MQTT and the console read its decisions.
package struct SideScheduleDecision: Sendable, Hashable {
    package let podSerial: String
    package let side: BedSide
    /// The full "why" (nights used and dropped, circular means and spreads, sources).
    package let inference: ScheduleInferenceResult
    /// What the pod should hold, in the pod's zone.
    package let schedule: PodSchedule
    package let origin: PodScheduleOrigin
    /// One line: the source of weekday and of weekend nights.
    package let reason: String
    /// Stored sessions of the side offered to the inference, and how many were naps.
    package let sessionsOffered: Int
    package let napsSkipped: Int
    /// What the inference alone gives (the manual schedule left out): the same as the above
    /// when no manual schedule is set. The API and `schedule infer` show it beside a manual one.
    package let inferredOnly: Outcome
    /// The moment the decision was made for (the hub's clock).
    package let decidedAt: Date

    /// One evaluation of the inference and its conversion to what the pod holds.
    package struct Outcome: Sendable, Hashable {
        package let inference: ScheduleInferenceResult
        package let schedule: PodSchedule
        package let origin: PodScheduleOrigin
        package let reason: String
    }

    /// The store row for this decision.
    package func state(at time: Int64) throws -> PodScheduleState {
        PodScheduleState(podSerial: podSerial, side: side, origin: origin, scheduleJSON: try schedule.storedJSON(),
                         summary: schedule.summary, reason: reason, timeZoneID: schedule.timeZoneIdentifier, setAt: time)
    }
}

/// Why a schedule could not be worked out.
package enum ScheduleServiceError: Error, Sendable, CustomStringConvertible {
    case schedule(ScheduleError)
    case store(String)
    case badManualSchedule(String)
    case noPod(String)

    package var description: String {
        switch self {
        case .schedule(let e): return "\(e)"
        case .store(let m): return "store: \(m)"
        case .badManualSchedule(let m): return "manual schedule: \(m)"
        case .noPod(let m): return m
        }
    }
}

/// Reads a side's sessions and manual schedule from the store and runs the pure inference
/// and conversion of SleepSchedule. Called by the daemon's schedule service (`ScheduleDriver`,
/// the owner of the schedule in force) and, with no daemon, by the `podbridge schedule`
/// command, so both say the same thing.
package struct ScheduleResolver: Sendable {
    package let store: NightStore
    package let settings: HubConfiguration.ScheduleSettings
    package let podZone: TimeZone
    /// A session is a main night only if it is the longest of its side and wake date and at
    /// least this long in bed; every other session is a nap (naps say nothing about the
    /// usual night).
    package var minimumMainSleepMinutes: Double = 180

    package init(store: NightStore, settings: HubConfiguration.ScheduleSettings, podZone: TimeZone) {
        self.store = store
        self.settings = settings
        self.podZone = podZone
    }

    /// The side's final stored sessions that ended within the lookback window before `now`,
    /// as the inference's nights, naps flagged.
    package func nights(podSerial: String, side: BedSide, now: Date) async throws(ScheduleServiceError) -> [SleepNight] {
        let end = Int64(now.timeIntervalSince1970.rounded(.down)) + 1
        // A day more than the lookback so the inference itself counts what falls outside.
        let start = end - Int64(settings.inference.lookbackDays + 1) * 86_400
        let sessions: [StoredSession]
        do {
            sessions = try await store.sessions(endingIn: start..<end, side: side)
                .filter { $0.podSerial == podSerial && $0.isFinal }
        } catch {
            throw .store("\(error)")
        }
        // The main night of a wake date is its longest session.
        var longest: [String: Int64] = [:]
        for s in sessions {
            let key = s.wakeDate.description
            if let id = longest[key], let other = sessions.first(where: { $0.id == id }),
               other.metrics.timeInBedMinutes >= s.metrics.timeInBedMinutes { continue }
            longest[key] = s.id
        }
        let mains = Set(longest.values)
        return sessions.map { s in
            let isMain = mains.contains(s.id) && s.metrics.timeInBedMinutes >= minimumMainSleepMinutes
            let onset = s.metrics.onsetLatencyMinutes.isFinite && s.metrics.onsetLatencyMinutes >= 0
                ? Double(s.start) + s.metrics.onsetLatencyMinutes * 60 : nil
            return SleepNight(startUnix: Double(s.start), endUnix: Double(s.end), sleepOnsetUnix: onset, isNap: !isMain)
        }
    }

    /// The user's manual schedule of a side, if set.
    package func manual(podSerial: String, side: BedSide) async throws(ScheduleServiceError) -> ManualSchedule? {
        let record: ManualScheduleRecord?
        do { record = try await store.manualSchedule(podSerial: podSerial, side: side) } catch { throw .store("\(error)") }
        guard let record else { return nil }
        guard let wb = TimeOfDay(record.weekdayBedtime), let ww = TimeOfDay(record.weekdayWake),
              let eb = TimeOfDay(record.weekendBedtime), let ew = TimeOfDay(record.weekendWake) else {
            throw .badManualSchedule("stored times are not HH:mm")
        }
        return ManualSchedule(weekday: SleepTimes(bedtime: wb, wake: ww), weekend: SleepTimes(bedtime: eb, wake: ew))
    }

    /// The schedule a side should hold at `now`, and why, with what the inference alone gives.
    /// The one place inference is run and converted to a pod schedule.
    package func decide(podSerial: String, side: BedSide, now: Date) async throws(ScheduleServiceError) -> SideScheduleDecision {
        let nights = try await nights(podSerial: podSerial, side: side, now: now)
        let manual = try await manual(podSerial: podSerial, side: side)
        let alarmOn: Bool
        do { alarmOn = try await store.alarmEnabled(podSerial: podSerial, side: side) } catch { throw .store("\(error)") }
        do {
            let alone = try evaluate(nights: nights, manual: nil, side: side, alarmOn: alarmOn, now: now)
            var inForce = alone
            if let manual { inForce = try evaluate(nights: nights, manual: manual, side: side, alarmOn: alarmOn, now: now) }
            return SideScheduleDecision(podSerial: podSerial, side: side, inference: inForce.inference, schedule: inForce.schedule,
                                        origin: inForce.origin, reason: inForce.reason, sessionsOffered: nights.count,
                                        napsSkipped: inForce.inference.skippedNaps, inferredOnly: alone, decidedAt: now)
        } catch {
            throw .schedule(error)
        }
    }

    /// Inference over `nights` (the manual schedule winning when given), converted. Pure.
    private func evaluate(nights: [SleepNight], manual: ManualSchedule?, side: BedSide, alarmOn: Bool,
                          now: Date) throws(ScheduleError) -> SideScheduleDecision.Outcome {
        let result = try ScheduleInference.infer(nights: nights, manual: manual, now: now, timeZone: podZone,
                                                 configuration: settings.inference)
        var schedule = try Self.podSchedule(result.schedule, side: side, timeZoneIdentifier: podZone.identifier, settings: settings)
        // Switched off (MQTT): the pod holds no alarm for the side; power is unchanged.
        if !alarmOn { schedule.alarms = [] }
        let sources = [result.weekday.source, result.weekend.source]
        let origin: PodScheduleOrigin = sources.contains(.manual) ? .manual
            : sources.allSatisfy { $0 == .fallbackDefault } ? .default : .inferred
        var reason: String
        if result.weekday.source == result.weekend.source, result.weekday.reason == result.weekend.reason {
            reason = result.weekday.reason
        } else {
            reason = "weekday nights: \(result.weekday.source) (\(result.weekday.reason)); "
                + "weekend nights: \(result.weekend.source) (\(result.weekend.reason))"
        }
        if !alarmOn { reason += "; alarm switched off" }
        return .init(inference: result, schedule: schedule, origin: origin, reason: reason)
    }

    /// What the pod would hold for `times` on `side`: the conversion every schedule goes
    /// through, also asked (and thrown away) to refuse a manual schedule before it is stored.
    package static func podSchedule(_ times: ManualSchedule, side: BedSide, timeZoneIdentifier: String,
                                    settings: HubConfiguration.ScheduleSettings) throws(ScheduleError) -> PodSchedule {
        try PodScheduleConverter.convert(times, weekendWakeDays: settings.inference.weekendWakeDays, side: side,
                                         timeZoneIdentifier: timeZoneIdentifier, configuration: settings.conversion)
    }
}
