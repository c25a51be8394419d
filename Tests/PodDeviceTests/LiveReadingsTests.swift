import PodProtocol
import Testing
@testable import PodDevice
import SleepDomain

@Suite("live readings")
struct LiveReadingsTests {
    final class FixedAnalyzer: LiveAnalyzer {
        var blocks = 0
        var readings = 0
        func consume(_ block: PiezoBlock) { blocks += 1 }
        func consume(_ reading: CapacitanceReading) { readings += 1 }
        func vitals(for side: BedSide) -> SideVitals { SideVitals(present: side == .left, heartRate: side == .left ? 58 : nil) }
    }

    @Test("piezo level is the first channel's peak-to-peak over about one second, per side")
    func piezoLevel() {
        let live = LiveReadings(sampleRate: 100)
        // Two channels interleaved: channel 0 swings ±1000, channel 1 ±50 000 (must be ignored).
        let samples: [Int32] = (0..<50).flatMap { i -> [Int32] in [i % 2 == 0 ? 1000 : -1000, i % 2 == 0 ? 50_000 : -50_000] }
        live.apply(.piezo(PiezoBlock(side: .right, channels: 2, gain: 1, firstTick: 0, samples: samples)))
        #expect(live.side(.right).piezoPeakToPeak == 2000)
        #expect(live.side(.left).piezoPeakToPeak == nil)
        // Three quiet blocks later the loud one has left the one-second window.
        for k in 1...3 {
            live.apply(.piezo(PiezoBlock(side: .right, channels: 2, gain: 1, firstTick: UInt64(50 * k), samples: Array(repeating: 7, count: 100))))
        }
        #expect(live.side(.right).piezoPeakToPeak == 0)
    }

    @Test("temperatures in °C, absent sensors stay absent; capacitance and analyzer pass through")
    func environmentAndSeam() {
        let analyzer = FixedAnalyzer()
        let live = LiveReadings(analyzer: analyzer)
        live.apply(.environment(EnvironmentReading(tick: 10, bedLeft: 3150, bedRight: nil, ambient: 2125, humidity: 4550)))
        live.apply(.capacitance(CapacitanceReading(side: .left, tick: 11, values: [900, 910, 920])))
        live.apply(.piezo(PiezoBlock(side: .left, channels: 1, gain: 1, firstTick: 12, samples: [1, 2])))
        #expect(live.side(.left).bedTemperature == 31.5)
        #expect(live.side(.right).bedTemperature == nil)
        #expect(live.ambientTemperature == 21.25)
        #expect(live.humidity == 45.5)
        #expect(live.side(.left).capacitance == [900, 910, 920])
        #expect(live.side(.left).vitals == SideVitals(present: true, heartRate: 58))
        #expect(live.side(.right).vitals.present == false)
        #expect(analyzer.blocks == 1 && analyzer.readings == 1)
    }
}
