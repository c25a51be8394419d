import Foundation
import Testing
import TestSupport

/// `podbridge simulate` as a user runs it: when the sleepers get into and out of bed is theirs
/// to set, and the ground truth it writes says the same.
@Suite struct SimulateCommandTests {
    @Test func inBedAndOutOfBedSetWhenTheTruthHasTheSleeperInBed() async throws {
        let truth = CommandRunner.temporaryFile("truth")
        defer { try? FileManager.default.removeItem(at: truth) }
        // Half an hour at 10 000× is under a second; in bed from minute 2 to 3 min before the end.
        let r = try await CommandRunner.run(["simulate", "--speed", "10000", "--duration", "0.5", "--seed", "3",
                                             "--left", "occupied", "--right", "empty", "--in-bed", "2", "--out-of-bed", "3",
                                             "--truth", truth.path])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try String(contentsOf: truth.appendingPathComponent("truth.csv"), encoding: .utf8)
            .split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let left = rows.filter { $0[1] == "0" }
        let start = try #require(left.first.flatMap { Double($0[0]) })
        let present = left.filter { $0[2] == "1" }.compactMap { Double($0[0]) }
        let first = try #require(present.first), last = try #require(present.last)
        #expect(first - start == 120, "in bed \(first - start) s after the start")
        #expect(start + 1800 - (last + 1) == 180, "out of bed \(start + 1800 - (last + 1)) s before the end")
        #expect(rows.filter { $0[1] == "1" }.allSatisfy { $0[2] == "0" }, "the right side is empty")
    }

    @Test func aNegativeInBedTimeIsRefusedWithTheOptionNamed() async throws {
        let r = try await CommandRunner.run(["simulate", "--in-bed=-5"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--in-bed must be 0 … 48 minutes (at most 10% of the 8 h night), got -5"), "\(r.stderr)")
    }

    @Test func aTransmitQueueTooSmallOrTooLargeIsRefusedWithTheOptionNamed() async throws {
        for value in ["0", "2000", "nan"] {
            let r = try await CommandRunner.run(["simulate", "--transmit-queue", value])
            #expect(r.status != 0, "\(value)")
            #expect(r.stderr.contains("--transmit-queue must be in [1/256, 1024] MiB"), "\(value): \(r.stderr)")
        }
    }
}
