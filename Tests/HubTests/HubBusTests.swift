#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SleepDomain
@testable import Hub
import PodDevice
import PodProtocol
import Synchronization
import Testing
import SystemCalls

/// The event bus: one publish reaches every subscriber; a subscriber that does not read
/// loses its oldest events (counted), and neither slows the publisher nor the others.
@Suite struct HubBusTests {
    static func live(_ t: Double, serial: String = "P1", side: BedSide = .left) -> HubEvent {
        .live(serial: serial, side: side, LiveSecond(time: t, present: true, heartRate: 60, breathingRate: 14,
                                                     movement: 0.1, quality: 0.9))
    }

    @Test func everySubscriberGetsEveryEventInOrder() async {
        let bus = HubBus()
        let a = BusRecorder(bus.subscribe(name: "a"))
        let b = BusRecorder(bus.subscribe(name: "b"))
        for t in 0..<100 { bus.publish(Self.live(Double(t))) }
        let expected = (0..<100).map { Self.live(Double($0)) }
        #expect(await a.events() == expected)
        #expect(await b.events() == expected)
        #expect(a.dropped == 0 && b.dropped == 0)
    }

    @Test func aSubscriberThatDoesNotReadLosesItsOldestEventsCountedWhileOthersGetAll() async {
        let bus = HubBus()
        let stuck = bus.subscribe(name: "stuck", bufferSize: 10)  // never read until the end
        let reader = BusRecorder(bus.subscribe(name: "reader", bufferSize: 10_000))
        for t in 0..<1000 { bus.publish(Self.live(Double(t))) }
        #expect(stuck.dropped == 990)
        #expect(bus.subscriberStats().first { $0.name == "stuck" }?.dropped == 990)
        // What the stuck subscriber still has is the newest ten.
        stuck.finish()
        var kept: [HubEvent] = []
        for await event in stuck { kept.append(event) }
        #expect(kept == (990..<1000).map { Self.live(Double($0)) })
        #expect(await reader.events().count == 1000)
        #expect(reader.dropped == 0)
    }

    @Test func aSubscribersOwnBeatsJoinItsEventsInOrderAndShareItsQueue() async {
        let bus = HubBus()
        let s = bus.subscribe(name: "beats", bufferSize: 4)
        bus.publish(Self.live(1))
        s.beat()
        bus.publish(Self.live(2))
        s.finish()
        var read: [String] = []
        for await delivery in s.deliveries {
            switch delivery {
            case .beat: read.append("beat")
            case .event(let event, _): read.append(event == Self.live(1) ? "1" : event == Self.live(2) ? "2" : "?")
            }
        }
        #expect(read == ["1", "beat", "2"])

        // Reading events alone skips the beats; a beat into a full queue drops the oldest, counted.
        let full = bus.subscribe(name: "full", bufferSize: 2)
        bus.publish(Self.live(1))
        bus.publish(Self.live(2))
        full.beat()
        full.beat()
        bus.publish(Self.live(3))
        #expect(full.dropped == 3)
        full.finish()
        var events: [HubEvent] = []
        for await event in full { events.append(event) }
        #expect(events == [Self.live(3)])
    }

    /// A subscriber that ignores the live seconds (the metrics, a console that prints nowhere)
    /// is not sent them, so it is not woken for them; its count says it was sent none.
    @Test func aSubscriberThatAcceptsSomeEventsIsSentThoseAloneReplayIncluded() async {
        let bus = HubBus(replayCapacity: 16, firstSequence: 1)
        let connected = HubEvent.linkProblem(detail: "held by another program", at: Date(timeIntervalSince1970: 5))
        let all = BusRecorder(bus.subscribe(name: "all"))
        let some = bus.subscribe(name: "some", accepts: { !$0.isLive })
        bus.publish(Self.live(1))
        bus.publish(connected)
        bus.publish(Self.live(2))
        #expect(await all.events() == [Self.live(1), connected, Self.live(2)])
        #expect(bus.subscriberStats().first { $0.name == "some" }?.delivered == 1)
        some.finish()
        var got: [HubEvent] = []
        for await event in some { got.append(event) }
        #expect(got == [connected])
        // Catching up after a number: the kept events it accepts.
        let again = bus.subscribe(name: "again", after: 0, accepts: { $0.isLive })
        #expect(again.resumed == .complete)
        again.finish()
        var replayed: [HubEvent] = []
        for await event in again { replayed.append(event) }
        #expect(replayed == [Self.live(1), Self.live(2)])
    }

