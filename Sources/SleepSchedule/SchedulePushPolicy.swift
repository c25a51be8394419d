import Foundation

/// Decides when the hub (re)sends set-clock, set-power-schedule and set-alarm to a pod.
///
/// A pure state machine: the daemon feeds `PushEvent`s with the current time and carries out
/// the returned `PushAction`s. Rules (docs/schedule.md):
/// - a command is sent only when its desired value differs from what the pod last
///   acknowledged for that key;
/// - everything is forgotten (so everything is re-sent) on every connect, on a pod reboot and
///   when the pod's zone changes; the clock alone on a hub clock step, a pod clock found off or
///   invalid, and every `clockResyncIntervalSeconds`;
/// - `preTransitionLeadSeconds` before each DST transition of the pod's zone the power
///   schedules and alarms are pushed again, converted so the pod never meets a time the
///   transition skips or repeats (`DaylightSavingConversion`); at the transition the UTC offset
///   changes, so set-clock differs from what was acknowledged and is re-sent (then a fall's
///   repeated-hour alarm); when the skipped or repeated hour is over the times go back;
/// - one command in flight at a time; a timeout or a retryable nack (BUSY, NOT_READY) is
///   retried after an exponential delay up to `maxRetries` times, then reported as `.failed`;
///   any other nack is reported at once. A failed value is not retried until something changes.
package struct SchedulePushPolicy: Sendable {
    package let configuration: PushPolicyConfiguration
    package private(set) var isConnected = false
    package private(set) var desired: DesiredPodState?
    /// What the pod acknowledged, per key.
    package private(set) var acknowledged: [ScheduleCommandKey: ScheduleCommand] = [:]
    /// Commands given up on, per key.
    package private(set) var failed: [ScheduleCommandKey: ScheduleCommand] = [:]
    /// The command awaiting an answer.
    package private(set) var inFlight: ScheduleCommand?

    var inFlightSentAt = Date.distantPast
    var clockAcknowledgedAt: Date?
    /// Failed attempts so far for the value being pushed, per key.
    var attempts: [ScheduleCommandKey: (command: ScheduleCommand, count: Int)] = [:]
    var retryAt: [ScheduleCommandKey: Date] = [:]
    /// The DST transition whose pre-push has been done.
    var prePushedTransition: Date?
    var inSyncReported = false

    package init(configuration: PushPolicyConfiguration = PushPolicyConfiguration()) {
        self.configuration = configuration
    }

    package mutating func handle(_ event: PushEvent, now: Date) -> [PushAction] {
        var actions: [PushAction] = []
        switch event {
        case .connected:
            isConnected = true
            forgetAll()
        case .connectedWithClock(let sync):
            isConnected = true
            forgetAll()
            acknowledged[.clock] = .setClock(sync)
            clockAcknowledgedAt = now
        case .disconnected:
            isConnected = false
            inFlight = nil
        case .podRebooted:
            forgetAll()
        case .podClockReported(let podClock):
            if abs(podClock.timeIntervalSince(now)) > configuration.clockToleranceSeconds { forget(.clock) }
        case .podClockInvalid, .hubClockChanged:
            forget(.clock)
        case .desiredChanged(let state):
            if let old = desired, old.timeZone.identifier != state.timeZone.identifier { forgetAll() }
            if desired != state { inSyncReported = false }
            desired = state
        case .acknowledged(let key):
            if let cmd = inFlight, cmd.key == key {
                acknowledged[key] = cmd
                if key == .clock { clockAcknowledgedAt = now }
                failed[key] = nil
                attempts[key] = nil
                retryAt[key] = nil
                inFlight = nil
            }
        case .rejected(let key, let status):
            if let cmd = inFlight, cmd.key == key {
                if configuration.clockNotValidStatuses.contains(status), key != .clock { forget(.clock) }
                answerFailed(cmd, .rejected(status: status), retryable: configuration.retryableStatuses.contains(status),
                             now, &actions)
            }
        case .timedOut(let key):
            if let cmd = inFlight, cmd.key == key { answerFailed(cmd, .timedOut, retryable: true, now, &actions) }
        case .alarmCleared(let side, let rearmAt):
            forget(.alarm(side))
            if let rearmAt, rearmAt > now { retryAt[.alarm(side)] = rearmAt }
        case .tick:
            break
        }
        pump(now, &actions)
        return actions
    }

    mutating func forgetAll() {
        acknowledged = [:]
        failed = [:]
        attempts = [:]
        retryAt = [:]
        inFlight = nil
        clockAcknowledgedAt = nil
        inSyncReported = false
    }

    mutating func forget(_ key: ScheduleCommandKey) {
        acknowledged[key] = nil
        failed[key] = nil
        attempts[key] = nil
        retryAt[key] = nil
        if key == .clock { clockAcknowledgedAt = nil }
        inSyncReported = false
    }

    mutating func answerFailed(_ cmd: ScheduleCommand, _ reason: PushFailureReason, retryable: Bool, _ now: Date,
                               _ actions: inout [PushAction]) {
        inFlight = nil
        let key = cmd.key
        let count = (attempts[key]?.command == cmd ? attempts[key]!.count : 0) + 1
        attempts[key] = (cmd, count)
        if !retryable || count > configuration.maxRetries {
            failed[key] = cmd
            retryAt[key] = nil
            actions.append(.failed(cmd, reason: reason, attempts: count))
        } else {
            let delay = configuration.retryDelaySeconds * pow(2, Double(count - 1))
            retryAt[key] = now.addingTimeInterval(delay)
        }
    }

    mutating func pump(_ now: Date, _ actions: inout [PushAction]) {
        guard isConnected, let desired else { return }
        var wake: [Date] = []

        // DST: pre-push once per transition inside the lead window; wake at the transition so
        // the changed offset re-sends the clock.
        if let t = desired.timeZone.nextDaylightSavingTimeTransition(after: now) {
            let windowStart = t.addingTimeInterval(-configuration.preTransitionLeadSeconds)
            if now >= windowStart, prePushedTransition != t {
                prePushedTransition = t
                // Schedules and alarms are re-sent; the clock follows at the transition, and the
                // power state the pod already has does not depend on the offset.
                for key in Set(acknowledged.keys).union(failed.keys) {
                    switch key {
                    case .powerSchedule, .alarm: forget(key)
                    case .clock, .power: break
                    }
                }
            }
            if prePushedTransition != t { wake.append(windowStart) }
            wake.append(t)
        }
        // The end of a transition's window: the converted times go back to what they are.
        if let w = TransitionWindow.around(now, in: desired.timeZone, lead: configuration.preTransitionLeadSeconds) {
            wake.append(w.transition)
            wake.append(w.end)
        }
        // Periodic clock re-sync.
        if let at = clockAcknowledgedAt {
            let due = at.addingTimeInterval(configuration.clockResyncIntervalSeconds)
            if now >= due { forget(.clock) } else { wake.append(due) }
        }
        if let sw = desired.nextAlarmSwitch(after: now, alarmHoldover: configuration.alarmHoldoverSeconds) {
            wake.append(sw)
        }

        if let cmd = inFlight {
            let deadline = inFlightSentAt.addingTimeInterval(configuration.answerTimeoutSeconds)
            if now >= deadline {
                answerFailed(cmd, .timedOut, retryable: true, now, &actions)
            } else {
                wake.append(deadline)
            }
        }

        if inFlight == nil {
            let commands = desired.commands(at: now, alarmHoldover: configuration.alarmHoldoverSeconds,
                                            transitionLead: configuration.preTransitionLeadSeconds)
            var pending = false
            for cmd in commands {
                let key = cmd.key
                if acknowledged[key] == cmd || failed[key] == cmd { continue }
                if let previous = attempts[key], previous.command != cmd {
                    attempts[key] = nil
                    retryAt[key] = nil
                }
                pending = true
                if let at = retryAt[key], at > now {
                    wake.append(at)
                    continue
                }
                retryAt[key] = nil
                inFlight = cmd
                inFlightSentAt = now
                inSyncReported = false
                actions.append(.send(cmd, attempt: (attempts[key]?.count ?? 0) + 1))
                wake.append(now.addingTimeInterval(configuration.answerTimeoutSeconds))
                break
            }
            let anyFailed = commands.contains { failed[$0.key] == $0 }
            if !pending, !anyFailed, !inSyncReported {
                inSyncReported = true
                actions.append(.inSync)
            }
        }
        if let next = wake.filter({ $0 > now }).min() { actions.append(.wakeUp(at: next)) }
    }
}
