import ArgumentParser
import Foundation
import Hub

/// The `podbridge` command: the hub daemon and the tools around it.
@main
struct Podbridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "podbridge",
        abstract: "Bridge a sleep pod over USB: discover, stream, analyse, schedule, export.",
        version: HubVersion.current,
        subcommands: registeredCommands)

    /// ArgumentParser's own, after one check it leaves out: `podbridge help nosuch` printed the
    /// overview and exited 0, so a script asking for a command this version lacks was told
    /// it exists.
    static func main() async {
        if let unknown = unknownHelpTopic(Array(CommandLine.arguments.dropFirst())) {
            // The message names the command to ask instead; ArgumentParser's usage lines
            // for a subcommand called from here would leave out "podbridge".
            FileHandle.standardError.write(Data("Error: \(unknown)\n".utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// The words after `help` name a command at every level, or the first one that does not
    /// is named with the command it was looked for in; nil for anything else.
    static func unknownHelpTopic(_ arguments: [String]) -> String? {
        guard arguments.first == "help" else { return nil }
        var commands = registeredCommands
        var path = ["podbridge"]
        for word in arguments.dropFirst() where !word.hasPrefix("-") {
            guard let command = commands.first(where: { type in
                let configuration = type.configuration
                return (configuration.commandName ?? type._commandName) == word || configuration.aliases.contains(word)
            }) else {
                return "'\(path.joined(separator: " "))' has no command '\(word)' (see '\(path.joined(separator: " ")) --help')"
            }
            path.append(word)
            commands = command.configuration.subcommands
        }
        return nil
    }
}
