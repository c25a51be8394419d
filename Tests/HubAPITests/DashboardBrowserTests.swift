import Foundation
import NightModel
import Testing

/// The dashboard in a real browser (Debian's headless chromium) against a running hub with
/// the virtual pod: the left sleeper's night is over (its hypnogram is shown), the right
/// sleeper is still in bed (live numbers). The screenshot is kept as a test artifact.
@Suite(.serialized) struct DashboardBrowserTests {
    @Test func theDashboardShowsLiveNumbersAndLastNightsHypnogram() async throws {
        // 6 h at 200×: left in bed 2 min → 100 min, its night stored ~5 min later (~32 s real);
        // right in bed until 10 min before the end (~105 s real).
        let right = SideConfig(sleeper: SleeperProfile(getsIn: 180, getsOutBeforeEnd: 10 * 60, bathroomTrip: false))
        let hub = try await APITestHub.start(
            serial: "API-DASH", night: testNight(hours: 6, seed: 51, getsIn: 120, getsOutBeforeEnd: 260 * 60, right: right),
            speed: 200)
        #expect(await eventually(240) {
            guard let nights = try? await hub.get("/api/v1/nights?side=left").json?["nights"] as? [[String: Any]] else { return false }
            return nights.contains { $0["final"] as? Bool == true }
        }, "no night stored; the hub said \(hub.lines.all.suffix(15))")
        #expect(await eventually(60) { hub.daemon.bus.state.pods["API-DASH"]?.live.values.contains { $0.heartRate != nil } == true })

        let dir = try artifactsDirectory()
        let profile = try TempDir()
        defer { profile.cleanup() }
        // The page fills itself in with fetches after its load event, so chromium runs it on
        // virtual time (which waits for pending fetches) rather than dumping at `load`; the
        // page marks <body data-loaded="true"> once its first loads have settled. A dump
        // taken before that (a loaded machine) is taken again.
        let common = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                      "--user-data-dir=\(profile.path("profile"))", "--window-size=412,2200",
                      "--virtual-time-budget=15000"]
        var dom = ""
        var attempts: [String] = []
        let loaded = await eventually(240) {
            let (status, output) = (try? await runTool(common + ["--dump-dom", hub.base + "/"], deadline: 120)) ?? (-1, "")
            dom = output
            attempts.append("exit \(status), \(output.count) characters")
            return status == 0 && output.contains(#"data-loaded="true""#)
        }
        #expect(loaded, "the page never finished loading; chromium runs: \(attempts)\n\(dom.suffix(3000))")
        // Live numbers in the right side's tile (heart rate, breathing), not dashes.
        let tile = try #require(dom.range(of: #"id="tile-right""#).map { String(dom[$0.lowerBound...].prefix(1500)) },
                                "no live tile for the right side in:\n\(dom.prefix(3000))")
        #expect(tile.range(of: #"data-reading="heartRate">\d{2,3}<"#, options: .regularExpression) != nil, "tile: \(tile)")
        #expect(tile.range(of: #"data-reading="breathingRate">\d{1,2}\.\d<"#, options: .regularExpression) != nil, "tile: \(tile)")
        // Last night's hypnogram: an SVG with stage blocks, and the night's score.
        #expect(dom.contains(#"class="hypnogram""#), "no hypnogram in:\n\(dom.prefix(3000))")
        let stages = Set(dom.matches(of: /data-stage="(\w+)"/).map { String($0.output.1) })
        #expect(stages.isSuperset(of: ["awake", "core"]) && stages.count >= 3, "stages drawn: \(stages)")
        #expect(dom.range(of: #"class="score"[^>]*>\d{1,3}<"#, options: .regularExpression) != nil)
        #expect(dom.contains("pod API-DASH"))

        let shot = dir.appendingPathComponent("dashboard.png")
        try? FileManager.default.removeItem(at: shot)
        let (shotStatus, shotOutput) = try await runTool(common + ["--screenshot=\(shot.path)", hub.base + "/"], deadline: 120)
        #expect(shotStatus == 0 && FileManager.default.fileExists(atPath: shot.path), "chromium: \(shotOutput.suffix(1000))")
        await hub.stop()
    }
}
