import NightModel
import PodAnalysis
import PodProtocol
import SleepAnalysis
import Testing
import SleepDomain

/// Collects a router's output per side.
struct Collected: Equatable {
    var left = FrontEndOutput()
    var right = FrontEndOutput()

    mutating func add(_ outputs: [SideOutput]) {
        for o in outputs {
            if o.side == .left { left.append(o.output) } else { right.append(o.output) }
        }
    }

    subscript(side: BedSide) -> FrontEndOutput { side == .left ? left : right }
}

extension PodSignalRouter {
    mutating func feed(_ messages: [Message], into c: inout Collected) {
        for m in messages { c.add(apply(m)) }
    }
}

/// 2025-06-15 15:06:40 UTC, in milliseconds.
let anchorMillis: Int64 = 1_750_000_000_000

@Suite struct PodSignalRouterTests {
    @Test func routesEachSideToItsOwnFrontEnd() {
        var stream = NightStream(inBedNight(seed: 3, duration: 120, right: false), firstTick: 1000)
        var router = PodSignalRouter()
        var c = Collected()
        router.anchor(ClockAnchor(tick: 1000, unixMillis: anchorMillis, utcOffsetMinutes: 60))
        router.feed(stream.next(seconds: 120), into: &c)
        c.add(router.finish())

        // Left: someone in bed, heart rates near the model's 58 bpm, beats.
        let left = c.left.seconds
        #expect(left.count >= 118 && left.count <= 121)
        #expect(left.filter(\.present).count > 100)
        let rates = left.compactMap { $0.heartRate.value }
        #expect(rates.count > 60)
        // Their mean is the model's over the same seconds.
        let truth = stream.simulator.truth.sides[0].heartRate
        let t0 = Double(anchorMillis / 1000)
        let pairs = left.compactMap { v in v.heartRate.value.flatMap { hr in truth[Int(v.time - t0)].map { (hr, $0) } } }
        let bias = pairs.map { $0.0 - $0.1 }.reduce(0, +) / Double(pairs.count)
        #expect(abs(bias) < 2, "mean error \(bias) bpm")
        #expect(c.left.beats.count > 60)
        // Right: empty, next to the occupied side.
        #expect(c.right.seconds.count >= 118)
        #expect(c.right.seconds.allSatisfy { !$0.present && $0.heartRate.value == nil })
        #expect(c.right.beats.isEmpty)
        // Seconds are Unix seconds from the anchor: tick 1000 is anchorMillis.
        #expect(left.first?.time == Double(anchorMillis / 1000))
        let counters = router.counters
        #expect(counters.left.piezoFrames == 1200 && counters.right.piezoFrames == 1200)
        #expect(counters.left.capacitanceFrames == 240 && counters.right.capacitanceFrames == 240)
        #expect(counters.left.samples == 60_000)
        #expect(counters.left.tickGaps == 0 && counters.left.missingSamples == 0)
        #expect(counters.left.frontEnd.rejectedCapacitance == 0)
        #expect(counters.anchors == 1 && counters.reboots == 0)
    }

    @Test func dropsAndCountsDataBeforeTheFirstAnchor() {
        var stream = NightStream(inBedNight(seed: 4, duration: 40), firstTick: 0)
        var router = PodSignalRouter()
        var c = Collected()
        router.feed(stream.next(seconds: 10), into: &c)  // 100 blocks and 20 readings per side
        #expect(c.left.seconds.isEmpty && c.right.seconds.isEmpty)
        // The clock was set at tick 5000 (10 s in); ticks before it map backwards from it.
        let anchor = ClockAnchor(tick: 5000, unixMillis: anchorMillis, utcOffsetMinutes: 0)
        router.feed([.response(Response(request: .setClock, status: .ok, body: .clock(anchor)))], into: &c)
        router.anchor(anchor)  // the same anchor again (the daemon's event and the frame): no change
        router.feed(stream.next(seconds: 30), into: &c)
        c.add(router.finish())
        let counters = router.counters
        #expect(counters.anchors == 1)
        #expect(counters.left.droppedBeforeAnchor == 120 && counters.right.droppedBeforeAnchor == 120)
        #expect(counters.left.samplesBeforeAnchor == 5000)
        #expect(counters.left.piezoFrames == 300)
        #expect(c.left.seconds.first?.time == Double(anchorMillis / 1000))
        #expect(c.left.seconds.last.map { $0.time >= Double(anchorMillis / 1000) + 29 } == true)
    }

