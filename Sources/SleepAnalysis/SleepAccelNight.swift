import Foundation
import SleepDomain

/// One sleep-accel night (Walch et al. 2019, Data/sleep-accel-dev) converted into the
/// analyzer's public inputs: a vitals CSV (`time,heart_rate,movement,present`) as a user
/// would give `podbridge analyze --vitals`, and the PSG scoring as stage intervals.
///
/// Pure: takes the texts of the subject's files. Times are seconds from the start of PSG
/// scoring; `base` (a multiple of 30) turns them into Unix seconds so epochs line up.
/// The heart rate (every ~5 s) becomes one row per reading; the epoch's activity count is
/// written on every row of that epoch (it is a per-epoch measure, so the epoch's mean is the
/// count); each scored epoch also gets a row at its middle so an epoch without a heart-rate
/// reading is still in bed, as it was. Only the scored span is written.
package struct SleepAccelNight: Sendable {
    package var vitalsCSV: String
    package var reference: [InputFormats.StagedInterval]
    /// Share of `psg_labels.out` lines that agree with `labeled_sleep.txt` at the chosen
    /// alignment (1 for every night in Data/).
    package var alignmentAgreement: Double

    package struct ConversionError: Error, CustomStringConvertible, Equatable {
        package var description: String
    }

    /// The largest magnitude any number in a night's files may have (about 30 years in seconds).
    static let largestValue = 1e9

    /// 2020-09-13 12:27 UTC, a multiple of 30 s (the study's clock times are not published).
    package static let defaultBase = 1_600_000_020.0

    /// `withMovement` false leaves the movement column out (the night as heart rate only).
    package init(heartRate: String, labeledSleep: String, psgLabels: String, countFeature: String,
                timeFeature: String, base: Double = defaultBase, withMovement: Bool = true) throws {
        func numbers(_ text: String, _ file: String, separator: Character?) throws -> [[Double]] {
            try text.split(whereSeparator: \.isNewline).enumerated().compactMap { i, line in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty { return nil }
                let parts = separator.map { s in trimmed.split(separator: s).map(String.init) }
                    ?? trimmed.split(whereSeparator: \.isWhitespace).map(String.init)
                return try parts.map { p in
                    guard let v = Double(p.trimmingCharacters(in: .whitespaces)), v.isFinite else {
                        throw ConversionError(description: "\(file):\(i + 1): '\(p)' is not a number")
                    }
                    // Seconds, hours, stage codes, counts and heart rates are all far below this;
                    // a value beyond it is no reading of a night (and would not fit an epoch index).
                    guard abs(v) <= Self.largestValue else {
                        throw ConversionError(description: "\(file):\(i + 1): '\(p)' is out of range for a night's file")
                    }
                    return v
                }
            }
        }
        let labelled = try numbers(labeledSleep, "labeled_sleep", separator: nil).filter { $0.count >= 2 }
        let labels = try numbers(psgLabels, "psg_labels", separator: nil).compactMap(\.first)
        let counts = try numbers(countFeature, "count_feature", separator: nil).compactMap(\.first)
        let hours = try numbers(timeFeature, "time_feature", separator: nil).compactMap(\.first)
        guard labels.count == counts.count, labels.count == hours.count, !labels.isEmpty else {
            throw ConversionError(description: "psg_labels, count_feature and time_feature differ in length")
        }
        var stageAt: [Int: Double] = [:]
        for row in labelled { stageAt[Int(row[0].rounded())] = row[1] }
        let scored = labelled.filter { $0[1] >= 0 }.map { Int($0[0].rounded()) }
        guard let firstScored = scored.first, let lastScored = scored.last else {
            throw ConversionError(description: "labeled_sleep has no scored epoch")
        }
        guard Double(lastScored - firstScored) <= InputFormats.maximumSpan else {
            throw ConversionError(description: "labeled_sleep's scored epochs span more than \(Int(InputFormats.maximumSpan / 86_400)) days")
        }
        // The .out files start at some scored epoch and skip epochs without data; their time
        // feature gives each line's offset. Choose the start that makes the labels agree.
        let offsets = hours.map { Int(($0 * 3600 / 30).rounded()) * 30 }
        var best = (start: firstScored, agreement: -1.0)
        for k in 0...20 {
            let start = firstScored + 30 * k
            let agree = zip(offsets, labels).filter { stageAt[start + $0] == $1 }.count
            let share = Double(agree) / Double(labels.count)
            if share > best.agreement { best = (start, share) }
        }
        alignmentAgreement = best.agreement
        guard best.agreement >= 0.95 else {
            throw ConversionError(description: "psg_labels.out does not line up with labeled_sleep.txt (best \(best.agreement))")
        }
        var countAt: [Int: Double] = [:]
        for (o, c) in zip(offsets, counts) { countAt[best.start + o] = c }

        let spanEnd = lastScored + 30
        func epochOf(_ t: Double) -> Int { Int((t / 30).rounded(.down)) * 30 }
        var rows: [(t: Double, hr: Double?, epoch: Int)] = []
        for r in try numbers(heartRate, "heartrate", separator: ",") where r.count >= 2 {
            if r[0] >= Double(firstScored), r[0] < Double(spanEnd) { rows.append((r[0], r[1], epochOf(r[0]))) }
        }
        for e in stride(from: firstScored, to: spanEnd, by: 30) { rows.append((Double(e) + 15, nil, e)) }
        rows.sort { $0.t < $1.t }
        var csv = withMovement ? "time,heart_rate,movement,present\n" : "time,heart_rate,present\n"
        var last = -Double.infinity
        for r in rows {
            let t = (base + r.t) * 1000
            let ms = t.rounded()
            guard ms > last else { continue }
            last = ms
            var line = String(format: "%.3f,", ms / 1000) + (r.hr.map { String(format: "%g", $0) } ?? "")
            if withMovement { line += "," + (countAt[r.epoch].map { String(format: "%g", $0) } ?? "") }
            csv += line + ",1\n"
        }
        vitalsCSV = csv
        reference = stride(from: firstScored, to: spanEnd, by: 30).map { e in
            let s = stageAt[e] ?? -1
            return InputFormats.StagedInterval(start: base + Double(e), end: base + Double(e) + 30,
                                               stage: Self.stage(s))
        }
    }

    /// PSG codes: 0 wake, 1–2 light (core), 3–4 deep, 5 REM; anything else is unscored.
    static func stage(_ code: Double) -> SleepStage? {
        switch Int(code) {
        case 0: .awake
        case 1, 2: .core
        case 3, 4: .deep
        case 5: .rem
        default: nil
        }
    }
}
