/// A command failed for a reason that is not how it was called (a file's content, a pod
/// that cannot be used): swift-argument-parser prints only "Error: " and this message and
/// exits 1, without the usage text a `ValidationError` would add.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ message: String) { description = message }
}
