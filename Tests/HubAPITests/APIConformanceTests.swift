import Foundation
import Testing

/// The OpenAPI document is valid and the running server answers as it says: schemathesis
/// (PyPI) generates requests for every operation, valid and invalid, and checks status codes,
/// content types and bodies against the document.
@Suite(.serialized) struct APIConformanceTests {
    @Test func theRunningServerConformsToItsOpenAPIDocument() async throws {
        let hub = try await APITestHub.start(serial: "API-SPEC", speed: 10)
        #expect(await eventually { hub.daemon.bus.state.pods["API-SPEC"]?.connected == true })
        let report = try artifactsDirectory().appendingPathComponent("schemathesis-junit.xml")
        let (status, output) = try await runTool([
            "st", "run", hub.base + "/api/v1/openapi.json",
            "--checks", "all",
            // Valid-looking requests the document cannot tell apart from refused ones (an
            // inverted date range, an unknown serial) are 4xx by design.
            "--exclude-checks", "positive_data_acceptance",
            "--max-examples", "25",
            "--generation-deterministic",
            // Endless streams: checked by the live tests.
            "--exclude-path-regex", "/live/(events|ws)$",
            "--report", "junit", "--report-junit-path", report.path,
        ], deadline: 900)
        #expect(status == 0, "schemathesis said:\n\(output.suffix(6000))")
        #expect(output.contains("passed") || output.contains("PASSED"), "\(output.suffix(2000))")
        await hub.stop()
    }
}
