import Foundation
import SleepDomain

/// A terminal rendering of a session: a four-row hypnogram and a metrics summary.
/// One column per few epochs of the session's span (the most frequent stage
/// in it); a column without data (the link was down) is blank in every row.
package enum HypnogramText {
    package static func render(_ session: SleepSession, width: Int = 96) -> String {
        guard let first = session.epochs.first?.start else { return "" }
        let n = max(1, Int(((session.end - first) / epochLength).rounded()))
        let per = max(1, Int((Double(n) / Double(max(1, width))).rounded(.up)))
        var counts = [[SleepStage: Int]](repeating: [:], count: (n + per - 1) / per)
        for e in session.epochs {
            let c = Int(((e.start - first) / epochLength).rounded()) / per
            guard c >= 0, c < counts.count else { continue }
            counts[c][e.stage, default: 0] += 1
        }
        let columns = counts.map { count in
            count.isEmpty ? nil : SleepStage.allCases.max { (count[$0] ?? 0) < (count[$1] ?? 0) }
        }
        var lines: [String] = []
        for (stage, label) in [(SleepStage.awake, "awake"), (.rem, "rem  "), (.core, "core "), (.deep, "deep ")] {
            lines.append(label + " |" + String(columns.map { $0 == stage ? "█" : " " }) + "|")
        }
        lines.append("       one column = \(Double(per) * epochLength / 60) min")
        let m = session.metrics
        func f(_ v: Double?, _ unit: String) -> String { v.map { String(format: "%.1f %@", $0, unit) } ?? "—" }
        // Minutes come in half minutes (30-s epochs): printed as they are, so the parts add up
        // to the whole (rounded each, 13.5 + 37 printed 14 + 37 of "50 min in bed").
        func minutes(_ v: Double) -> String { v == v.rounded() ? "\(Int(v)) min" : String(format: "%.1f min", v) }
        func share(_ v: Double) -> String { String(format: "%.0f%%", v * 100) }
        lines.append("in bed \(minutes(m.timeInBedMinutes)), asleep \(minutes(m.totalSleepMinutes)), "
                     + "efficiency \(share(m.sleepEfficiency)), score \(m.score)")
        if m.unmeasuredMinutes > 0 {
            lines.append("no data for \(minutes(m.unmeasuredMinutes)) (the figures count the measured "
                         + "\(minutes(m.timeInBedMinutes - m.unmeasuredMinutes)))")
        }
        lines.append("onset latency \(f(m.sleepOnsetLatencyMinutes, "min")), WASO \(f(m.wasoMinutes, "min")), awakenings \(m.awakenings)")
        lines.append("awake \(minutes(m.stageMinutes.awake)) (\(share(m.stageShares.awake))), "
                     + "core \(minutes(m.stageMinutes.core)) (\(share(m.stageShares.core))), "
                     + "deep \(minutes(m.stageMinutes.deep)) (\(share(m.stageShares.deep))), "
                     + "rem \(minutes(m.stageMinutes.rem)) (\(share(m.stageShares.rem)))")
        lines.append("heart rate \(f(m.meanHeartRate, "bpm")), RMSSD \(f(m.meanRMSSD, "ms")), breathing \(f(m.meanBreathingRate, "/min"))")
        return lines.joined(separator: "\n")
    }
}
