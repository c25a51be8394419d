import Foundation
import Logging
import PodProtocol
import Testing
@testable import Hub

/// The console's lines say times in the zone they belong to: the hub's for the sleeper's
/// events, the pod's for its clock (they differ when `schedule.podTimeZone` is set).
struct ConsoleLinesTests {
    @Test func timesAreSaidInTheirOwnZones() {
        var configuration = HubConfiguration()
        configuration.timeZone = "Europe/Berlin"
        configuration.schedule.podTimeZone = "America/New_York"
        var console = ConsoleLines(configuration: configuration)
        let lines = ReportedLines()
        let reporter = HubReporter(logger: Logger(label: "console-test") { _ in CapturingLogHandler(sink: lines) }, console: false)
        let evening = Date(timeIntervalSince1970: 1_795_728_600)  // 2026-11-26 21:30 UTC
        console.handle(.presence(serial: "P1", side: .left, inBed: true, at: evening), reporter: reporter)
        console.handle(.clockSet(serial: "P1", anchor: ClockAnchor(tick: 7, unixMillis: 1_795_728_600_000, utcOffsetMinutes: -300)),
                       reporter: reporter)
        // Once more each, from the formatters kept since.
        console.handle(.presence(serial: "P1", side: .right, inBed: true, at: evening.addingTimeInterval(3600)), reporter: reporter)
        console.handle(.clockSet(serial: "P1", anchor: ClockAnchor(tick: 9, unixMillis: 1_795_732_200_000, utcOffsetMinutes: -300)),
                       reporter: reporter)
        #expect(lines.all == [
            "info: left: in bed at Thu 2026-11-26 22:30",
            "info: pod clock set to Thu 2026-11-26 16:30 at tick 7",
            "info: right: in bed at Thu 2026-11-26 23:30",
            "info: pod clock set to Thu 2026-11-26 17:30 at tick 9",
        ])
    }
}
