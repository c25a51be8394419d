import NightModel
import PodAnalysis
import PodProtocol
import SleepAnalysis
import Testing

@Suite struct LivePodAnalysisTests {
    @Test func showsTheNewestVitalsPerSide() {
        // The sleeper lies down 10 s in (an empty bed first, so presence is learnt as live).
        let sleeper = SleeperProfile(getsIn: 10, getsOutBeforeEnd: 0, sleepOnsetLatency: 30, bathroomTrip: false)
        let config = NightConfig(seed: 41, duration: 200, sides: [SideConfig(sleeper: sleeper), .empty], pumpVibration: false)
        var stream = NightStream(config, firstTick: 0)
        var live = LivePodAnalysis()
        for m in stream.next(seconds: 5) { live.apply(m) }
        #expect(live.vitals(for: .left) == nil)  // nothing placed without an anchor
        #expect(live.counters.left.droppedBeforeAnchor == 60)

        live.anchor(ClockAnchor(tick: 2500, unixMillis: anchorMillis, utcOffsetMinutes: 0))
        for m in stream.next(seconds: 60) { live.apply(m) }
        let left = try! #require(live.vitals(for: .left))
        let right = try! #require(live.vitals(for: .right))
        // 60 s after the anchor, 8 s of lookahead and up to 1 s held: the newest second.
        let t0 = Double(anchorMillis / 1000)
        #expect(left.latest.time >= t0 + 50 && left.latest.time <= t0 + 52)
        #expect(left.latest.present && !right.latest.present)
        #expect(left.latest.heartRate.value.map { $0 > 40 && $0 < 100 } == true)
        #expect(left.latest.breathingRate.value.map { $0 > 6 && $0 < 25 } == true)
        #expect(left.movement >= 0 && left.movement < 2.5)
        #expect(right.latest.heartRate == .none(.absent))

        // The pod restarts: nothing is placed until the hub sets the clock again.
        live.podRestarted()
        var rebooted = NightStream(inBedNight(seed: 41, duration: 20, right: false), firstTick: 0)
        for m in rebooted.next(seconds: 10) { live.apply(m) }
        #expect(live.counters.reboots == 1)
        #expect(live.counters.left.droppedBeforeAnchor == 60 + 120)
        #expect(live.vitals(for: .left)?.latest.time == left.latest.time + 1 || live.vitals(for: .left)?.latest.time == left.latest.time)
    }
}
