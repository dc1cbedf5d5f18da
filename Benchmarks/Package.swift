// swift-tools-version:6.1
import PackageDescription

// Benchmarks of Kiosk's parts, in a package of their own (as SwiftNIO keeps its benchmarks): the product
// resolves and links none of their dependencies. Built by the scripts beside this file (Benchmarks/README.md).
let package = Package(
    name: "KioskBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Kiosk", path: ".."),
        // Only for the bundle benchmark's comparison (Kiosk's ZIP writer is its own).
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", from: "0.9.20"),
        // Kiosk's own dependencies, which the peer comparison's server uses directly.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // The Apple verification benchmark makes its own test chain (Kiosk's versions of these).
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // The push benchmark's client trusts the stand-in's test authority.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // The XML-RPC codec against Python's xmlrpc.client (xmlrpc_codec_peer.py).
        .executableTarget(
            name: "XMLRPCBenchmark",
            dependencies: [.product(name: "XMLRPC", package: "Kiosk"), .product(name: "NIOCore", package: "swift-nio")],
            path: "XMLRPCBenchmark"),
        // The bundle builder on the reference data set, against ZIPFoundation (bundle_bench.sh).
        .executableTarget(
            name: "BundleBenchmark",
            dependencies: [
                .product(name: "KioskEditions", package: "Kiosk"),
                .product(name: "KioskFiles", package: "Kiosk"),
                .product(name: "KioskModels", package: "Kiosk"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            path: "BundleBenchmark"),
        // A PDF-only issue made into a classic publish folder (pages, images, texts), against pdftoppm (pdf_bench.sh).
        .executableTarget(
            name: "PDFImportBenchmark",
            dependencies: [
                .product(name: "KioskEditions", package: "Kiosk"),
                .product(name: "KioskFiles", package: "Kiosk"),
            ],
            path: "PDFImportBenchmark"),
        // Signed links per second, as getEdicio signs them.
        .executableTarget(
            name: "LinkSigningBenchmark",
            dependencies: [
                .product(name: "KioskEditions", package: "Kiosk"),
                .product(name: "KioskModels", package: "Kiosk"),
            ],
            path: "LinkSigningBenchmark"),
        // Search latency over a year of issues on SQLite and PostgreSQL, through the stores (search_bench.sh).
        .executableTarget(
            name: "SearchBenchmark",
            dependencies: [
                .product(name: "KioskModels", package: "Kiosk"),
                .product(name: "KioskSQLite", package: "Kiosk"),
                .product(name: "KioskPostgres", package: "Kiosk"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "SearchBenchmark"),
        // How long the SQLite store's inline one-statement reads hold the calling thread, against GRDB's async read.
        .executableTarget(
            name: "StoreReadBenchmark",
            dependencies: [
                .product(name: "KioskModels", package: "Kiosk"),
                .product(name: "KioskSQLite", package: "Kiosk"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "StoreReadBenchmark"),
        // Signed App Store transactions verified per second on one task, with and without the chain cache.
        .executableTarget(
            name: "AppleVerifyBenchmark",
            dependencies: [
                .product(name: "KioskPurchases", package: "Kiosk"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "AppleVerifyBenchmark"),
        // APNs sends per second and per CPU-second against the NIO APNs stand-in in a second process (push_bench).
        .executableTarget(
            name: "PushBenchmark",
            dependencies: [
                .product(name: "KioskPush", package: "Kiosk"),
                .product(name: "KioskPushStandIn", package: "Kiosk"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "PushBenchmark"),
        // KioskServer serve on the reference data set, with the peer's /zip route: the Kiosk that load.py
        // compares with the peer (peer_comparison.sh, cluster_bench.sh, download_bench.sh, soak.sh).
        .executableTarget(
            name: "PeerBenchServer",
            dependencies: [
                .product(name: "KioskWiring", package: "Kiosk"),
                .product(name: "KioskHTTP", package: "Kiosk"),
                .product(name: "KioskRPC", package: "Kiosk"),
                .product(name: "KioskModels", package: "Kiosk"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
            ],
            path: "PeerBenchServer"),
    ]
)
