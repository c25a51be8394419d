/// The benchmark areas `make bench` runs, in order.
let benchAreas: [(name: String, run: @Sendable (BenchOptions) async throws -> Void)] = [
    ("protocol", { try runProtocolBench(options: $0) }),
    ("frontend", { try runFrontEndBench(options: $0) }),
    ("podanalysis", { try runPodAnalysisBench(options: $0) }),
    ("staging", { try runStagingBench(options: $0) }),
    ("synthetic", { try runSyntheticStagingBench(options: $0) }),
    ("patterns", { runNightPatternBench(options: $0) }),
    ("schedule", { try runScheduleBench(options: $0) }),
    ("presence", { try runPresencePowerBench(options: $0) }),
    ("wake", { try runWakeBench(options: $0) }),
    ("store", { try await runStoreBench(options: $0) }),
]
