import Foundation
import SleepSchedule

/// Schedule benchmark: time to infer a schedule from 60 nights (what the daemon does after
/// each night), to convert it, and for the push policy to handle one event (it runs on every
/// answer and tick). All pure; the figures show the schedule service costs nothing at runtime.
func runScheduleBench(options: BenchOptions) throws {
    let zone = TimeZone(identifier: "Europe/Berlin")!
    let nightsCount = 60
    // Nights waking 2026-01-01 … with ±20 min jitter from a fixed LCG, weekends 90 min later.
    var state: UInt64 = 0x5eed
    func jitter() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double((state >> 33) % 2401) / 60.0 - 20
    }
    let day0 = 20_454.0 * 86_400  // 2026-01-01 00:00 UTC
    var nights: [SleepNight] = []
    for i in 0..<nightsCount {
        let weekend = (i + 3) % 7 >= 5  // 2026-01-01 is a Thursday
        let wakeLocal = day0 + Double(i) * 86_400 + (weekend ? 9 * 3600 : 7 * 3600) + jitter() * 60
        let bedLocal = wakeLocal - 8 * 3600 + jitter() * 60
        nights.append(SleepNight(startUnix: bedLocal - 3600, endUnix: wakeLocal - 3600))  // CET = UTC+1
    }
    let now = Date(timeIntervalSince1970: day0 + Double(nightsCount) * 86_400)
    var c = ScheduleInferenceConfiguration()
    c.lookbackDays = nightsCount + 1

    let rounds = options.quick ? 200 : 2000
    var result = try ScheduleInference.infer(nights: nights, now: now, timeZone: zone, configuration: c)
    var start = Date()
    for _ in 0..<rounds {
        result = try ScheduleInference.infer(nights: nights, now: now, timeZone: zone, configuration: c)
    }
    let inferUs = Date().timeIntervalSince(start) / Double(rounds) * 1e6
    print("schedule.infer_60_nights: \(String(format: "%.1f", inferUs)) µs per inference")
    print("schedule.infer_result: weekday \(result.weekday.times) [\(result.weekday.source)], weekend \(result.weekend.times) [\(result.weekend.source)]")

    start = Date()
    var pod = try PodScheduleConverter.convert(result, side: .left)
    for _ in 0..<rounds { pod = try PodScheduleConverter.convert(result, side: .left) }
    let convertUs = Date().timeIntervalSince(start) / Double(rounds) * 1e6
    print("schedule.convert: \(String(format: "%.2f", convertUs)) µs per side")

    // Push policy: connect, acknowledge everything, then ticks.
    var policy = SchedulePushPolicy()
    _ = policy.handle(.desiredChanged(DesiredPodState(timeZone: zone, schedules: [pod])), now: now)
    var events = 0
    start = Date()
    for r in 0..<rounds {
        let t = now.addingTimeInterval(Double(r) * 60)
        var actions = policy.handle(.connected, now: t)
        events += 1
        while let cmd = actions.lazy.compactMap({ a -> ScheduleCommand? in
            if case .send(let c, _) = a { return c } else { return nil }
        }).first {
            actions = policy.handle(.acknowledged(cmd.key), now: t)
            events += 1
        }
        _ = policy.handle(.tick, now: t.addingTimeInterval(30))
        events += 1
    }
    let eventUs = Date().timeIntervalSince(start) / Double(events) * 1e6
    print("schedule.push_policy_event: \(String(format: "%.2f", eventUs)) µs per event")
}
