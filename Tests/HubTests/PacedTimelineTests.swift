import Foundation
import Hub
import SystemCalls
import Testing

/// The time a test's virtual pods and its hub share: held, the hub's clock stands still; a hub
/// in another process follows the holder through the published file.
struct PacedTimelineTests {
    @Test func aHeldTimelineStopsTheHubsClockAndLetsItRunOnOnRelease() async throws {
        let timeline = PacedTimeline()
        let clock = HubClock(start: Date(timeIntervalSince1970: 0), speed: 1000, timeline: timeline)
        timeline.hold()
        timeline.hold()  // two pods behind
        let held = clock.now()
        let mark = clock.mark()
        try await Task.sleep(for: .milliseconds(30))
        #expect(clock.now() == held)
        #expect(clock.seconds(since: mark) == 0)
        timeline.release()
        try await Task.sleep(for: .milliseconds(30))
        #expect(clock.now() == held, "one pod still holds it")
        timeline.release()
        timeline.release()  // an extra release changes nothing
        try await Task.sleep(for: .milliseconds(30))
        // At 1000×, 30 ms of real time are at least 30 s of the clock's.
        #expect(clock.now().timeIntervalSince(held) >= 30)
        #expect(clock.seconds(since: mark) >= 30)
    }

    @Test func aHubInAnotherProcessFollowsThePublishedTimeline() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let published = try PacedTimeline(publishingAt: path)
        let follower = try PacedTimeline(followingFileAt: path)
        published.hold()
        let heldAt = follower.elapsed()
        try await Task.sleep(for: .milliseconds(30))
        #expect(follower.elapsed() == heldAt)
        follower.hold()  // a follower cannot hold: the holder's process owns the timeline
        published.release()
        try await Task.sleep(for: .milliseconds(30))
        #expect(follower.elapsed() >= heldAt + .milliseconds(30))
        // The same running time on both sides (read a moment apart).
        let before = published.elapsed(), followed = follower.elapsed(), after = published.elapsed()
        #expect(followed >= before && followed <= after, "\(before) \(followed) \(after)")
    }

    @Test func aFileThatIsNoTimelineIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("not a timeline".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SystemError.self) { try PacedTimeline(followingFileAt: path) }
    }
}
