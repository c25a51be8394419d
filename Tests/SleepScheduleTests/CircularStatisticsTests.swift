import Foundation
import Testing
@testable import SleepSchedule

@Suite struct CircularStatisticsTests {
    @Test func midnightWrapAveragesToMidnightNotNoon() throws {
        let s = try #require(CircularStatistics.summary(ofMinutes: [23 * 60 + 50, 10]))
        #expect(CircularStatistics.distance(s.meanMinute, 0) < 1e-6)
        #expect(s.mean == t("00:00"))
        #expect(s.resultantLength > 0.99)
        // The arithmetic mean would be 12:00; make sure we are nowhere near it.
        #expect(CircularStatistics.distance(s.meanMinute, 720) > 700)
        #expect(abs(s.circularSDMinutes - 10) < 0.1)
    }

    @Test func identicalTimesHaveRoneAndZeroSpread() throws {
        let s = try #require(CircularStatistics.summary(ofMinutes: Array(repeating: 22 * 60 + 45, count: 9)))
        #expect(s.resultantLength == 1)
        #expect(s.circularSDMinutes == 0)
        #expect(s.mean == t("22:45"))
    }

    @Test func evenlySpreadTimesHaveNoDirection() throws {
        let s = try #require(CircularStatistics.summary(ofMinutes: [0, 360, 720, 1080]))
        #expect(s.resultantLength < 1e-9)
        #expect(s.circularSDMinutes.isInfinite || s.circularSDMinutes > 1000)
    }

    @Test func emptyOrNonFiniteGiveNil() {
        #expect(CircularStatistics.summary(ofMinutes: []) == nil)
        #expect(CircularStatistics.summary(ofMinutes: [1, .nan]) == nil)
        #expect(CircularStatistics.median(ofMinutes: []) == nil)
    }

    @Test func distancesWrap() {
        #expect(CircularStatistics.distance(1430, 10) == 20)
        #expect(CircularStatistics.signedDifference(10, from: 1430) == 20)
        #expect(CircularStatistics.signedDifference(1430, from: 10) == -20)
        #expect(CircularStatistics.normalize(-30) == 1410)
        #expect(CircularStatistics.normalize(1440) == 0)
    }

    @Test func medianAcrossMidnightIgnoresOneWildValue() throws {
        let m = try #require(CircularStatistics.median(ofMinutes: [1420, 1435, 5, 15, 600]))
        #expect(m == 5 || m == 1435)
    }
}
