import ArgumentParser

/// Every subcommand, in the order `podbridge --help` lists them.
let registeredCommands: [any ParsableCommand.Type] = [
    AnalyzeCommand.self,
    ExportCommand.self,
    SyncCommand.self,
    InspectCommand.self,
]
