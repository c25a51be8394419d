import Foundation
import Hub
import HubMQTT
import SleepDomain
import SleepSchedule
import SleepStore

/// The JSON bodies of the hub's state topics (docs/mqtt.md shows each). Every key is always
/// present, `null` when there is no value, so Home Assistant templates never meet a missing
/// key. Times are RFC 3339 in UTC. Pure: values in, bytes out.
package enum MQTTPayloads {
    /// Whether someone is on the side now: the newest second's presence (the pod sees it at
    /// once), else, before any second, the session's. A sleeper up for the bathroom is not
    /// present, though the night (`in_bed_since`) goes on until the session's gap has passed.
    package static func present(live: LiveSecond?, inBed: Bool?) -> Bool {
        live?.present ?? inBed ?? false
    }

    /// `<base>/<serial>/<side>/state`. `stage` is the night's stage while someone is on the
    /// side, `out_of_bed` while the side is empty (the last stage is not the bed's state), and
    /// null in bed before the night has a stage. `alarm_ringing` is true from the pod's
    /// ALARM_STARTED until it is snoozed, stopped or fails.
    package static func sideState(live: LiveSecond?, inBed: Bool?, inBedSince: Date?, stage: SleepStage?, power: Bool?,
                                  alarmRinging: Bool = false) -> JSONValue {
        let present = present(live: live, inBed: inBed)
        let night = inBed ?? present
        return [
            "present": .bool(present),
            "heart_rate": present ? .number(live?.heartRate, places: 1) : .null,
            "breathing_rate": present ? .number(live?.breathingRate, places: 1) : .null,
            "movement": .number(live?.movement, places: 3),
            "signal_quality": .number(live?.quality, places: 2),
            "stage": !present ? .string(outOfBed) : night ? .string(stage?.rawValue) : .null,
            "in_bed_since": night ? .string(inBedSince.map(rfc3339)) : .null,
            "power": power.map { .string($0 ? "ON" : "OFF") } ?? .null,
            "alarm_ringing": .bool(alarmRinging),
            "time": .string(live.map { rfc3339(Date(timeIntervalSince1970: $0.time)) }),
        ]
    }

    /// The stage of an empty side.
    package static let outOfBed = "out_of_bed"

    /// `<base>/<serial>/<side>/last_night`. `efficiency` is a percentage of time in bed.
    package static func lastNight(wakeDate: String, start: Date, end: Date, timeInBedMinutes: Double, totalSleepMinutes: Double,
                                  efficiency: Double, score: Int, awake: Double, core: Double, deep: Double, rem: Double,
                                  meanHeartRate: Double?, meanBreathingRate: Double?) -> JSONValue {
        [
            "wake_date": .string(wakeDate),
            "start": .string(rfc3339(start)),
            "end": .string(rfc3339(end)),
            "time_in_bed_minutes": .number(timeInBedMinutes, places: 0),
            "total_sleep_minutes": .number(totalSleepMinutes, places: 0),
            "efficiency": .number(efficiency, places: 1),
            "score": .number(Double(score)),
            "stage_minutes": ["awake": .number(awake, places: 1), "core": .number(core, places: 1),
                              "deep": .number(deep, places: 1), "rem": .number(rem, places: 1)],
            "mean_heart_rate": .number(meanHeartRate, places: 1),
            "mean_breathing_rate": .number(meanBreathingRate, places: 1),
        ]
    }

    package static func lastNight(_ night: NightSummary) -> JSONValue {
        let m = night.metrics
        return lastNight(wakeDate: night.wakeDate, start: night.start, end: night.end, timeInBedMinutes: m.timeInBedMinutes,
                         totalSleepMinutes: m.totalSleepMinutes, efficiency: m.sleepEfficiency * 100, score: m.score,
                         awake: m.stageMinutes.awake, core: m.stageMinutes.core, deep: m.stageMinutes.deep, rem: m.stageMinutes.rem,
                         meanHeartRate: m.meanHeartRate, meanBreathingRate: m.meanBreathingRate)
    }

    package static func lastNight(_ session: StoredSession) -> JSONValue {
        let m = session.metrics
        return lastNight(wakeDate: session.wakeDate.description, start: Date(timeIntervalSince1970: Double(session.start)),
                         end: Date(timeIntervalSince1970: Double(session.end)), timeInBedMinutes: m.timeInBedMinutes,
                         totalSleepMinutes: m.totalSleepMinutes, efficiency: m.efficiency, score: m.score,
                         awake: m.awakeMinutes, core: m.coreMinutes, deep: m.deepMinutes, rem: m.remMinutes,
                         meanHeartRate: m.meanHeartRate, meanBreathingRate: m.meanBreathingRate)
    }

    /// `<base>/<serial>/<side>/schedule`: the schedule in force and whether the pod has it.
    /// `bedtime`/`wake` are the sleeper's weekday times the schedule is built from (manual,
    /// inferred or default: `times`), not the power window (which starts a warm-up earlier);
    /// `weekend_bedtime`/`weekend_wake` the weekend nights' (`weekendTimes`). `next_alarm` is
    /// the next time the schedule's alarm rings (`nextAlarm(…)`), null with the alarm off.
    package static func schedule(_ state: PodScheduleState?, times: SleepTimes?, weekendTimes: SleepTimes? = nil,
                                 alarmEnabled: Bool, wakeWindowMinutes: Int, nextAlarm: Date? = nil) -> JSONValue {
        let common: [String: JSONValue] = [
            "bedtime": .string(times?.bedtime.description), "wake": .string(times?.wake.description),
            "weekend_bedtime": .string(weekendTimes?.bedtime.description), "weekend_wake": .string(weekendTimes?.wake.description),
            "alarm_enabled": .bool(alarmEnabled), "wake_window_minutes": .number(Double(wakeWindowMinutes)),
            "next_alarm": .string(nextAlarm.map(rfc3339)),
        ]
        guard let state else {
            return .object(common.merging(["origin": .null, "alarm": .null, "power": [], "alarms": [], "acknowledged": false,
                                           "acknowledged_at": .null, "summary": .null]) { a, _ in a })
        }
        let schedule = try? PodSchedule.fromStoredJSON(state.scheduleJSON)
        let power: [JSONValue] = (schedule?.powerWindows ?? []).map {
            ["days": .string($0.days.description), "on": .string($0.on.description), "off": .string($0.off.description),
             "level": .number(Double($0.level))]
        }
        let alarms: [JSONValue] = (schedule?.alarms ?? []).map {
            ["days": .string($0.days.description), "time": .string($0.time.description),
             "intensity": .number(Double($0.intensity)), "pattern": .string($0.pattern.rawValue),
             "duration_seconds": .number(Double($0.durationSeconds))]
        }
        return .object(common.merging([
            "origin": .string(state.origin.rawValue),
            "alarm": .string(schedule?.alarms.first?.time.description),
            "power": .array(power),
            "alarms": .array(alarms),
            "acknowledged": .bool(state.acknowledgedAt != nil),
            "acknowledged_at": .string(state.acknowledgedAt.map { rfc3339(Date(timeIntervalSince1970: Double($0))) }),
            "summary": .string(state.summary),
        ]) { a, _ in a })
    }

    /// The first time after `now` that one of `alarms` rings (each on its days, at its local
    /// time in `zone`), within the coming week; nil when there is none (the alarm off).
    package static func nextAlarm(_ alarms: [AlarmEntry], zone: TimeZone, after now: Date) -> Date? {
        let calendar = LocalCalendar(timeZone: zone)
        let today = LocalDateTime(now, in: zone).date
        var best: Date?
        for offset in 0...7 {
            let day = today.adding(days: offset)
            for alarm in alarms where alarm.days.contains(day.weekday) {
                let midnight = calendar.startOfDay(day)
                var unix = midnight + Int64(alarm.time.minuteOfDay * 60)
                // Across a DST change that day the wall clock moved: keep the local time.
                unix -= Int64(calendar.offsetSeconds(atUnix: unix) - calendar.offsetSeconds(atUnix: midnight))
                let at = Date(timeIntervalSince1970: Double(unix))
                if at > now, best.map({ at < $0 }) ?? true { best = at }
            }
            if best != nil { return best }
        }
        return best
    }

    /// `<base>/<serial>/link`: whether the link is up, the pod's identity and the counters.
    package static func link(_ pod: HubState.PodState) -> JSONValue {
        [
            "connected": .bool(pod.connected),
            "since": .string(rfc3339(pod.since)),
            "endpoint": .string(pod.endpoint),
            "reason": .string(pod.lastDisconnectReason),
            "firmware": .string(pod.pod.firmware),
            "boot_count": .number(Double(pod.pod.bootCount)),
            "clock_set": .bool(pod.clock != nil),
            "counters": counters(pod.counters),
        ]
    }

    /// `<base>/<serial>/link` for a pod the store knows and this hub has not had connected
    /// since it started: what the store knows. When its link went down is not known (`since`
    /// null: the hub that saw it may have been killed), only when it was last seen (`reason`);
    /// the counters are this hub's, all zero.
    package static func link(notConnected pod: PodRecord) -> JSONValue {
        let seen = rfc3339(Date(timeIntervalSince1970: Double(pod.lastSeen)))
        return [
            "connected": false,
            "since": .null,
            "endpoint": .null,
            "reason": .string("not connected since the hub started (last seen \(seen))"),
            "firmware": .string(pod.firmware),
            "boot_count": .null,
            "clock_set": false,
            "counters": counters(LinkStats()),
        ]
    }

    private static func counters(_ c: LinkStats) -> JSONValue {
        func n(_ v: UInt64) -> JSONValue { .number(Double(v)) }
        return [
            "frames": n(c.frames), "bytes": n(c.bytes), "dropped_frames": n(c.droppedFrames),
            "sequence_gaps": n(c.sequenceGaps), "crc_errors": n(c.crcErrors), "malformed": n(c.malformed),
            "reconnects": n(c.reconnects), "retransmits": n(c.retransmits), "timeouts": n(c.timeouts),
            "nacks": n(c.nacks), "pod_reboots": n(c.podReboots),
        ]
    }

    /// `<base>/<serial>/alarm/event`.
    package static func alarm(_ notice: AlarmNotice) -> JSONValue {
        ["event": .string(notice.kind.rawValue), "side": .string(notice.side?.rawValue),
         "time": .string(rfc3339(notice.at)), "argument": .number(Double(notice.argument)), "text": .string(notice.text)]
    }

    /// `<base>/<serial>/<side>/alarm/event`: Home Assistant's alarm event entity.
    package static func alarmEvent(_ notice: AlarmNotice, side: BedSide) -> JSONValue {
        ["event_type": .string(notice.kind.rawValue), "side": .string(side.rawValue), "time": .string(rfc3339(notice.at)),
         "argument": .number(Double(notice.argument)), "text": .string(notice.text)]
    }

    /// `<base>/<serial>/<side>/wake/event`: the smart wake's step as an event (the `wake`
    /// payload with `event_type`).
    package static func wakeEvent(_ notice: WakeNotice) -> JSONValue {
        guard case .object(var fields) = wake(notice) else { return .null }
        fields["event_type"] = .string(notice.kind.rawValue)
        return .object(fields)
    }

    /// `<base>/<serial>/<side>/command/event`: what became of a command for the side
    /// (`event_type` ack, nack, ok, error or refused; `detail` the pod's reason, what changed,
    /// or why it was refused).
    package static func commandEvent(command: String?, result: String, detail: String?) -> JSONValue {
        ["event_type": .string(result), "command": .string(command), "detail": .string(detail)]
    }

    /// `<base>/<serial>/<side>/wake`: a smart wake as it goes (`event` is what just happened).
    package static func wake(_ notice: WakeNotice) -> JSONValue {
        let r = notice.record
        return ["event": .string(notice.kind.rawValue), "time": .string(rfc3339(notice.at)),
                "wake_date": .string(r.wakeDate.description),
                "window_start": .string(rfc3339(Date(timeIntervalSince1970: Double(r.windowStart)))),
                "window_end": .string(rfc3339(Date(timeIntervalSince1970: Double(r.windowEnd)))),
                "window_minutes": .number(Double(r.windowMinutes)),
                "reason": .string(r.reason), "stage": .string(r.stage?.rawValue),
                "movement": .number(r.movement, places: 2), "heart_rate_rise": .number(r.heartRateRise, places: 1),
                "minutes_before_end": .number(r.minutesBeforeEnd, places: 1), "triggered": .bool(r.triggered),
                "fired_at": .string(r.firedAt.map { rfc3339(Date(timeIntervalSince1970: Double($0))) }),
                "repeats": .number(Double(r.repeats)), "snoozes": .number(Double(r.snoozes)),
                "out_of_bed_at": .string(r.outOfBedAt.map { rfc3339(Date(timeIntervalSince1970: Double($0))) }),
                "returns_to_bed": .number(Double(r.returnsToBed)), "text": .string(notice.text)]
    }

    /// `<base>/<serial>/command/result`: what happened to a valid command.
    package static func commandResult(_ command: MQTTCommand, serial: String, result: String, detail: String?) -> JSONValue {
        ["command": .string(command.name), "side": .string(command.side.rawValue), "serial": .string(serial),
         "result": .string(result), "detail": .string(detail)]
    }

    /// `<base>/error`: a command refused before it reached any pod.
    package static func commandError(topic: String, payload: String, reason: String) -> JSONValue {
        ["topic": .string(topic), "payload": .string(payload), "error": .string(reason)]
    }

    static func rfc3339(_ date: Date) -> String {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).ISO8601Format()
    }
}
