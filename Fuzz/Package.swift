// swift-tools-version: 6.0
//
// libFuzzer drivers for h5replay's parsers of untrusted input (DESIGN.md section 8). A
// package of their own: they link libFuzzer's driver, which a normal build does not have.
// What each does with an input is FuzzHarness, in the main package. Run them with Tools/fuzz.
import PackageDescription

let package = Package(
    name: "h5replay-fuzz",
    dependencies: [.package(name: "h5replay", path: "..")],
    targets: [.target(name: "FuzzDriver")] + ["FuzzHTTP", "FuzzTCP", "FuzzHAR", "FuzzSetCookie"].map {
        .executableTarget(name: $0, dependencies: ["FuzzDriver", .product(name: "FuzzHarness", package: "h5replay")])
    }
)
