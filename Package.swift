// swift-tools-version:6.0
// Roomcast: BLE room presence over MQTT. See docs/ARCHITECTURE.md for the module map.
import PackageDescription

let package = Package(
    name: "Roomcast",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "edge-agent", targets: ["EdgeAgent"]),
        .executable(name: "aggregator", targets: ["Aggregator"]),
        .executable(name: "roomcast-sim", targets: ["Simulator"]),
        .executable(name: "roomcast-bench", targets: ["Benchmarks"]),
    ],
    targets: [
        // C libraries, each behind one system-library target found through pkg-config.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto",
                       providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez",
                       providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1",
                       providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),

        // Libraries: everything testable lives here.
        .target(name: "Shared", dependencies: ["CYAML"]),
        .target(name: "RoomcastMQTT", dependencies: ["Shared", "CMosquitto"]),
        .target(name: "RoomcastHCI", dependencies: ["Shared", "CBlueZ"]),
        .target(name: "RoomcastAdvertising", dependencies: ["Shared", "CCrypto"]),
        .target(name: "RoomcastFusion", dependencies: ["Shared"]),
        .target(name: "RoomcastSimulation",
                dependencies: ["Shared", "RoomcastHCI", "RoomcastAdvertising", "RoomcastFusion"]),
        .target(name: "RoomcastAgent",
                dependencies: ["Shared", "RoomcastHCI", "RoomcastAdvertising", "RoomcastMQTT"]),
        .target(name: "RoomcastAggregator",
                dependencies: ["Shared", "RoomcastFusion", "RoomcastMQTT"]),

        // Executables: wiring only.
        .executableTarget(name: "EdgeAgent", dependencies: ["Shared", "RoomcastAgent"]),
        .executableTarget(name: "Aggregator", dependencies: ["Shared", "RoomcastAggregator"]),
        .executableTarget(name: "Simulator", dependencies: ["Shared", "RoomcastSimulation"]),
        .executableTarget(name: "Benchmarks",
                          dependencies: ["Shared", "RoomcastHCI", "RoomcastAdvertising",
                                         "RoomcastFusion", "RoomcastAgent", "RoomcastAggregator",
                                         "RoomcastSimulation", "RoomcastMQTT"]),

        // Tests.
        .target(name: "TestSupport", dependencies: ["Shared"], path: "Tests/TestSupport",
                resources: [.copy("Vectors")]),
        .testTarget(name: "SharedTests", dependencies: ["Shared", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "RoomcastMQTTTests", dependencies: ["RoomcastMQTT", "TestSupport"]),
        .testTarget(name: "RoomcastHCITests", dependencies: ["RoomcastHCI", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "RoomcastAdvertisingTests",
                    dependencies: ["RoomcastAdvertising", "RoomcastHCI", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "RoomcastFusionTests",
                    dependencies: ["RoomcastFusion", "RoomcastSimulation", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "RoomcastAgentTests",
                    dependencies: ["RoomcastAgent", "RoomcastMQTT", "RoomcastHCI", "RoomcastAdvertising", "TestSupport"]),
        .testTarget(name: "RoomcastAggregatorTests",
                    dependencies: ["RoomcastAggregator", "RoomcastMQTT", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
