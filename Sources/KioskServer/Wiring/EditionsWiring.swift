import KioskModels
import KioskStorage
import Logging

/// Links and bundles for the runtime. Until the editions layer lands, links point at the files unsigned
/// and bundles are not built.
enum EditionsWiring {
    struct Delivery {
        var links: any LinkSigning
        var bundles: any IssueBundles
    }

    static func make(configuration: KioskConfiguration, secrets: Secrets, store: SQLiteKioskStore,
                     logger: Logger) throws -> Delivery {
        Delivery(links: PlainLinks(base: configuration.publicURL + configuration.links.prefix), bundles: NoBundles())
    }

    struct PlainLinks: LinkSigning {
        let base: String
        func link(to relativePath: String, now: Int64) -> String { base + "/" + relativePath }
    }

    struct NoBundles: IssueBundles {
        func bundle(for contents: IssueContents, offered: OfferedEdition) async throws -> BundleInfo {
            BundleInfo(path: "", size: 0, sha256: "")
        }
    }
}
