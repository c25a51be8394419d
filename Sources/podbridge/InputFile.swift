import Foundation

/// A whole input file a user names on the command line: a regular file, or a pipe such as
/// `/dev/stdin` or a shell's `<(…)` (Foundation's one-call reads refuse those with "You don't
/// have permission"). Failures say what is wrong in words a user can act on.
enum InputFile {
    /// Why `path` cannot be opened for reading, or nil if it can.
    private static func problem(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return nil
    }

    /// The file opened for reading, or a failure that says why it cannot be.
    static func open(_ path: String) throws -> FileHandle {
        if let problem = problem(path) { throw CommandFailure("\(path): cannot read (\(problem))") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CommandFailure("\(path): cannot read (it could not be opened)")
        }
        return handle
    }

    /// The file's bytes, read to its end.
    static func bytes(_ path: String) throws -> Data {
        let handle = try open(path)
        defer { try? handle.close() }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw CommandFailure("\(path): cannot read (\(error.localizedDescription))")
        }
    }

    /// The file as UTF-8 text.
    static func text(_ path: String) throws -> String {
        guard let text = String(data: try bytes(path), encoding: .utf8) else {
            throw CommandFailure("\(path): not UTF-8 text")
        }
        return text
    }
}
