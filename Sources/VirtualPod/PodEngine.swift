#if canImport(Glibc)
import Glibc
#endif
import NightModel
import PodProtocol
import SystemCalls
import Synchronization
import SleepDomain

/// The virtual pod's one thread: paces simulated time against the monotonic clock, plays
/// the night (or a capture), answers the hub, injects faults, and writes everything that
/// falls due in a round with one write(2).
///
/// All its mutable state is confined to that thread; the only shared state is `shared`
/// (faults to inject, the stop flag, the published snapshot), behind a mutex.
final class PodEngine: @unchecked Sendable {
    struct Shared: Sendable {
        var faults: [Fault] = []
        var stopRequested = false
        var snapshot = VirtualPodSnapshot()
        var finished = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let shared: Mutex<Shared>
    private let config: VirtualPodConfiguration
    private var firmware: PodFirmware
    private var player: NightPlayer?
    private var replay: CaptureReplay?
    private var encoder = FrameEncoder()
    private let decoder = FrameDecoder()
    private var pty: PseudoTerminal?
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private let wakeRead: Int32
    private let wakeWrite: Int32

    // Time: model ticks are 500 per simulated second since start and never reset; the pod's
    // tick is `modelTick − bootModelTick`.
    private let startNanos: UInt64
    /// The shared timeline's running time when the pod started (with `config.timeline`).
    private let timelineStart: Duration
    /// Whether this pod holds the shared timeline (its queue is past `holdAbove`).
    private var holding = false
    /// Until a hub first starts the streams, a pod on a shared timeline holds it: the night
    /// starts when the hub is there to read it, however long the hub took to start.
    private var awaitingFirstStream = true
    private let ticksPerNano: Double
    private var modelTick: UInt64 = 0
    private var bootModelTick: UInt64 = 0
    /// Model tick at which the replay started (the first START_STREAM), and the tick mapping.
    private var replayStart: UInt64?
    private var replayMap: (recorded: UInt64, pod: UInt64) = (0, 0)
    private let endModelTick: UInt64

    // Faults.
    private var scheduled: [ScheduledFault]
    private var dropNext = 0
    private var corruptNext = 0
    private var stallUntil: UInt64?
    private var detachedUntil: UInt64?
    /// Line noise for `.garbage` faults: replayable from the night's seed.
    private var garbage: SplitMix64
    /// Real nanoseconds a response waits before it is sent (`Fault.answerDelay`).
    private var answerDelayNanos: UInt64 = 0
    /// Responses held back by `answerDelay`, in due order.
    private var delayed: [(due: UInt64, message: Message, requestID: UInt16)] = []

    // Figures.
    private var attachCount = 0
    private var framesSent: UInt64 = 0
    private var bytesSent: UInt64 = 0
    private var transmitDropped: UInt64 = 0
    private var faultDropped: UInt64 = 0
    private var corrupted: UInt64 = 0
    private var garbageBursts: UInt64 = 0
    private var appliedClocks: [AppliedClock] = []
    private var finished = false

    /// Longest a round sleeps without a reason to wake (keeps stop latency low too).
    private static let maxSleepNanos: UInt64 = 250_000_000
    /// Shortest pause between rounds when only streams are due: batches frames at high
    /// speed instead of waking for every 100 ms block.
    private static let minBatchNanos: UInt64 = 20_000_000
    /// Unread bytes beyond which the pod holds a shared timeline, and below which it lets go:
    /// 64 KiB is about seven simulated seconds of a two-sided pod's data, so a hub that falls
    /// behind is never more than that behind the clock it shares.
    private static let holdAbove = 64 << 10
    private static let releaseBelow = 16 << 10

