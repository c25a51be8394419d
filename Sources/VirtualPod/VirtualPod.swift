import Foundation
import NightModel
import PodProtocol
import SystemCalls
import Synchronization
import SleepDomain

/// A sleep pod in software: the firmware side of protocol v1.1 on a pseudo-terminal, playing
/// a night from the physiology model (or a recorded capture), with its own 500 Hz clock
/// running at `speed` × real time, the schedules and alarms it is sent fired on that clock,
/// and faults injected on request.
///
/// Used by the tests, `make demo`, `podbridge simulate` and anyone without hardware.
/// `start()` opens the pty and starts the pod's one thread; `stop()` ends and joins it.
package final class VirtualPod: Sendable {
    package let configuration: VirtualPodConfiguration

    private struct Control: Sendable {
        var engine: PodEngine?
        var joined = false
        var stopping = false
    }

    private let control = Mutex(Control())
    private let exited = DispatchSemaphore(value: 0)
    /// What the model plays before any alarm changed the night (nil when replaying a capture).
    private let plannedTruth: GroundTruth?

    /// What the model plays (nil when replaying a capture): the plan, and once running, the
    /// night as the sleepers' answers to the pod's alarms changed it (`alarmReactions`).
    package var groundTruth: GroundTruth? { snapshot.truth ?? plannedTruth }

    package init(configuration: VirtualPodConfiguration) throws(VirtualPodConfiguration.ConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        if configuration.replay == nil {
            var night = configuration.night
            night.channelsPerSide = configuration.identity.channelsPerSide
            plannedTruth = NightSimulator(config: night).truth
        } else {
            plannedTruth = nil
        }
    }

    /// Opens the pseudo-terminal, sends BOOT, starts the pod's thread; returns the tty path.
    @discardableResult
    package func start() throws(SystemError) -> String {
        let engine = try PodEngine(config: configuration)
        let done = exited
        let thread = Thread {
            engine.run()
            done.signal()
        }
        thread.name = "virtual-pod \(configuration.identity.serial)"
        let started = control.withLock { c -> Bool in
            guard c.engine == nil else { return false }
            c.engine = engine
            return true
        }
        guard started else { throw SystemError(call: "start (already started)", errno: EBUSY) }
        thread.start()
        return engine.shared.withLock { $0.snapshot.ttyPath } ?? ""
    }

    /// Stops the pod and waits for its thread; closes the pty (the hub sees end of file).
    package func stop() {
        let engine = control.withLock { c -> PodEngine? in
            guard let e = c.engine, !c.joined, !c.stopping else { return nil }
            c.stopping = true
            return e
        }
        guard let engine else { return }
        engine.shared.withLock { $0.stopRequested = true }
        engine.wake()
        exited.wait()
        control.withLock { $0.joined = true }
    }

    deinit { stop() }

    private var engine: PodEngine? { control.withLock { $0.engine } }

    /// The pod's state now (see `VirtualPodSnapshot`).
    package var snapshot: VirtualPodSnapshot {
        engine?.shared.withLock { $0.snapshot } ?? VirtualPodSnapshot()
    }

    /// The tty a hub opens now; nil before start and while unplugged.
    package var ttyPath: String? { snapshot.ttyPath }

    /// Injects a fault now (the pod's thread acts on it within its next round, at once).
    package func inject(_ fault: Fault) {
        guard let engine else { return }
        engine.shared.withLock { $0.faults.append(fault) }
        engine.wake()
    }

    /// What the pod holds for a side (as GET_SCHEDULE would report it).
    package func currentSchedule(side: BedSide) -> ScheduleReport? {
        snapshot.schedules.first { $0.side == side }
    }

    package var alarmsFired: [FiredAlarm] { snapshot.alarmsFired }

    /// The pod's power log: every change of a side's power and what made it.
    package var powerLog: [PowerChange] { snapshot.powerLog }

    /// The clock the hub set; nil while the pod's clock is not valid.
    package var clock: ClockAnchor? { snapshot.clock }

    /// Unix time of a simulated moment if the night started at `nightStartUnix`: what a hub
    /// that plays along with the simulation (rather than its wall clock) sends in SET_CLOCK.
    package func simulatedUnixTime(simulatedSeconds: Double) -> Double {
        configuration.nightStartUnix + simulatedSeconds
    }

    /// Returns when the night or the replay has ended, or the pod was stopped.
    package func waitUntilFinished() async {
        guard let engine else { return }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let done = engine.shared.withLock { s -> Bool in
                if s.finished { return true }
                s.waiters.append(c)
                return false
            }
            if done { c.resume() }
        }
    }

    package enum TruthError: Error, Sendable, CustomStringConvertible {
        case replayHasNoTruth
        case write(path: String, reason: String)
        package var description: String {
            switch self {
            case .replayHasNoTruth: "a replayed capture has no ground truth"
            case .write(let path, let reason): "cannot write \(path): \(reason)"
            }
        }
    }

    /// Writes the ground truth played so far (see `TruthFiles`) into `directory`, creating it.
    /// Returns the paths written.
    @discardableResult
    package func writeTruth(to directory: String) throws(TruthError) -> [String] {
        guard let truth = groundTruth else { throw .replayHasNoTruth }
        let s = snapshot
        let files = TruthFiles.render(truth: truth, playedSeconds: Int(s.simulatedSeconds),
                                      clock: TruthClock(clocks: s.appliedClocks,
                                                        nightStartUnix: configuration.nightStartUnix))
        var written: [String] = []
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .write(path: directory, reason: FileErrorReason.describe(error))
        }
        for f in files {
            let path = (directory as NSString).appendingPathComponent(f.name)
            do {
                try f.text.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw .write(path: path, reason: FileErrorReason.describe(error))
            }
            written.append(path)
        }
        return written
    }
}
