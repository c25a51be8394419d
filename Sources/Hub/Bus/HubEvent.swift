import Foundation
import SleepDomain
import PodDevice
import PodProtocol
import SleepAnalysis

/// Everything the running hub tells its listeners (the console, the API's live streams,
/// MQTT), published once on the `HubBus`. Values only: a listener can keep, encode or
/// drop an event without reaching back into the part that published it.
package enum HubEvent: Sendable, Hashable {
    /// HELLO answered: the pod, where it was opened, and when (the hub's clock).
    case podConnected(PodSummary, endpoint: String, at: Date)
    /// The link to the pod ended; the connection keeps trying to come back.
    case podDisconnected(serial: String, reason: String, at: Date)
    /// Why the hub cannot use the pod it found (permission denied, held by another program, no
    /// answer to HELLO, the link given up), as the advice the log gives; nil once that is over
    /// (the pod unplugged). Published when it changes; a connect ends it as well.
    case linkProblem(detail: String?, at: Date)
    /// SET_CLOCK acknowledged (start-up, reboot, DST or re-sync): ticks now map to this anchor.
    case clockSet(serial: String, anchor: ClockAnchor)
    /// The link's counters, cumulative over every session of the pod (published periodically).
    case linkCounters(serial: String, LinkStats)
    /// One second of one side's live readings, timed by the data's own clock.
    case live(serial: String, side: BedSide, LiveSecond)
    /// Someone got into (`inBed: true`) or out of this side of the bed (data time).
    case presence(serial: String, side: BedSide, inBed: Bool, at: Date)
    /// The newest epoch's stage from the preliminary analysis of the night under way.
    case preliminaryStage(serial: String, side: BedSide, stage: SleepStage, epochStart: Date)
    /// The pod's alarm fired, was snoozed, stopped, or failed.
    case alarm(AlarmNotice)
    /// A schedule, alarm or clock command was sent to the pod, with its answer.
    case schedulePushed(SchedulePushNotice)
    /// The side's power schedule and alarm in force are both acknowledged, and stored as such
    /// (after the last push's `schedulePushed`, so a reader of the store sees it now).
    case scheduleAcknowledged(serial: String, side: BedSide)
    /// The pod acknowledged a power command for the side (from the API, MQTT or the dashboard):
    /// on at `level` %, or off.
    case powerSet(serial: String, side: BedSide, on: Bool, level: Int)
    /// The pod switched the side's power by its own schedule (its POWER_ON or POWER_OFF event),
    /// or its status says the power is `on` where the hub thought otherwise or did not know (after
    /// the hub's start, or an event lost on the way): what the pod does, whoever asked for it.
    case powerReported(serial: String, side: BedSide, on: Bool)
    /// A night ended and was stored as final.
    case nightFinished(NightSummary)
    /// Smart wake: a window opened, the decision, the alarm ringing, a repeat, a snooze,
    /// the side emptying (the wake's record after the change).
    case wake(WakeNotice)
    /// Presence-driven power switched a side off or on, or held its power on past the
    /// scheduled off, with the reason (docs/schedule.md §5).
    case presencePower(PresencePowerNotice)
    /// The owner changed a side's presence-driven power (switch, rules, away): what is in force now.
    case presencePowerSettings(serial: String, side: BedSide, PresencePowerInForce)
    /// The owner changed the smart-wake window or "until out of bed" of these sides (stored).
    case wakeSettings(serial: String, sides: [BedSide])
}

/// Who the pod is, from its HELLO answer.
package struct PodSummary: Sendable, Hashable, Codable {
    package var serial: String
    package var firmware: String
    package var protocolVersion: Int
    package var sides: Int
    package var piezoChannelsPerSide: Int
    package var sampleRate: Int
    package var bootCount: Int

    package init(serial: String, firmware: String, protocolVersion: Int, sides: Int, piezoChannelsPerSide: Int,
                sampleRate: Int, bootCount: Int) {
        self.serial = serial
        self.firmware = firmware
        self.protocolVersion = protocolVersion
        self.sides = sides
        self.piezoChannelsPerSide = piezoChannelsPerSide
        self.sampleRate = sampleRate
        self.bootCount = bootCount
    }

    package init(_ info: PodInfo) {
        self.init(serial: info.serial, firmware: info.firmware.description, protocolVersion: Int(info.protocolVersion),
                  sides: Int(info.sides), piezoChannelsPerSide: Int(info.piezoChannelsPerSide),
                  sampleRate: Int(info.sampleRate), bootCount: Int(info.bootCount))
    }
}

