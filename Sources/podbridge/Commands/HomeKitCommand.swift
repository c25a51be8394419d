import ArgumentParser
import HomeKit
import HomeKitService

/// `podbridge homekit`: the HomeKit bridge's pairing state (docs/homekit.md).
struct HomeKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homekit",
        abstract: "Show the HomeKit setup code, or forget every HomeKit pairing.",
        subcommands: [Status.self, Reset.self],
        defaultSubcommand: Status.self)

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Whether the bridge is paired; the setup code and payload while it is not.")
        @OptionGroup var options: ConfigurationOptions

        func run() async throws {
            let settings = try options.load()
            let file = HomeKitStateFile(stateDirectory: settings.stateDirectory)
            let state: HAPPairingState
            do { state = try file.loadOrCreate() } catch { throw CommandFailure(error.description) }
            print("HomeKit accessory ID \(state.accessoryID), c# \(state.configurationNumber)")
            if state.isPaired {
                print("paired with \(state.pairings.count) controller(s); `podbridge homekit reset` forgets them")
            } else {
                print("not paired: setup code \(state.setupCode.formatted)")
                print("setup payload \(SetupPayload.uri(code: state.setupCode, setupID: state.setupID))")
            }
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget every HomeKit pairing (run it with the hub stopped; the setup code stays).")
        @OptionGroup var options: ConfigurationOptions

        func run() async throws {
            let settings = try options.load()
            let file = HomeKitStateFile(stateDirectory: settings.stateDirectory)
            do {
                guard var state = try file.load() else {
                    print("HomeKit was never started here: nothing to forget")
                    return
                }
                let count = state.pairings.count
                state.reset()
                try file.save(state)
                print("forgot \(count) HomeKit pairing(s); add the bridge again with setup code \(state.setupCode.formatted)")
            } catch {
                throw CommandFailure(error.description)
            }
        }
    }
}
