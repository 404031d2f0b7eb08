// swift-tools-version: 6.0
//
// h5replay: record/replay traffic testing for hybrid iOS apps.
// One module per pipeline stage, dependencies pointing one way. Each target declares
// exactly the modules its files import, no more: ModuleGraphTests (Tests/h5replayTests)
// fails on an import not declared here and on a dependency nothing imports, and checks the
// graph docs/architecture.md draws from the imports.
import PackageDescription

// The executables allocate through jemalloc (apt: libjemalloc-dev), linked ahead of the C
// library so that every malloc in the process is its, Swift's runtime and SQLite's
// included. A capture's import allocates on the thread that reads packets and frees on
// the threads that build and store exchanges: glibc's allocator took a tenth of the
// import's time over it (Tools/bench, docs/performance.md).
let jemalloc: [LinkerSetting] = [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]

// Release builds let each module's clients inline and specialise its functions, not only
// the small ones the compiler picks by default: the emulation's loop runs across
// TrafficModel, CookieJar, WebViewEmulation and Findings, and went from 7,618 to 7,450
// instructions an evaluation (Tools/bench's callgrind count) with it. They also leave out
// the run-time checks of exclusive access (`swift_beginAccess` on every class property and
// global touched): the debug builds the tests run keep them, so an overlapping access still
// traps there. The capture stage took 7 % less processor time without them (0.645 against
// 0.695 s, medians of twelve alternated runs) for 1 % fewer instructions.
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "h5replay",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "h5replay", targets: ["h5replay"]),
        // What the libFuzzer drivers in Fuzz/Package.swift run.
        .library(name: "FuzzHarness", targets: ["FuzzHarness"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
    ],
    targets: [
        .target(
            name: "TrafficModel",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: crossModule
        ),
        .systemLibrary(name: "CPcap", pkgConfig: "libpcap", providers: [.apt(["libpcap-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .target(name: "HTTPWire", dependencies: ["TrafficModel", "CZlib", "CBrotli", "CDeflate"], swiftSettings: crossModule),
        // A stdio stream that shows each block it reads: how far libpcap has read a capture, without stdio's lock.
        .target(name: "CObservedFile"),
        .target(name: "PacketCapture", dependencies: ["CPcap", "CObservedFile", "HTTPWire", "TrafficModel"], swiftSettings: crossModule),
        .target(
            name: "HARFormat",
            dependencies: ["TrafficModel", "HTTPWire", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: crossModule
        ),
        .target(name: "CookieJar", dependencies: ["TrafficModel"], swiftSettings: crossModule),
        .target(
            name: "WebViewEmulation",
            dependencies: ["TrafficModel", "CookieJar"],
            resources: [.copy("Resources/rules.json"), .copy("Resources/presets")],
            swiftSettings: crossModule
        ),
        .target(name: "Findings", dependencies: ["TrafficModel", "WebViewEmulation"], swiftSettings: crossModule),
        // sync_file_range, for ReportStore's writeback of a large transaction's pages.
        .target(name: "CFileSync"),
        // Storage only: the recording, finding and outcome values, written and read back.
        .target(
            name: "ReportStore",
            dependencies: [
                "TrafficModel", "HTTPWire", "CookieJar", "Findings", "WebViewEmulation", "CFileSync",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: crossModule
        ),
        // The pipeline: what a command names resolved to recordings (RecordingSource); file
        // in, Recording out and stored (ImportPipeline, LiveCapture); recordings replayed
        // under presets, findings detected, the run stored (ReplayRunner, RunResult); what
        // reached `serve` held against the recording (ObservedRun). It re-exports the value
        // modules of its API (TrafficModel, WebViewEmulation, Findings, ReportStore), so the
        // CLI imports it alone.
        .target(
            name: "Pipeline",
            dependencies: ["TrafficModel", "HTTPWire", "PacketCapture", "HARFormat", "CookieJar", "WebViewEmulation", "Findings", "ReportStore"],
            swiftSettings: crossModule
        ),
        // h5replay's local root CA, the leaf certificates it mints per host, the TLS server
        // side that presents them (h2 or http/1.1 by ALPN), and the HTTP plumbing around it
        // (connection limit, the CONNECT switch, HTTP/2 streams as HTTP/1-style channels)
        // that serve --tls and the recording proxy share.
        .target(
            name: "LocalCA",
            dependencies: [
                "TrafficModel",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]
        ),
        // `serve`'s HTTP/1.1 origin (SwiftNIO), over TLS too (and HTTP/2 there).
        .target(
            name: "ReplayServer",
            dependencies: [
                "TrafficModel", "LocalCA",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // `record --proxy`: a forward proxy for HTTP and HTTPS (CONNECT, TLS intercepted
        // with the local CA, HTTP/2 with a client that offers it) that streams each response
        // to the client as it arrives, relays WebSockets after their 101 (NIOWebSocket), and
        // hands each exchange to its caller.
        .target(
            name: "RecordingProxy",
            dependencies: [
                "TrafficModel", "HTTPWire", "LocalCA",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(name: "Reports", dependencies: ["ReportStore", "Findings", "WebViewEmulation", "TrafficModel", "CookieJar"]),
        .executableTarget(
            name: "h5replay",
            dependencies: [
                "Pipeline", "Reports", "ReplayServer", "RecordingProxy",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: jemalloc
        ),
        // Times the pipeline's stages for Tools/bench (docs/performance.md), with the
        // allocator the CLI runs with.
        .executableTarget(
            name: "h5replay-bench",
            dependencies: ["TrafficModel", "HARFormat", "CookieJar", "WebViewEmulation", "Findings", "ReportStore", "Pipeline", "PacketCapture"],
            linkerSettings: jemalloc
        ),
        .testTarget(name: "TrafficModelTests", dependencies: ["TrafficModel"]),
        .target(name: "FuzzHarness", dependencies: ["HTTPWire", "PacketCapture", "HARFormat", "CookieJar", "TrafficModel"]),
        .testTarget(name: "FuzzHarnessTests", dependencies: ["FuzzHarness"], exclude: ["Regressions"]),
        .testTarget(
            name: "ReplayServerTests",
            dependencies: [
                "ReplayServer", "TrafficModel",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The proxy in-process against NIO origins made in the tests: streaming, cut
        // upstreams, WebSockets over HTTP and through CONNECT.
        .testTarget(
            name: "RecordingProxyTests",
            dependencies: [
                "RecordingProxy", "LocalCA", "TrafficModel",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(name: "HTTPWireTests", dependencies: ["HTTPWire", "TrafficModel", "CZlib"]),
        .testTarget(name: "PacketCaptureTests", dependencies: ["PacketCapture", "HTTPWire", "TrafficModel"], exclude: ["Framing"]),
        .testTarget(name: "HARFormatTests", dependencies: ["HARFormat", "TrafficModel"]),
        .testTarget(
            name: "CookieJarTests",
            dependencies: ["CookieJar", "TrafficModel", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(
            name: "WebViewEmulationTests",
            dependencies: ["WebViewEmulation", "TrafficModel", "HARFormat", "CookieJar"]
        ),
        .testTarget(
            name: "FindingsTests",
            dependencies: ["Findings", "WebViewEmulation", "TrafficModel", "CookieJar", "HARFormat"]
        ),
        .testTarget(
            name: "ReportStoreTests",
            dependencies: ["ReportStore", "Pipeline", "Findings", "WebViewEmulation", "TrafficModel", "CookieJar", "HARFormat", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "PipelineTests",
            dependencies: ["Pipeline", "ReportStore", "Reports", "WebViewEmulation", "Findings", "TrafficModel", "CookieJar", "HARFormat", "PacketCapture", "HTTPWire", .product(name: "GRDB", package: "GRDB.swift")],
            exclude: ["Corpus", "Review"]
        ),
        .testTarget(
            name: "ReportsTests",
            dependencies: ["Reports", "ReportStore", "Pipeline", "Findings", "WebViewEmulation", "TrafficModel", "HARFormat"],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "h5replayTests", dependencies: ["h5replay", "ReportStore", "Pipeline", "PacketCapture", "CookieJar", "TrafficModel", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto")]),
    ]
)
