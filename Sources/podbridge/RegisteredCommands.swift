import ArgumentParser

/// Every subcommand, in the order `podbridge --help` lists them.
let registeredCommands: [any ParsableCommand.Type] = [
    RunCommand.self,
    ScheduleCommand.self,
    DevicesCommand.self,
    StreamCommand.self,
    SimulateCommand.self,
    AnalyzeCommand.self,
    ExportCommand.self,
    SyncCommand.self,
    InspectCommand.self,
    HomeKitCommand.self,
]
