// libFuzzer target for the hub's configuration: the JSON file and the PODBRIDGE_*
// environment (built by `make fuzz` from Sources/Hub/HubConfiguration.swift itself, compiled
// into this executable with Sources/SleepSchedule; the rest of Hub is I/O and not needed).
//
// Oracles beyond "does not crash": bad input is a `ConfigurationError`; an accepted
// configuration is valid, and encoding it and reading it back gives the same one.
import Foundation
import SleepSchedule

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // Up to the first 0x00: the file; after it, KEY=VALUE lines for the environment.
    let split = bytes.firstIndex(of: 0) ?? size
    let file = Data(bytes[0..<split])
    var env: [String: String] = [:]
    if split < size {
        let text = String(decoding: bytes[(split + 1)...], as: UTF8.self)
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            env["PODBRIDGE_" + parts[0]] = String(parts[1])
        }
    }
    do {
        var config = try HubConfiguration.decode(file, path: "fuzz.json")
        try config.validate()
        try config.applyEnvironment(env)
        let again = try HubConfiguration.decode(try JSONEncoder().encode(config), path: "again.json")
        precondition(again == config, "the configuration does not survive encoding")
        _ = (config.databasePath, config.exportDirectory, config.hubTimeZone, config.podTimeZone)
    } catch is ConfigurationError {
        return 0
    } catch {
        precondition(false, "not a ConfigurationError: \(error)")
    }
    return 0
}
