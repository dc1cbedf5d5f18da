// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Kiosk",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "KioskServer", targets: ["KioskServer"]),
        .library(name: "XMLRPC", targets: ["XMLRPC"]),
        .library(name: "KioskModels", targets: ["KioskModels"]),
        // For the benchmarks package (Benchmarks/Package.swift): its benchmarks and its server for the peer comparison.
        .library(name: "KioskEditions", targets: ["KioskEditions"]),
        .library(name: "KioskFiles", targets: ["KioskFiles"]),
        .library(name: "KioskRPC", targets: ["KioskRPC"]),
        .library(name: "KioskHTTP", targets: ["KioskHTTP"]),
        .library(name: "KioskWiring", targets: ["KioskWiring"]),
        // The stores, for the search benchmark (it loads and queries them directly).
        .library(name: "KioskSQLite", targets: ["KioskSQLite"]),
        .library(name: "KioskPostgres", targets: ["KioskPostgres"]),
        // Store purchase verification, for the Apple verification benchmark.
        .library(name: "KioskPurchases", targets: ["KioskPurchases"]),
        // Push notifications and the APNs stand-in, for the push benchmark.
        .library(name: "KioskPush", targets: ["KioskPush"]),
        .library(name: "KioskPushStandIn", targets: ["KioskPushStandIn"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    ],
    targets: [
        // System libraries named by the product design.
        .systemLibrary(
            name: "CLibXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]),
        .systemLibrary(
            name: "CLibZ", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // Whole-buffer deflate and CRC-32 for bundle entries read whole (zlib keeps the streamed ones).
        .systemLibrary(
            name: "CLibDeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]),
        // System calls the Glibc module does not expose (preadv2 with RWF_NOWAIT).
        .systemLibrary(name: "CSystemCalls"),

        // Integer conversions checked by the compiler (`Int(widening:)`), for every target that converts.
        .target(name: "KioskIntegers", swiftSettings: swiftSettings),

        // The XML-RPC protocol: codec on libxml2, dispatch, introspection. Knows nothing of kiosks.
        .target(
            name: "XMLRPC",
            dependencies: ["CLibXML2", "KioskIntegers", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings),

        // File primitives that know no kiosk word: system calls, locks, the ZIP writer, the archive readers, the executor for blocking work.
        .target(
            name: "KioskFiles",
            dependencies: [
                "CLibZ", "CLibDeflate", "CSystemCalls", "KioskIntegers",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),

        // The kiosk domain: its words, rules and the store interface. No I/O.
        .target(
            name: "KioskModels",
            dependencies: ["KioskIntegers", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings),

        // What both stores share, written once: the group commit, the activity log, the table copy between
        // engines, and the rules they read and write rows by. No database access.
        .target(
            name: "KioskStoreSupport",
            dependencies: ["KioskModels", "KioskIntegers", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings),

        // The SQLite store (GRDB): schema, migrations, queries.
        .target(
            name: "KioskSQLite",
            dependencies: [
                "KioskModels", "KioskStoreSupport", "KioskIntegers", "CSystemCalls",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings),

        // The PostgreSQL store (postgres-nio), for several instances on one database.
        .target(
            name: "KioskPostgres",
            dependencies: [
                "KioskModels", "KioskStoreSupport", "KioskIntegers",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings),

        // Editions on disk: publishing, ZIP bundles on zlib and libdeflate, signed links.
        .target(
            name: "KioskEditions",
            dependencies: [
                "KioskModels", "KioskFiles", "KioskIntegers",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),

        // Google service-account access tokens (OAuth 2.0 JWT bearer grant) and one bounded exchange with a
        // Google endpoint: what the Play Developer API and Firebase Cloud Messaging clients share.
        .target(
            name: "KioskGoogleAuth",
            dependencies: [
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),

        // Store purchases: verifying what the App Store and Google Play sign (StoreKit 2 transactions, server
        // notifications, Play Developer API answers, Pub/Sub push tokens), in the stores' own formats.
        .target(
            name: "KioskPurchases",
            dependencies: [
                "KioskModels", "KioskIntegers", "KioskGoogleAuth", "KioskFiles",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),

        // Webhooks: events posted to publishers' endpoints, signed (Standard Webhooks), retried, refused to private destinations.
        .target(
            name: "KioskWebhooks",
            dependencies: [
                "KioskModels", "KioskIntegers",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),

        // Push notifications to reader apps, the sending half: APNs over HTTP/2 with token authentication, FCM
        // HTTP v1, bounded fan-out with per-device outcomes (the `PushSender` seam).
        .target(
            name: "KioskPush",
            dependencies: [
                "KioskGoogleAuth", "KioskIntegers",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),

        // Push notifications of new issues, the fan-out: claims batches of registrations from the outbox's
        // publish events, picks who may hear, sends each app's announcement through the `KioskPush` senders.
        .target(
            name: "KioskPushFanOut",
            dependencies: [
                "KioskModels", "KioskPush", "KioskIntegers",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings),

        // The six wire methods of the 2012 contract, on the XML-RPC layer.
        .target(
            name: "KioskRPC",
            dependencies: [
                "XMLRPC", "KioskModels", "KioskIntegers",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),

        // The operator's configuration file: its keys, defaults and validation, in domain terms.
        .target(
            name: "KioskConfig",
            dependencies: ["KioskModels", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings),

        // Password hashing and checking (bcrypt and the 2012 schemes) off the event loops, with the checks'
        // admission limits: for HTTP authentication, the CLI and the wiring alike.
        .target(
            name: "KioskPasswords",
            dependencies: [
                "KioskModels", "KioskFiles",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),

        // HTTP: routes, authentication, the one error mapping, file delivery, metrics, the web pages.
        .target(
            name: "KioskHTTP",
            dependencies: [
                "XMLRPC", "KioskModels", "KioskIntegers", "KioskFiles", "KioskEditions", "KioskRPC", "KioskConfig", "KioskPasswords",
                "KioskPush", "KioskPushFanOut",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: swiftSettings),

        // The wiring of the parts into a running server: used by the CLI and by the benchmark server.
        .target(
            name: "KioskWiring",
            dependencies: [
                "XMLRPC", "KioskModels", "KioskIntegers", "KioskSQLite", "KioskPostgres", "KioskEditions", "KioskRPC", "KioskConfig", "KioskHTTP", "KioskPasswords", "KioskPurchases", "KioskWebhooks", "KioskGoogleAuth", "KioskPush", "KioskPushFanOut", "CSystemCalls",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings),

        // The executable: the CLI (argument parsing, the operator's commands); `serve` runs KioskWiring's server.
        .executableTarget(
            name: "KioskServer",
            dependencies: [
                "KioskModels", "KioskStoreSupport", "KioskSQLite", "KioskPostgres", "KioskFiles", "KioskEditions", "KioskConfig", "KioskHTTP", "KioskWiring", "KioskIntegers", "KioskPasswords",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),

        // Shared by the test targets: the store conformance suite, the sample catalogue, issue folders, test doubles, the sandbox.
        .target(
            name: "KioskTestSupport",
            dependencies: ["KioskModels", "KioskSQLite", "KioskFiles", "CSystemCalls"],
            path: "Tests/KioskTestSupport",
            swiftSettings: swiftSettings),

        // The PostgreSQL server the tests use (`KIOSK_TEST_POSTGRES`): a fresh database per test.
        .target(
            name: "KioskTestPostgres",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/KioskTestPostgres",
            swiftSettings: swiftSettings),

        // An APNs stand-in for tests and the push benchmark: HTTP/2 over TLS (SwiftNIO), checking what Apple checks.
        .target(
            name: "KioskPushStandIn",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/KioskPushStandIn",
            swiftSettings: swiftSettings),

        .testTarget(
            name: "XMLRPCTests",
            dependencies: ["XMLRPC", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskFilesTests",
            dependencies: ["KioskFiles", "KioskTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskEditionsTests",
            dependencies: [
                "KioskFiles", "KioskEditions", "KioskSQLite", "KioskStoreSupport", "KioskModels", "KioskTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskSQLiteTests",
            dependencies: [
                "KioskSQLite", "KioskModels", "KioskTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskPostgresTests",
            dependencies: [
                "KioskPostgres", "KioskModels", "KioskTestSupport", "KioskTestPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskModelsTests",
            dependencies: [
                "KioskModels", "KioskStoreSupport", "KioskSQLite", "KioskTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskPurchasesTests",
            dependencies: [
                "KioskPurchases", "KioskModels", "KioskGoogleAuth", "KioskTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),
        // Webhooks over loopback against Tests/Clients/webhook_receiver.py (PyPI standardwebhooks), and the worker's loop over test doubles.
        .testTarget(
            name: "KioskWebhooksTests",
            dependencies: [
                "KioskWebhooks", "KioskModels", "KioskTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskPushTests",
            dependencies: [
                "KioskPush", "KioskPushStandIn", "KioskGoogleAuth", "KioskTestSupport", "KioskPushFanOut", "KioskModels", "KioskSQLite",
                "KioskPostgres", "KioskTestPostgres",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskRPCTests",
            dependencies: [
                "KioskRPC", "XMLRPC", "KioskModels", "KioskTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskServerTests",
            dependencies: [
                "KioskServer", "XMLRPC", "KioskModels", "KioskSQLite", "KioskFiles", "KioskEditions", "KioskRPC", "KioskConfig", "KioskHTTP",
                "KioskWiring", "KioskPasswords", "KioskPush", "KioskPushFanOut", "KioskPushStandIn",
                "KioskTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ],
            exclude: ["RecordedAnswers"],
            swiftSettings: swiftSettings),
    ]
)
