import ArgumentParser
import Foundation
import Hub
import PodProtocol
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

        /// Checked before the database is opened, so a mistyped side or zone is answered
        /// with the usage, not with where the database is.
        func validate() throws {
            _ = try sides()
            if let tz, TimeZone(identifier: tz) == nil { throw ValidationError("unknown time zone '\(tz)'") }
        }

        func sides() throws -> [BedSide] {
            switch side.lowercased() {
            case "left": return [.left]
            case "right": return [.right]
            case "both": return [.left, .right]
            default: throw ValidationError("--side must be left, right or both, got '\(side)'")
            }
        }

        /// The caller closes its store on the way out, so the file alone holds what the command
        /// wrote (`NightStore.close`): a copy of it taken after `schedule set` had none of it.
        func console(creating: Bool = false) async throws -> ScheduleConsole {
            let zone = tz.flatMap(TimeZone.init(identifier:)) // validate() refused an unknown one
            let configuration = try common.load()
            let settings = configuration.schedule
            let db = configuration.databasePath
            let store: NightStore
            if creating, !FileManager.default.fileExists(atPath: db) {
                do {
                    // A schedule set for a named pod before the hub ever ran: the database
                    // (and its directory, as the hub makes it) is created.
                    try NightStore.createDirectory(containing: db)
                    store = try NightStore(path: db)
                } catch {
                    throw CommandFailure("\(error)")
                }
            } else {
                store = try await ExistingStore.open(db)
            }
            return ScheduleConsole(store: store, settings: settings, zone: zone, configuredZone: configuration.podTimeZone)
        }
    }

    static func run(_ body: () async throws(ScheduleServiceError) -> [String]) async throws {
        do {
            for line in try await body() { print(line) }
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What is in force per side, whether the pod acknowledged it, the last pushes and alarms.")
        @OptionGroup var options: Options

        func run() async throws {
            let console = try await options.console()
            defer { try? console.store.close() }
            let sides = try options.sides()
            try await ScheduleCommand.run { () async throws(ScheduleServiceError) in
                try await console.show(podSerial: try await console.resolvePod(options.pod), sides: sides)
            }
        }
    }

    struct Infer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What the inference would give and why (nights used and dropped, circular mean and spread); changes nothing.")
        @OptionGroup var options: Options

        func run() async throws {
            let console = try await options.console()
            defer { try? console.store.close() }
            let sides = try options.sides()
            try await ScheduleCommand.run { () async throws(ScheduleServiceError) in
                try await console.infer(podSerial: try await console.resolvePod(options.pod), sides: sides)
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a manual schedule (wins over the inference until cleared) and/or the smart-wake window.",
            discussion: """
                --bedtime and --wake set the manual schedule; --window and --until-out-of-bed set smart \
                wake for the side, whatever schedule is in force (manual, inferred or default): the alarm \
                becomes the latest wake time and the hub may wake the sleeper up to N minutes earlier in \
                light sleep (0 = the fixed alarm). Either may be given alone.
                """)
        @OptionGroup var options: Options

        @Option(name: .long, help: "Bedtime HH:mm (weekday nights, and weekend nights unless given).")
        var bedtime: String?

        @Option(name: .long, help: "Wake time HH:mm (the alarm), weekday mornings and weekends unless given.")
        var wake: String?

        @Option(name: .long, parsing: .unconditional, help: "Smart-wake window in minutes before the alarm, 1–120; 0 turns it off (fixed alarm).")
        var window: Int?

        @Flag(name: .long, inversion: .prefixedNo,
              help: "After the alarm stops, ring again while the side is still occupied (schedule.smartWake.<side>.repeatAfterMinutes, maxRepeats).")
        var untilOutOfBed: Bool?

        @Option(name: .long, help: "Bedtime HH:mm before weekend mornings.")
        var weekendBedtime: String?

        @Option(name: .long, help: "Wake time HH:mm on weekend mornings.")
        var weekendWake: String?

        func validate() throws {
            if (bedtime == nil) != (wake == nil) { throw ValidationError("--bedtime and --wake go together") }
            if bedtime == nil, weekendBedtime != nil || weekendWake != nil {
                throw ValidationError("--weekend-bedtime and --weekend-wake need --bedtime and --wake")
            }
            if bedtime == nil, window == nil, untilOutOfBed == nil {
                throw ValidationError("give --bedtime and --wake, --window, or --until-out-of-bed")
            }
            if let window, !(0...120).contains(window) { throw ValidationError("--window is 0 (off) … 120 minutes, got \(window)") }
            // The times too, before the database is looked for (the service checks them again).
            for (name, value) in [("bedtime", bedtime), ("wake", wake), ("weekend-bedtime", weekendBedtime),
                                  ("weekend-wake", weekendWake)] {
                if let value, TimeOfDay(value) == nil { throw ValidationError("--\(name) must be HH:mm, got '\(value)'") }
            }
            // What the service would refuse once the database is open, refused before it is
            // created: a refused command leaves no file behind.
            if let pod = options.pod, !PodSerial.isValid(pod) {
                throw ValidationError("--pod '\(pod)' is not a pod serial (1–\(PodSerial.maxLength) printable ASCII characters, no spaces)")
            }
            // What the conversion refuses (a bedtime equal to the wake; a night the wrong way round,
            // 22:00–21:55, whose power window with the configured warm-up and off delay is a day
            // or more) is a usage error (64), asked of the same conversion the service stores
            // through, before the database is opened. The side and zone do not change what it refuses.
            if let b = bedtime.flatMap(TimeOfDay.init), let w = wake.flatMap(TimeOfDay.init) {
                let weekday = SleepTimes(bedtime: b, wake: w)
                let weekend = SleepTimes(bedtime: weekendBedtime.flatMap(TimeOfDay.init) ?? b,
                                         wake: weekendWake.flatMap(TimeOfDay.init) ?? w)
                let settings = try options.common.load().schedule
                do throws(ScheduleError) {
                    _ = try ScheduleResolver.podSchedule(ManualSchedule(weekday: weekday, weekend: weekend), side: .left,
                                                         timeZoneIdentifier: "UTC", settings: settings)
                } catch {
                    throw ValidationError(error.description)
                }
            }
        }

        func run() async throws {
            let console = try await options.console(creating: options.pod != nil)
            defer { try? console.store.close() }
            let sides = try options.sides()
            try await ScheduleCommand.run { () async throws(ScheduleServiceError) in
                let pod = try await console.resolvePod(options.pod, settingUp: true)
                // The schedule first: it is the part that can be refused (07:00–07:00), and a
                // refused command must leave nothing behind, not the window set on its own.
                var manual: [String] = []
                if let bedtime, let wake {
                    manual = try await console.setManual(podSerial: pod, sides: sides, bedtime: bedtime, wake: wake,
                                                         weekendBedtime: weekendBedtime, weekendWake: weekendWake)
                        + [ScheduleConsole.laterPush]
                } else {
                    manual = ["The running hub uses it from the next wake window on."]
                }
                var lines: [String] = []
                if window != nil || untilOutOfBed != nil {
                    lines += try await console.setWake(podSerial: pod, sides: sides, windowMinutes: window, untilOutOfBed: untilOutOfBed)
                }
                return lines + manual
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the manual schedule: back to the inferred one.")
        @OptionGroup var options: Options

        func run() async throws {
            let console = try await options.console()
            defer { try? console.store.close() }
            let sides = try options.sides()
            try await ScheduleCommand.run { () async throws(ScheduleServiceError) in
                try await console.clearManual(podSerial: try await console.resolvePod(options.pod), sides: sides)
                    + [ScheduleConsole.laterPush]
            }
        }
    }
}