    init(config: VirtualPodConfiguration) throws(SystemError) {
        self.config = config
        firmware = PodFirmware(identity: config.identity)
        var night = config.night
        night.channelsPerSide = config.identity.channelsPerSide
        if night.sides.count > config.identity.sides { night.sides = Array(night.sides.prefix(config.identity.sides)) }
        if let records = config.replay {
            let r = CaptureReplay(records: records)
            replay = r
            endModelTick = (r.items.last?.due ?? 0) + 1
        } else {
            player = NightPlayer(simulator: NightSimulator(config: night), sides: config.identity.sides,
                                 gain: config.identity.gain)
            endModelTick = UInt64(night.duration * Double(Wire.tickRate))
        }
        scheduled = config.faults.sorted { $0.at < $1.at }
        garbage = SplitMix64(seed: config.night.seed ^ 0x6A5D_39E1_7C2B_4F81)
        ticksPerNano = config.speed * Double(Wire.tickRate) / 1e9
        (wakeRead, wakeWrite) = try SystemCalls.makeWakePipe()
        shared = Mutex(Shared())
        startNanos = Self.monotonicNanos()
        timelineStart = config.timeline?.elapsed() ?? .zero
        // Every stored property is set: if attach() throws, deinit runs and closes the pipe
        // (closing it here as well would close descriptors another thread reused).
        try attach()
        // Power-up: BOOT is the first frame, sequence 0, whether or not a hub listens (§7.1).
        send(.event(PodEvent(tick: 0, kind: .boot, side: nil, argument: config.startReason.rawValue)))
        publish()
    }

    deinit {
        pty?.close()
        SystemCalls.close(wakeRead)
        SystemCalls.close(wakeWrite)
    }

    static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Wakes the thread (a fault was queued or stop requested).
    func wake() {
        SystemCalls.wake(wakeWrite)
    }

    // MARK: The loop

    func run() {
        var input = [UInt8](repeating: 0, count: 4096)
        while true {
            let now = Self.monotonicNanos()
            let (faults, stop) = shared.withLock { s -> ([Fault], Bool) in
                let f = s.faults
                s.faults.removeAll()
                return (f, s.stopRequested)
            }
            if stop { break }
            if let until = detachedUntil, now >= until {
                detachedUntil = nil
                do { try attach() } catch { detachedUntil = now + 1_000_000_000 }  // try again in a second
            }
            if let until = stallUntil, now >= until { stallUntil = nil }
            var target = modelTick(at: now)
            // A night that ends stops at its end, not a round later.
            if config.stopsAtEnd, player != nil { target = min(target, max(endModelTick, modelTick)) }
            advance(to: target)
            for f in faults { apply(f, now: now) }
            if pty != nil, stallUntil == nil { readRequests(&input, now: now) }
            sendDelayedAnswers(now: Self.monotonicNanos())
            if let r = replay, replayStart == nil, firmware.linkReady, !firmware.streaming.isEmpty {
                replayStart = modelTick
                replayMap = (r.tickBase, podTick(modelTick) ?? 0)
            }
            if config.stopsAtEnd, isAtEnd { finished = true }
            publish()
            flush()
            paceTimeline()
            if finished {
                drain(until: Self.monotonicNanos() + 2_000_000_000)
                break
            }
            sleep(now: now)
        }
        if holding { config.timeline?.release() }
        holding = false
        pty?.close()
        pty = nil
        if let link = config.linkPath { SystemCalls.unlink(link) }
        finished = true
        publish(ttyGone: true)
        let waiters = shared.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.finished = true
            s.snapshot.finished = true
            let w = s.waiters
            s.waiters.removeAll()
            return w
        }
        for w in waiters { w.resume() }
    }

    private var isAtEnd: Bool {
        if let replay { return replay.isFinished || (replayStart == nil && replay.items.isEmpty) }
        return modelTick >= endModelTick
    }

    private func modelTick(at nanos: UInt64) -> UInt64 {
        max(modelTick, UInt64(Double(runningNanos(at: nanos)) * ticksPerNano))
    }

    /// The monotonic instant at which model time reaches `t`, if the timeline is not held.
    private func nanos(atModelTick t: UInt64) -> UInt64 {
        let now = Self.monotonicNanos()
        let heldSoFar = (now &- startNanos) &- min(now &- startNanos, runningNanos(at: now))
        return startNanos &+ heldSoFar &+ UInt64(Double(t) / ticksPerNano)
    }

    /// Real nanoseconds the pod's time has run since it started: on the monotonic clock, or
    /// the shared timeline's running time.
    private func runningNanos(at nanos: UInt64) -> UInt64 {
        guard let timeline = config.timeline else { return nanos &- startNanos }
        let c = (timeline.elapsed() - timelineStart).components
        return UInt64(max(0, c.seconds)) * 1_000_000_000 + UInt64(max(0, c.attoseconds / 1_000_000_000))
    }

