#!/usr/bin/env python3
"""Regenerates the sample issues in this folder (publish folders: issue.json + pdf/ jpg/ jpgA/).

    python3 Samples/make_samples.py        # needs ImageMagick's `convert` and the DejaVu fonts

Small on purpose (they live in git): 4 pages per issue, 600x800 high-resolution images, and
text PDFs written by hand (their content streams compress, the JPEGs do not: bundles exercise both).
"""
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf"
SECTIONS = {1: "Portada", 2: "Política", 8: "Esports", 10: "Contraportada"}
PAGE_SECTIONS = [1, 2, 8, 10]
ISSUES = {  # edition id -> (title, edition name, colour, dates)
    1: ("El Punt Avui", "Nacional", "#b5121b", ["2025-06-01", "2025-06-02"]),
    2: ("El Punt Avui", "Comarques Gironines", "#1b5fb5", ["2025-06-02"]),
    8: ("Presència", "Presència", "#2e7d32", ["2025-05-24", "2025-05-31"]),
}
HEADLINES = ["El Govern aprova el pressupost", "Debat al Parlament", "El Girona guanya el derbi",
             "Agenda del cap de setmana"]


def jpeg(path, size, colour, title, edition, date, number, section):
    w, h = size
    s = w / 600
    subprocess.run([
        "convert", "-size", f"{w}x{h}", "xc:white",
        "-fill", colour, "-draw", f"rectangle 0,0 {w},{int(70 * s)}",
        "-font", FONT, "-fill", "white", "-pointsize", str(int(30 * s)),
        "-annotate", f"+{int(20 * s)}+{int(48 * s)}", title,
        "-fill", "black", "-pointsize", str(int(18 * s)),
        "-annotate", f"+{int(20 * s)}+{int(110 * s)}", f"{edition} · {date} · {SECTIONS[section]} · {number}",
        "-pointsize", str(int(28 * s)), "-annotate", f"+{int(20 * s)}+{int(170 * s)}", HEADLINES[number - 1],
        "-fill", "#dddddd", "-draw", f"rectangle {int(20 * s)},{int(200 * s)} {w - int(20 * s)},{int(520 * s)}",
        "-fill", "#999999", "-draw", f"circle {w // 2},{int(360 * s)} {w // 2 + int(90 * s)},{int(360 * s)}",
        "-quality", "70", "-strip", path], check=True)


def pdf(path, title, edition, date, number, section):
    lines = [title, f"{edition} - {date}", f"{SECTIONS[section]} - pagina {number}", HEADLINES[number - 1]]
    body = ("Text de mostra de la pagina %d. " % number) * 4
    lines += [body[i:i + 80] for i in range(0, len(body), 80)] * 6
    ops = ["BT /F1 12 Tf 14 TL 50 780 Td"]
    for line in lines:
        text = line.encode("latin-1", "replace").decode("latin-1").replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"({text}) '")
    ops.append("ET")
    content = "\n".join(ops).encode("latin-1", "replace")
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    with open(path, "wb") as f:
        f.write(out)


def main():
    for edition, (title, name, colour, dates) in ISSUES.items():
        for date in dates:
            folder = os.path.join(HERE, str(edition), date)
            for kind in ("pdf", "jpg", "jpgA"):
                os.makedirs(os.path.join(folder, kind), exist_ok=True)
            pages = []
            for number, section in enumerate(PAGE_SECTIONS, 1):
                n = f"{number:03d}"
                jpeg(os.path.join(folder, "jpg", n + ".jpg"), (150, 200), colour, title, name, date, number, section)
                jpeg(os.path.join(folder, "jpgA", n + ".jpg"), (600, 800), colour, title, name, date, number, section)
                pdf(os.path.join(folder, "pdf", n + ".pdf"), title, name, date, number, section)
                pages.append({"number": number, "section": section, "pdf": f"pdf/{n}.pdf",
                              "jpg": f"jpg/{n}.jpg", "jpgA": f"jpgA/{n}.jpg"})
            manifest = {"edition": edition, "date": date,
                        "sections": [{"id": i, "name": SECTIONS[i]} for i in PAGE_SECTIONS],
                        "pages": pages}
            with open(os.path.join(folder, "issue.json"), "w", encoding="utf-8") as f:
                json.dump(manifest, f, ensure_ascii=False, indent=2)
                f.write("\n")


if __name__ == "__main__":
    main()
