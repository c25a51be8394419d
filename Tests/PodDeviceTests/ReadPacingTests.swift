import Testing
@testable import PodDevice

@Suite("read pacing of a slow stream")
struct ReadPacingTests {
    static let fresh = ReadPacing(longest: .milliseconds(200), gather: 8192, shortest: .milliseconds(10), afterWrite: .seconds(1))

    /// Within a microsecond (the pause is computed from a rate in floating point).
    static func near(_ pause: Duration?, _ expected: Duration) -> Bool {
        guard let pause else { return false }
        return pause - expected < .microseconds(1) && expected - pause < .microseconds(1)
    }

    @Test("a pod at 1x (a 440-byte block every 100 ms) is read at most 5 times a second")
    func slowStreamWaitsTheLongestPause() {
        var pacing = Self.fresh
        #expect(pacing.pause(afterReading: 440, over: .milliseconds(100), sinceWrite: nil) == .milliseconds(200))
        #expect(pacing.pause(afterReading: 900, over: .milliseconds(200), sinceWrite: .seconds(30)) == .milliseconds(200))
    }

    @Test("a faster stream waits only as long as it takes to bring the bytes a pause may gather")
    func fasterStreamWaitsLess() {
        var pacing = Self.fresh
        // 8192 bytes came in 100 ms: the next 8192 come in 100 ms.
        #expect(Self.near(pacing.pause(afterReading: 8192, over: .milliseconds(100), sinceWrite: nil), .milliseconds(100)))
        // 16 KB in 100 ms: 50 ms.
        #expect(Self.near(pacing.pause(afterReading: 16384, over: .milliseconds(100), sinceWrite: nil), .milliseconds(50)))
    }

    @Test("a stream at 600x (a full buffer in 3 ms) is read as it comes")
    func fastStreamIsNotPaused() {
        var pacing = Self.fresh
        #expect(pacing.pause(afterReading: 16384, over: .milliseconds(3), sinceWrite: nil) == nil)
    }

    @Test("answers to a request are read as they come: no pause within a second of a write")
    func noPauseAfterAWrite() {
        var pacing = Self.fresh
        #expect(pacing.pause(afterReading: 20, over: .milliseconds(5), sinceWrite: .milliseconds(5)) == nil)
        #expect(pacing.pause(afterReading: 440, over: .milliseconds(100), sinceWrite: .milliseconds(999)) == nil)
        #expect(pacing.pause(afterReading: 440, over: .milliseconds(100), sinceWrite: .seconds(1)) == .milliseconds(200))
    }

    @Test("one short read after a lull of a fast stream does not earn it a pause; a stream that stays slow soon does")
    func aLullOfAFastStreamIsNotSlowness() {
        var pacing = Self.fresh
        #expect(pacing.pause(afterReading: 16384, over: .milliseconds(3), sinceWrite: nil) == nil)
        // 100 bytes over 100 ms would be a 1 KB/s stream; the rate seen is half the fast one's.
        #expect(pacing.pause(afterReading: 100, over: .milliseconds(100), sinceWrite: nil) == nil)
        // Halved at every slow read, the fast rate is forgotten within a few reads.
        var pauses: [Duration?] = []
        for _ in 0..<12 { pauses.append(pacing.pause(afterReading: 440, over: .milliseconds(100), sinceWrite: nil)) }
        #expect(pauses.last == .milliseconds(200))
    }

    @Test("nothing read (a wake-up with no bytes) is no reason to wait")
    func nothingReadIsNotPaused() {
        var pacing = Self.fresh
        #expect(pacing.pause(afterReading: 0, over: .milliseconds(100), sinceWrite: nil) == nil)
        #expect(pacing.pause(afterReading: 100, over: .zero, sinceWrite: nil) == nil)
    }
}