    /// Holds a shared timeline while the hub leaves too much unread, and lets it go once the
    /// hub has caught up (or the link is gone, stalled on purpose or the pod stopped).
    private func paceTimeline() {
        guard let timeline = config.timeline else { return }
        if firmware.linkReady, !firmware.streaming.isEmpty { awaitingFirstStream = false }
        let linked = pty != nil && stallUntil == nil && detachedUntil == nil && !finished
        let backedUp = holding ? pendingCount >= Self.releaseBelow : pendingCount > Self.holdAbove
        let hold = !finished && (awaitingFirstStream || (linked && backedUp))
        guard hold != holding else { return }
        holding = hold
        if hold { timeline.hold() } else { timeline.release() }
    }

    private func podTick(_ model: UInt64) -> UInt64? {
        model >= bootModelTick ? model - bootModelTick : nil
    }

    private func modelTick(ofPodTick t: UInt64) -> UInt64 { t + bootModelTick }

    private var replayNextDue: UInt64? {
        guard let start = replayStart, let d = replay?.nextDue else { return nil }
        return start + d
    }

    /// Plays everything due up to `target` in tick order: timers, faults, streams, replay.
    private func advance(to target: UInt64) {
        while true {
            var step = target &+ 1
            if let p = player { step = min(step, p.nextDue) }
            if let d = replayNextDue { step = min(step, d) }
            if let t = firmware.nextTimer { step = min(step, modelTick(ofPodTick: t)) }
            if let f = scheduled.first { step = min(step, UInt64(max(0, f.at) * Double(Wire.tickRate))) }
            guard step <= target else { break }
            modelTick = max(modelTick, step)
            while let f = scheduled.first, UInt64(max(0, f.at) * Double(Wire.tickRate)) <= step {
                scheduled.removeFirst()
                apply(f.fault, now: nanos(atModelTick: step))
            }
            if let pt = podTick(step) {
                var events: [PodEvent] = []
                firmware.fireTimers(through: pt) { events.append($0) }
                for e in events {
                    // The sleeper on that side feels the motor (a restart after snooze too).
                    if e.kind == .alarmStarted, let side = e.side, player != nil {
                        player!.alarmStarted(side: side.index, atModelTick: modelTick(ofPodTick: e.tick))
                    }
                    send(.event(e))
                }
            }
            let mask = firmware.linkReady ? firmware.streaming : []
            if player != nil {
                player!.play(through: step, mask: mask, podTick: { self.podTick($0) }) { send($0) }
            }
            if replay != nil, replayStart != nil { playReplay(through: step, mask: mask) }
        }
        modelTick = max(modelTick, target)
    }

    private func playReplay(through step: UInt64, mask: StreamMask) {
        var items: [CaptureReplay.Item] = []
        replay!.take(through: step - replayStart!) { items.append($0) }
        for item in items {
            let wanted: Bool
            switch item.message {
            case .piezo: wanted = mask.contains(.piezo)
            case .capacitance: wanted = mask.contains(.capacitance)
            case .environment: wanted = mask.contains(.environment)
            case .log: wanted = mask.contains(.log)
            case .event(let e) where e.kind == .boot:
                // The recorded pod restarted: so does this one, and its ticks restart with the recording's.
                reboot(.init(rawValue: e.argument) ?? .powerOn)
                replayMap = (e.tick, 0)
                continue
            case .event: wanted = true
            default: wanted = false
            }
            guard wanted else { continue }
            encoder.nextSequence &+= item.lostBefore
            send(CaptureReplay.retimed(item.message, recordedReference: replayMap.recorded, podReference: replayMap.pod))
        }
    }

    private func sendDelayedAnswers(now: UInt64) {
        while let first = delayed.first, first.due <= now {
            delayed.removeFirst()
            send(first.message, requestID: first.requestID)
        }
    }

