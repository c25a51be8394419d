import Foundation
import Testing
import SleepAnalysis
import SleepDomain
import SleepStore
@testable import Hub

/// `podbridge analyze` (the analyzer) and the store date a night by the one rule in
/// `LocalCalendar`: a night that ends exactly at local midnight belongs to the new day.
@Suite struct WakeDateAgreementTests {
    @Test func aNightEndingAtLocalMidnightHasOneWakeDateInTheAnalyzerAndTheStore() throws {
        let zone = TimeZone(identifier: "America/New_York")!
        let midnight = LocalCalendar(timeZone: zone).startOfDay(CalendarDay("2024-01-15")!)
        // Heartbeats from 22:00 to just before midnight: the last epoch ends at 00:00:00.
        let start = Double(midnight - 2 * 3600)
        let beats = stride(from: start + 0.5, to: Double(midnight), by: 1).map { $0 }
        let session = try #require(SleepAnalyzer(timeZone: zone).analyze(beats: beats, vitals: []).first)
        #expect(session.end == Double(midnight))
        #expect(session.wakeDate == CalendarDay("2024-01-15"))

        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try SleepStore(path: dir.path("wake.sqlite"), timeZone: zone)
        let saved = try store.save(NightRecordMapping.record(session, podSerial: "PB-MIDNIGHT", side: .left))
        #expect(saved.wakeDate == session.wakeDate)
        let found = try store.sessions(wakeDatesFrom: session.wakeDate, to: session.wakeDate)
        #expect(found.map(\.end) == [midnight])
    }
}
