import ArgumentParser
import Foundation
import SleepDomain

/// The files and directories a command writes: checked before the work that fills them (an
/// analysis, a night played), so a mistyped path fails at once instead of after it, and their
/// failures said in a sentence, not as Foundation's NSCocoaErrorDomain dump.
enum OutputFile {
    /// A file `option` will write: not a directory, in a directory that exists.
    static func check(_ path: String, option: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ValidationError("\(option) \(path) is a directory; give a file name")
        }
        // A file there already is written in place (`/dev/stdout` in a folder no user may write).
        if FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.isWritableFile(atPath: path) else {
                throw ValidationError("\(option) \(path): cannot write it (permission denied)")
            }
            return
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("\(option) \(path): no directory \(folder)")
        }
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw ValidationError("\(option) \(path): cannot write in \(folder) (permission denied)")
        }
    }

    /// A directory `option` will write files into, made now with its parents.
    static func prepareDirectory(_ path: String, option: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw CommandFailure("\(option) \(path) is a file, not a directory")
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure("\(option) \(path): cannot create the directory (\(FileErrorReason.describe(error)))")
        }
        guard FileManager.default.isWritableFile(atPath: path) else {
            throw CommandFailure("\(option) \(path): cannot write in it (permission denied)")
        }
    }

    /// Writes `data` to `path` (whole or not at all when `atomically`).
    static func write(_ data: Data, to path: String, atomically: Bool = false) throws {
        do {
            try data.write(to: URL(fileURLWithPath: path), options: atomically ? .atomic : [])
        } catch {
            throw CommandFailure("cannot write \(path): \(FileErrorReason.describe(error))")
        }
    }
}