    private func readRequests(_ input: inout [UInt8], now: UInt64) {
        guard let pty else { return }
        while true {
            let n = input.withUnsafeMutableBytes { pty.read(into: $0) }
            guard let n, n > 0 else { return }
            let tick = podTick(modelTick) ?? 0
            input.withUnsafeBytes { raw in
                decoder.decode(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { frame in
                    for out in firmware.handle(frame, tick: tick) {
                        // TRIGGER_ALARM starts the motor at once: the sleeper feels it as any alarm.
                        if case .event(let e) = out.message, e.kind == .alarmStarted, let side = e.side, player != nil {
                            player!.alarmStarted(side: side.index, atModelTick: modelTick(ofPodTick: e.tick))
                        }
                        if case .response(let r) = out.message, case .clock(let anchor) = r.body {
                            appliedClocks.append(AppliedClock(anchor: anchor, bootCount: firmware.bootCount,
                                                              modelTick: modelTick))
                        }
                        if answerDelayNanos > 0, out.requestID != 0 {
                            delayed.append((now + answerDelayNanos, out.message, out.requestID))
                        } else {
                            send(out.message, requestID: out.requestID)
                        }
                    }
                }
            }
            if n < input.count { return }
        }
    }

    // MARK: Sending

    private func send(_ message: Message, requestID: UInt16 = 0) {
        let lost = pty == nil || stallUntil != nil || pendingCount > config.transmitQueueLimit
        if lost || dropNext > 0 || corruptNext > 0 {
            guard let bytes = try? encoder.encode(message, requestID: requestID) else { return }
            if lost {
                transmitDropped &+= 1
                firmware.txDropped &+= 1
            } else if dropNext > 0 {
                dropNext -= 1
                faultDropped &+= 1
            } else {
                corruptNext -= 1
                corrupted &+= 1
                appendCorrupted(bytes)
            }
            return
        }
        do {
            try encoder.encode(message, requestID: requestID, appendingTo: &pending)
            framesSent &+= 1
        } catch {
            // Every message the pod builds fits a frame; an oversize one would be a bug here.
            transmitDropped &+= 1
        }
    }

    /// Re-stuffs a frame with one CRC bit flipped.
    private func appendCorrupted(_ stuffed: [UInt8]) {
        guard var frame = COBS.decode(Array(stuffed.dropLast())), !frame.isEmpty else { return }
        frame[frame.count - 1] ^= 0x5A
        pending += COBS.encode(frame)
        framesSent &+= 1
    }

    private var pendingCount: Int { pending.count - pendingStart }

    private func flush() {
        guard let pty, stallUntil == nil, pendingCount > 0 else { return }
        while pendingCount > 0 {
            let n = pending.withUnsafeBytes { pty.write(UnsafeRawBufferPointer(rebasing: $0[pendingStart...])) }
            if n <= 0 { break }
            pendingStart += n
            bytesSent &+= UInt64(n)
        }
        if pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        } else if pendingStart > 1 << 16 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
    }

    /// At the natural end: give a listening hub the last frames before the tty closes.
    private func drain(until deadline: UInt64) {
        var quietRounds = 0
        while let pty, stallUntil == nil, quietRounds < 3 {
            let now = Self.monotonicNanos()
            guard now < deadline, !shared.withLock({ $0.stopRequested }) else { return }
            flush()
            // The kernel moves written bytes to the hub's queue asynchronously: see it empty
            // a few times in a row before closing.
            quietRounds = pendingCount == 0 && pty.unreadByHub == 0 ? quietRounds + 1 : 0
            var fds = [pollfd(fd: pty.master, events: Int16(POLLOUT), revents: 0)]
            _ = try? SystemCalls.poll(&fds, timeoutMilliseconds: 10)
            if pendingCount == 0 { usleep(10_000) }
        }
    }

    // MARK: Faults

    private func apply(_ fault: Fault, now: UInt64) {
        switch fault {
        case .garbage(let count):
            guard pty != nil, stallUntil == nil else { return }
            for _ in 0..<max(1, count) { pending.append(UInt8(truncatingIfNeeded: garbage.next() % 255) + 1) }
            pending.append(0)
            garbageBursts &+= 1
        case .badCRC(let n):
            corruptNext += max(0, n)
        case .dropFrames(let n):
            dropNext += max(0, n)
        case .stall(let seconds):
            stallUntil = now + UInt64(max(0, seconds) * 1e9)
        case .disconnect(let seconds):
            detach(until: now + UInt64(max(0, seconds) * 1e9))
        case .reboot(let reason):
            reboot(reason)
        case .clockLoss:
            firmware.invalidateClock()
        case .silentReboot(let reason):
            reboot(reason, bootLost: true)
        case .refuseStream(let status):
            firmware.refuseStream = status
        case .answerDelay(let seconds):
            answerDelayNanos = UInt64(max(0, seconds) * 1e9)
        }
    }