    /// A client that lost its connection subscribes again after the last number it saw: it gets
    /// each event since once, in order, and is told what the bus no longer kept.
    @Test func aSubscriberCatchesUpAfterTheLastEventItSaw() async {
        let bus = HubBus(replayCapacity: 5, firstSequence: 1000)
        for t in 0..<3 { bus.publish(Self.live(Double(t))) }   // numbered 1000, 1001, 1002

        let resumed = bus.subscribe(name: "again", after: 1000)
        #expect(resumed.resumed == .complete)
        bus.publish(Self.live(3))                               // 1003, queued behind the replay
        resumed.finish()
        var got: [(UInt64, HubEvent)] = []
        for await delivery in resumed.deliveries {
            if case .event(let event, let sequence) = delivery { got.append((sequence, event)) }
        }
        #expect(got.map(\.0) == [1001, 1002, 1003])
        #expect(got.map(\.1) == [Self.live(1), Self.live(2), Self.live(3)])

        // Eight events published (1000…1007), five kept (1003…1007): after 1000, two are gone.
        for t in 4..<8 { bus.publish(Self.live(Double(t))) }
        let late = bus.subscribe(name: "late", after: 1000)
        #expect(late.resumed == .lost(2))
        late.finish()
        var numbers: [UInt64] = []
        for await delivery in late.deliveries { if case .event(_, let n) = delivery { numbers.append(n) } }
        #expect(numbers == [1003, 1004, 1005, 1006, 1007])

        // Up to date: nothing to replay. A number of another run (earlier, or later than any yet): unknown, nothing replayed.
        #expect(bus.subscribe(name: "current", after: 1007).resumed == .complete)
        for foreign: UInt64 in [5, 1008, .max] {
            let other = bus.subscribe(name: "other", after: foreign)
            #expect(other.resumed == .unknown, "\(foreign)")
            other.finish()
            var any = false
            for await _ in other.deliveries { any = true }
            #expect(!any, "\(foreign)")
        }
        #expect(bus.subscribe(name: "fresh").resumed == nil)
    }

    /// Readers cancelled while events are published to them: cancelling a reader ends its
    /// stream while the task's own lock is held, and publishing resumes readers under the bus's
    /// lock, so the end of a stream must not take the bus's lock (MQTTHubTests hung on it once).
    @Test func readersCancelledWhileEventsArePublishedNeitherHangNorStay() async {
        let bus = HubBus()
        let publishing = Task.detached {
            var t = 0.0
            while !Task.isCancelled { bus.publish(Self.live(t)); t += 1; await Task.yield() }
        }
        for round in 0..<300 {
            let s = bus.subscribe(name: "reader-\(round)", bufferSize: 4)
            let reader = Task.detached { for await _ in s {} }
            await Task.yield()
            reader.cancel()
            await reader.value
        }
        publishing.cancel()
        await publishing.value
        bus.publish(Self.live(-1))
        #expect(bus.subscriberStats().isEmpty)
    }

    @Test func aFinishedSubscriptionIsForgottenByTheBus() async {
        let bus = HubBus()
        let s = bus.subscribe(name: "gone")
        #expect(bus.subscriberStats().map(\.name) == ["gone"])
        s.finish()
        for await _ in s {}
        bus.publish(Self.live(1))
        #expect(bus.subscriberStats().isEmpty)
    }

    /// Forgotten either way: by the next event (its queue refuses it), or by a look at the list
    /// before any event (which scans for ended ones); the others still get every event.
    @Test func anEndedSubscriberIsForgottenByTheNextEventOrTheNextLook() async {
        let bus = HubBus()
        let stays = bus.subscribe(name: "stays")
        let looked = bus.subscribe(name: "looked")
        looked.finish()
        #expect(bus.subscriberStats().map(\.name) == ["stays"])
        let published = bus.subscribe(name: "published")
        published.finish()
        bus.publish(Self.live(1))
        bus.publish(Self.live(2))
        #expect(bus.subscriberStats() == [SubscriberStats(name: "stays", delivered: 2, dropped: 0)])
        stays.finish()
        var received = 0
        for await _ in stays { received += 1 }
        #expect(received == 2)
    }

