// `make bench`: prints the project's measured figures, one "name: value unit" per line.
// `--quick` runs fewer repetitions (used to check the benchmarks still run); `--only
// AREA` runs one area (protocol, frontend, podanalysis, staging, schedule, wake, store). `--write-model FILE`
// refits the staging model on Data/ and writes it as Swift (`make model`).
import Foundation

struct BenchOptions: Sendable {
    var quick: Bool
    /// The repository root; the labelled nights live in its Data/ folder.
    var repoRoot: URL
}

let arguments = CommandLine.arguments.dropFirst()
let quick = arguments.contains("--quick")
let only: String? = arguments.firstIndex(of: "--only").flatMap { i in
    arguments.index(after: i) < arguments.endIndex ? arguments[arguments.index(after: i)] : nil
}
let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
let options = BenchOptions(quick: quick, repoRoot: root)

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

let areas = benchAreas
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
