import Foundation
import Synchronization
import SystemCalls

/// One hub per database. A second `podbridge run` on the same state (a user starting it by
/// hand while systemd runs it, a second terminal) would otherwise run beside the first
/// unnoticed: two schedule services pushing to one pod, two pruners, two upload workers, and
/// the second waiting forever for a pod the first holds. The lock is an flock on
/// `<database>.lock`, which holds the owner's pid for the message; the kernel drops it when
/// the process ends, however it ends, so a crashed hub never leaves a stale lock behind.
package final class HubStateLock: Sendable {
    package let path: String
    private let fd: Mutex<Int32?>

    /// Takes the lock, or throws `HubStateLockError.held` naming the hub that has it. The lock
    /// sits beside the file the database path leads to, through any symbolic link: a hub given a
    /// link to another's database is that hub's second.
    package init(database: String) throws {
        path = URL(fileURLWithPath: database).resolvingSymlinksInPath().path + ".lock"
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.open(path, flags: O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o644)
        } catch {
            throw HubStateLockError.unusable(path: path, reason: error.description)
        }
        do {
            try SystemCalls.lockExclusive(descriptor)
        } catch {
            SystemCalls.close(descriptor)
            guard error.errno == EWOULDBLOCK else { throw HubStateLockError.unusable(path: path, reason: error.description) }
            let owner = (try? String(contentsOfFile: path, encoding: .utf8))
                .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            throw HubStateLockError.held(database: database, pid: owner)
        }
        let pid = Array("\(getpid())\n".utf8)
        do {
            try SystemCalls.truncate(descriptor, to: 0)
            _ = try pid.withUnsafeBytes { try SystemCalls.write(descriptor, $0) }
        } catch {
            // The pid only improves a later message; the lock itself holds.
        }
        fd = Mutex(descriptor)
    }

    /// Lets the next hub in (the hub's `run` ends, or a test starts another on the same state).
    package func release() {
        fd.withLock { fd in
            if let descriptor = fd { SystemCalls.close(descriptor) }
            fd = nil
        }
    }

    deinit { release() }
}

package enum HubStateLockError: Error, CustomStringConvertible, Equatable {
    case held(database: String, pid: Int32?)
    case unusable(path: String, reason: String)

    package var description: String {
        switch self {
        case let .held(database, pid):
            "another hub\(pid.map { " (pid \($0))" } ?? "") is running on \(database): stop it first "
                + "(under systemd: systemctl stop podbridge), or give this one its own --db (or --state-dir)"
        case let .unusable(path, reason):
            "cannot lock \(path): \(reason)"
        }
    }
}