/// The link's counters as the surfaces show them: the hub's own value, so a surface (the API,
/// MQTT) needs nothing from PodDevice to read the bus. Cumulative over every session of a pod.
package struct LinkStats: Sendable, Hashable, Codable {
    /// Valid frames received, and the bytes they came in.
    package var frames: UInt64 = 0
    package var bytes: UInt64 = 0
    /// Frames the pod sent that never arrived valid (sum of sequence gaps), and the gaps.
    package var droppedFrames: UInt64 = 0
    package var sequenceGaps: UInt64 = 0
    package var crcErrors: UInt64 = 0
    /// Cut-short, oversize, unreadable, wrong-version or incompatible-flag frames, and frames
    /// beyond what HELLO announced.
    package var malformed: UInt64 = 0
    package var unknownTypes: UInt64 = 0
    /// Links re-established, requests re-sent, never answered, refused; pod resets seen.
    package var reconnects: UInt64 = 0
    package var retransmits: UInt64 = 0
    package var timeouts: UInt64 = 0
    package var nacks: UInt64 = 0
    package var podReboots: UInt64 = 0

    package init() {}

    package init(_ c: LinkCounters) {
        frames = c.frames; bytes = c.bytes; droppedFrames = c.droppedFrames; sequenceGaps = c.sequenceGaps
        crcErrors = c.crcErrors; malformed = c.malformed; unknownTypes = c.unknownTypes; reconnects = c.reconnects
        retransmits = c.retransmits; timeouts = c.timeouts; nacks = c.nacks; podReboots = c.podReboots
    }
}

/// One second of one side: what the live tiles, gauges and topics show.
package struct LiveSecond: Sendable, Hashable, Codable {
    /// Unix seconds of the start of this second, from the pod's ticks and clock anchor.
    package var time: Double
    package var present: Bool
    /// Beats per minute, nil when there is no reading (absent, moving, poor signal).
    package var heartRate: Double?
    /// Breaths per minute, nil when there is no reading.
    package var breathingRate: Double?
    /// Movement index: 0 still, larger is more movement.
    package var movement: Double
    /// Signal quality 0 (useless) … 1 (clean).
    package var quality: Double

    package init(time: Double, present: Bool, heartRate: Double?, breathingRate: Double?, movement: Double, quality: Double) {
        self.time = time
        self.present = present
        self.heartRate = heartRate
        self.breathingRate = breathingRate
        self.movement = movement
        self.quality = quality
    }

    package init(_ v: SecondVitals) {
        self.init(time: v.time, present: v.present, heartRate: v.heartRate.value, breathingRate: v.breathingRate.value,
                  movement: v.movement, quality: v.quality)
    }
}

/// An alarm event from the pod, as recorded in the store.
package struct AlarmNotice: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Hashable, Codable, CaseIterable { case fired, snoozed, stopped, failed }
    package var serial: String
    package var side: BedSide?
    package var kind: Kind
    /// The pod's time of the event.
    package var at: Date
    /// The event's argument (intensity %, snooze seconds, stop reason, failure reason).
    package var argument: Int
    /// The sentence the console prints.
    package var text: String

    package init(serial: String, side: BedSide?, kind: Kind, at: Date, argument: Int, text: String) {
        self.serial = serial
        self.side = side
        self.kind = kind
        self.at = at
        self.argument = argument
        self.text = text
    }
}

/// One command the schedule service sent to the pod, and what the pod said.
package struct SchedulePushNotice: Sendable, Hashable, Codable {
    package enum Outcome: String, Sendable, Hashable, Codable, CaseIterable { case ack, nack, timeout, linkLost }
    package var serial: String
    /// The command's key ("power-schedule left", "alarm right", "clock").
    package var command: String
    /// What it asks for, in words.
    package var detail: String
    package var attempt: Int
    package var outcome: Outcome
    /// The pod's status on a nack.
    package var status: String?
    /// When it was sent (the hub's clock).
    package var at: Date

    package init(serial: String, command: String, detail: String, attempt: Int, outcome: Outcome, status: String?, at: Date) {
        self.serial = serial
        self.command = command
        self.detail = detail
        self.attempt = attempt
        self.outcome = outcome
        self.status = status
        self.at = at
    }
}

/// A finished night as stored: enough for a notification or a tile without a store read.
package struct NightSummary: Sendable, Hashable, Codable {
    package var serial: String
    package var side: BedSide
    /// yyyy-MM-dd, the local date the night ends on.
    package var wakeDate: String
    package var start: Date
    package var end: Date
    package var metrics: SessionMetrics

    package init(serial: String, side: BedSide, wakeDate: String, start: Date, end: Date, metrics: SessionMetrics) {
        self.serial = serial
        self.side = side
        self.wakeDate = wakeDate
        self.start = start
        self.end = end
        self.metrics = metrics
    }
}

extension HubEvent {
    /// A live second (two a second while a pod streams): what a subscriber that ignores them
    /// leaves out with `HubBus.subscribe(accepts:)`, so it is not woken for them.
    package var isLive: Bool {
        if case .live = self { true } else { false }
    }
}
