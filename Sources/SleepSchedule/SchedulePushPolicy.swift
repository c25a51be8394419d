import Foundation

/// Decides when the hub (re)sends set-clock, set-power-schedule and set-alarm to a pod.
///
/// A pure state machine: the daemon feeds `PushEvent`s with the current time and carries out
/// the returned `PushAction`s. Rules (docs/schedule.md):
/// - a command is sent only when its desired value differs from what the pod last
///   acknowledged for that key;
/// - everything is forgotten (so everything is re-sent) on every connect, on a pod reboot and
///   when the pod's zone changes; the clock alone on a hub clock step or a pod clock found off;
/// - `preTransitionLeadSeconds` before each DST transition of the pod's zone the power
///   schedules and alarms are pushed again; at the transition the clock's offset changes, so
///   set-clock differs from what was acknowledged and is re-sent;
/// - one command in flight at a time; a nack or timeout is retried after an exponential delay
///   up to `maxRetries` times, then reported as `.failed`.
public struct SchedulePushPolicy: Sendable {
    public let configuration: PushPolicyConfiguration
    public private(set) var isConnected = false
    public private(set) var desired: DesiredPodState?
    /// What the pod acknowledged, per key.
    public private(set) var acknowledged: [ScheduleCommandKey: ScheduleCommand] = [:]
    /// Commands given up on (retries exhausted), per key.
    public private(set) var failed: [ScheduleCommandKey: ScheduleCommand] = [:]
    /// The command awaiting an answer.
    public private(set) var inFlight: ScheduleCommand?

    var inFlightAttempt = 0
    var inFlightSentAt = Date.distantPast
    /// Failed attempts so far for the value being pushed, per key.
    var attempts: [ScheduleCommandKey: (command: ScheduleCommand, count: Int)] = [:]
    var retryAt: [ScheduleCommandKey: Date] = [:]
    /// The DST transition whose pre-push has been done.
    var prePushedTransition: Date?
    var inSyncReported = false

    public init(configuration: PushPolicyConfiguration = PushPolicyConfiguration()) {
        self.configuration = configuration
    }

    public mutating func handle(_ event: PushEvent, now: Date) -> [PushAction] {
        var actions: [PushAction] = []
        switch event {
        case .connected:
            isConnected = true
            forgetAll()
        case .disconnected:
            isConnected = false
            inFlight = nil
        case .podRebooted:
            forgetAll()
        case .podClockReported(let podClock):
            if abs(podClock.timeIntervalSince(now)) > configuration.clockToleranceSeconds { forget(.clock) }
        case .hubClockChanged:
            forget(.clock)
        case .desiredChanged(let state):
            if let old = desired, old.timeZone.identifier != state.timeZone.identifier { forgetAll() }
            if desired != state { inSyncReported = false }
            desired = state
        case .acknowledged(let key):
            if let cmd = inFlight, cmd.key == key {
                acknowledged[key] = cmd
                failed[key] = nil
                attempts[key] = nil
                retryAt[key] = nil
                inFlight = nil
            }
        case .rejected(let key, let status):
            if let cmd = inFlight, cmd.key == key { answerFailed(cmd, .rejected(status: status), now, &actions) }
        case .timedOut(let key):
            if let cmd = inFlight, cmd.key == key { answerFailed(cmd, .timedOut, now, &actions) }
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
        inSyncReported = false
    }

    mutating func forget(_ key: ScheduleCommandKey) {
        acknowledged[key] = nil
        failed[key] = nil
        attempts[key] = nil
        retryAt[key] = nil
        inSyncReported = false
    }

    mutating func answerFailed(_ cmd: ScheduleCommand, _ reason: PushFailureReason, _ now: Date, _ actions: inout [PushAction]) {
        inFlight = nil
        let key = cmd.key
        let count = (attempts[key]?.command == cmd ? attempts[key]!.count : 0) + 1
        attempts[key] = (cmd, count)
        if count > configuration.maxRetries {
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
        let zone = desired.timeZone
        let transition = zone.nextDaylightSavingTimeTransition(after: now)
        var wake: [Date] = []

        // DST pre-push: once per transition, inside the lead window.
        if let t = transition {
            let windowStart = t.addingTimeInterval(-configuration.preTransitionLeadSeconds)
            if now >= windowStart, prePushedTransition != t {
                prePushedTransition = t
                for key in acknowledged.keys where key != .clock { forget(key) }
                for key in failed.keys where key != .clock { forget(key) }
            }
            if prePushedTransition != t, windowStart > now { wake.append(windowStart) }
            // The clock's offset changes at t: wake then to re-sync it.
            wake.append(t)
        }

        if let cmd = inFlight {
            let deadline = inFlightSentAt.addingTimeInterval(configuration.answerTimeoutSeconds)
            if now >= deadline {
                answerFailed(cmd, .timedOut, now, &actions)
            } else {
                wake.append(deadline)
            }
        }

        if inFlight == nil {
            var pending = false
            for cmd in desired.commands(at: now) {
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
                inFlightAttempt = (attempts[key]?.count ?? 0) + 1
                inFlightSentAt = now
                actions.append(.send(cmd, attempt: inFlightAttempt))
                wake.append(now.addingTimeInterval(configuration.answerTimeoutSeconds))
                break
            }
            let anyFailed = desired.commands(at: now).contains { failed[$0.key] == $0 }
            if !pending, !anyFailed, !inSyncReported {
                inSyncReported = true
                actions.append(.inSync)
            }
        }
        if let next = wake.filter({ $0 > now }).min() { actions.append(.wakeUp(at: next)) }
    }
}
