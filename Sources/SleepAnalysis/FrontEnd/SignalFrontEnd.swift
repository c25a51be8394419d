import Foundation

/// One capacitance reading of one side: the channel values at a Unix time.
package struct CapacitanceSample: Sendable, Hashable {
    package var time: Double
    package var values: [Int32]

    package init(time: Double, values: [Int32]) {
        self.time = time
        self.values = values
    }
}

/// The per-side signal front end: raw piezo (500 Hz, interleaved channels) and
/// capacitance in; per-second vitals and beat times out. Streaming with bounded memory,
/// the same code live and offline.
///
/// Pipeline (see docs/front-end.md):
/// 500 Hz: channels summed, 4th-order low-pass at 15 Hz (anti-alias; removes pump
///   vibration), decimated by 5; a 4th-order high-pass at 22 Hz on the raw sum measures
///   pump vibration in 0.1-s blocks.
/// 100 Hz: cardiac band 2–12 Hz → energy envelope → beat detector; body band (>0.1 Hz)
///   level for presence and movement; low-pass at 1 Hz, decimated by 10.
/// 10 Hz: respiratory band 0.08–0.8 Hz → breath detector.
/// Per second, `lookahead` seconds later: presence, movement, and heart and breathing
/// rates from centred windows of beat and breath intervals with outlier rejection.
package struct SignalFrontEnd: Sendable {
    package let config: FrontEndConfig
    package private(set) var counters = FrontEndCounters()

    /// Delay of a detected beat after the BCG J-peak (filters and envelope), removed from
    /// the reported beat times.
    static let beatDelay = 0.092

    private struct Slot: Sendable {
        var key = Int.min
        var cardiacSq = 0.0, cardiacN = 0
        var bodySq = 0.0, bodyN = 0
        var pump = false, thump = false
        var capSum = 0.0, capN = 0
    }

    private struct Event: Sendable {
        var t: Double
        var segment: Int
    }

    // 500 Hz stage
    private var started = false
    private var nextIndex: Int64 = 0
    private var dc = 0.0
    private var lastValue = 0.0
    private var lpA: Biquad, lpB: Biquad
    private var pumpA: Biquad, pumpB: Biquad
    private var phase5 = 0
    private var pumpAcc = 0.0, pumpN = 0
    private var pumpBase: Double?
    private var pumpOn = false
    private var pumpStarted = 0.0
    private var pumpConfirmed = false
    /// Shortest vibration run taken as the pump, seconds (runs last 30 s and more; a body
    /// movement's broadband edges last a fraction of a second).
    static let minimumPumpRun = 3.0
    // 100 Hz stage
    private var hpC1: Biquad, hpC2: Biquad, lpC: Biquad
    private var bodyHP: Biquad
    private var respLP: Biquad
    private var phase10 = 0
    private var beatDetector: BeatDetector
    // 10 Hz stage
    private var respHP: Biquad, respLP2: Biquad
    private var breathDetector = BreathDetector()
    // Events and per-second state
    private var segment = 0
    private var beats: [Event] = []
    private var breaths: [Event] = []
    private var slots: [Slot]
    private var currentSecond = Int.min
    private var currentSlot = 0
    private var nextSecond: Int?
    private var latestTime = -Double.infinity
    private var presence: PresenceTracker
    private var cardiacBase: Double?
    private var bodyBase: Double?
    private var cardiacHistory: [Double] = []
    private var bodyHistory: [Double] = []
    private var pending = FrontEndOutput()

    private static let slotCount = 64

    package init(config: FrontEndConfig = FrontEndConfig()) {
        self.config = config
        let fs = config.sampleRate > 0 ? config.sampleRate : 500
        let q = Biquad.butterworth4Q
        lpA = .lowPass(cutoff: 15, sampleRate: fs, q: q.0)
        lpB = .lowPass(cutoff: 15, sampleRate: fs, q: q.1)
        pumpA = .highPass(cutoff: 22, sampleRate: fs, q: q.0)
        pumpB = .highPass(cutoff: 22, sampleRate: fs, q: q.1)
        let f100 = fs / 5
        hpC1 = .highPass(cutoff: 2, sampleRate: f100, q: q.0)
        hpC2 = .highPass(cutoff: 2, sampleRate: f100, q: q.1)
        lpC = .lowPass(cutoff: 12, sampleRate: f100)
        bodyHP = .highPass(cutoff: 0.1, sampleRate: f100)
        respLP = .lowPass(cutoff: 1, sampleRate: f100)
        respHP = .highPass(cutoff: 0.08, sampleRate: f100 / 10)
        respLP2 = .lowPass(cutoff: 0.8, sampleRate: f100 / 10)
        beatDetector = BeatDetector(sampleRate: f100)
        slots = [Slot](repeating: Slot(), count: Self.slotCount)
        presence = PresenceTracker(config: config)
    }

    // MARK: Input

    /// Feed piezo samples: `channels` values per frame, interleaved, the first frame being
    /// sample `firstSampleIndex` of the pod's counter, placed in time by `clock`.
    /// Repeated indices are dropped, short gaps bridged, long gaps restart the filters.
    /// Returns the seconds (and their beats) that became complete.
    package mutating func pushPiezo(_ samples: [Int32], channels: Int, firstSampleIndex: Int64,
                                   clock: SampleClock) -> FrontEndOutput {
        guard channels >= 1 else { counters.partialFrames += samples.count; return takePending() }
        let frames = samples.count / channels
        counters.partialFrames += samples.count - frames * channels
        var first = 0
        var index = firstSampleIndex
        if started {
            if index < nextIndex {
                let skip = Int(min(Int64(frames), nextIndex - index))
                counters.overlappingSamples += skip * channels
                first = skip
                index += Int64(skip)
            } else if index > nextIndex {
                let gap = index - nextIndex
                if gap <= Int64(config.maxBridgedGap) {
                    counters.bridgedGaps += 1
                    for k in 0..<gap { processFrame(lastValue, index: nextIndex + k, clock: clock) }
                } else if first < frames {
                    counters.resets += 1
                    restart(value: frameSum(samples, frame: first, channels: channels),
                            time: clock.time(ofSample: index))
                }
            }
        }
        guard first < frames else { return takePending() }
        if !started {
            started = true
            restart(value: frameSum(samples, frame: first, channels: channels),
                    time: clock.time(ofSample: index))
        }
        samples.withUnsafeBufferPointer { p in
            var idx = index
            if channels == 1 {
                for f in first..<frames { processFrame(Double(p[f]), index: idx, clock: clock); idx += 1 }
            } else if channels == 2 {
                for f in first..<frames {
                    processFrame(Double(p[2 * f]) + Double(p[2 * f + 1]), index: idx, clock: clock); idx += 1
                }
            } else {
                for f in first..<frames {
                    var x = 0.0
                    for c in 0..<channels { x += Double(p[f * channels + c]) }
                    processFrame(x, index: idx, clock: clock); idx += 1
                }
            }
        }
        counters.frames += frames - first
        nextIndex = index + Int64(frames - first)
        emitReady()
        return takePending()
    }

    /// Feed one capacitance reading (channel values at a Unix time on the pod's clock).
    package mutating func pushCapacitance(_ values: [Int32], at time: Double) {
        guard !values.isEmpty, time.isFinite else { counters.rejectedCapacitance += 1; return }
        let s = Int(time.rounded(.down))
        if let n = nextSecond, s < n || s >= n + Self.slotCount / 2 {
            counters.rejectedCapacitance += 1
            return
        }
        var sum = 0.0
        for v in values { sum += Double(v) }
        let i = slotIndex(s)
        slots[i].capSum += sum
        slots[i].capN += 1
    }

    /// Emit every second still held back for lookahead (end of a recording or session).
    package mutating func finish() -> FrontEndOutput {
        flush()
        return takePending()
    }

    /// Run a whole recording through a fresh front end (offline analysis): piezo frames
    /// from `firstSampleIndex`, with the capacitance readings interleaved by time.
    package static func analyze(piezo: [Int32], channels: Int, firstSampleIndex: Int64 = 0,
                               clock: SampleClock, capacitance: [CapacitanceSample],
                               config: FrontEndConfig = FrontEndConfig()) -> FrontEndOutput {
        var fe = SignalFrontEnd(config: config)
        var out = FrontEndOutput()
        let ch = max(channels, 1)
        let frames = piezo.count / ch
        let chunk = max(Int(config.sampleRate), 1)
        let caps = capacitance.sorted { $0.time < $1.time }
        var ci = 0
        var f = 0
        while f < frames {
            let n = min(chunk, frames - f)
            let endTime = clock.time(ofSample: firstSampleIndex + Int64(f + n))
            while ci < caps.count && caps[ci].time < endTime {
                fe.pushCapacitance(caps[ci].values, at: caps[ci].time); ci += 1
            }
            out.append(fe.pushPiezo(Array(piezo[(f * ch)..<((f + n) * ch)]), channels: ch,
                                    firstSampleIndex: firstSampleIndex + Int64(f), clock: clock))
            f += n
        }
        out.append(fe.finish())
        return out
    }

    // MARK: Signal path

    private func frameSum(_ s: [Int32], frame: Int, channels: Int) -> Double {
        var x = 0.0
        for c in 0..<channels { x += Double(s[frame * channels + c]) }
        return x
    }

    /// Start (or restart after a long gap) the filters settled on `value`.
    private mutating func restart(value: Double, time: Double) {
        if let n = nextSecond, time - latestTime > Double(config.maxEmittedGap) {
            flush()
            nextSecond = max(n, Int(time.rounded(.down)))
        }
        if nextSecond == nil { nextSecond = Int(time.rounded(.down)) }
        dc = value
        lastValue = value
        lpA.settle(at: 0); lpB.settle(at: 0); pumpA.reset(); pumpB.reset()
        hpC1.reset(); hpC2.reset(); lpC.reset(); bodyHP.reset(); respLP.reset()
        respHP.reset(); respLP2.reset()
        beatDetector.reset()
        breathDetector.reset()
        phase5 = 0; phase10 = 0; pumpAcc = 0; pumpN = 0
        segment += 1
    }

    @inline(__always)
    private mutating func processFrame(_ x: Double, index: Int64, clock: SampleClock) {
        lastValue = x
        let v = x - dc
        let l = lpB.process(lpA.process(v))
        let p = pumpB.process(pumpA.process(v))
        pumpAcc += p * p
        pumpN += 1
        phase5 += 1
        if phase5 == 5 {
            phase5 = 0
            let t = clock.time(ofSample: index)
            process100(l, at: t)
            if pumpN >= 50 { pumpBlock(at: t) }
        }
    }

    private mutating func pumpBlock(at t: Double) {
        let rms = (pumpAcc / Double(pumpN)).squareRoot()
        pumpAcc = 0; pumpN = 0
        let base = pumpBase ?? rms
        let wasOn = pumpOn
        if !pumpOn && rms > max(config.pumpOnRatio * base, config.pumpFloor) { pumpOn = true }
        else if pumpOn && rms < max(config.pumpOffRatio * base, config.pumpFloor / 2) { pumpOn = false }
        if !pumpOn { pumpBase = base + (rms - base) * (rms < base ? 0.05 : 0.01) }
        let s = Int(t.rounded(.down))
        if let n = nextSecond, s >= n, pumpOn { slots[slotIndex(s)].pump = true }
        if !wasOn && pumpOn { pumpStarted = t; pumpConfirmed = false }
        // A real pump run (not the broadband edge of a body movement) thumps as it starts
        // and as it stops: a low-frequency swing in the body band. The start is marked once
        // the run has lasted `minimumPumpRun` (still within the lookahead), the stop at once.
        if pumpOn && !pumpConfirmed && t - pumpStarted >= Self.minimumPumpRun {
            pumpConfirmed = true
            markThump(at: pumpStarted)
        }
        if wasOn && !pumpOn && pumpConfirmed { markThump(at: t) }
    }

    private mutating func markThump(at edge: Double) {
        let a = Int((edge - 0.6).rounded(.down)), b = Int((edge + 1.7).rounded(.down))
        for k in a...b where k >= (nextSecond ?? k) { slots[slotIndex(k)].thump = true }
    }

    @inline(__always)
    private mutating func process100(_ y: Double, at t: Double) {
        let c = lpC.process(hpC2.process(hpC1.process(y)))
        let b = bodyHP.process(y)
        let s = Int(t.rounded(.down))
        if s != currentSecond {
            currentSecond = s
            currentSlot = (nextSecond.map { s >= $0 } ?? true) ? slotIndex(s) : -1
        }
        if currentSlot >= 0 {
            slots[currentSlot].cardiacSq += c * c
            slots[currentSlot].cardiacN += 1
            slots[currentSlot].bodySq += b * b
            slots[currentSlot].bodyN += 1
        }
        if let beat = beatDetector.process(c, at: t) {
            beats.append(Event(t: beat.t - Self.beatDelay, segment: segment))
        }
        let r = respLP.process(y)
        phase10 += 1
        if phase10 == 10 {
            phase10 = 0
            let rr = respLP2.process(respHP.process(r))
            if let start = breathDetector.process(rr, at: t) {
                breaths.append(Event(t: start, segment: segment))
            }
        }
        latestTime = t
    }

    private mutating func slotIndex(_ s: Int) -> Int {
        let i = ((s % Self.slotCount) + Self.slotCount) % Self.slotCount
        if slots[i].key != s { slots[i] = Slot(key: s) }
        return i
    }

    private func slot(_ s: Int) -> Slot? {
        let i = ((s % Self.slotCount) + Self.slotCount) % Self.slotCount
        return slots[i].key == s ? slots[i] : nil
    }

    // MARK: Per-second estimates

    private mutating func takePending() -> FrontEndOutput {
        defer { pending = FrontEndOutput() }
        return pending
    }

    private mutating func emitReady() {
        guard var s = nextSecond else { return }
        while Double(s + 1 + config.lookahead) <= latestTime {
            emit(s)
            s += 1
        }
        nextSecond = s
    }

    private mutating func flush() {
        guard var s = nextSecond, latestTime.isFinite else { return }
        while Double(s) <= latestTime {
            emit(s)
            s += 1
        }
        nextSecond = s
    }

    /// Movement index of a second from its cardiac- and body-band RMS against their
    /// quiet baselines: 2·log2(ratio), 0 still … 10.
    private func movementIndex(_ slot: Slot) -> Double {
        guard slot.cardiacN > 0, let cb = cardiacBase, let bb = bodyBase, cb > 0, bb > 0 else { return 0 }
        let c = (slot.cardiacSq / Double(slot.cardiacN)).squareRoot()
        let b = (slot.bodySq / Double(slot.bodyN)).squareRoot()
        let m = 2 * log2(max(c / cb, b / bb, 1e-9))
        return min(max(m, 0), 10)
    }

    /// Whether beats and breaths in second `s` are unusable (movement or pump thump).
    private func disturbed(_ s: Int) -> Bool {
        guard let sl = slot(s) else { return false }
        return sl.thump || movementIndex(sl) > config.movementGate
    }

    private mutating func emit(_ s: Int) {
        let sl = slot(s)
        let hasData = (sl?.bodyN ?? 0) > 0
        let cap = sl.flatMap { $0.capN > 0 ? $0.capSum / Double($0.capN) : nil }
        let body = hasData ? (sl!.bodySq / Double(sl!.bodyN)).squareRoot() : nil
        let present = presence.update(second: s, capacitance: cap, piezoLevel: body)

        trimEvents(before: Double(s) - 40)
        guard present else {
            pending.seconds.append(SecondVitals(time: Double(s), heartRate: .none(.absent),
                                                breathingRate: .none(.absent), movement: 0,
                                                present: false, quality: 0))
            return
        }
        guard let sl, hasData else {
            pending.seconds.append(SecondVitals(time: Double(s), heartRate: .none(.lowQuality),
                                                breathingRate: .none(.lowQuality), movement: 0,
                                                present: true, quality: 0))
            return
        }

        // Movement against baselines that learn only from this side's own in-bed seconds:
        // the 75th percentile of the last minute, i.e. a typical second that holds a beat
        // (at 30 bpm most seconds do not) and a breath at its fullest.
        let c = (sl.cardiacSq / Double(sl.cardiacN)).squareRoot()
        let b = (sl.bodySq / Double(sl.bodyN)).squareRoot()
        if !sl.thump {
            cardiacHistory.append(c)
            bodyHistory.append(b)
            if cardiacHistory.count > 60 { cardiacHistory.removeFirst(); bodyHistory.removeFirst() }
            // Re-ranked every few seconds: a minute-long baseline moves slowly anyway.
            if cardiacBase == nil || s % 4 == 0 {
                cardiacBase = Self.upperQuartile(cardiacHistory)
                bodyBase = Self.upperQuartile(bodyHistory)
            }
        }
        var movement = sl.thump ? 0 : movementIndex(sl)
        movement = (movement * 100).rounded() / 100
        let since = s - presence.since

        if movement > config.movementGate {
            pending.seconds.append(SecondVitals(time: Double(s), heartRate: .none(.movement),
                                                breathingRate: .none(.movement), movement: movement,
                                                present: true, quality: 0.1))
            return
        }
        let (hr, hrQuality) = heartRate(around: s, secondsInBed: since)
        let br = breathingRate(around: s, secondsInBed: since)
        var quality = hrQuality
        if sl.pump { quality *= 0.8 }
        pending.seconds.append(SecondVitals(time: Double(s), heartRate: hr, breathingRate: br,
                                            movement: movement, present: true,
                                            quality: (quality * 100).rounded() / 100))
        if !sl.thump {
            for e in beats where e.t >= Double(s) && e.t < Double(s + 1) { pending.beats.append(e.t) }
        }
    }

    private static func upperQuartile(_ a: [Double]) -> Double {
        let s = a.sorted()
        return s[(s.count * 3) / 4]
    }

    private mutating func trimEvents(before t: Double) {
        if let k = beats.firstIndex(where: { $0.t >= t }), k > 0 { beats.removeFirst(k) }
        else if beats.last.map({ $0.t < t }) ?? false { beats.removeAll(keepingCapacity: true) }
        if let k = breaths.firstIndex(where: { $0.t >= t }), k > 0 { breaths.removeFirst(k) }
        else if breaths.last.map({ $0.t < t }) ?? false { breaths.removeAll(keepingCapacity: true) }
    }

    /// Heart rate over the beats in [s−before, s+after): RR intervals within one segment
    /// and away from movement, median-centred outlier rejection, then beats per minute as
    /// 60·n/ΣRR (a time-weighted mean, so a minute's mean matches its beat count).
    private func heartRate(around s: Int, secondsInBed: Int) -> (Reading, Double) {
        let lo = Double(s) - config.heartWindowBefore, hi = Double(s) + config.heartWindowAfter
        var rr: [Double] = []
        var prev: Event? = nil
        for e in beats where e.t >= lo && e.t < hi {
            if disturbed(Int(e.t.rounded(.down))) { prev = nil; continue }
            if let p = prev, p.segment == e.segment { rr.append(e.t - p.t) }
            prev = e
        }
        let short: NoReadingReason = secondsInBed < 12 ? .warmingUp : .lowQuality
        guard rr.count >= 2 else { return (.none(short), 0) }
        let med = rr.sorted()[rr.count / 2]
        let limits = config.heartRateLimits
        guard limits.contains(60 / med) else { return (.none(.implausible), 0) }
        var sum = 0.0, n = 0
        for x in rr where abs(x - med) <= config.rrTolerance * med { sum += x; n += 1 }
        let span = config.heartWindowBefore + config.heartWindowAfter
        guard n >= 3, sum >= 0.45 * span else { return (.none(short), 0) }
        let bpm = 60 * Double(n) / sum
        guard limits.contains(bpm) else { return (.none(.implausible), 0) }
        let quality = min(1, sum / span) * Double(n) / Double(rr.count)
        return (.value(bpm), quality)
    }

    /// Breathing rate over the breaths in [s−before, s+after), like the heart rate.
    private func breathingRate(around s: Int, secondsInBed: Int) -> Reading {
        let lo = Double(s) - config.breathWindowBefore, hi = Double(s) + config.breathWindowAfter
        var intervals: [Double] = []
        var prev: Event? = nil
        for e in breaths where e.t >= lo && e.t < hi {
            if let p = prev, p.segment == e.segment {
                var clean = true
                var k = Int(p.t.rounded(.down))
                while clean && Double(k) <= e.t { if disturbed(k) && !(slot(k)?.thump ?? false) { clean = false }; k += 1 }
                if clean { intervals.append(e.t - p.t) }
            }
            prev = e
        }
        let short: NoReadingReason = secondsInBed < 30 ? .warmingUp : .lowQuality
        guard intervals.count >= 2 else { return .none(short) }
        let med = intervals.sorted()[intervals.count / 2]
        let limits = config.breathingRateLimits
        guard limits.contains(60 / med) else { return .none(.implausible) }
        var sum = 0.0, n = 0
        for x in intervals where abs(x - med) <= config.breathTolerance * med { sum += x; n += 1 }
        let span = config.breathWindowBefore + config.breathWindowAfter
        guard n >= 3, sum >= 0.4 * span else { return .none(short) }
        let rate = 60 * Double(n) / sum
        guard limits.contains(rate) else { return .none(.implausible) }
        return .value(rate)
    }
}
