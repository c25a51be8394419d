import ArgumentParser
import Foundation
import Hub

/// The options every command that touches the hub's state shares, so a user who ran the
/// daemon never has to say where its database is: `--config`, `--state-dir`, `--db`.
/// Defaults, then the configuration file, then `PODBRIDGE_*`, then these options
/// (docs/configuration.md).
struct ConfigurationOptions: ParsableArguments {
    @OptionGroup var file: ConfigurationFileOption

    @Option(name: .customLong("state-dir"), help: "Directory for the database and exports (configuration: stateDirectory).")
    var stateDirectory: String?

    @Option(name: .long, help: "Path of the podbridge database (default: the configuration's, <state-dir>/podbridge.sqlite).")
    var db: String?

    /// The resolved configuration, or a failure naming what is wrong in it (the file, an
    /// environment variable: not how the command was called, so no usage text).
    func load(_ adjust: (inout HubConfiguration) -> Void = { _ in }) throws -> HubConfiguration {
        do {
            var settings = try HubConfiguration.resolve(file: file.config, environment: ProcessInfo.processInfo.environment)
            if let stateDirectory { settings.stateDirectory = stateDirectory }
            if let db { settings.database = db }
            adjust(&settings)
            try settings.validate()
            return settings
        } catch {
            throw CommandFailure(error.description)
        }
    }
}

/// Only the configuration file, for commands that read settings but no state (`analyze`).
struct ConfigurationFileOption: ParsableArguments {
    @Option(help: "Configuration file (JSON; default $PODBRIDGE_CONFIG, else /etc/podbridge/config.json if it exists).")
    var config: String?

    func load() throws -> HubConfiguration {
        do {
            let settings = try HubConfiguration.resolve(file: config, environment: ProcessInfo.processInfo.environment)
            try settings.validate()
            return settings
        } catch {
            throw CommandFailure(error.description)
        }
    }
}
