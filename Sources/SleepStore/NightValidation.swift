/// Checks a night before it is written, so bad analyzer output is refused with a reason
/// instead of landing in the database half-sensible. Pure.
enum NightValidation {
    static func validate(_ night: NightRecord) throws {
        func fail(_ reason: String) -> StoreError { .invalidNight(sourceID: night.sourceID, reason: reason) }
        let serial = night.podSerial
        guard !serial.isEmpty, serial.count <= 64,
              serial.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F && $0 != ":" })
        else { throw fail("pod serial must be 1–64 printable ASCII characters without ':'") }
        guard night.end > night.start else { throw fail("end \(night.end) is not after start \(night.start)") }
        var previous: Int64?
        for epoch in night.epochs {
            if let previous, epoch.start <= previous {
                throw fail("epochs are not in strictly increasing time order at \(epoch.start)")
            }
            previous = epoch.start
            guard epoch.end > night.start, epoch.start < night.end else {
                throw fail("epoch at \(epoch.start) lies outside the session \(night.start)–\(night.end)")
            }
            if let p = epoch.probabilities {
                for value in [p.awake, p.core, p.deep, p.rem] where !(value.isFinite && value >= 0 && value <= 1) {
                    throw fail("epoch at \(epoch.start) has a stage probability outside 0…1")
                }
            }
            for value in [epoch.heartRate, epoch.hrvRMSSD, epoch.breathingRate, epoch.movement] {
                if let value, !value.isFinite { throw fail("epoch at \(epoch.start) has a non-finite feature") }
            }
        }
        let m = night.metrics
        let values = [m.timeInBedMinutes, m.totalSleepMinutes, m.efficiency, m.onsetLatencyMinutes, m.wasoMinutes,
                      m.awakeMinutes, m.coreMinutes, m.deepMinutes, m.remMinutes,
                      m.awakePercent, m.corePercent, m.deepPercent, m.remPercent]
        guard values.allSatisfy(\.isFinite) else { throw fail("a metric is not a finite number") }
        for value in [m.meanHeartRate, m.meanHRV, m.meanBreathingRate] {
            if let value, !value.isFinite { throw fail("a mean vital is not a finite number") }
        }
        guard (0...100).contains(m.score) else { throw fail("score \(m.score) is outside 0–100") }
        guard m.awakenings >= 0 else { throw fail("awakenings is negative") }
    }
}
