// libFuzzer target for the beats, vitals and stages CSVs `podbridge analyze --beats/--vitals/
// --reference` read (built by `make fuzz` straight from Sources/SleepAnalysis), through the
// parser and on into the analyzer or the scoring, as the command does. Byte 0 modulo 3 picks
// the format: 0 beats, 1 vitals, 2 stages.
//
// Oracles beyond "does not crash": a file is either parsed or rejected with an
// `InputError` naming a line of the file; parsed times strictly increase.
import Foundation
import SleepAnalysis

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInputFormats(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    // The first byte picks the format (modulo 3); the rest is the file.
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).count
    let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)
    do {
        switch data[0] % 3 {
        case 0:
            let b = try InputFormats.parseBeats(text, file: "f.csv")
            precondition(!b.beats.isEmpty && zip(b.beats, b.beats.dropFirst()).allSatisfy { $0 < $1 }, "beats not increasing")
            precondition(zip(b.movement, b.movement.dropFirst()).allSatisfy { $0.time < $1.time }, "signals not increasing")
            _ = analyzer.analyze(AnalysisInput(beats: b.beats, breathing: b.breathing, movement: b.movement, inBed: .wholeSpan))
        case 1:
            let v = try InputFormats.parseVitals(text, file: "f.csv")
            precondition(zip(v.seconds, v.seconds.dropFirst()).allSatisfy { $0.time < $1.time }, "vitals not increasing")
            _ = analyzer.analyze(AnalysisInput(vitals: v.seconds, hrv: v.hrv, inBed: .presence))
        default:
            // A stages file (`analyze --reference`), scored against itself as the command scores a night.
            let s = try InputFormats.parseStages(text, file: "f.csv")
            precondition(zip(s, s.dropFirst()).allSatisfy { $0.start < $1.start } && s.allSatisfy { $0.end > $0.start },
                         "stages not increasing")
            let e = StagingEvaluation(reference: s, predictedEpochs: s)
            precondition(e.pairs.count == s.filter { $0.stage != nil }.count, "a scored epoch was not scored")
            _ = (e.kappa(.four), e.kappa(.two), e.totalSleepBiasMinutes)
        }
    } catch let error as InputError {
        precondition(error.file == "f.csv" && error.line >= 1 && error.line <= max(lines, 1) + 1,
                     "error names no line of the file: \(error)")
    } catch {
        precondition(false, "not an InputError: \(error)")
    }
    return 0
}
