import Foundation
import SleepDomain
import PodAnalysis
import PodProtocol
import SleepAnalysis

/// One pod's readings on their way to the store: each side's seconds (from the link's
/// `LinkSignalFront`, which runs the router and front ends on the link's reader) → live
/// seconds on the bus → per-side session trackers → nights handed to the `NightKeeper`.
///
/// A value owned by the pod's link service and fed in order from its one task, so it needs
/// no actor. The clock anchor (for the times of the pod's events) comes from every
/// `.clockSet` of the link (start-up, reboot, and each SET_CLOCK the schedule service sends);
/// a BOOT ends it.
struct PodPipeline {
    let serial: String
    /// HELLO's `sample_rate` of the pod this pipeline serves.
    let sampleRate: UInt16
    private let bus: HubBus
    private let keeper: NightKeeper
    private let reporter: HubReporter
    private let hubZone: TimeZone
    /// The anchor in force, nil before SET_CLOCK or after a BOOT.
    private(set) var clockAnchor: ClockAnchor?
    private var trackers: [BedSide: SessionTracker]
    private let rules: SessionTracker.Rules
    /// Smart wake, offered each side's night at every epoch inside a wake window.
    private let wake: SmartWakeService?
    private var lastOffered: [BedSide: Double] = [:]
    private let clock: HubClock
    /// When each side's data last arrived (monotonic: a stepped system clock is no outage): a
    /// stay whose data stopped (the pod unplugged or dead in the night) is ended by `expire()`,
    /// since no data will end it.
    private var lastDataAt: [BedSide: HubClock.Mark] = [:]

    /// Final sessions stored by this pipeline.
    private(set) var nightsStored = 0
    /// Ended nights the store refused (a full disk): tried again every tick until stored, and
    /// meanwhile the side's last kept snapshot stays in `open_stays`, so a restart carries the
    /// night on from there instead of losing it.
    private var unsaved: [BedSide: [SessionTracker.Night]] = [:]

    init(serial: String, sampleRate: UInt16, configuration: HubConfiguration, bus: HubBus, keeper: NightKeeper, reporter: HubReporter,
         clock: HubClock, wake: SmartWakeService? = nil) {
        self.serial = serial
        self.sampleRate = sampleRate
        self.clock = clock
        self.wake = wake
        self.bus = bus
        self.keeper = keeper
        self.reporter = reporter
        hubZone = configuration.hubTimeZone
        let rules = SessionTracker.Rules(configuration.sessions)
        self.rules = rules
        trackers = [.left: SessionTracker(rules: rules), .right: SessionTracker(rules: rules)]
    }

    mutating func anchor(_ anchor: ClockAnchor) { clockAnchor = anchor }

    /// A pod message other than streamed readings: a BOOT ends the clock anchor in force.
    mutating func observe(_ message: Message) {
        if case .event(let e) = message, e.kind == .boot { clockAnchor = nil }
    }

    /// A side's completed seconds. Returns the nights that ended (already stored), so the
    /// caller can reschedule.
    mutating func apply(_ output: SideOutput) async -> Int {
        await feed(output.side, output.output)
    }

    private mutating func feed(_ side: BedSide, _ output: FrontEndOutput) async -> Int {
        for second in output.seconds {
            bus.publish(.live(serial: serial, side: side, LiveSecond(second)))
        }
        if !output.seconds.isEmpty { lastDataAt[side] = clock.mark() }
        // Mutated in place: a copy of the tracker would copy the night it holds on every call.
        guard let events = trackers[side]?.add(output) else { return 0 }
        if let wake, let last = output.seconds.last {
            let epochEnd = ((last.time + 1) / epochLength).rounded(.down) * epochLength
            if epochEnd > lastOffered[side] ?? 0, wake.wants(serial: serial, side: side, epochEnd: epochEnd),
               let night = trackers[side]?.openNight {
                lastOffered[side] = epochEnd
                wake.offer(serial: serial, side: side, night: night, upTo: epochEnd, dataEnd: last.time + 1)
            }
        }
        var ended = 0
        for event in events {
            switch event {
            case .started(let at):
                bus.publish(.presence(serial: serial, side: side, inBed: true, at: Date(timeIntervalSince1970: at)))
            case .preliminary(let night):
                await keeper.keep(night, serial: serial, side: side, isFinal: false)
            case .ended(let night):
                record(night, side: side, keeping: await keeper.keepEnded(night, serial: serial, side: side))
                ended += 1
            }
        }
        if events.contains(where: { if case .started = $0 { false } else { true } }) {
            await keepOpenStay(side)
        }
        return ended
    }

    /// Ends, as final, the open stays no data reached for longer than `maxDataGap` by the hub's
    /// clock: a pod unplugged or dead in the night sends nothing that could end them, and
    /// without this the night would stay preliminary, and the side in bed, until it came back.
    /// The stay ends at its last present second, its exit unseen, as when data resume that
    /// late. Returns how many ended.
    mutating func expire() async -> Int {
        var ended = 0
        for side in BedSide.allCases {
            guard let since = lastDataAt[side].map(clock.seconds(since:)), since > rules.maxDataGap,
                  let night = trackers[side]?.flush() else { continue }
            let last = LocalDateTime(clock.now().addingTimeInterval(-since), in: hubZone).timeOfDay
            reporter.event("\(side): no data from pod \(serial) since \(last): the session open since "
                           + "\(timeOfDay(night.start)) ends there")
            record(night, side: side, keeping: await keeper.keepEnded(night, serial: serial, side: side))
            await keepOpenStay(side)
            ended += 1
        }
        return ended + (await retryUnsaved())
    }

