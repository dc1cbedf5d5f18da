import KioskFiles
import KioskModels

/// The bundle's `edicio.xml`: the issue, its sections and its pages with the names of their files
/// inside the bundle.
///
/// ```xml
/// <?xml version="1.0" encoding="UTF-8"?>
/// <edicio id="1" titol="El Punt Avui" edicio="Nacional" data="2025-06-30" revisio="2" pagines="48">
///   <seccio id="1" nom="Portada"/>
///   <pagina numero="1" seccio_id="1" seccio="Portada" pdf="pdf/001.pdf" jpg="jpg/001.jpg" jpgA="jpgA/001.jpg"/>
/// </edicio>
/// ```
public enum BundleManifest {
    /// The issue as the bundle describes it.
    public struct Header: Sendable, Hashable {
        public var editionID: Int
        public var publicationName: String
        public var editionName: String
        public var date: IssueDate
        public var revision: Int
        public init(editionID: Int, publicationName: String, editionName: String, date: IssueDate, revision: Int) {
            self.editionID = editionID; self.publicationName = publicationName; self.editionName = editionName
            self.date = date; self.revision = revision
        }
    }

    /// A page: its number and section (file names follow from the number).
    public struct Page: Sendable, Hashable {
        public var number: Int
        public var section: Section
        public init(number: Int, section: Section) { self.number = number; self.section = section }
    }

    public static func xml(header: Header, pages: [Page]) -> [UInt8] {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<edicio id=\"\(header.editionID)\" titol=\(quote(header.publicationName)) edicio=\(quote(header.editionName))"
        out += " data=\"\(header.date)\" revisio=\"\(header.revision)\" pagines=\"\(pages.count)\">\n"
        var seen = Set<Int>()
        for page in pages where seen.insert(page.section.id).inserted {
            out += "  <seccio id=\"\(page.section.id)\" nom=\(quote(page.section.name))/>\n"
        }
        for page in pages {
            out += "  <pagina numero=\"\(page.number)\" seccio_id=\"\(page.section.id)\" seccio=\(quote(page.section.name))"
            out += " pdf=\"\(PageFileKind.pdf.name(page: page.number))\" jpg=\"\(PageFileKind.jpg.name(page: page.number))\""
            out += " jpgA=\"\(PageFileKind.jpgA.name(page: page.number))\"/>\n"
        }
        out += "</edicio>\n"
        return Array(out.utf8)
    }

    /// The entries of a bundle for pages whose files live under `folder` (absolute) in the published layout.
    public static func entries(pages: [Page], folder: String) -> [ZipEntry] {
        PageFileKind.allCases.flatMap { kind in
            pages.map { page in
                let name = kind.name(page: page.number)
                return ZipEntry(name: name, source: "\(folder)/\(name)", alwaysStore: kind != .pdf)
            }
        }
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case "\t": out += "&#9;"
            default:
                // Characters XML 1.0 does not allow are dropped.
                if scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
