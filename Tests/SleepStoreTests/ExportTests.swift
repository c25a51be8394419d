import Foundation
import Testing
@testable import SleepStore
import SleepDomain

@Suite struct ExportTests {
    static let zone = "America/New_York"

    /// A 3-minute session crossing local midnight (23:58 → 00:01) plus a nap on the right side.
    static func filledStore(_ dir: TempDir) async throws -> NightStore {
        let store = try NightStore(path: dir.path("e.sqlite"), timeZone: TimeZone(identifier: zone)!, clock: ManualClock(1_705_400_000))
        var night = Fixtures.night(serial: "PB-0001", start: Fixtures.local(zone, 2024, 1, 15, 23, 58),
                                   stages: [(.awake, 2), (.core, 3), (.deep, 1)])
        night.epochs[2].heartRate = nil
        night.epochs[2].probabilities = nil
        try await store.save(night)
        try await store.save(Fixtures.night(serial: "PB-0001", side: .right, start: Fixtures.local(zone, 2024, 1, 16, 14, 0),
                                      stages: [(.core, 2), (.rem, 2)], preliminary: true))
        return store
    }

    static let jsonGolden = #"""
{
  "format" : "podbridge.sleep",
  "sessions" : [
    {
      "blocks" : [
        {
          "duration_min" : 3,
          "end_time" : "2024-01-16T00:01:00-05:00",
          "stage" : "in_bed",
          "start_time" : "2024-01-15T23:58:00-05:00",
          "value" : 0
        },
        {
          "duration_min" : 1,
          "end_time" : "2024-01-15T23:59:00-05:00",
          "stage" : "awake",
          "start_time" : "2024-01-15T23:58:00-05:00",
          "value" : 2
        },
        {
          "duration_min" : 1.5,
          "end_time" : "2024-01-16T00:00:30-05:00",
          "stage" : "core",
          "start_time" : "2024-01-15T23:59:00-05:00",
          "value" : 3
        },
        {
          "duration_min" : 0.5,
          "end_time" : "2024-01-16T00:01:00-05:00",
          "stage" : "deep",
          "start_time" : "2024-01-16T00:00:30-05:00",
          "value" : 4
        }
      ],
      "end_time" : "2024-01-16T00:01:00-05:00",
      "final" : true,
      "metrics" : {
        "awakenings" : 0,
        "mean_breathing_rate_bpm" : 14.25,
        "mean_heart_rate_bpm" : 58.5,
        "mean_hrv_rmssd_ms" : 42.5,
        "score" : 81,
        "sleep_efficiency" : 66.7,
        "sleep_onset_latency_min" : 1,
        "stages" : {
          "awake" : {
            "minutes" : 1,
            "percent" : 33.3
          },
          "core" : {
            "minutes" : 1.5,
            "percent" : 50
          },
          "deep" : {
            "minutes" : 0.5,
            "percent" : 16.7
          },
          "rem" : {
            "minutes" : 0,
            "percent" : 0
          }
        },
        "time_in_bed_min" : 3,
        "total_sleep_min" : 2,
        "waso_min" : 0
      },
      "pod_serial" : "PB-0001",
      "side" : "left",
      "source_id" : "podbridge:PB-0001:left:1705381080",
      "start_time" : "2024-01-15T23:58:00-05:00",
      "sync_status" : "pending",
      "time_zone" : "America/New_York",
      "wake_date" : "2024-01-16"
    }
  ],
  "version" : 1
}

"""#

    static let blocksCSVGolden = """
source_id,pod_serial,side,wake_date,stage,value,start_time,end_time,duration_min
podbridge:PB-0001:left:1705381080,PB-0001,left,2024-01-16,in_bed,0,2024-01-15T23:58:00-05:00,2024-01-16T00:01:00-05:00,3
podbridge:PB-0001:left:1705381080,PB-0001,left,2024-01-16,awake,2,2024-01-15T23:58:00-05:00,2024-01-15T23:59:00-05:00,1
podbridge:PB-0001:left:1705381080,PB-0001,left,2024-01-16,core,3,2024-01-15T23:59:00-05:00,2024-01-16T00:00:30-05:00,1.5
podbridge:PB-0001:left:1705381080,PB-0001,left,2024-01-16,deep,4,2024-01-16T00:00:30-05:00,2024-01-16T00:01:00-05:00,0.5
podbridge:PB-0001:right:1705431600,PB-0001,right,2024-01-16,in_bed,0,2024-01-16T14:00:00-05:00,2024-01-16T14:02:00-05:00,2
podbridge:PB-0001:right:1705431600,PB-0001,right,2024-01-16,core,3,2024-01-16T14:00:00-05:00,2024-01-16T14:01:00-05:00,1
podbridge:PB-0001:right:1705431600,PB-0001,right,2024-01-16,rem,5,2024-01-16T14:01:00-05:00,2024-01-16T14:02:00-05:00,1

"""

    @Test func jsonMatchesTheGoldenDocument() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try await Self.filledStore(dir))
        let text = try await exporter.export(.date(CalendarDay("2024-01-16")!), side: .left, format: .json)
        #expect(text == Self.jsonGolden)
    }

    @Test func jsonWithEpochsCarriesEveryEpochAndNullsAsAbsent() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try await Self.filledStore(dir))
        let text = try await exporter.export(.range(from: CalendarDay("2024-01-15")!, to: CalendarDay("2024-01-16")!), format: .json, includeEpochs: true)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(document["version"] as? Int == ExportRenderer.schemaVersion)
        let sessions = try #require(document["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["side"] as? String } == ["left", "right"])
        #expect(sessions.map { $0["final"] as? Bool } == [true, false])
        let epochs = try #require(sessions[0]["epochs"] as? [[String: Any]])
        #expect(epochs.count == 6)
        #expect(epochs[2]["heart_rate_bpm"] == nil && epochs[2]["probabilities"] == nil)
        #expect(epochs[2]["start_time"] as? String == "2024-01-15T23:59:00-05:00")
        #expect(epochs.map { $0["value"] as? Int } == [2, 2, 3, 3, 3, 4])
    }

    @Test func csvBlocksMatchTheGoldenFile() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try await Self.filledStore(dir))
        #expect(try await exporter.export(.date(CalendarDay("2024-01-16")!), format: .csv) == Self.blocksCSVGolden)
    }

    @Test func csvEpochsHaveOneRowPerEpochWithEmptyCellsForUnknowns() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try await Self.filledStore(dir))
        let lines = try await exporter.export(.all, side: .left, format: .csv, includeEpochs: true).split(separator: "\n")
        #expect(lines.count == 7)
        #expect(lines[0] == Substring(ExportRenderer.epochsCSVHeader))
        #expect(lines[1] == "podbridge:PB-0001:left:1705381080,PB-0001,left,2024-01-16,2024-01-15T23:58:00-05:00,2024-01-15T23:58:30-05:00,awake,2,0.7,0.1,0.1,0.1,58,42.5,14.25,0.5")
        #expect(lines[3] == "podbridge:PB-0001:left:1705381080,PB-0001,left,2024-01-16,2024-01-15T23:59:00-05:00,2024-01-15T23:59:30-05:00,core,3,,,,,,42.5,14.25,0")
    }

    @Test func stageBlocksDocumentHasAnInBedSamplePerSessionAndHealthValues() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try await Self.filledStore(dir))
        let text = try await exporter.export(.date(CalendarDay("2024-01-16")!), format: .blocks)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(document["format"] as? String == "podbridge.stage-blocks")
        #expect(document["version"] as? Int == 1)
        let samples = try #require(document["samples"] as? [[String: Any]])
        #expect(samples.map { $0["stage"] as? String } == ["in_bed", "awake", "core", "deep", "in_bed", "core", "rem"])
        #expect(samples.map { $0["value"] as? Int } == [0, 2, 3, 4, 0, 3, 5])
        #expect(samples[3]["end_time"] as? String == "2024-01-16T00:01:00-05:00")
    }

    @Test func anotherZoneRecomputesWakeDatesAndOffsets() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try await Self.filledStore(dir))
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        // In Tokyo the nap ends at 04:02 on the 17th; the night ends at 14:01 on the 16th.
        let csv = try await exporter.export(.date(CalendarDay("2024-01-17")!), format: .csv, timeZone: tokyo)
        let rows = csv.split(separator: "\n").dropFirst()
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0.contains(",right,2024-01-17,") })
        #expect(rows.first?.contains("2024-01-17T04:00:00+09:00") == true)
    }

    @Test func clearErrorsForUnknownDateEmptyRangeBadFormatAndMisuse() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try await Self.filledStore(dir))
        let d = { (s: String) in CalendarDay(s)! }
        await #expect(throws: ExportError.noSessionsOnDate(d("2024-01-20"), zone: "recorded zones")) {
            try await exporter.export(.date(d("2024-01-20")), format: .json)
        }
        await #expect(throws: ExportError.emptyRange(from: d("2023-01-01"), to: d("2023-12-31"), zone: "recorded zones")) {
            try await exporter.export(.range(from: d("2023-01-01"), to: d("2023-12-31")), format: .csv)
        }
        await #expect(throws: ExportError.invertedRange(from: d("2024-02-01"), to: d("2024-01-01"))) {
            try await exporter.export(.range(from: d("2024-02-01"), to: d("2024-01-01")), format: .csv)
        }
        #expect(throws: ExportError.badFormat("xml")) { try ExportFormat.parse("xml") }
        #expect(ExportError.badFormat("xml").description == "unknown format 'xml' (use one of: blocks, json, csv)")
        #expect(try ExportFormat.parse("CSV") == .csv)
        await #expect(throws: ExportError.epochsNeedJSONOrCSV) { try await exporter.export(.all, format: .blocks, includeEpochs: true) }
        // The date has a session, but not on the side asked for.
        await #expect(throws: ExportError.noSessionsOnDate(d("2024-01-15"), zone: "recorded zones")) {
            try await exporter.export(.date(d("2024-01-15")), side: .right, format: .json)
        }
        let emptyDir = try TempDir()
        defer { emptyDir.cleanup() }
        await #expect(throws: ExportError.emptyDatabase) {
            try await SleepExporter(store: try NightStore(path: emptyDir.path("empty.sqlite"))).export(.all, format: .json)
        }
    }

    /// docs/export-format.md: "Numbers are plain decimals" — a stage probability of 5.7e-07
    /// is written out, every digit kept, so it reads back to the same double.
    @Test func csvNumbersArePlainDecimalsThatReadBackExactly() {
        let cases: [(Double, String)] = [
            (5.728617505656059e-07, "0.0000005728617505656059"), (7.00361989273841e-05, "0.0000700361989273841"),
            (-1.5e-05, "-0.000015"), (1e-300, "0." + String(repeating: "0", count: 299) + "1"),
            (0.25, "0.25"), (58, "58"), (-3, "-3"), (1.5, "1.5"), (1e16, "10000000000000000"),
            (1.2345e17, "123450000000000000"), (2.5e-7, "0.00000025"),
        ]
        for (value, text) in cases {
            #expect(ExportRenderer.number(value) == text)
            #expect(Double(ExportRenderer.number(value)) == value)
        }
        #expect(ExportRenderer.number(nil) == "")
    }

    @Test func csvQuotesFieldsThatNeedIt() {
        #expect(ExportRenderer.csvRow(["a,b", "say \"hi\"", "plain"]) == "\"a,b\",\"say \"\"hi\"\"\",plain")
    }
}
