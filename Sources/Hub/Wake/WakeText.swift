import Foundation
import SleepDomain
import SleepStore

extension WakeRecord {
    /// One line for the night's summary, the API and the dashboard, e.g.
    /// "wake 06:30–07:00 (30 min): light_sleep at 06:41:00 (core 0.82, movement 1.20), 19.0 min before the end,
    /// alarm triggered, rang 06:41:00; 1 repeat, 0 snoozes; back to bed once; out of bed 06:52:10".
    package func summary(in zone: TimeZone) -> String {
        func clock(_ unix: Int64) -> String {
            let l = LocalDateTime(Date(timeIntervalSince1970: Double(unix)), in: zone)
            let s = Int(((unix % 60) + 60) % 60)
            return "\(l.timeOfDay):\(s < 10 ? "0" : "")\(s)"
        }
        func fixed(_ v: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", v) }
        var text = windowMinutes > 0
            ? "wake window \(LocalDateTime(Date(timeIntervalSince1970: Double(windowStart)), in: zone).timeOfDay)–"
                + "\(LocalDateTime(Date(timeIntervalSince1970: Double(windowEnd)), in: zone).timeOfDay) "
                + "(\(windowLength))"
            : "alarm \(LocalDateTime(Date(timeIntervalSince1970: Double(windowEnd)), in: zone).timeOfDay) (no window)"
        if let reason, let decidedAt {
            var detail: [String] = []
            if let stage { detail.append("\(stage.rawValue) \(fixed(stageProbability ?? 0, 2))") }
            if let movement { detail.append("movement \(fixed(movement, 2))") }
            if let heartRateRise { detail.append("\(heartRateRise >= 0 ? "+" : "")\(fixed(heartRateRise, 1)) bpm") }
            text += ": \(reason) at \(clock(decidedAt)) (\(detail.isEmpty ? "no signal" : detail.joined(separator: ", ")))"
            if let minutesBeforeEnd, minutesBeforeEnd > 0 { text += ", \(fixed(minutesBeforeEnd, 1)) min before the end" }
            if triggered { text += ", alarm triggered by the hub" }
            if let triggerError { text += ", trigger failed (\(triggerError))" }
        } else if windowMinutes > 0 {
            text += ": no decision"
        }
        text += firedAt.map { "; rang \(clock($0))" } ?? "; did not ring"
        text += "; \(repeats) repeat\(repeats == 1 ? "" : "s"), \(snoozes) snooze\(snoozes == 1 ? "" : "s")"
        if returnsToBed > 0 { text += "; back to bed \(returnsToBed == 1 ? "once" : "\(returnsToBed) times")" }
        if let outOfBedAt { text += "; out of bed \(clock(outOfBedAt))" }
        return text
    }

    /// "30 min", or "10 of 30 min: the clocks went forward" when a spring-forward gap took wall
    /// minutes out of the window (it is never longer in real time than its wall length), so the
    /// line says how long the hub really watched.
    package var windowLength: String {
        let real = Int((Double(windowEnd - windowStart) / 60).rounded())
        return real < windowMinutes ? "\(real) of \(windowMinutes) min: the clocks went forward" : "\(windowMinutes) min"
    }
}
