import Foundation
import PodProtocol
import SleepSchedule
import SleepStore
import SleepDomain

/// What `podbridge schedule show|infer|set|clear` does, as library code returning the lines
/// to print; the command only parses arguments. Reads and writes the same store the daemon
/// uses. A manual schedule set here reaches the pod when the daemon next works the schedule
/// out: on the pod's next connect or reboot, or when the next session is stored.
package struct ScheduleConsole: Sendable {
    package let store: NightStore
    package let settings: HubConfiguration.ScheduleSettings
    /// The pod's zone given on the command line, if any.
    package let zoneOverride: TimeZone?
    /// The configuration's pod zone (`schedule.podTimeZone`, else `timeZone`, else the
    /// system's): what the hub itself would use.
    package let configuredZone: TimeZone
    package let now: Date

    package init(store: NightStore, settings: HubConfiguration.ScheduleSettings = .init(), zone: TimeZone? = nil,
                configuredZone: TimeZone = .current, now: Date = Date()) {
        self.store = store
        self.settings = settings
        self.zoneOverride = zone
        self.configuredZone = configuredZone
        self.now = now
    }

    /// What the command line adds after a change: it writes the store, and a running hub,
    /// a process of its own, picks the change up at its next look. (A change through the
    /// running hub's API or MQTT is pushed at once: `HubControl`.)
    package static let laterPush = "The running hub sends it on the pod's next connect or when the next session is stored."

    /// The pod to talk about: the one given, else the only one the store knows. A serial the
    /// store does not know is refused once it knows any pod (a typo would otherwise set a
    /// schedule for a pod that does not exist, which then counts as one more pod and makes
    /// `--pod` required everywhere); `settingUp` lets a schedule be set for the pod before the
    /// hub has ever seen it, in a database that knows no pod yet.
    package func resolvePod(_ serial: String?, settingUp: Bool = false) async throws(ScheduleServiceError) -> String {
        let pods: [PodRecord]
        do { pods = try await store.pods() } catch { throw .store("\(error)") }
        let known = pods.map(\.serial).joined(separator: ", ")
        if let serial {
            if pods.contains(where: { $0.serial == serial }) { return serial }
            guard PodSerial.isValid(serial) else {
                throw .noPod("'\(serial)' is not a pod serial (1–\(PodSerial.maxLength) printable ASCII characters, no spaces)")
            }
            if pods.isEmpty {
                if settingUp { return serial }
                throw .noPod("pod \(serial) is not known in this database yet (no pod is)")
            }
            throw .noPod("pod \(serial) is not known in this database (known: \(known)); pass one of those to --pod")
        }
        switch pods.count {
        case 0: throw .noPod("no pod is known in this database yet; pass --pod SERIAL")
        case 1: return pods[0].serial
        default: throw .noPod("several pods are known (\(known)); pass --pod SERIAL")
        }
    }

    /// The zone `HH:mm` values are in: the command line's, else the one the schedule in
    /// force was made for, else the configuration's.
    package func zone(podSerial: String, side: BedSide) async -> TimeZone {
        if let zoneOverride { return zoneOverride }
        if let stored = try? await store.podSchedule(podSerial: podSerial, side: side),
           let tz = TimeZone(identifier: stored.timeZoneID) { return tz }
        return settings.podTimeZone.flatMap(TimeZone.init(identifier:)) ?? configuredZone
    }

    /// The schedule of each side worked out here, with no daemon: the same `ScheduleResolver.decide`
    /// the running hub's schedule service calls, nothing stored. (In the running hub the
    /// control side asks that service instead: `HubControl`.)
    package func offlineDecisions(podSerial: String, sides: [BedSide]) async throws(ScheduleServiceError) -> [BedSide: SideScheduleDecision] {
        var decisions: [BedSide: SideScheduleDecision] = [:]
        for side in sides {
            let resolver = ScheduleResolver(store: store, settings: settings, podZone: await zone(podSerial: podSerial, side: side))
            decisions[side] = try await resolver.decide(podSerial: podSerial, side: side, now: now)
        }
        return decisions
    }

    // MARK: show

    /// What is in force per side, whether the pod acknowledged it, the last push of each
    /// command and the last alarm events. Every time is in the pod's zone (the sleeper's, whose
    /// `HH:mm` the schedule is in), not the hub's system zone: a hub left on UTC would
    /// otherwise print the alarm's pushes and rings an hour or more off the schedule above.
    package func show(podSerial: String, sides: [BedSide]) async throws(ScheduleServiceError) -> [String] {
        let podZone = await zone(podSerial: podSerial, side: sides.first ?? .left)
        var lines = ["pod \(podSerial) (times in \(podZone.identifier))"]
        do {
            for side in sides {
                lines.append("")
                if let state = try await store.podSchedule(podSerial: podSerial, side: side) {
                    // Moments in the header's zone; the schedule's own HH:mm are the pod's, in the
                    // zone it was made for, which `--tz` does not move: said when they differ.
                    let stateZone = TimeZone(identifier: state.timeZoneID) ?? podZone
                    lines.append("\(side): \(state.origin) schedule in force since \(Self.timestamp(state.setAt, in: podZone))"
                        + (state.acknowledgedAt.map { ", acknowledged by the pod \(Self.timestamp($0, in: podZone))" }
                            ?? ", not yet acknowledged by the pod")
                        + (stateZone.identifier == podZone.identifier ? "" : "; its times are in \(stateZone.identifier)"))
                    if let schedule = try? PodSchedule.fromStoredJSON(state.scheduleJSON) {
                        lines += schedule.lines.dropFirst().map { "  " + $0.trimmingCharacters(in: .whitespaces) }
                    } else {
                        lines.append("  \(state.summary)")
                    }
                    lines.append("  why: \(state.reason)")
                } else {
                    lines.append("\(side): no schedule worked out yet (the daemon does it when the pod connects)")
                }
                lines.append(await wakeLine(podSerial: podSerial, side: side))
                if let manual = try await store.manualSchedule(podSerial: podSerial, side: side) {
                    lines.append("  manual schedule set \(Self.timestamp(manual.setAt, in: podZone)): weekday \(manual.weekdayBedtime)–\(manual.weekdayWake), "
                        + "weekend \(manual.weekendBedtime)–\(manual.weekendWake) (wins until cleared)")
                }
            }
            let pushes = try await store.schedulePushes(podSerial: podSerial, limit: 200)
            var lastPerCommand: [String: SchedulePushRecord] = [:]
            for p in pushes { lastPerCommand[p.command] = p }
            let wanted = ["set-clock"] + sides.flatMap { ["set-power-schedule(\($0))", "set-power(\($0))", "set-alarm(\($0))"] }
            lines.append("")
            lines.append("last push per command:")
            var any = false
            for key in wanted {
                guard let p = lastPerCommand[key] else { continue }
                any = true
                lines.append("  \(Self.timestamp(p.sentAt, in: podZone)) \(key) attempt \(p.attempt): \(Self.answer(p)) — \(p.description)")
            }
            if !any { lines.append("  none yet") }
            let events = try await store.podEvents(podSerial: podSerial, limit: 50)
                .filter { $0.kind.hasPrefix("alarm_") && ($0.side.map { sides.contains($0) } ?? true) }
                .suffix(5)
            if !events.isEmpty {
                lines.append("last alarm events:")
                for e in events { lines.append("  \(Self.timestamp(e.at, in: podZone)) \(e.description)") }
            }
        } catch {
            throw .store("\(error)")
        }
        return lines
    }

    static func answer(_ p: SchedulePushRecord) -> String {
        switch p.outcome {
        case .ack: return "acknowledged"
        case .nack: return "refused (\(p.status ?? "nack"))"
        case .timeout: return "no answer"
        case .linkLost: return "link lost"
        }
    }

    /// `yyyy-MM-dd HH:mm` in `zone`.
    static func timestamp(_ unix: Int64, in zone: TimeZone) -> String {
        let local = LocalDateTime(Date(timeIntervalSince1970: Double(unix)), in: zone)
        return "\(local.date) \(local.timeOfDay)"
    }

    // MARK: infer

    /// What the inference gives and why, without changing anything: sessions offered and
    /// skipped, per group the nights used and dropped, circular mean, R and spread, the
    /// source, and the pod schedule it converts to.
    package func infer(podSerial: String, sides: [BedSide]) async throws(ScheduleServiceError) -> [String] {
        let podZone = await zone(podSerial: podSerial, side: sides.first ?? .left)
        var lines = ["pod \(podSerial) — inference at \(Self.timestamp(Int64(now.timeIntervalSince1970), in: podZone)) \(podZone.identifier) (nothing is changed)"]
        let decisions = try await offlineDecisions(podSerial: podSerial, sides: sides)
        for side in sides {
            guard let decision = decisions[side] else { continue }
            let inferredOnly = decision.inferredOnly
            lines.append("")
            lines.append("\(side): \(decision.sessionsOffered) stored sessions in the last \(settings.inference.lookbackDays) days "
                + "(\(decision.napsSkipped) naps or short sessions not counted as nights)")
            lines += decision.inference.explanation.map { "  " + $0 }
            lines.append("  the inference gives (\(inferredOnly.origin)): \(inferredOnly.schedule.summary)")
            if decision.origin == .manual {
                lines.append("  in force instead: the manual schedule (\(decision.schedule.summary)) until cleared")
            }
        }
        return lines
    }

    // MARK: set / clear

    /// Stores a manual schedule for each side (weekend times default to the weekday ones) and
    /// says what the pod will hold, as worked out offline.
    package func setManual(podSerial: String, sides: [BedSide], bedtime: String, wake: String,
                          weekendBedtime: String?, weekendWake: String?) async throws(ScheduleServiceError) -> [String] {
        let manual = try await storeManual(podSerial: podSerial, sides: sides, bedtime: bedtime, wake: wake,
                                           weekendBedtime: weekendBedtime, weekendWake: weekendWake)
        return Self.manualSetLines(manual, sides: sides, decisions: try await offlineDecisions(podSerial: podSerial, sides: sides))
    }

    /// Checks a manual schedule (HH:mm, and what the pod could hold) and stores it for each
    /// side; nothing is worked out. Returns the times stored.
    package func storeManual(podSerial: String, sides: [BedSide], bedtime: String, wake: String,
                            weekendBedtime: String?, weekendWake: String?) async throws(ScheduleServiceError) -> ManualSchedule {
        func parse(_ text: String, _ name: String) throws(ScheduleServiceError) -> TimeOfDay {
            guard let t = TimeOfDay(text) else { throw .badManualSchedule("\(name) must be HH:mm, got '\(text)'") }
            return t
        }
        let weekday = SleepTimes(bedtime: try parse(bedtime, "bedtime"), wake: try parse(wake, "wake"))
        let weekend = SleepTimes(bedtime: try parse(weekendBedtime ?? bedtime, "weekend bedtime"),
                                 wake: try parse(weekendWake ?? wake, "weekend wake"))
        let manual = ManualSchedule(weekday: weekday, weekend: weekend)
        // Refuse what the pod could not hold before storing it.
        for side in sides {
            do {
                _ = try ScheduleResolver.podSchedule(manual, side: side,
                                                     timeZoneIdentifier: await zone(podSerial: podSerial, side: side).identifier,
                                                     settings: settings)
            } catch {
                throw .schedule(error)
            }
        }
        for side in sides {
            do {
                try await store.setManualSchedule(ManualScheduleRecord(
                    podSerial: podSerial, side: side, weekdayBedtime: weekday.bedtime.description,
                    weekdayWake: weekday.wake.description, weekendBedtime: weekend.bedtime.description,
                    weekendWake: weekend.wake.description, setAt: Int64(now.timeIntervalSince1970)))
            } catch {
                throw .store("\(error)")
            }
        }
        return manual
    }

    /// What `setManual` prints, from the decisions made after the manual schedule was stored.
    package static func manualSetLines(_ manual: ManualSchedule, sides: [BedSide],
                                       decisions: [BedSide: SideScheduleDecision]) -> [String] {
        var lines: [String] = []
        for side in sides {
            lines.append("\(side): manual schedule set — weekday \(manual.weekday), weekend \(manual.weekend)")
            if let decision = decisions[side] { lines.append("  the pod will hold: \(decision.schedule.summary)") }
        }
        return lines
    }

    /// Removes the manual schedule of each side: back to the inferred (or default) one.
    package func clearManual(podSerial: String, sides: [BedSide]) async throws(ScheduleServiceError) -> [String] {
        let removed = try await removeManual(podSerial: podSerial, sides: sides)
        return Self.manualClearedLines(removed: removed, sides: sides,
                                       decisions: try await offlineDecisions(podSerial: podSerial, sides: sides))
    }

    /// Removes the manual schedule of each side from the store; returns the sides that had one.
    package func removeManual(podSerial: String, sides: [BedSide]) async throws(ScheduleServiceError) -> Set<BedSide> {
        var removed: Set<BedSide> = []
        for side in sides {
            do {
                if try await store.clearManualSchedule(podSerial: podSerial, side: side) { removed.insert(side) }
            } catch {
                throw .store("\(error)")
            }
        }
        return removed
    }

    /// What `clearManual` prints, from the decisions made after the manual schedule was removed.
    package static func manualClearedLines(removed: Set<BedSide>, sides: [BedSide],
                                           decisions: [BedSide: SideScheduleDecision]) -> [String] {
        var lines: [String] = []
        for side in sides {
            let was = removed.contains(side)
            guard let decision = decisions[side] else {
                lines.append(was ? "\(side): manual schedule cleared" : "\(side): no manual schedule was set")
                continue
            }
            lines.append(was ? "\(side): manual schedule cleared; back to \(decision.origin): \(decision.schedule.summary)"
                             : "\(side): no manual schedule was set; \(decision.origin) schedule: \(decision.schedule.summary)")
        }
        return lines
    }
}
