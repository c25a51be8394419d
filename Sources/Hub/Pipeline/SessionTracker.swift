import SleepAnalysis

/// Cuts one side's stream of per-second vitals into in-bed sessions, live.
///
/// A session opens at the first present second and closes once the side has been empty
/// for longer than `maxGap` (a bathroom trip does not split the night), or when data resume
/// after a hole longer than `maxDataGap` (the link was down for most of a day). While it is open a
/// snapshot is offered every `preliminaryEvery` seconds of data time, so preliminary
/// stages exist during the night. Time is the data's (from the pod's ticks), so a night
/// played at 500× closes exactly as it would in real time. Pure: no I/O, no clock.
package struct SessionTracker: Sendable {
    package struct Rules: Sendable, Hashable {
        package var maxGap: Double
        package var preliminaryEvery: Double
        /// Longest stretch without any data (the pod's link down, the hub stopped) that a stay
        /// is kept open across. Nobody knows whether the side was empty then, so a link that
        /// drops for a while in the night keeps the night whole; after a day without data, what
        /// comes next is another stay, not one of 33 hours.
        package var maxDataGap: Double
        package init(maxGap: Double = 20 * 60, preliminaryEvery: Double = 30 * 60,
                     maxDataGap: Double = SessionRules.defaultMaxDataGap) {
            self.maxGap = maxGap
            self.preliminaryEvery = preliminaryEvery
            self.maxDataGap = maxDataGap
        }
    }

    /// Everything the analyzer needs for one session.
    package struct Night: Sendable, Hashable {
        package var beats: [Double]
        package var seconds: [SecondVitals]
        /// Whether the stay began with a bed entry (`SleepAnalyzer.isEntry`: not the front end
        /// starting up under a sleeper already in bed) and ended with the side seen empty for
        /// longer than `maxGap` (not at a flush, not across a hole in the data). `seconds` run
        /// from the first to the last present second, so the analyzer cannot see either in them.
        package var seen: BedEdges = []
        /// What the analyzer stages: the stay's data and the edges the tracker saw.
        package var input: AnalysisInput { AnalysisInput(beats: beats, vitals: seconds, seen: seen) }
        package var start: Double { seconds.first?.time ?? 0 }
        package var end: Double { (seconds.last?.time ?? 0) + 1 }
    }

    package enum Event: Sendable, Hashable {
        case started(at: Double)
        case preliminary(Night)
        case ended(Night)
    }

    /// What a restarted hub needs to carry an open stay on: its data so far and what the
    /// tracker knew of the side (`openStay`, `init(rules:resuming:)`; kept by the pipeline in
    /// the store as an `OpenStayArchive`).
    package struct OpenStay: Sendable, Hashable {
        package var seconds: [SecondVitals]
        package var beats: [Double]
        package var lastPresent: Double
        package var lastSnapshot: Double
        package var entrySeen: Bool
        package var emptySince: Double?
        package var lastSecond: Double

        package init(seconds: [SecondVitals], beats: [Double], lastPresent: Double, lastSnapshot: Double,
                     entrySeen: Bool, emptySince: Double?, lastSecond: Double) {
            self.seconds = seconds
            self.beats = beats
            self.lastPresent = lastPresent
            self.lastSnapshot = lastSnapshot
            self.entrySeen = entrySeen
            self.emptySince = emptySince
            self.lastSecond = lastSecond
        }
    }

    package let rules: Rules
    private var seconds: [SecondVitals] = []
    private var beats: [Double] = []
    // Beats can arrive before the seconds they fall in (the front end emits seconds late).
    private var pendingBeats: [Double] = []
    private var lastPresent: Double?
    private var lastSnapshot: Double = 0
    /// The open session began with a bed entry (`SleepAnalyzer.isEntry`).
    private var entrySeen = false
    /// The first second of the side's current empty stretch (nil while someone is in bed).
    private var emptySince: Double?
    /// The side has been seen occupied since the stream began.
    private var occupiedSeen = false
    /// The last second seen, present or not.
    private var lastSecond: Double?
    /// After a resume, the empty seconds read since (nil once someone was seen or the side
    /// has read empty for longer than a start-up). A restarted front end reads a sleeper
    /// already in bed as empty until its presence override has seen a minute of strong body
    /// signal (`SleepAnalyzer.emptyStartBeforeEntry`); taken as they come, those seconds
    /// would be a trip out of bed in the middle of the night.
    private var startUpAfterResume: [SecondVitals]?

    package init(rules: Rules = Rules()) { self.rules = rules }

    /// A tracker that carries on `stay` (a hub restarted in the night): the data that come
    /// next join it, or end it as any stay ends (after the side was seen empty for longer
    /// than `maxGap`, or data resume more than `maxDataGap` after its last second).
    package init(rules: Rules = Rules(), resuming stay: OpenStay) {
        self.rules = rules
        seconds = stay.seconds
        beats = stay.beats
        lastPresent = stay.lastPresent
        lastSnapshot = stay.lastSnapshot
        entrySeen = stay.entrySeen
        emptySince = stay.emptySince
        lastSecond = stay.lastSecond
        occupiedSeen = true
        startUpAfterResume = []
    }

    /// The open stay, for a restarted hub to carry on; nil if none is open.
    package var openStay: OpenStay? {
        guard let lastPresent, let lastSecond else { return nil }
        return OpenStay(seconds: seconds, beats: beats, lastPresent: lastPresent, lastSnapshot: lastSnapshot,
                        entrySeen: entrySeen, emptySince: emptySince, lastSecond: lastSecond)
    }

    package var isInSession: Bool { lastPresent != nil }
    package var sessionStart: Double? { isInSession ? seconds.first?.time : nil }

    /// Adds the front end's output; returns what happened, in order.
    package mutating func add(_ output: FrontEndOutput) -> [Event] {
        var events: [Event] = []
        pendingBeats.append(contentsOf: output.beats)
        var consumed = 0
        defer { pendingBeats.removeFirst(consumed) }
        for second in output.seconds {
            // A stay's data run forward in time: a second not after the last one seen (a clock
            // stepped back, a restarted hub whose clock is behind the stay it carries on) is left out.
            if let previous = lastSecond, second.time <= previous { continue }
            if var held = startUpAfterResume {
                if held.isEmpty, let previous = lastSecond, second.time - previous > rules.maxDataGap {
                    startUpAfterResume = nil  // too late to carry the stay on: it ends as any would
                } else if !second.present,
                          second.time - (held.first?.time ?? second.time) < SleepAnalyzer.emptyStartBeforeEntry {
                    held.append(second)
                    startUpAfterResume = held
                    skipBeats(through: second.time, consumed: &consumed)
                    continue
                } else {
                    startUpAfterResume = nil
                    // Empty for longer than a start-up: those seconds were an absence, taken as they
                    // came. Someone seen sooner: they were the start-up, left out (a hole in the data).
                    if !second.present { for h in held { step(h, into: &events, consumed: &consumed) } }
                }
            }
            step(second, into: &events, consumed: &consumed)
        }
        return events
    }

    /// One second of the side, in time order.
    private mutating func step(_ second: SecondVitals, into events: inout [Event], consumed: inout Int) {
        if lastPresent != nil, let previous = lastSecond, second.time - previous > rules.maxDataGap {
            // No data for longer than a night can be bridged: the stay ended unseen, and data
            // resuming with someone present opens a new one (its entry unseen too).
            events.append(.ended(close(exitSeen: false)))
            emptySince = nil
        } else if let last = lastPresent, !second.present, second.time - last > rules.maxGap {
            // Seen only if the side was seen empty before this second, not across a hole.
            events.append(.ended(close(exitSeen: emptySince != nil)))
        }
        lastSecond = second.time
        if !second.present && emptySince == nil { emptySince = second.time }
        if second.present {
            if lastPresent == nil {
                seconds.removeAll(keepingCapacity: true)
                beats.removeAll(keepingCapacity: true)
                entrySeen = SleepAnalyzer.isEntry(emptySeconds: emptySince.map { second.time - $0 } ?? 0,
                                                  occupiedBefore: occupiedSeen)
                occupiedSeen = true
                lastSnapshot = second.time
                events.append(.started(at: second.time))
            }
            lastPresent = second.time
            emptySince = nil
        }
        if lastPresent == nil {
            // Nobody in bed: beats up to here belong to no session.
            skipBeats(through: second.time, consumed: &consumed)
        } else {
            seconds.append(second)
            while consumed < pendingBeats.count, pendingBeats[consumed] < second.time + 1 {
                if pendingBeats[consumed] >= second.time { beats.append(pendingBeats[consumed]) }
                consumed += 1
            }
            if second.time - lastSnapshot >= rules.preliminaryEvery {
                lastSnapshot = second.time
                events.append(.preliminary(snapshot()))
            }
        }
    }

    /// Passes over the pending beats up to the end of second `time`, keeping none.
    private func skipBeats(through time: Double, consumed: inout Int) {
        while consumed < pendingBeats.count, pendingBeats[consumed] < time + 1 { consumed += 1 }
    }

    /// The open session so far (smart wake stages it live); nil if none is open.
    package var openNight: Night? { isInSession ? snapshot() : nil }

    /// Closes the open session now (shutdown, a pod gone for good); nil if none is open. Its
    /// end was not seen, and neither is the start of whatever the side does next: data that
    /// come after open a stay whose entry is unseen, as after a hole longer than `maxDataGap`.
    package mutating func flush() -> Night? {
        guard isInSession else { return nil }
        emptySince = nil
        startUpAfterResume = nil
        return close(exitSeen: false)
    }

    private func snapshot() -> Night {
        let end = (lastPresent ?? 0) + 1
        let s = seconds.prefix { $0.time < end }
        return Night(beats: beats.filter { $0 < end }, seconds: Array(s), seen: entrySeen ? .entry : [])
    }

    private mutating func close(exitSeen: Bool) -> Night {
        var night = snapshot()
        if exitSeen { night.seen.insert(.exit) }
        seconds.removeAll(keepingCapacity: true)
        beats.removeAll(keepingCapacity: true)
        lastPresent = nil
        return night
    }
}
