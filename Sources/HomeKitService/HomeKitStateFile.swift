import Foundation
import HomeKit

/// The accessory's pairing state on disk: `<stateDirectory>/homekit.json`, written whole to a
/// temporary file created 0600 and renamed over the old one, so a crash leaves the old or the
/// new state and the long-term key is never readable by others, not even for a moment.
package struct HomeKitStateFile: Sendable {
    package let path: String

    package init(stateDirectory: String) {
        path = (stateDirectory as NSString).appendingPathComponent("homekit.json")
    }

    /// The stored state, or nil when there is none yet.
    package func load() throws(HomeKitStateFileError) -> HAPPairingState? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return try JSONDecoder().decode(HAPPairingState.self, from: data).validated()
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
    }

    /// The stored state, or a new identity (stored at once) on first start.
    package func loadOrCreate() throws(HomeKitStateFileError) -> HAPPairingState {
        if let state = try load() { return state }
        let state = HAPPairingState.generate()
        try save(state)
        return state
    }

    package func save(_ state: HAPPairingState) throws(HomeKitStateFileError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = path + ".tmp"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let data = try JSONEncoder().encode(state)
            unlink(temporary)
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw HomeKitStateFileError.unwritable(path: temporary, reason: String(cString: strerror(errno))) }
            defer { close(fd) }
            let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == data.count, fsync(fd) == 0 else {
                throw HomeKitStateFileError.unwritable(path: temporary, reason: String(cString: strerror(errno)))
            }
            guard rename(temporary, path) == 0 else {
                throw HomeKitStateFileError.unwritable(path: path, reason: String(cString: strerror(errno)))
            }
        } catch let error as HomeKitStateFileError {
            throw error
        } catch {
            throw .unwritable(path: path, reason: "\(error)")
        }
    }
}

package enum HomeKitStateFileError: Error, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case unwritable(path: String, reason: String)

    package var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the HomeKit state \(path): \(reason)"
        case .unwritable(let path, let reason): "cannot write the HomeKit state \(path): \(reason)"
        }
    }
}
