import ArgumentParser
import Foundation
import Hub
import SleepSchedule
import SleepStore
import SleepDomain

/// `podbridge schedule show|infer|set|clear`: the schedule in force, what the inference
/// would give and why, and the user's manual schedule (which wins until cleared).
struct ScheduleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Show, explain, set or clear the pod's power schedule and alarm.",
        discussion: """
            The running hub (podbridge run) works the schedule out and pushes it to the pod. \
            A manual schedule set here wins over the inference until cleared; the hub sends it \
            on the pod's next connect or reboot, or when the next session is stored.
            """,
        subcommands: [Show.self, Infer.self, Set.self, Clear.self],
        defaultSubcommand: Show.self)

    struct Options: ParsableArguments {
        @OptionGroup var common: ConfigurationOptions

        @Option(name: .long, help: "left, right or both.")
        var side = "both"

        @Option(name: .long, help: "The pod's serial (optional when the database knows one pod).")
        var pod: String?

        @Option(name: .long, help: "The pod's time zone, e.g. Europe/Berlin (default: the schedule's, else the system's).")
        var tz: String?

        func sides() throws -> [BedSide] {
            switch side.lowercased() {
            case "left": return [.left]
            case "right": return [.right]
            case "both": return [.left, .right]
            default: throw ValidationError("--side must be left, right or both, got '\(side)'")
            }
        }

        func console(creating: Bool = false) throws -> ScheduleConsole {
            var zone: TimeZone?
            if let tz {
                guard let z = TimeZone(identifier: tz) else { throw ValidationError("unknown time zone '\(tz)'") }
                zone = z
            }
            let configuration = try common.load()
            let settings = configuration.schedule
            let db = configuration.databasePath
            let store: SleepStore
            do {
                store = creating ? try SleepStore(path: db) : try SleepStore.openExisting(path: db)
            } catch {
                FileHandle.standardError.write(Data("error: \(error)\n".utf8))
                throw ExitCode.failure
            }
            return ScheduleConsole(store: store, settings: settings, zone: zone)
        }
    }

    static func run(_ body: () throws(ScheduleServiceError) -> [String]) throws {
        do {
            for line in try body() { print(line) }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What is in force per side, whether the pod acknowledged it, the last pushes and alarms.")
        @OptionGroup var options: Options

        func run() async throws {
            let console = try options.console()
            let sides = try options.sides()
            try ScheduleCommand.run { () throws(ScheduleServiceError) in
                try console.show(podSerial: try console.resolvePod(options.pod), sides: sides)
            }
        }
    }

    struct Infer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What the inference would give and why (nights used and dropped, circular mean and spread); changes nothing.")
        @OptionGroup var options: Options

        func run() async throws {
            let console = try options.console()
            let sides = try options.sides()
            try ScheduleCommand.run { () throws(ScheduleServiceError) in
                try console.infer(podSerial: try console.resolvePod(options.pod), sides: sides)
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a manual schedule (wins over the inference until cleared).")
        @OptionGroup var options: Options

        @Option(name: .long, help: "Bedtime HH:mm (weekday nights, and weekend nights unless given).")
        var bedtime: String

        @Option(name: .long, help: "Wake time HH:mm (the alarm), weekday mornings and weekends unless given.")
        var wake: String

        @Option(name: .long, help: "Bedtime HH:mm before weekend mornings.")
        var weekendBedtime: String?

        @Option(name: .long, help: "Wake time HH:mm on weekend mornings.")
        var weekendWake: String?

        func run() async throws {
            let console = try options.console(creating: options.pod != nil)
            let sides = try options.sides()
            try ScheduleCommand.run { () throws(ScheduleServiceError) in
                try console.setManual(podSerial: try console.resolvePod(options.pod), sides: sides, bedtime: bedtime,
                                      wake: wake, weekendBedtime: weekendBedtime, weekendWake: weekendWake)
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the manual schedule: back to the inferred one.")
        @OptionGroup var options: Options

        func run() async throws {
            let console = try options.console()
            let sides = try options.sides()
            try ScheduleCommand.run { () throws(ScheduleServiceError) in
                try console.clearManual(podSerial: try console.resolvePod(options.pod), sides: sides)
            }
        }
    }
}
