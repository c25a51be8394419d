import Synchronization
import Testing
@testable import PodDevice

/// The inbox between a descriptor's reader thread and the session: what the reader is told
/// when the session falls behind (backpressure by not reading).
@Suite("byte inbox")
struct ByteInboxTests {
    @Test("an inbox holding more than the limit asks the reader to wait, and calls it back once the bytes are taken")
    func roomIsWantedAboveTheLimitAndGivenWhenTaken() async throws {
        let calls = Atomic<Int>(0)
        let inbox = ByteInbox(onRoom: { calls.add(1, ordering: .relaxed) })
        inbox.deliver([1, 2, 3])
        #expect(!inbox.wantsRoom(above: 3))
        inbox.deliver([4])
        #expect(inbox.wantsRoom(above: 3))
        #expect(calls.load(ordering: .relaxed) == 0)
        #expect(try await inbox.next() == [1, 2, 3, 4])
        #expect(calls.load(ordering: .relaxed) == 1)
        // Taken without anyone waiting for room: no call.
        inbox.deliver([5, 6, 7, 8, 9])
        #expect(try await inbox.next() == [5, 6, 7, 8, 9])
        #expect(calls.load(ordering: .relaxed) == 1)
        #expect(!inbox.wantsRoom(above: 3))
    }

    @Test("a finished inbox wants no room: the reader is not left waiting for a session that ended")
    func aFinishedInboxWantsNoRoom() {
        let inbox = ByteInbox(onRoom: {})
        inbox.deliver([UInt8](repeating: 0, count: 10))
        inbox.finish(.closed)
        #expect(!inbox.wantsRoom(above: 3))
    }
}