    /// A reset; with `bootLost` its BOOT frame (sequence 0) is damaged on the wire and never
    /// arrives, so the hub sees nothing until it probes.
    private func reboot(_ reason: ResetReason, bootLost: Bool = false) {
        let boot = firmware.reboot(reason: reason)
        bootModelTick = modelTick
        // A reset loses the transmit queue, held answers and any partial request; sequence restarts at 0.
        pending.removeAll(keepingCapacity: true)
        pendingStart = 0
        delayed.removeAll()
        decoder.reset()
        encoder = FrameEncoder()
        if bootLost { dropNext += 1 }
        send(.event(boot))
    }

    private func detach(until: UInt64) {
        guard let old = pty else { detachedUntil = until; return }
        old.close()
        pty = nil
        firmware.linkLost()
        delayed.removeAll()
        pending.removeAll(keepingCapacity: true)
        pendingStart = 0
        decoder.reset()
        detachedUntil = until
    }

    private func attach() throws(SystemError) {
        let p = try PseudoTerminal()
        pty = p
        attachCount += 1
        // One delimiter first ends any partial frame in the receiver (§3.1).
        pending.append(0)
        if let link = config.linkPath { try SystemCalls.replaceSymlink(link, to: p.path) }
        config.onAttach?(p.path)
    }

    // MARK: Sleeping and publishing

    private func sleep(now: UInt64) {
        var wakeAt = now + Self.maxSleepNanos
        var due = UInt64.max
        if let p = player { due = min(due, p.nextDue) }
        if let d = replayNextDue { due = min(due, d) }
        if let t = firmware.nextTimer { due = min(due, modelTick(ofPodTick: t)) }
        if let f = scheduled.first { due = min(due, UInt64(max(0, f.at) * Double(Wire.tickRate))) }
        if config.stopsAtEnd, player != nil { due = min(due, endModelTick) }
        if due != .max { wakeAt = min(wakeAt, max(nanos(atModelTick: due), now + Self.minBatchNanos)) }
        if let s = stallUntil { wakeAt = min(wakeAt, s) }
        if let d = detachedUntil { wakeAt = min(wakeAt, d) }
        if let first = delayed.first { wakeAt = min(wakeAt, max(first.due, now)) }
        let timeout = Int32(clamping: (wakeAt > now ? wakeAt - now : 0) / 1_000_000 + 1)
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        if let pty, stallUntil == nil {
            var events = Int16(POLLIN)
            if pendingCount > 0 { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: pty.master, events: events, revents: 0))
        }
        _ = try? SystemCalls.poll(&fds, timeoutMilliseconds: timeout)
        if fds[0].revents != 0 { SystemCalls.drain(wakeRead) }
    }

    private func publish(ttyGone: Bool = false) {
        var s = VirtualPodSnapshot()
        s.ttyPath = ttyGone ? nil : pty?.path
        s.attachCount = attachCount
        s.tick = podTick(modelTick) ?? 0
        s.simulatedSeconds = Double(modelTick) / Double(Wire.tickRate)
        s.bootCount = firmware.bootCount
        s.clock = firmware.clock
        s.linkReady = firmware.linkReady
        s.streaming = firmware.streaming
        let sides = config.identity.sides
        s.schedules = (0..<sides).map { firmware.report(side: BedSide(wireValue: UInt8($0))!) }
        s.powerOn = firmware.power.map(\.on)
        s.vibrating = (0..<sides).map { firmware.isVibrating(side: $0) }
        s.alarmsFired = firmware.fired
        s.powerLog = firmware.powerLog
        s.truth = player?.truth
        s.appliedClocks = appliedClocks
        s.framesSent = framesSent
        s.bytesSent = bytesSent
        s.transmitDropped = transmitDropped
        s.faultDroppedFrames = faultDropped
        s.corruptedFrames = corrupted
        s.garbageBursts = garbageBursts
        s.requestsAnswered = firmware.requestsAnswered
        s.retransmitsFromCache = firmware.retransmitsFromCache
        s.receiver = decoder.counters
        s.finished = finished
        shared.withLock { $0.snapshot = s }
    }
}
