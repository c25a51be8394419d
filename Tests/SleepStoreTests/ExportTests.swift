import Foundation
import Testing
@testable import SleepStore
import SleepDomain

@Suite struct ExportTests {
    static let zone = "America/New_York"

    /// A 3-minute session crossing local midnight (23:58 → 00:01) plus a nap on the right side.
    static func filledStore(_ dir: TempDir) throws -> SleepStore {
        let store = try SleepStore(path: dir.path("e.sqlite"), timeZone: TimeZone(identifier: zone)!, clock: ManualClock(1_705_400_000))
        var night = Fixtures.night(serial: "PB-0001", start: Fixtures.local(zone, 2024, 1, 15, 23, 58),
                                   stages: [(.awake, 2), (.core, 3), (.deep, 1)])
        night.epochs[2].heartRate = nil
        night.epochs[2].probabilities = nil
        try store.save(night)
        try store.save(Fixtures.night(serial: "PB-0001", side: .right, start: Fixtures.local(zone, 2024, 1, 16, 14, 0),
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

    @Test func jsonMatchesTheGoldenDocument() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try Self.filledStore(dir))
        let text = try exporter.export(.date(CalendarDay("2024-01-16")!), side: .left, format: .json)
        #expect(text == Self.jsonGolden)
    }

    @Test func jsonWithEpochsCarriesEveryEpochAndNullsAsAbsent() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try Self.filledStore(dir))
        let text = try exporter.export(.range(from: CalendarDay("2024-01-15")!, to: CalendarDay("2024-01-16")!), format: .json, includeEpochs: true)
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

    @Test func csvBlocksMatchTheGoldenFile() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try Self.filledStore(dir))
        #expect(try exporter.export(.date(CalendarDay("2024-01-16")!), format: .csv) == Self.blocksCSVGolden)
    }

    @Test func csvEpochsHaveOneRowPerEpochWithEmptyCellsForUnknowns() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try Self.filledStore(dir))
        let lines = try exporter.export(.all, side: .left, format: .csv, includeEpochs: true).split(separator: "\n")
        #expect(lines.count == 7)
        #expect(lines[0] == Substring(ExportRenderer.epochsCSVHeader))
        #expect(lines[1] == "podbridge:PB-0001:left:1705381080,PB-0001,left,2024-01-16,2024-01-15T23:58:00-05:00,2024-01-15T23:58:30-05:00,awake,2,0.7,0.1,0.1,0.1,58,42.5,14.25,0.5")
        #expect(lines[3] == "podbridge:PB-0001:left:1705381080,PB-0001,left,2024-01-16,2024-01-15T23:59:00-05:00,2024-01-15T23:59:30-05:00,core,3,,,,,,42.5,14.25,0")
    }

    @Test func stageBlocksDocumentHasAnInBedSamplePerSessionAndHealthValues() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try Self.filledStore(dir))
        let text = try exporter.export(.date(CalendarDay("2024-01-16")!), format: .blocks)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(document["format"] as? String == "podbridge.stage-blocks")
        #expect(document["version"] as? Int == 1)
        let samples = try #require(document["samples"] as? [[String: Any]])
        #expect(samples.map { $0["stage"] as? String } == ["in_bed", "awake", "core", "deep", "in_bed", "core", "rem"])
        #expect(samples.map { $0["value"] as? Int } == [0, 2, 3, 4, 0, 3, 5])
        #expect(samples[3]["end_time"] as? String == "2024-01-16T00:01:00-05:00")
    }

    @Test func anotherZoneRecomputesWakeDatesAndOffsets() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try Self.filledStore(dir))
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        // In Tokyo the nap ends at 04:02 on the 17th; the night ends at 14:01 on the 16th.
        let csv = try exporter.export(.date(CalendarDay("2024-01-17")!), format: .csv, timeZone: tokyo)
        let rows = csv.split(separator: "\n").dropFirst()
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0.contains(",right,2024-01-17,") })
        #expect(rows.first?.contains("2024-01-17T04:00:00+09:00") == true)
    }

    @Test func clearErrorsForUnknownDateEmptyRangeBadFormatAndMisuse() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let exporter = SleepExporter(store: try Self.filledStore(dir))
        let d = { (s: String) in CalendarDay(s)! }
        #expect(throws: ExportError.noSessionsOnDate(d("2024-01-20"), zone: "recorded zones")) {
            try exporter.export(.date(d("2024-01-20")), format: .json)
        }
        #expect(throws: ExportError.emptyRange(from: d("2023-01-01"), to: d("2023-12-31"), zone: "recorded zones")) {
            try exporter.export(.range(from: d("2023-01-01"), to: d("2023-12-31")), format: .csv)
        }
        #expect(throws: ExportError.invertedRange(from: d("2024-02-01"), to: d("2024-01-01"))) {
            try exporter.export(.range(from: d("2024-02-01"), to: d("2024-01-01")), format: .csv)
        }
        #expect(throws: ExportError.badFormat("xml")) { try ExportFormat.parse("xml") }
        #expect(ExportError.badFormat("xml").description == "unknown format 'xml' (use one of: blocks, json, csv)")
        #expect(try ExportFormat.parse("CSV") == .csv)
        #expect(throws: ExportError.epochsNeedJSONOrCSV) { try exporter.export(.all, format: .blocks, includeEpochs: true) }
        // The date has a session, but not on the side asked for.
        #expect(throws: ExportError.noSessionsOnDate(d("2024-01-15"), zone: "recorded zones")) {
            try exporter.export(.date(d("2024-01-15")), side: .right, format: .json)
        }
        let emptyDir = try TempDir()
        defer { emptyDir.cleanup() }
        #expect(throws: ExportError.emptyDatabase) {
            try SleepExporter(store: try SleepStore(path: emptyDir.path("empty.sqlite"))).export(.all, format: .json)
        }
    }

    @Test func csvQuotesFieldsThatNeedIt() {
        #expect(ExportRenderer.csvRow(["a,b", "say \"hi\"", "plain"]) == "\"a,b\",\"say \"\"hi\"\"\",plain")
    }
}