    @Test func theStateFollowsConnectLiveCountersClockAndDisconnect() {
        var state = HubState()
        let pod = PodSummary(serial: "P1", firmware: "1.2.3", protocolVersion: 1, sides: 2, piezoChannelsPerSide: 2,
                             sampleRate: 500, bootCount: 4)
        let t0 = Date(timeIntervalSince1970: 1000)
        state.apply(.live(serial: "P1", side: .left, LiveSecond(time: 1, present: true, heartRate: nil, breathingRate: nil,
                                                                movement: 0, quality: 0)))
        #expect(state.pods.isEmpty, "readings of a pod never connected are not a pod")
        state.apply(.podConnected(pod, endpoint: "/dev/ttyACM0", at: t0))
        let anchor = ClockAnchor(tick: 10, unixMillis: 5000, utcOffsetMinutes: 60)
        state.apply(.clockSet(serial: "P1", anchor: anchor))
        var counters = LinkStats()
        counters.frames = 42
        state.apply(.linkCounters(serial: "P1", counters))
        if case .live(_, _, let second) = Self.live(7) { state.apply(.live(serial: "P1", side: .right, second)) }
        state.apply(.presence(serial: "P1", side: .right, inBed: true, at: t0))
        state.apply(.preliminaryStage(serial: "P1", side: .right, stage: .deep, epochStart: t0))
        var p = state.pods["P1"]
        #expect(p?.connected == true && p?.since == t0 && p?.endpoint == "/dev/ttyACM0")
        #expect(p?.clock == anchor && p?.counters.frames == 42)
        #expect(p?.live[.right]?.time == 7 && p?.inBed[.right] == true && p?.stage[.right] == .deep)
        #expect(state.connectedSerials == ["P1"])

        let t1 = Date(timeIntervalSince1970: 2000)
        state.apply(.podDisconnected(serial: "P1", reason: "unplugged", at: t1))
        p = state.pods["P1"]
        #expect(p?.connected == false && p?.since == t1 && p?.lastDisconnectReason == "unplugged")
        #expect(p?.clock == nil, "a clock anchor belongs to a link")
        #expect(p?.counters.frames == 42, "counters survive a disconnect")
        #expect(state.connectedSerials.isEmpty)
        state.apply(.presence(serial: "P1", side: .right, inBed: false, at: t1))
        #expect(state.pods["P1"]?.stage[.right] == nil)
        // An acknowledged power command, whoever sent it, is the side's power (MQTT's switch).
        state.apply(.powerSet(serial: "P1", side: .left, on: true, level: 40))
        #expect(state.pods["P1"]?.power == [.left: true])
        state.apply(.powerSet(serial: "P1", side: .left, on: false, level: 100))
        #expect(state.pods["P1"]?.power[.left] == false)
    }

    @Test func controlCommandsAreCheckedBeforeAnythingIsSent() throws {
        #expect(try HubControl.message(for: .snooze(side: .left, seconds: 300)) == .snooze(side: .left, seconds: 300))
        #expect(try HubControl.message(for: .stopAlarm(side: .right)) == .clearAlarm(side: .right))
        #expect(try HubControl.message(for: .power(side: .left, on: true, level: 40))
                == .setPower(PowerCommand(side: .left, on: true, level: 40)))
        #expect(try HubControl.message(for: .power(side: .left, on: false, level: 0))
                == .setPower(PowerCommand(side: .left, on: false, level: 0)))
        #expect(throws: HubControl.ControlError.self) { try HubControl.message(for: .snooze(side: .left, seconds: 0)) }
        #expect(throws: HubControl.ControlError.self) { try HubControl.message(for: .snooze(side: .left, seconds: 3601)) }
        #expect(throws: HubControl.ControlError.self) { try HubControl.message(for: .power(side: .left, on: true, level: 101)) }
        #expect(throws: HubControl.ControlError.self) { try HubControl.message(for: .power(side: .left, on: true, level: 0)) }
    }

    @Test func linkFailuresTellWhatToDo() {
        let denied = LinkFailureAdvice.advice(for: .transport(.failed(.system(SystemError(call: "open(/dev/ttyACM0)", errno: EACCES)))))
        #expect(denied?.contains("udev/70-podbridge.rules") == true && denied?.contains("dialout") == true)
        #expect(denied?.contains("Permission denied") == true, "the system's own words are kept")
        let usbDenied = LinkFailureAdvice.advice(for: .transport(.failed(.usb(call: "libusb_open", code: -3))))  // LIBUSB_ERROR_ACCESS
        #expect(usbDenied?.contains("dialout") == true)
        let busy = LinkFailureAdvice.advice(for: .transport(.failed(.inUse(path: "/dev/ttyACM0"))))
        #expect(busy?.contains("Another program holds it") == true)
        let ebusy = LinkFailureAdvice.advice(for: .transport(.failed(.system(SystemError(call: "open(/dev/ttyACM0)", errno: EBUSY)))))
        #expect(ebusy?.contains("Another program holds it") == true)
        let silent = LinkFailureAdvice.advice(for: .link(.timeout(request: .hello, attempts: 4)))
        #expect(silent?.contains("did not answer HELLO") == true)
        let missing = LinkFailureAdvice.advice(for: .transport(.failed(.system(SystemError(call: "open(/dev/pod)", errno: ENOENT)))))
        #expect(missing?.contains("not there") == true)
        #expect(LinkFailureAdvice.advice(for: .transport(.disconnected(.system(SystemError(call: "read", errno: EIO))))) == nil)
        #expect(LinkFailureAdvice.advice(for: .link(.disconnected(.closed))) == nil)
    }
}
