// swift-tools-version:6.0
// Roomcast: BLE room presence over MQTT. See docs/ARCHITECTURE.md for the module map.
import PackageDescription
#if canImport(Glibc)
import Glibc
#endif

/// Release links of the three programs a user installs (`edge-agent`, `aggregator`, `roomcast-sim`;
/// docs/performance.md, "Release link"): the Swift runtime and Foundation linked in, so nothing of the
/// toolchain is needed where they run (a Pi, the Home Assistant box, the .deb packages); linked by lld,
/// with every symbol bound at start-up (`-z now`: the GOT then becomes read-only, as Debian's hardening
/// asks; there are only the C libraries' few hundred symbols to bind); and, where the C library can load them (glibc 2.36: Debian 12, Raspberry Pi OS bookworm), relative
/// relocations packed (DT_RELR), so start-up does not read 2 MB of relocation records.
let selfContainedReleaseLinkFlags: [String] = {
    var flags = ["-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "now"]
    #if canImport(Glibc)
    var text = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
    _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count)
    let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let version = name.split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
    if version.count >= 2, (version[0], version[1]) >= (2, 36) {
        flags += ["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]
    }
    #endif
    return flags
}()

/// `edge-agent` runs on every Pi, so its link also places the functions it runs together
/// (Sources/EdgeAgent/link-order.txt, made by scripts/agent-link-order.sh): it touches few code pages,
/// about 4.5 MB less resident memory (docs/performance.md).
let edgeAgentReleaseLinkFlags: [String] = selfContainedReleaseLinkFlags + [
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/EdgeAgent/link-order.txt",
    "-Xlinker", "--no-warn-symbol-ordering",
]

/// Compiled with -static-stdlib too: that is what makes the objects name the static libraries' own
/// dependencies (ICU for Foundation) for the linker.
let selfContainedReleaseSwiftSettings: [SwiftSetting] = [
    .unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release)),
]

