import Foundation
import Hub
import SleepAnalysis
import SleepStore
import SleepDomain

/// Store figures: time to store a night (960 epochs per side, blocks, session and outbox
/// event, one transaction per side), to export a month of nights, and to keep and read back
/// a 10-hour open stay (what the hub does at every preliminary snapshot and after a restart),
/// on a real SQLite file in a temporary directory.
func runStoreBench(options: BenchOptions) async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-storebench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let zone = TimeZone(identifier: "Europe/Berlin")!
    let store = try NightStore(path: dir.appendingPathComponent("bench.sqlite").path, timeZone: zone)
    let nights = options.quick ? 10 : 30
    let firstStart: Int64 = 1_717_279_200  // 2024-06-01 22:00 Berlin

    var storeSeconds: [Double] = []
    for n in 0..<nights {
        let start = firstStart + Int64(n) * 86_400
        let pair = [benchNight(side: .left, start: start), benchNight(side: .right, start: start + 600)]
        let t0 = DispatchTime.now().uptimeNanoseconds
        for night in pair { try await store.save(night) }
        storeSeconds.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
    }
    storeSeconds.sort()
    print("store_night_two_sides_median: \(String(format: "%.2f", storeSeconds[storeSeconds.count / 2] * 1000)) ms")
    print("store_night_two_sides_max: \(String(format: "%.2f", storeSeconds.last! * 1000)) ms")

    // What the hub runs at start (StoreError.damaged): SQLite's quick_check over the file.
    let checkStart = DispatchTime.now().uptimeNanoseconds
    let problems = try await store.quickCheck()
    let checkMs = Double(DispatchTime.now().uptimeNanoseconds - checkStart) / 1e6
    let fileKiB = ((try? FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int) ?? 0) / 1024
    print("store_quick_check_\(nights)_nights: \(String(format: "%.1f", checkMs)) ms (\(problems.isEmpty ? "sound" : "damaged"), "
          + "file \(fileKiB) KiB plus its log; what the hub runs at start)")

    let exporter = SleepExporter(store: store)
    for (label, format, epochs) in [("json", ExportFormat.json, false), ("csv", .csv, false),
                                    ("blocks", .blocks, false), ("csv_epochs", .csv, true)] {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let text = try await exporter.export(.all, format: format, includeEpochs: epochs)
        let ms = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
        print("export_\(nights)_nights_\(label): \(String(format: "%.1f", ms)) ms (\(text.utf8.count / 1024) KiB)")
    }

    // An open stay of 10 hours: every second with readings, a beat a second.
    let hours = 10.0, t0 = Double(firstStart)
    let seconds = (0..<Int(hours * 3600)).map { (i: Int) -> SecondVitals in
        let heartRate: Reading = i % 50 == 0 ? .none(.movement) : .value(55 + Double(i % 7))
        let breathing = 14 + Double(i % 3) / 10
        return SecondVitals(time: t0 + Double(i), heartRate: heartRate, breathingRate: .value(breathing),
                            movement: Double(i % 5) / 10, present: true, quality: 0.9)
    }
    let stay = SessionTracker.OpenStay(seconds: seconds, beats: seconds.map { $0.time + 0.4 }, lastPresent: seconds.last!.time,
                                       lastSnapshot: seconds.last!.time, entrySeen: true, emptySince: nil,
                                       lastSecond: seconds.last!.time)
    var keep: [Double] = [], read: [Double] = []
    var size = 0
    for _ in 0..<(options.quick ? 2 : 7) {
        var t = DispatchTime.now().uptimeNanoseconds
        let data = OpenStayArchive.encode(stay)
        try await store.keepOpenStay(podSerial: "PB-BENCH", side: .left, lastSecond: Int64(stay.lastSecond), data: data)
        keep.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        t = DispatchTime.now().uptimeNanoseconds
        guard let back = try await store.openStay(podSerial: "PB-BENCH", side: .left),
              try OpenStayArchive.decode(back) == stay else { throw BenchFailure("the open stay did not come back whole") }
        read.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        size = data.count
    }
    keep.sort()
    read.sort()
    print("open_stay_10h_keep_median: \(String(format: "%.1f", keep[keep.count / 2])) ms (encode and write, \(size / 1024) KiB)")
    print("open_stay_10h_resume_median: \(String(format: "%.1f", read[read.count / 2])) ms (read and decode)")
}

/// An 8-hour night of 960 epochs cycling through the stages in 20-minute runs.
private func benchNight(side: BedSide, start: Int64) -> NightRecord {
    let cycle: [SleepStage] = [.awake, .core, .deep, .core, .rem, .core]
    let epochs = (0..<960).map { i in
        EpochRecord(
            start: start + Int64(i) * 30, stage: cycle[(i / 40) % cycle.count],
            probabilities: StageProbabilities(awake: 0.1, core: 0.6, deep: 0.2, rem: 0.1),
            heartRate: 55 + Double(i % 9), hrvRMSSD: 38 + Double(i % 5), breathingRate: 14.5, movement: Double(i % 4) / 10)
    }
    let metrics = NightMetrics(
        timeInBedMinutes: 480, totalSleepMinutes: 400, efficiency: 83.3, onsetLatencyMinutes: 20, wasoMinutes: 60,
        awakenings: 3, awakeMinutes: 80, coreMinutes: 240, deepMinutes: 80, remMinutes: 80,
        awakePercent: 16.7, corePercent: 50, deepPercent: 16.7, remPercent: 16.7,
        meanHeartRate: 59, meanHRV: 40, meanBreathingRate: 14.5, score: 78)
    return NightRecord(podSerial: "PB-BENCH", side: side, start: start, end: start + 960 * 30, epochs: epochs, metrics: metrics)
}
