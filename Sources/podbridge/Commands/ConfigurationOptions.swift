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
            let settings = try HubConfiguration.resolve(file: file.config, environment: ProcessInfo.processInfo.environment) {
                if let stateDirectory { $0.stateDirectory = stateDirectory }
                if let db { $0.database = db }
                adjust(&$0)
            }
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

    /// - Parameter adjust: the command's own options, applied over the file and the
    ///   environment before the whole is checked (so `--tz` stands in for a bad $PODBRIDGE_TIME_ZONE).
    func load(_ adjust: (inout HubConfiguration) -> Void = { _ in }) throws -> HubConfiguration {
        do {
            let settings = try HubConfiguration.resolve(file: config, environment: ProcessInfo.processInfo.environment,
                                                        options: adjust)
            return settings
        } catch {
            throw CommandFailure(error.description)
        }
    }
}