let package = Package(
    name: "Roomcast",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "edge-agent", targets: ["EdgeAgent"]),
        .executable(name: "aggregator", targets: ["Aggregator"]),
        .executable(name: "roomcast-sim", targets: ["Simulator"]),
        .executable(name: "roomcast-bench", targets: ["Benchmarks"]),
        .executable(name: "roomcast-fuzz", targets: ["Fuzz"]),
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

        // Libraries: everything testable lives here. From the bottom: the model (no C), the small
        // infrastructure libraries, the config machinery, then one library per layer of the data path.
        .target(name: "Shared"),
        .target(name: "RoomcastLogging", dependencies: ["Shared"]),
        .target(name: "RoomcastCLI", dependencies: ["Shared"]),
        .target(name: "RoomcastLifecycle", dependencies: ["RoomcastLogging", "RoomcastCLI"]),
        .target(name: "RoomcastConfig", dependencies: ["Shared", "RoomcastCLI", "RoomcastLogging"]),
        // The only module that reads YAML (libyaml); a library that only declares a config
        // section depends on RoomcastConfig and not on it.
        .target(name: "RoomcastYAML", dependencies: ["RoomcastConfig", "CYAML"]),
        .target(name: "RoomcastMQTT", dependencies: ["Shared", "RoomcastConfig", "RoomcastLogging", "CMosquitto"]),
        .target(name: "RoomcastHCI", dependencies: ["Shared", "RoomcastLogging", "CBlueZ"]),
        .target(name: "RoomcastAdvertising", dependencies: ["Shared", "RoomcastConfig", "CCrypto"]),
        .target(name: "RoomcastFusion", dependencies: ["Shared"]),
        .target(name: "RoomcastHTTP", dependencies: ["Shared", "RoomcastConfig", "RoomcastLogging"]),
        .target(name: "RoomcastAgent",
                dependencies: ["Shared", "RoomcastLogging", "RoomcastCLI", "RoomcastLifecycle", "RoomcastConfig",
                               "RoomcastYAML", "RoomcastHCI", "RoomcastAdvertising", "RoomcastMQTT", "RoomcastHTTP"]),
        .target(name: "RoomcastAggregator",
                dependencies: ["Shared", "RoomcastLogging", "RoomcastCLI", "RoomcastLifecycle", "RoomcastConfig",
                               "RoomcastYAML", "RoomcastFusion", "RoomcastMQTT", "RoomcastHTTP"]),
        // Scores estimators on what the product does: each node's capture through the edge
        // agent, the readings through the aggregator core (docs/simulator.md, Evaluation).
        .target(name: "RoomcastSimulation",
                dependencies: ["Shared", "RoomcastCLI", "RoomcastConfig", "RoomcastYAML", "RoomcastHCI",
                               "RoomcastAdvertising", "RoomcastFusion", "RoomcastAgent", "RoomcastAggregator"]),

        // Executables: wiring only.
        .executableTarget(name: "EdgeAgent", dependencies: ["Shared", "RoomcastAgent"], exclude: ["link-order.txt"],
                          swiftSettings: selfContainedReleaseSwiftSettings,
                          linkerSettings: [.unsafeFlags(edgeAgentReleaseLinkFlags,
                                                        .when(platforms: [.linux], configuration: .release))]),
        .executableTarget(name: "Aggregator", dependencies: ["Shared", "RoomcastAggregator"],
                          swiftSettings: selfContainedReleaseSwiftSettings,
                          linkerSettings: [.unsafeFlags(selfContainedReleaseLinkFlags,
                                                        .when(platforms: [.linux], configuration: .release))]),
        .executableTarget(name: "Simulator", dependencies: ["Shared", "RoomcastCLI", "RoomcastSimulation"],
                          swiftSettings: selfContainedReleaseSwiftSettings,
                          linkerSettings: [.unsafeFlags(selfContainedReleaseLinkFlags,
                                                        .when(platforms: [.linux], configuration: .release))]),
        .executableTarget(name: "Benchmarks",
                          dependencies: ["Shared", "RoomcastCLI", "RoomcastConfig", "RoomcastYAML", "RoomcastHCI",
                                         "RoomcastAdvertising", "RoomcastFusion", "RoomcastAgent", "RoomcastAggregator",
                                         "RoomcastSimulation", "RoomcastMQTT"]),
        // libFuzzer harnesses (scripts/fuzz.sh); a plain build replays crash inputs.
        .executableTarget(name: "Fuzz", dependencies: ["Shared", "RoomcastConfig", "RoomcastYAML", "RoomcastAdvertising",
                                                       "RoomcastHCI", "RoomcastFusion", "RoomcastAgent",
                                                       "RoomcastAggregator"]),

        // Tests.
        .target(name: "TestSupport", dependencies: ["Shared"], path: "Tests/TestSupport",
                resources: [.copy("Vectors")]),
        // The model's tests, and those of the config, YAML, CLI, logging and lifecycle libraries
        // (with the apps' config sections, which they load).
        .testTarget(name: "SharedTests",
                    dependencies: ["Shared", "RoomcastLogging", "RoomcastCLI", "RoomcastLifecycle", "RoomcastConfig",
                                   "RoomcastYAML", "RoomcastAdvertising", "RoomcastMQTT", "RoomcastFusion",
                                   "RoomcastAgent", "RoomcastAggregator", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "RoomcastMQTTTests", dependencies: ["RoomcastMQTT", "RoomcastLogging", "TestSupport"]),
        .testTarget(name: "RoomcastHTTPTests", dependencies: ["RoomcastHTTP", "RoomcastConfig", "Shared", "RoomcastLogging", "TestSupport"]),
        .testTarget(name: "RoomcastHCITests", dependencies: ["RoomcastHCI", "RoomcastAdvertising", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "RoomcastAdvertisingTests",
                    dependencies: ["RoomcastAdvertising", "RoomcastConfig", "RoomcastHCI", "TestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "RoomcastFusionTests",
                    dependencies: ["RoomcastFusion", "RoomcastSimulation", "RoomcastAgent", "RoomcastAggregator",
                                   "RoomcastCLI", "RoomcastConfig", "RoomcastYAML", "TestSupport"]),
        // Scenario evaluations: the recordings and simulated homes replayed through the agents and
        // the aggregator and scored; `make test` runs them in a release build.
        .testTarget(name: "RoomcastScenarioTests",
                    dependencies: ["RoomcastSimulation", "RoomcastFusion", "RoomcastAgent", "RoomcastAggregator",
                                   "RoomcastAdvertising", "RoomcastHCI", "RoomcastCLI", "RoomcastConfig", "RoomcastYAML",
                                   "TestSupport"],
                    resources: [.copy("Fixtures")]),
        // The benchmarks' and the simulator's own logic (results.md's Goals verdicts, their inputs' checks); the benchmarks themselves print numbers.
        .testTarget(name: "BenchmarksTests", dependencies: ["Benchmarks", "RoomcastSimulation", "RoomcastHCI", "TestSupport"]),
        .testTarget(name: "RoomcastAgentTests",
                    dependencies: ["RoomcastAgent", "RoomcastMQTT", "RoomcastHCI", "RoomcastAdvertising", "RoomcastConfig",
                                   "RoomcastYAML", "RoomcastLogging", "TestSupport"]),
        .testTarget(name: "RoomcastAggregatorTests",
                    dependencies: ["RoomcastAggregator", "RoomcastMQTT", "RoomcastHTTP", "RoomcastConfig", "RoomcastYAML",
                                   "RoomcastLogging", "TestSupport"],
                    resources: [.copy("Fixtures")]),
    ],
    swiftLanguageModes: [.v6]
)
