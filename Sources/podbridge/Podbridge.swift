import ArgumentParser
import Hub

/// The `podbridge` command: the hub daemon and the tools around it.
@main
struct Podbridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "podbridge",
        abstract: "Bridge a sleep pod over USB: discover, stream, analyse, schedule, export.",
        version: HubVersion.current,
        subcommands: registeredCommands)
}
