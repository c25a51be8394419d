// swift-tools-version:6.1
// podbridge: the Swift software of a Linux hub that bridges a sleep pod over USB.
// One module per concern; pure logic (protocol, physiology model, analysis, schedule)
// has no I/O, Linux specifics (libudev, termios, libusb, sqlite) live at the edges.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]
/// The hot paths (the codec, the physiology model, the virtual pod and the analysis) are
/// compiled optimised in debug builds too: unoptimised, a virtual pod at 300x took half a core
/// and the hub's frame decoder most of the hub's, and the clocked tests starved on a slower
/// 2-core machine. To step through one of them in a debugger, give it `strict` here.
let hotPath: [SwiftSetting] = strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]

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
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/attaswift/BigInt", from: "6.0.1"),
    ],
    targets: [
        // MARK: C shims (Debian's libraries through pkg-config)
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CLibUSB", pkgConfig: "libusb-1.0", providers: [.apt(["libusb-1.0-0-dev"])]),
        .systemLibrary(name: "CUmockdev", pkgConfig: "umockdev-1.0", providers: [.apt(["libumockdev-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CAvahi", pkgConfig: "avahi-client", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),

        // MARK: Pure logic: no I/O
        /// The domain's words every module shares: bed side, sleep stage, calendar day and the
        /// wake-date rule, weekday mask, time of day, wall clock, seeded randomness, normal maths.
        .target(name: "SleepDomain", swiftSettings: strict),
        /// The pod's wire protocol: CRC, COBS framing, messages, codec, captures.
        .target(name: "PodProtocol", dependencies: ["SleepDomain"], swiftSettings: hotPath),
        /// The physiology of a night the virtual pod plays (hypnogram, heart, breath, BCG).
        .target(name: "NightModel", dependencies: ["SleepDomain"], swiftSettings: hotPath),
        /// Raw piezo → beats, breathing, movement → epochs → stages → sessions and metrics.
        .target(name: "SleepAnalysis", dependencies: ["SleepDomain"], swiftSettings: hotPath),
        /// Bedtime and wake-time inference, HH:mm conversion, DST, push policy.
        .target(name: "SleepSchedule", dependencies: ["SleepDomain"], swiftSettings: strict),
        /// The smart-wake rule: a wake window per side and the first good moment inside it.
        .target(name: "SmartWake", dependencies: ["SleepDomain", "SleepSchedule", "SleepAnalysis"], swiftSettings: strict),

        /// MQTT for the hub, its pure part: topics, validated commands, Home Assistant discovery configs.
        .target(name: "HubMQTT", dependencies: ["SleepDomain"], swiftSettings: strict),

        /// HomeKit Accessory Protocol, its pure part: TLV8, SRP-6a pair-setup, pair-verify, the
        /// encrypted session's framing, the accessory database, setup code and payload.
        .target(name: "HomeKit", dependencies: [
            "SleepDomain",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "BigInt", package: "BigInt"),
        ], swiftSettings: strict),

        // MARK: Edges: devices, storage, network
        /// The firmware side of the protocol over a pseudo-terminal, playing a NightModel night.
        /// Every syscall the device layer and the virtual pod make: errno kept, EINTR retried once, here.
        .target(name: "SystemCalls", swiftSettings: strict),
        .target(name: "VirtualPod", dependencies: ["SleepDomain", "PodProtocol", "NightModel", "SystemCalls"], swiftSettings: hotPath),
        /// Discovery (libudev), serial (termios) and USB (libusb) transports, connections.
        .target(name: "PodDevice", dependencies: [
            "SleepDomain", "PodProtocol", "SystemCalls", "CUdev", "CLibUSB",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        /// The SQLite store (GRDB): pods, epochs, sessions, blocks, schedules, outbox; export.
        .target(name: "SleepStore", dependencies: ["SleepDomain", .product(name: "GRDB", package: "GRDB.swift")], swiftSettings: strict),
        /// The outbox worker that delivers sessions to the sleep backend.
        .target(name: "BackendUpload", dependencies: [
            "SleepDomain", "SleepStore",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),

        /// Pod messages to per-side front ends; captures to nights (pure glue of the two).
        /// Synthetic nights (NightModel, TextbookNight) through the real front end, with their stages: what staging is judged by beyond real data.
        .target(name: "SyntheticNights", dependencies: ["SleepDomain", "NightModel", "SleepAnalysis"], swiftSettings: strict),
        .target(name: "PodAnalysis", dependencies: ["SleepDomain", "PodProtocol", "SleepAnalysis"], swiftSettings: hotPath),
        /// The scored research nights of Data/ (or any folder of the same layouts) read as the
        /// analyzer's public inputs: what the model fit, the tests and `--held-out` share.
        .target(name: "LabelledNights", dependencies: ["SleepAnalysis"], swiftSettings: strict),
        /// The daemon: per-pod pipeline, session tracking, schedule driver, service lifecycle.
        .target(name: "Hub", dependencies: [
            "SleepDomain", "PodProtocol", "PodDevice", "PodAnalysis", "SleepAnalysis", "SleepSchedule", "SleepStore",
            "BackendUpload", "SmartWake", "SystemCalls",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], swiftSettings: strict),

        /// The hub's local API: REST under /api/v1, SSE and WebSocket live streams,
        /// Prometheus /metrics and the web dashboard at / (Hummingbird 2).
        .target(name: "HubAPI", dependencies: [
            "SleepDomain", "Hub", "SleepStore", "SleepSchedule", "SleepAnalysis", "PodProtocol",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], resources: [.copy("Dashboard"), .copy("openapi.json")], swiftSettings: strict),

        /// MQTT in `podbridge run`: the libmosquitto client (reconnect with backoff, last will),
        /// the bridge from the hub's bus and control to topics, commands and HA discovery.
        .target(name: "HubMQTTService", dependencies: [
            "CMosquitto", "HubMQTT", "Hub", "SleepDomain", "SleepSchedule", "SleepStore",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], swiftSettings: strict),

        /// HomeKit in `podbridge run`: the HAP server (SwiftNIO) on the hub's bus and control,
        /// the pairing state file, the `_hap._tcp` advertisement through Avahi.
        .target(name: "HomeKitService", dependencies: [
            "CAvahi", "CQREncode", "HomeKit", "Hub", "SleepDomain", "SleepStore",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], swiftSettings: strict),

        // MARK: The executables
        .executableTarget(
            name: "podbridge",
            dependencies: [
                "SleepDomain", "PodProtocol", "PodDevice", "VirtualPod", "NightModel", "SleepAnalysis", "SleepSchedule",
                "SleepStore", "BackendUpload", "PodAnalysis", "Hub", "HubAPI", "HubMQTTService", "SystemCalls",
                "HomeKit", "HomeKitService",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "podbridge-bench", dependencies: [
            "SleepDomain", "PodProtocol", "NightModel", "SleepAnalysis", "SleepSchedule", "SleepStore", "PodAnalysis",
            "SmartWake", "SyntheticNights", "Hub", "LabelledNights",
        ], swiftSettings: strict),
        /// A child process for the store's crash test: writes sessions until it is killed.
        .executableTarget(name: "sleepstore-crash-writer", dependencies: ["SleepDomain", "SleepStore"], swiftSettings: strict),

        // MARK: Tests
        /// What the suites driving a real daemon, broker or pty share (a polling `eventually`).
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "SleepDomainTests", dependencies: ["SleepDomain"], swiftSettings: strict),
        .testTarget(name: "PodProtocolTests", dependencies: ["SleepDomain", "PodProtocol"], swiftSettings: strict),
        .testTarget(name: "NightModelTests", dependencies: ["SleepDomain", "NightModel"], swiftSettings: strict),
        .testTarget(name: "SleepAnalysisTests", dependencies: ["SleepDomain", "SleepAnalysis", "NightModel", "SyntheticNights", "LabelledNights"],
                    swiftSettings: strict),
        .testTarget(name: "LabelledNightsTests", dependencies: ["SleepDomain", "SleepAnalysis", "LabelledNights"], swiftSettings: strict),
        .testTarget(name: "VirtualPodTests", dependencies: ["SleepDomain", "VirtualPod", "PodProtocol", "NightModel"], swiftSettings: strict),
        .testTarget(name: "PodAnalysisTests", dependencies: ["SleepDomain", "PodAnalysis", "PodProtocol", "SleepAnalysis", "NightModel"],
                    swiftSettings: strict),
        .testTarget(name: "HubTests", dependencies: [
            "SleepDomain", "TestSupport",
            "Hub", "PodProtocol", "PodDevice", "SystemCalls", "VirtualPod", "NightModel", "SleepAnalysis", "SleepSchedule", "SleepStore",
            "SmartWake",
            // LinkSignalFrontTests reads the front's per-side outputs.
            "PodAnalysis",
            // The daemon under a umockdev testbed (HubUmockdevTests, run by scripts/test-device.sh).
            "CUmockdev",
            .product(name: "Logging", package: "swift-log"),
            // The SIGTERM test runs the real daemon binary.
            "podbridge",
        ], swiftSettings: strict),
        .testTarget(name: "HubAPITests", dependencies: [
            "SleepDomain", "TestSupport", "HubAPI", "Hub", "SleepStore", "VirtualPod", "NightModel", "PodProtocol", "SystemCalls",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            // The dashboard and daemon tests run the real binary.
            "podbridge",
        ], swiftSettings: strict),
        /// The command line as a user runs it: the built `podbridge` in a child process.
        .testTarget(name: "PodbridgeCommandTests", dependencies: [
            "podbridge", "TestSupport", "SleepDomain", "PodProtocol", "PodDevice", "PodAnalysis", "SleepAnalysis", "NightModel", "LabelledNights",
            // `make heldout` as its user runs it.
            "podbridge-bench",
        ],
                    swiftSettings: strict),
        /// HubMQTT's pure parts, the client against a real mosquitto, and the hub with MQTT
        /// against the virtual pod and a real mosquitto (MQTTClientTests, MQTTHubTests).
        .testTarget(name: "HubMQTTTests", dependencies: [
            "SleepDomain", "TestSupport", "HubMQTT", "HubMQTTService", "Hub", "SleepStore", "VirtualPod", "NightModel", "PodProtocol",
            "SystemCalls",
            "SleepSchedule",
            .product(name: "Logging", package: "swift-log"),
            // The last-will test runs the real daemon binary and kills it.
            "podbridge",
        ], swiftSettings: strict),
        /// HAP's pure parts against known vectors (aiohomekit's formulas, RFC 5054's group).
        .testTarget(name: "HomeKitTests", dependencies: ["HomeKit", "SleepDomain", .product(name: "Crypto", package: "swift-crypto")], swiftSettings: strict),
        /// HomeKit end to end: aiohomekit against the hub's HAP server, the virtual pod and Avahi on loopback.
        .testTarget(name: "HomeKitServiceTests", dependencies: [
            "HomeKit", "HomeKitService", "Hub", "HubAPI", "SleepDomain", "TestSupport", "VirtualPod", "NightModel",
            .product(name: "Logging", package: "swift-log"),
            // The dashboard test runs the API beside the HomeKit service.
        ], swiftSettings: strict),
        .testTarget(name: "SleepScheduleTests", dependencies: ["SleepDomain", "SleepSchedule"], swiftSettings: strict),
        .testTarget(name: "SmartWakeTests", dependencies: ["SleepDomain", "SmartWake", "SleepSchedule", "SleepAnalysis"],
                    swiftSettings: strict),
        .testTarget(name: "PodDeviceTests", dependencies: ["SleepDomain", "TestSupport", "PodDevice", "PodProtocol", "SystemCalls", "CUmockdev"],
                    exclude: ["Fixtures"], swiftSettings: strict),
        /// The hub's link (PodDevice) against the virtual pod's firmware (VirtualPod) over a pty:
        /// protocol v1.1, injected faults and their recovery.
        .testTarget(name: "VirtualPodLinkTests", dependencies: ["SleepDomain", "TestSupport", "PodDevice", "VirtualPod", "PodProtocol", "NightModel"],
                    swiftSettings: strict),
        .testTarget(name: "SleepStoreTests", dependencies: ["SleepDomain", "SleepStore", "sleepstore-crash-writer"], swiftSettings: strict),
        .testTarget(name: "BackendUploadTests", dependencies: [
            "SleepDomain", "TestSupport",
            "BackendUpload", "SleepStore",
            // `podbridge sync` run as a timer or a script runs it (SyncCommandTests).
            "podbridge",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], swiftSettings: strict),
    ]
)
