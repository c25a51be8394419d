// `make bench`: prints the project's measured figures, one "name: value unit" per line.
// `--quick` runs fewer repetitions (used to check the benchmarks still run); `--only
// AREA` runs one area (protocol, frontend, podanalysis, staging, synthetic, patterns, schedule, presence, wake, store). `--write-model FILE`
// refits the staging model on Data/ and writes it as Swift (`make model`). `--wake-seeds N`
// runs the wake area on 360 seeds from N (default 2000; the rule was chosen on 700–819), `--wake-dump FILE` writes
// every window epoch's observation with the truth as CSV (docs/smart-wake.md). `--spread-offset N`
// stages the synthetic area's spread nights N seeds further on (docs/staging.md). `--held-out DIR`
// (repeatable) stages folders of scored nights the project never saw with the shipped models
// and prints issue 14's figures for them (`make heldout HELDOUT=DIR`).
import Foundation

struct BenchOptions: Sendable {
    var quick: Bool
    /// The repository root; the labelled nights live in its Data/ folder.
    var repoRoot: URL
    /// The wake bench's first seed (`--wake-seeds`, default 2000: 360 nights never used to
    /// choose the rule; its thresholds were chosen on seeds 700–819).
    var wakeFirstSeed: UInt64 = 2000
    /// `--wake-dump FILE`: every window epoch's observation and the truth, as CSV (for choosing thresholds).
    var wakeDump: String?
    /// `--spread-offset N`: the synthetic area's spread nights N seeds further on (default 0).
    var spreadOffset: UInt64 = 0
}

let arguments = CommandLine.arguments.dropFirst()
let usage = """
    usage: podbridge-bench [--quick] [--only AREA] [--wake-seeds N] [--wake-dump FILE] [--spread-offset N]
           podbridge-bench --held-out DIR [--held-out DIR …]
           podbridge-bench --write-model FILE | --dump-staging-features FILE | --dump-epochs FILE
    Run from the repository root (the labelled nights are read from its Data/ folder).
    AREA is one of: \(benchAreas.map(\.0).joined(separator: ", ")).
    """
// A mistyped flag used to run every area (half an hour); it is refused with the usage.
let valueFlags: Set = ["--only", "--wake-seeds", "--wake-dump", "--spread-offset", "--write-model",
                       "--dump-staging-features", "--held-out", "--dump-epochs"]
if arguments.contains("--help") || arguments.contains("-h") { print(usage); exit(0) }
var pendingValue = false
for argument in arguments {
    if pendingValue { pendingValue = false; continue }
    if valueFlags.contains(argument) { pendingValue = true; continue }
    guard argument == "--quick" else { print("unknown argument '\(argument)'\n\(usage)"); exit(2) }
}
let quick = arguments.contains("--quick")
let only: String? = arguments.firstIndex(of: "--only").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : nil
}
let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
func argument(after flag: String) -> String? {
    arguments.firstIndex(of: flag).flatMap { i in arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : nil }
}
var options = BenchOptions(quick: quick, repoRoot: root)
if let seeds = argument(after: "--wake-seeds").flatMap(UInt64.init) { options.wakeFirstSeed = seeds }
options.wakeDump = argument(after: "--wake-dump")
if let offset = argument(after: "--spread-offset").flatMap(UInt64.init) { options.spreadOffset = offset }

if let i = arguments.firstIndex(of: "--write-model") {
    guard arguments.index(after: i) < arguments.endIndex else { print("--write-model needs a file"); exit(2) }
    do { try writeStagingModel(repoRoot: root, to: arguments[arguments.index(after: i)]) } catch {
        print("write-model: FAILED: \(error)"); exit(1)
    }
    exit(0)
}

if let i = arguments.firstIndex(of: "--dump-staging-features"), arguments.index(after: i) < arguments.endIndex {
    do { try dumpStagingFeatures(repoRoot: root, to: arguments[arguments.index(after: i)]) } catch {
        print("dump-staging-features: FAILED: \(error)"); exit(1)
    }
    exit(0)
}

let heldOut = arguments.indices.filter { arguments[$0] == "--held-out" }.map { i in
    arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : ""
}
if !heldOut.isEmpty {
    guard !heldOut.contains("") else { print("--held-out needs a folder"); exit(2) }
    do { try runHeldOutBench(folders: heldOut) } catch {
        print("held-out: FAILED: \(error)"); exit(1)
    }
    exit(0)
}

if let i = arguments.firstIndex(of: "--dump-epochs"), arguments.index(after: i) < arguments.endIndex {
    do {
        try dumpEpochs(repoRoot: root, to: arguments[arguments.index(after: i)], podSeeds: [31, 32, 33, 34, 35, 36], podHours: 8)
    } catch {
        print("dump-epochs: FAILED: \(error)"); exit(1)
    }
    exit(0)
}

let areas = benchAreas
if let only, !areas.contains(where: { $0.0 == only }) { print("unknown area '\(only)'\n\(usage)"); exit(2) }
var failed = false
for (name, run) in areas where only == nil || only == name {
    print("== \(name)")
    do {
        try await run(options)
    } catch {
        print("\(name): FAILED: \(error)")
        failed = true
    }
}
exit(failed ? 1 : 0)
