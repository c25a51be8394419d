// `make bench`: prints the project's measured figures, one "name: value unit" per line.
// `--quick` runs fewer repetitions (used to check the benchmarks still run); `--only
// AREA` runs one area (protocol, frontend, staging, store, schedule).
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
