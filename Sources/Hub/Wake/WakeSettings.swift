import Foundation
import SleepDomain
import SleepStore

/// A side's smart-wake settings in force: what `podbridge schedule set --window` or the API
/// stored for the pod side, else the configuration's `schedule.smartWake.<side>`. The repeat
/// interval and count always come from the configuration.
package struct EffectiveWakeSettings: Sendable, Hashable {
    /// 0 = no window: the fixed alarm.
    package var windowMinutes: Int
    package var untilOutOfBed: Bool
    package var repeatAfterMinutes: Double
    package var maxRepeats: Int
    /// Where window and "until out of bed" come from: `configuration` or `set`.
    package var source: String

    /// Whether the hub has anything to do for the side's alarm.
    package var isActive: Bool { windowMinutes > 0 || untilOutOfBed }

    package init(windowMinutes: Int, untilOutOfBed: Bool, repeatAfterMinutes: Double, maxRepeats: Int, source: String) {
        self.windowMinutes = windowMinutes
        self.untilOutOfBed = untilOutOfBed
        self.repeatAfterMinutes = repeatAfterMinutes
        self.maxRepeats = maxRepeats
        self.source = source
    }

    package static func resolve(store: NightStore, settings: HubConfiguration.ScheduleSettings, podSerial: String,
                               side: BedSide) async -> EffectiveWakeSettings {
        let configured = settings.smartWake[side.rawValue]
        var result = EffectiveWakeSettings(windowMinutes: configured.windowMinutes, untilOutOfBed: configured.untilOutOfBed,
                                           repeatAfterMinutes: configured.repeatAfterMinutes,
                                           maxRepeats: configured.maxRepeats, source: "configuration")
        if let stored = try? await store.wakeSettings(podSerial: podSerial, side: side) {
            result.windowMinutes = stored.windowMinutes
            result.untilOutOfBed = stored.untilOutOfBed
            result.source = "set"
        }
        return result
    }

    /// "smart wake 30-min window, until out of bed (every 5 min, at most 3 repeats)" / "fixed alarm".
    package var summary: String {
        var parts: [String] = []
        parts.append(windowMinutes > 0 ? "smart wake: \(windowMinutes)-min window before the alarm" : "fixed alarm (no wake window)")
        if untilOutOfBed {
            let every = repeatAfterMinutes == repeatAfterMinutes.rounded() ? "\(Int(repeatAfterMinutes))" : "\(repeatAfterMinutes)"
            parts.append("until out of bed (again after \(every) min, at most \(maxRepeats) repeats)")
        }
        return parts.joined(separator: ", ")
    }
}

/// Setting a side's wake window and "until out of bed" (`podbridge schedule set --window`, the
/// API's `PUT /schedule/manual`): stored per pod side, it overrides the configuration and
/// applies to whatever schedule is in force (manual, inferred or default).
extension ScheduleConsole {
    package func setWake(podSerial: String, sides: [BedSide], windowMinutes: Int?,
                        untilOutOfBed: Bool?) async throws(ScheduleServiceError) -> [String] {
        if let windowMinutes, !(0...120).contains(windowMinutes) {
            throw .badManualSchedule("the wake window is 0 (off) … 120 minutes, got \(windowMinutes)")
        }
        var lines: [String] = []
        for side in sides {
            let current = await EffectiveWakeSettings.resolve(store: store, settings: settings, podSerial: podSerial, side: side)
            var next = current
            if let windowMinutes { next.windowMinutes = windowMinutes }
            if let untilOutOfBed { next.untilOutOfBed = untilOutOfBed }
            do {
                try await store.setWakeSettings(WakeSettingsRecord(
                    podSerial: podSerial, side: side, windowMinutes: next.windowMinutes, untilOutOfBed: next.untilOutOfBed,
                    setAt: Int64(now.timeIntervalSince1970)))
            } catch {
                throw .store("\(error)")
            }
            lines.append("\(side): \(next.summary)")
        }
        return lines
    }

    /// The wake line `show` prints for a side.
    package func wakeLine(podSerial: String, side: BedSide) async -> String {
        let wake = await EffectiveWakeSettings.resolve(store: store, settings: settings, podSerial: podSerial, side: side)
        return "  wake: \(wake.summary) (\(wake.source == "set" ? "set for this side" : "from the configuration"))"
    }
}

/// Switching a side's alarm on or off (MQTT's alarm switch): stored per pod side; while off the
/// schedule in force keeps its power windows and the pod holds no alarm for the side.
extension ScheduleConsole {
    package func setAlarm(podSerial: String, sides: [BedSide], enabled: Bool) async throws(ScheduleServiceError) -> [String] {
        var lines: [String] = []
        for side in sides {
            do {
                try await store.setAlarmEnabled(podSerial: podSerial, side: side, enabled: enabled,
                                                at: Int64(now.timeIntervalSince1970))
            } catch {
                throw .store("\(error)")
            }
            lines.append("\(side): alarm switched \(enabled ? "on" : "off")")
        }
        return lines
    }
}
