import Foundation
import SleepDomain
import PodDevice
import PodProtocol
import SleepSchedule
import Synchronization

/// The control side of the running hub, for the API and MQTT: commands to a connected pod
/// by serial (answered with the pod's ack or nack), and the manual schedule through the
/// schedule service. Every argument is checked here, before anything reaches the pod.
package final class HubControl: Sendable {
    private let links = Mutex<[String: PodConnection]>([:])
    private let schedule: ScheduleDriver?
    /// Where an acknowledged power command is told (MQTT's switch state follows it).
    private let bus: HubBus?

    package init(schedule: ScheduleDriver?, bus: HubBus? = nil) {
        self.schedule = schedule
        self.bus = bus
    }

    /// A command the pod carries out at once.
    package enum PodCommand: Sendable, Hashable {
        /// Snooze the ringing alarm of `side` for `seconds` (1…3600).
        case snooze(side: BedSide, seconds: Int)
        /// Stop the alarm of `side`: CLEAR_ALARM, which clears it on the pod too, so the schedule
        /// service arms it again (after today's firing when that is still ahead: a stop before
        /// the alarm skips today's).
        case stopAlarm(side: BedSide)
        /// Power stage of `side` on at `level` % (1…100), or off.
        case power(side: BedSide, on: Bool, level: Int)
    }

    /// The pod's answer: accepted, or refused with its status.
    package enum PodAnswer: Sendable, Hashable {
        case ack
        case nack(status: String, code: Int)
    }

    package enum ControlError: Error, Sendable, Hashable, CustomStringConvertible {
        /// No pod with this serial is connected now.
        case unknownPod(String)
        case invalidArgument(String)
        /// The link failed (timeout, disconnect) before the pod answered.
        case link(String)
        /// The schedule service is off (`schedule.enabled` false) or refused the schedule.
        case schedule(String)

        package var description: String {
            switch self {
            case .unknownPod(let serial): "no pod \(serial) is connected"
            case .invalidArgument(let why): why
            case .link(let why): why
            case .schedule(let why): why
            }
        }
    }

    /// Serials of the pods that can be sent commands now.
    package var connectedSerials: [String] { links.withLock { $0.keys.sorted() } }

    func register(_ connection: PodConnection, serial: String) { links.withLock { $0[serial] = connection } }
    func unregister(serial: String) { links.withLock { _ = $0.removeValue(forKey: serial) } }
    /// The link to a connected pod (smart wake's TRIGGER_ALARM).
    func connection(serial: String) -> PodConnection? { links.withLock { $0[serial] } }

    /// Sends `command` to the pod `serial` and returns its answer.
    package func send(_ command: PodCommand, toPod serial: String) async throws(ControlError) -> PodAnswer {
        let message = try Self.message(for: command)
        guard let connection = links.withLock({ $0[serial] }) else { throw .unknownPod(serial) }
        do {
            let response = try await connection.send(message)
            guard response.status == .ok else { return .nack(status: response.status.description, code: Int(response.status.rawValue)) }
            switch command {
            case .stopAlarm(let side): await schedule?.alarmCleared(podSerial: serial, side: side)
            case .power(let side, let on, let level): bus?.publish(.powerSet(serial: serial, side: side, on: on, level: level))
            case .snooze: break
            }
            return .ack
        } catch {
            switch error {
            case .nack(_, let status): return .nack(status: status.description, code: Int(status.rawValue))
            case .notConnected: throw .unknownPod(serial)
            default: throw .link(error.description)
            }
        }
    }

    /// The wire message for a command, or why the command is not valid. Pure.
    static func message(for command: PodCommand) throws(ControlError) -> Message {
        switch command {
        case .snooze(let side, let seconds):
            guard (1...3600).contains(seconds) else { throw .invalidArgument("snooze seconds must be 1…3600, got \(seconds)") }
            return .snooze(side: side, seconds: UInt16(seconds))
        case .stopAlarm(let side):
            return .clearAlarm(side: side)
        case .power(let side, let on, let level):
            guard !on || (1...100).contains(level) else { throw .invalidArgument("power level must be 1…100 %, got \(level)") }
            return .setPower(PowerCommand(side: side, on: on, level: on ? UInt8(level) : 0))
        }
    }

    /// Sets the manual schedule of `sides` (validated like `podbridge schedule set`), then lets
    /// the schedule service push it to the connected pod. Returns what the CLI would print.
    package func setManualSchedule(podSerial: String, sides: [BedSide], bedtime: String, wake: String,
                                  weekendBedtime: String? = nil, weekendWake: String? = nil) async throws(ControlError) -> [String] {
        guard let schedule else { throw .schedule("the schedule service is off (schedule.enabled is false)") }
        let console = await schedule.console()
        let manual: ManualSchedule
        do {
            manual = try await console.storeManual(podSerial: podSerial, sides: sides, bedtime: bedtime, wake: wake,
                                                   weekendBedtime: weekendBedtime, weekendWake: weekendWake)
        } catch {
            throw Self.controlError(error)
        }
        let decisions = await schedule.replan(podSerial: podSerial)
        return ScheduleConsole.manualSetLines(manual, sides: sides, decisions: decisions) + [pushNote(podSerial)]
    }

    /// The schedule in force per side of `podSerial` and why, as the schedule service decided
    /// it (the API and MQTT show this; they never infer). Empty when the service is off.
    package func scheduleDecisions(podSerial: String) async -> [BedSide: SideScheduleDecision] {
        await schedule?.decisions(podSerial: podSerial) ?? [:]
    }

    /// Asks the schedule service to work the schedule of `podSerial` out again now (and push
    /// it if it changed); returns the decisions in force afterwards.
    package func replanSchedule(podSerial: String) async throws(ControlError) -> [BedSide: SideScheduleDecision] {
        guard let schedule else { throw .schedule("the schedule service is off (schedule.enabled is false)") }
        return await schedule.replan(podSerial: podSerial)
    }

    /// The schedule service works the schedule out again at once and pushes it if it changed:
    /// to the pod now if it is connected, else when it next connects. Said for this pod.
    private func pushNote(_ serial: String) -> String {
        bus?.state.pods[serial]?.connected == true
            ? "Sending it to the pod now."
            : "The pod is not connected: it gets this when it next connects."
    }

    private static func controlError(_ error: ScheduleServiceError) -> ControlError {
        switch error {
        case .badManualSchedule, .schedule: .invalidArgument(error.description)
        case .noPod(let why): .unknownPod(why)
        case .store: .schedule(error.description)
        }
    }

    /// Sets the smart-wake window and/or "until out of bed" of `sides` (stored per pod side,
    /// overriding the configuration); smart wake uses it from the next window on.
    package func setWake(podSerial: String, sides: [BedSide], windowMinutes: Int?,
                        untilOutOfBed: Bool?) async throws(ControlError) -> [String] {
        guard let schedule else { throw .schedule("the schedule service is off (schedule.enabled is false)") }
        let console = await schedule.console()
        let lines: [String]
        do {
            lines = try await console.setWake(podSerial: podSerial, sides: sides, windowMinutes: windowMinutes,
                                              untilOutOfBed: untilOutOfBed)
        } catch {
            throw Self.controlError(error)
        }
        // Smart wake plans the sides' next windows again.
        bus?.publish(.wakeSettings(serial: podSerial, sides: sides))
        return lines
    }

    /// Switches the alarm of `sides` on or off; the schedule service then sends the pod the
    /// side's alarm again or clears it (CLEAR_ALARM).
    package func setAlarmEnabled(podSerial: String, sides: [BedSide], enabled: Bool) async throws(ControlError) -> [String] {
        guard let schedule else { throw .schedule("the schedule service is off (schedule.enabled is false)") }
        let console = await schedule.console()
        let lines: [String]
        do { lines = try await console.setAlarm(podSerial: podSerial, sides: sides, enabled: enabled) } catch {
            throw Self.controlError(error)
        }
        _ = await schedule.replan(podSerial: podSerial)
        return lines
    }

    /// Clears the manual schedule of `sides`; inference (or the default) applies again and is pushed.
    package func clearManualSchedule(podSerial: String, sides: [BedSide]) async throws(ControlError) -> [String] {
        guard let schedule else { throw .schedule("the schedule service is off (schedule.enabled is false)") }
        let console = await schedule.console()
        let removed: Set<BedSide>
        do { removed = try await console.removeManual(podSerial: podSerial, sides: sides) } catch { throw Self.controlError(error) }
        let decisions = await schedule.replan(podSerial: podSerial)
        return ScheduleConsole.manualClearedLines(removed: removed, sides: sides, decisions: decisions) + [pushNote(podSerial)]
    }

    /// Changes a side's presence-driven power (docs/schedule.md §5): stored per pod side over
    /// the configuration, told to the running service (and every surface) on the bus.
    package func setPresencePower(podSerial: String, side: BedSide,
                                  change: PresencePowerChangeRequest) async throws(ControlError) -> PresencePowerInForce {
        guard let schedule else { throw .schedule("the schedule service is off (schedule.enabled is false)") }
        guard !change.isEmpty else { throw .invalidArgument("nothing to change: give at least one setting") }
        let inForce: PresencePowerInForce
        do {
            inForce = try await schedule.console().setPresencePower(podSerial: podSerial, side: side, change: change)
        } catch {
            throw Self.controlError(error)
        }
        bus?.publish(.presencePowerSettings(serial: podSerial, side: side, inForce))
        return inForce
    }
}