    /// Counts a night stored, or holds it to try again when the store refused it.
    private mutating func record(_ night: SessionTracker.Night, side: BedSide, keeping outcome: NightKeeper.Outcome) {
        nightsStored += outcome.finals
        guard outcome.failed else { return }
        unsaved[side, default: []].append(night)
        reporter.warning("\(side): the night since \(timeOfDay(night.start)) "
                         + "is held in memory and stored once the store takes it (tried every minute)")
    }

    /// A Unix time as the hub zone's time of day, for what the hub says.
    private func timeOfDay(_ unixTime: Double) -> TimeOfDay {
        LocalDateTime(Date(timeIntervalSince1970: unixTime), in: hubZone).timeOfDay
    }

    /// Stores the nights the store refused before; returns how many are now stored.
    private mutating func retryUnsaved() async -> Int {
        var stored = 0
        for (side, nights) in unsaved {
            var still: [SessionTracker.Night] = []
            for night in nights {
                let outcome = await keeper.keep(night, serial: serial, side: side, isFinal: true)
                if outcome.failed { still.append(night) } else { nightsStored += outcome.finals; stored += 1 }
            }
            unsaved[side] = still.isEmpty ? nil : still
            if still.isEmpty { await keepOpenStay(side) }
        }
        return stored
    }

    /// Keeps the side's open stay in the store (or forgets it when none is open), so a hub
    /// restarted in the night carries the night on: at every preliminary snapshot, at the end
    /// of a stay and at shutdown. A crash loses at most the data since the last snapshot,
    /// which the restarted hub then sees as a hole.
    /// An ended night the store refused keeps the side's last snapshot there (not dropped).
    /// Returns whether the store holds what it should.
    @discardableResult
    private func keepOpenStay(_ side: BedSide) async -> Bool {
        do {
            if let stay = trackers[side]?.openStay {
                try await keeper.store.keepOpenStay(podSerial: serial, side: side, lastSecond: Int64(stay.lastSecond),
                                                    data: OpenStayArchive.encode(stay))
            } else if unsaved[side] == nil {
                try await keeper.store.dropOpenStay(podSerial: serial, side: side)
            }
            return true
        } catch {
            reporter.warning("\(side): could not keep the open session for a restart: \(error)")
            return false
        }
    }

    /// Carries on the stays a stopped hub left open for this pod (its store's `open_stays`):
    /// the night goes on as one session instead of a preliminary half and a second night.
    mutating func resume() async {
        for side in BedSide.allCases {
            let kept: Data?
            do {
                kept = try await keeper.store.openStay(podSerial: serial, side: side)
            } catch {
                reporter.warning("\(side): cannot read the open session a stopped hub left: \(error)")
                continue
            }
            guard let kept else { continue }
            do {
                let stay = try OpenStayArchive.decode(kept)
                trackers[side] = SessionTracker(rules: rules, resuming: stay)
                // Its data stopped at its last second, by the clock of the hub that kept it.
                lastDataAt[side] = clock.mark(secondsAgo: clock.now().timeIntervalSince1970 - (stay.lastSecond + 1))
                let start = stay.seconds.first?.time ?? stay.lastPresent
                let since = timeOfDay(start)
                bus.publish(.presence(serial: serial, side: side, inBed: true, at: Date(timeIntervalSince1970: start)))
                reporter.event("\(side): carrying on the session open since \(since) "
                               + "(\(Int((stay.lastPresent + 1 - start) / 60)) min kept before the hub stopped)")
            } catch {
                // What is stored of the night (its preliminary session) stays; only the data kept
                // to carry it on are unreadable, and are dropped so the next stop can keep new ones.
                reporter.warning("\(side): the open session a stopped hub left cannot be carried on: \(error)")
                await keepOpenStay(side)
            }
        }
    }

    /// The hub is stopping: what the open sessions hold is kept as preliminary, never lost,
    /// and their data for `resume()`.
    /// Says so when the store took none of it: the night is then lost from this stop on (or
    /// carried on from an earlier snapshot, if one is kept).
    mutating func flush() async {
        _ = await retryUnsaved()
        for side in BedSide.allCases {
            for night in unsaved[side] ?? [] {
                reporter.warning("\(side): the night since \(timeOfDay(night.start)) "
                                 + "could not be stored before the hub stopped; a restart carries it on from the last "
                                 + "snapshot the store took, if any")
            }
            let snapshot = await keepOpenStay(side)
            guard let night = trackers[side]?.flush() else { continue }
            let minutes = Int((night.end - night.start) / 60)
            let preliminary = await keeper.keep(night, serial: serial, side: side, isFinal: false)
            if snapshot && !preliminary.failed {
                reporter.event("\(side): open session (\(minutes) min) kept as preliminary, to be carried on when the hub starts again")
            } else {
                reporter.warning("\(side): open session (\(minutes) min) NOT kept in full: the store refused "
                                 + (snapshot ? "its preliminary session" : "the data to carry it on")
                                 + " (above); a restart finds only what was stored before")
            }
        }
    }
}

extension SessionTracker.Rules {
    /// The rules the hub's configuration asks for.
    init(_ settings: HubConfiguration.SessionSettings) {
        self.init(maxGap: settings.maxGapMinutes * 60, preliminaryEvery: settings.preliminaryEveryMinutes * 60,
                  maxDataGap: settings.maxDataGapMinutes * 60)
    }
}
