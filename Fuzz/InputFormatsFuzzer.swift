// libFuzzer target for the beats and vitals CSVs `podbridge analyze --beats/--vitals` read
// (built by `make fuzz` straight from Sources/SleepAnalysis), through the parser and on
// into the analyzer, as the command does.
//
// Oracles beyond "does not crash": a file is either parsed or rejected with an
// `InputError` naming a line of the file; parsed times strictly increase.
import Foundation
import SleepAnalysis

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInputFormats(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    // The first byte picks the format; the rest is the file.
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).count
    let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)
    do {
        if data[0] & 1 == 0 {
            let b = try InputFormats.parseBeats(text, file: "f.csv")
            precondition(!b.beats.isEmpty && zip(b.beats, b.beats.dropFirst()).allSatisfy { $0 < $1 }, "beats not increasing")
            precondition(zip(b.movement, b.movement.dropFirst()).allSatisfy { $0.time < $1.time }, "signals not increasing")
            _ = analyzer.analyze(AnalysisInput(beats: b.beats, breathing: b.breathing, movement: b.movement, inBed: .wholeSpan))
        } else {
            let v = try InputFormats.parseVitals(text, file: "f.csv")
            precondition(zip(v.seconds, v.seconds.dropFirst()).allSatisfy { $0.time < $1.time }, "vitals not increasing")
            _ = analyzer.analyze(AnalysisInput(vitals: v.seconds, hrv: v.hrv, inBed: .presence))
        }
    } catch let error as InputError {
        precondition(error.file == "f.csv" && error.line >= 1 && error.line <= max(lines, 1) + 1,
                     "error names no line of the file: \(error)")
    } catch {
        precondition(false, "not an InputError: \(error)")
    }
    return 0
}