    @Test func countsGapsInTicksWithoutFillingThem() {
        var stream = NightStream(inBedNight(seed: 5, duration: 60), firstTick: 0)
        var router = PodSignalRouter()
        var c = Collected()
        router.anchor(ClockAnchor(tick: 0, unixMillis: anchorMillis, utcOffsetMinutes: 0))
        var messages = stream.next(seconds: 60)
        // Lose three consecutive left blocks (150 samples) and one right block.
        var lostLeft = 0
        messages.removeAll { m in
            guard case .piezo(let b) = m else { return false }
            if b.side == .left, (15_000..<15_150).contains(b.firstTick) { lostLeft += 1; return true }
            return b.side == .right && b.firstTick == 20_000
        }
        #expect(lostLeft == 3)
        router.feed(messages, into: &c)
        c.add(router.finish())
        let counters = router.counters
        #expect(counters.left.tickGaps == 1 && counters.left.missingSamples == 150)
        #expect(counters.right.tickGaps == 1 && counters.right.missingSamples == 50)
        // Longer than the front end bridges: its filters restarted, nothing was invented.
        #expect(counters.left.frontEnd.resets == 1 && counters.right.frontEnd.resets == 1)
        #expect(counters.left.frontEnd.frames == 30_000 - 150)
        // Seconds still run on without a hole in time (the gap is 0.3 s).
        let times = c.left.seconds.map(\.time)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 == $0 + 1 })
    }

    @Test func placesSamplesAcrossARebootWithANewAnchor() {
        let config = inBedNight(seed: 6, duration: 200, right: false)
        var router = PodSignalRouter()
        var c = Collected()
        // Boot 1: clock set at tick 2000; 90 s of data.
        var first = NightStream(config, firstTick: 2000)
        router.anchor(ClockAnchor(tick: 2000, unixMillis: anchorMillis, utcOffsetMinutes: 0))
        router.feed(first.next(seconds: 90), into: &c)
        // The pod restarts: BOOT, a block that slipped out before the clock was set again
        // (dropped), then the new anchor 20 s after the old data ended, ticks from 0.
        router.feed([.event(PodEvent(tick: 0, kind: .boot, side: nil, argument: 1))], into: &c)
        var second = NightStream(config, firstTick: 300)
        router.feed(Array(second.next(seconds: 0.1).prefix(1)), into: &c)
        #expect(router.counters.left.droppedBeforeAnchor == 1)
        router.anchor(ClockAnchor(tick: 300, unixMillis: anchorMillis + 110_000, utcOffsetMinutes: 0))
        router.feed(second.next(seconds: 90), into: &c)
        c.add(router.finish())

        let counters = router.counters
        #expect(counters.reboots == 1 && counters.anchors == 2)
        #expect(counters.left.staleFrames == 0 && counters.left.repeatedSamples == 0)
        #expect(counters.left.frontEnd.overlappingSamples == 0)
        #expect(counters.left.frontEndRestarts == 0)
        let times = c.left.seconds.map(\.time)
        let t0 = Double(anchorMillis / 1000)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 > $0 })
        #expect(times.first == t0)
        // Data of the second boot lands at its anchor's time, after the 20-s hole (the
        // front end emits short holes as absent seconds, never as readings).
        #expect(times.last.map { $0 >= t0 + 110 + 89.9 - 1 && $0 < t0 + 201 } == true)
        let hole = c.left.seconds.filter { $0.time >= t0 + 91 && $0.time < t0 + 109 }
        #expect(hole.allSatisfy { $0.heartRate.value == nil })
        let after = c.left.seconds.filter { $0.time >= t0 + 140 }
        #expect(after.filter { $0.heartRate.value != nil }.count > 30)
    }

    @Test func aLowerAnchorTickWithoutBootIsARestart() {
        let config = inBedNight(seed: 7, duration: 60, right: false)
        var router = PodSignalRouter()
        var c = Collected()
        var first = NightStream(config, firstTick: 50_000)
        router.anchor(ClockAnchor(tick: 50_000, unixMillis: anchorMillis, utcOffsetMinutes: 0))
        router.feed(first.next(seconds: 20), into: &c)
        var second = NightStream(config, firstTick: 100)
        router.anchor(ClockAnchor(tick: 100, unixMillis: anchorMillis + 25_000, utcOffsetMinutes: 0))
        router.feed(second.next(seconds: 20), into: &c)
        c.add(router.finish())
        #expect(router.counters.reboots == 1)
        #expect(router.counters.left.staleFrames == 0)
        #expect(router.counters.left.frontEnd.overlappingSamples == 0)
        #expect(c.left.seconds.last.map { $0.time >= Double(anchorMillis / 1000) + 43 } == true)
    }

    @Test func ticksRunningBackwardsUnderTheSameAnchorAreDropped() {
        let config = inBedNight(seed: 8, duration: 30, right: false)
        var router = PodSignalRouter()
        var c = Collected()
        var first = NightStream(config, firstTick: 10_000)
        router.anchor(ClockAnchor(tick: 10_000, unixMillis: anchorMillis, utcOffsetMinutes: 0))
        router.feed(first.next(seconds: 10), into: &c)
        // A restarted pod streaming with nobody re-anchoring: its ticks cannot be placed.
        var restarted = NightStream(config, firstTick: 0)
        router.feed(restarted.next(seconds: 2), into: &c)
        #expect(router.counters.left.staleFrames == 20)
        #expect(router.counters.left.piezoFrames == 100)
    }

    @Test func aClockSteppedBackRestartsTheFrontEnd() {
        let config = inBedNight(seed: 9, duration: 60, right: false)
        var router = PodSignalRouter()
        var c = Collected()
        var stream = NightStream(config, firstTick: 0)
        router.anchor(ClockAnchor(tick: 0, unixMillis: anchorMillis, utcOffsetMinutes: 0))
        router.feed(stream.next(seconds: 30), into: &c)
        // Same boot, the hub's clock corrected one hour back: tick 15000 is now an hour earlier.
        router.anchor(ClockAnchor(tick: 15_000, unixMillis: anchorMillis + 30_000 - 3_600_000, utcOffsetMinutes: 0))
        router.feed(stream.next(seconds: 30), into: &c)
        c.add(router.finish())
        let counters = router.counters
        #expect(counters.reboots == 0 && counters.left.frontEndRestarts == 1)
        #expect(counters.left.tickGaps == 0 && counters.left.frontEnd.overlappingSamples == 0)
        let t0 = Double(anchorMillis / 1000)
        #expect(c.left.seconds.contains { $0.time == t0 + 29 })
        #expect(c.left.seconds.contains { $0.time == t0 + 30 - 3600 })
    }

    @Test func capacitanceArrivingAfterItsPiezoStillGoesFirst() {
        // The same stream twice: in tick order, and with every reading 0.4 s late (behind
        // the blocks it precedes). The router puts readings first: identical output.
        let config = inBedNight(seed: 10, duration: 40, right: false)
        var stream = NightStream(config, firstTick: 0)
        let inOrder = stream.next(seconds: 40)
        var delayed: [(Int, Message)] = []
        var kept: [Message] = []
        for m in inOrder {
            if case .capacitance = m { delayed.append((kept.count + 8, m)) } else { kept.append(m) }
        }
        var late: [Message] = []
        var d = 0
        for (i, m) in kept.enumerated() {
            while d < delayed.count, delayed[d].0 <= i { late.append(delayed[d].1); d += 1 }
            late.append(m)
        }
        late += delayed[d...].map(\.1)
        #expect(late.count == inOrder.count && late != inOrder)

        func run(_ messages: [Message]) -> (Collected, PodSignalCounters) {
            var router = PodSignalRouter()
            var c = Collected()
            router.anchor(ClockAnchor(tick: 0, unixMillis: anchorMillis, utcOffsetMinutes: 0))
            router.feed(messages, into: &c)
            c.add(router.finish())
            return (c, router.counters)
        }
        let (a, ca) = run(inOrder)
        let (b, cb) = run(late)
        #expect(cb.left.frontEnd.rejectedCapacitance == 0)
        #expect(a.left == b.left)
        #expect(ca.left.capacitanceFrames == cb.left.capacitanceFrames)
        #expect(a.left.seconds.filter(\.present).count > 25)
    }

    @Test func piezoWithoutCapacitanceIsHeldAtMostASecond() {
        var stream = NightStream(inBedNight(seed: 11, duration: 30, right: false), firstTick: 0)
        let piezo = stream.next(seconds: 30).filter { if case .piezo = $0 { true } else { false } }
        var router = PodSignalRouter()
        var c = Collected()
        router.anchor(ClockAnchor(tick: 0, unixMillis: anchorMillis, utcOffsetMinutes: 0))
        router.feed(piezo, into: &c)
        // 30 s in, a second held, 8 s of lookahead: about 21 s already out before finish.
        #expect(c.left.seconds.count >= 20 && c.left.seconds.count <= 22)
        c.add(router.finish())
        #expect(c.left.seconds.count == 30)
    }

    @Test func malformedBlocksAreCountedAndSkipped() {
        var router = PodSignalRouter()
        router.anchor(ClockAnchor(tick: 0, unixMillis: anchorMillis, utcOffsetMinutes: 0))
        _ = router.apply(.piezo(PiezoBlock(side: .right, channels: 0, gain: 1, firstTick: 0, samples: [1, 2, 3])))
        _ = router.apply(.piezo(PiezoBlock(side: .right, channels: 2, gain: 1, firstTick: 0, samples: [1, 2, 3])))
        _ = router.apply(.piezo(PiezoBlock(side: .left, channels: 1, gain: 1, firstTick: UInt64.max, samples: [1])))
        _ = router.apply(.capacitance(CapacitanceReading(side: .left, tick: UInt64.max, values: [1, 2, 3])))
        _ = router.apply(.environment(EnvironmentReading(tick: 0, bedLeft: 3000, bedRight: nil, ambient: nil, humidity: nil)))
        #expect(router.counters.right.malformedFrames == 2)
        #expect(router.counters.left.malformedFrames == 2)
        #expect(router.counters.left.piezoFrames == 0 && router.counters.right.piezoFrames == 0)
        #expect(router.finish().isEmpty)
    }
}
