// Child process of the SleepStore kill -9 test: writes full nights into the database given
// as the first argument, printing "committed <source id>" after each save returns, until
// killed. The test SIGKILLs it mid-write and checks that every announced session survived.
import Foundation
import SleepStore
import SleepDomain

let arguments = CommandLine.arguments
guard arguments.count >= 3, let count = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: sleepstore-crash-writer DB_PATH NIGHTS\n".utf8))
    exit(2)
}
do {
    let store = try SleepStore(path: arguments[1], timeZone: TimeZone(identifier: "UTC")!)
    let firstStart: Int64 = 1_700_000_000
    for n in 0..<count {
        let start = firstStart + Int64(n) * 86_400
        var epochs: [EpochRecord] = []
        let stages: [SleepStage] = [.awake, .core, .deep, .core, .rem]
        for i in 0..<960 {
            epochs.append(EpochRecord(start: start + Int64(i) * 30, stage: stages[(i / 40) % stages.count],
                                      heartRate: 55 + Double(i % 7), hrvRMSSD: 40, breathingRate: 14, movement: 0))
        }
        let metrics = NightMetrics(
            timeInBedMinutes: 480, totalSleepMinutes: 384, efficiency: 80, onsetLatencyMinutes: 20, wasoMinutes: 76,
            awakenings: 4, awakeMinutes: 96, coreMinutes: 192, deepMinutes: 96, remMinutes: 96,
            awakePercent: 20, corePercent: 40, deepPercent: 20, remPercent: 20,
            meanHeartRate: 58, meanHRV: 40, meanBreathingRate: 14, score: 75)
        let night = NightRecord(podSerial: "PB-CRASH", side: n % 2 == 0 ? .left : .right, start: start,
                                end: start + 960 * 30, epochs: epochs, metrics: metrics)
        try store.save(night)
        FileHandle.standardOutput.write(Data("committed \(night.sourceID)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("sleepstore-crash-writer: \(error)\n".utf8))
    exit(1)
}
