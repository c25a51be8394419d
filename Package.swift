// swift-tools-version:6.1
// podbridge: the Swift software of a Linux hub that bridges a sleep pod over USB.
// One module per concern; pure logic (protocol, physiology model, analysis, schedule)
// has no I/O, Linux specifics (libudev, termios, libusb, sqlite) live at the edges.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "podbridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "podbridge", targets: ["podbridge"]),
        .library(name: "PodProtocol", targets: ["PodProtocol"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // MARK: C shims (Debian's libraries through pkg-config)
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CLibUSB", pkgConfig: "libusb-1.0", providers: [.apt(["libusb-1.0-0-dev"])]),
        .systemLibrary(name: "CUmockdev", pkgConfig: "umockdev-1.0", providers: [.apt(["libumockdev-dev"])]),

        // MARK: Pure logic: no I/O
        /// The pod's wire protocol: CRC, COBS framing, messages, codec, captures.
        .target(name: "PodProtocol", swiftSettings: strict),
        /// The physiology of a night the virtual pod plays (hypnogram, heart, breath, BCG).
        .target(name: "NightModel", swiftSettings: strict),
        /// Raw piezo → beats, breathing, movement → epochs → stages → sessions and metrics.
        .target(name: "SleepAnalysis", swiftSettings: strict),
        /// Bedtime and wake-time inference, HH:mm conversion, DST, push policy.
        .target(name: "SleepSchedule", swiftSettings: strict),

        // MARK: Edges: devices, storage, network
        /// The firmware side of the protocol over a pseudo-terminal, playing a NightModel night.
        .target(name: "VirtualPod", dependencies: ["PodProtocol", "NightModel"], swiftSettings: strict),
        /// Discovery (libudev), serial (termios) and USB (libusb) transports, connections.
        .target(name: "PodDevice", dependencies: [
            "PodProtocol", "CUdev", "CLibUSB",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        /// The SQLite store (GRDB): pods, epochs, sessions, blocks, schedules, outbox; export.
        .target(name: "SleepStore", dependencies: [.product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
        /// The outbox worker that delivers sessions to the sleep backend.
        .target(name: "BackendUpload", dependencies: [
            "SleepStore",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),

        /// Pod messages to per-side front ends; captures to nights (pure glue of the two).
        .target(name: "PodAnalysis", dependencies: ["PodProtocol", "SleepAnalysis"], swiftSettings: strict),
        /// The daemon: per-pod pipeline, session tracking, schedule driver, service lifecycle.
        .target(name: "Hub", dependencies: [
            "PodProtocol", "PodDevice", "PodAnalysis", "SleepAnalysis", "SleepSchedule", "SleepStore", "BackendUpload",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "GRDB", package: "GRDB.swift"),
        ], swiftSettings: strict),

        /// The hub's local API: REST under /api/v1, SSE and WebSocket live streams,
        /// Prometheus /metrics and the web dashboard at / (Hummingbird 2).
        .target(name: "HubAPI", dependencies: [
            "Hub", "SleepStore", "SleepSchedule", "SleepAnalysis", "PodProtocol", "PodDevice",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], resources: [.copy("Dashboard"), .copy("openapi.json")], swiftSettings: strict),

        // MARK: The executables
        .executableTarget(
            name: "podbridge",
            dependencies: [
                "PodProtocol", "PodDevice", "VirtualPod", "NightModel", "SleepAnalysis", "SleepSchedule",
                "SleepStore", "BackendUpload", "PodAnalysis", "Hub", "HubAPI",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "podbridge-bench", dependencies: [
            "PodProtocol", "NightModel", "SleepAnalysis", "SleepSchedule", "SleepStore", "PodAnalysis",
        ], swiftSettings: strict),
        /// A child process for the store's crash test: writes sessions until it is killed.
        .executableTarget(name: "sleepstore-crash-writer", dependencies: ["SleepStore"], swiftSettings: strict),

        // MARK: Tests
        .testTarget(name: "PodProtocolTests", dependencies: ["PodProtocol"], swiftSettings: strict),
        .testTarget(name: "NightModelTests", dependencies: ["NightModel"], swiftSettings: strict),
        .testTarget(name: "SleepAnalysisTests", dependencies: ["SleepAnalysis", "NightModel"], swiftSettings: strict),
        .testTarget(name: "VirtualPodTests", dependencies: ["VirtualPod", "PodProtocol", "NightModel"], swiftSettings: strict),
        .testTarget(name: "PodAnalysisTests", dependencies: ["PodAnalysis", "PodProtocol", "SleepAnalysis", "NightModel"],
                    swiftSettings: strict),
        .testTarget(name: "HubTests", dependencies: [
            "Hub", "PodProtocol", "PodDevice", "VirtualPod", "NightModel", "SleepAnalysis", "SleepSchedule", "SleepStore",
            // The daemon under a umockdev testbed (HubUmockdevTests, run by scripts/test-device.sh).
            "CUmockdev",
            .product(name: "Logging", package: "swift-log"),
            // The SIGTERM test runs the real daemon binary.
            "podbridge",
        ], swiftSettings: strict),
        .testTarget(name: "HubAPITests", dependencies: [
            "HubAPI", "Hub", "SleepStore", "VirtualPod", "NightModel", "PodProtocol",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            // The dashboard and daemon tests run the real binary.
            "podbridge",
        ], swiftSettings: strict),
        .testTarget(name: "SleepScheduleTests", dependencies: ["SleepSchedule"], swiftSettings: strict),
        .testTarget(name: "PodDeviceTests", dependencies: ["PodDevice", "PodProtocol", "CUmockdev"],
                    exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "SleepStoreTests", dependencies: ["SleepStore", "sleepstore-crash-writer"], swiftSettings: strict),
        .testTarget(name: "BackendUploadTests", dependencies: [
            "BackendUpload", "SleepStore",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], swiftSettings: strict),
    ]
)
