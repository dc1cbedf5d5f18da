#!/usr/bin/env bash
# Rendering a 48-page PDF issue: Kiosk's importer (PDFImportBenchmark: qpdf --check, pdfinfo, qpdf
# --split-pages, pdftotext, and pdftoppm for both images of every page, each tool an isolated child with
# limits, one per processor) against the floor, pdftoppm making the same 96 images straight from the
# issue's PDF with the same parallelism (xargs -P), and against pdftoppm on pages split beforehand (the
# rendering alone), measured with hyperfine in one run, printed as ratios.
#
#     Benchmarks/pdf_bench.sh [--runs N] [--pages N]
#
# The issue is generated (Python, no dependencies): N pages of three columns of Helvetica text with two
# of the sample issues' photos each, like a newspaper page. Results (hyperfine JSON) go to Benchmarks/results/.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
RUNS=5
PAGES=48
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --pages) PAGES="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
for tool in hyperfine python3 pdftoppm qpdf; do
    command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 1; }
done
source "$HERE/release.sh"
BIN="$(release_binary PDFImportBenchmark)"
CORES=$(nproc)

WORK="$(mktemp -d /tmp/kiosk-pdfbench-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/in" "$ROOT/Benchmarks/results"
python3 - "$ROOT/Samples" "$WORK/in/issue.pdf" "$PAGES" <<'PY'
import glob, sys
samples, out, pages = sys.argv[1], sys.argv[2], int(sys.argv[3])
photos = sorted(glob.glob(samples + "/*/*/jpgA/*.jpg"))
words = ("El Govern aprova el pressupost de la Generalitat per a l'any vinent amb el suport "
         "dels grups parlamentaris i una presencia destacada de les comarques gironines").split()
objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
           3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
def jpeg_size(data):
    i = 2
    while i < len(data):
        marker, length = data[i + 1], int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
images = []
for k, path in enumerate(photos[:16]):
    data = open(path, "rb").read()
    w, h = jpeg_size(data)
    number = 100 + k
    objects[number] = (b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                       b"/BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n" % (w, h, len(data))) + data + b"\nendstream"
    images.append(number)
kids = []
for p in range(pages):
    lines = []
    for column in range(3):
        for row in range(70):
            text = " ".join(words[(p + column * 7 + row * 3 + i) % len(words)] for i in range(6))
            lines.append("BT /F1 8 Tf %d %d Td (%s) Tj ET" % (40 + column * 180, 780 - row * 10, text))
    a, b = images[p % len(images)], images[(p + 5) % len(images)]
    lines.append("q 160 0 0 213 50 420 cm /Im%d Do Q q 160 0 0 213 390 120 cm /Im%d Do Q" % (a, b))
    content = "\n".join(lines).encode()
    page, stream = 1000 + 2 * p, 1001 + 2 * p
    objects[page] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> "
                     b"/XObject << /Im%d %d 0 R /Im%d %d 0 R >> >> /Contents %d 0 R >>" % (a, a, b, b, stream))
    objects[stream] = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    kids.append(page)
objects[2] = b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids) + b"] /Count %d >>" % pages
out_bytes, offsets = bytearray(b"%PDF-1.7\n"), {}
for number in sorted(objects):
    offsets[number] = len(out_bytes)
    out_bytes += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
size, xref = max(objects) + 1, len(out_bytes)
out_bytes += b"xref\n0 %d\n0000000000 65535 f \n" % size
for number in range(1, size):
    out_bytes += (b"%010d 00000 n \n" % offsets[number]) if number in offsets else b"0000000000 65535 f \n"
out_bytes += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
open(out, "wb").write(out_bytes)
PY
# Compress the text streams as a press system would.
qpdf --compress-streams=y --object-streams=generate "$WORK/in/issue.pdf" "$WORK/in/issue.compressed.pdf"
mv "$WORK/in/issue.compressed.pdf" "$WORK/in/issue.pdf"
echo "issue: $PAGES pages, $(stat -c %s "$WORK/in/issue.pdf") bytes; $CORES processors" >&2

# Floor 1: pdftoppm straight from the issue's PDF (-f N -l N), what one would run by hand.
FLOOR="seq 1 $PAGES | sed 's/.*/& 300 400 s\\n& 1200 1600 l/' | xargs -P $CORES -L 1 sh -c \
'pdftoppm -f \$0 -l \$0 -jpeg -jpegopt quality=85 -scale-to-x \$1 -scale-to-y \$2 -singlefile $WORK/in/issue.pdf $WORK/floor/\$3\$0'"
# Floor 2: pdftoppm on pages split beforehand (untimed): the rendering work alone, what Kiosk's pdftoppm runs do.
mkdir -p "$WORK/pages"
(cd "$WORK/pages" && qpdf --split-pages ../in/issue.pdf page.pdf)
SPLIT="ls $WORK/pages | sed 's/.*/& 300 400 s\\n& 1200 1600 l/' | xargs -P $CORES -L 1 sh -c \
'pdftoppm -jpeg -jpegopt quality=85 -scale-to-x \$1 -scale-to-y \$2 -singlefile $WORK/pages/\$0 $WORK/floor2/\$3\$0'"
RESULT="$ROOT/Benchmarks/results/pdf_bench.json"
hyperfine --warmup 1 --runs "$RUNS" --export-json "$RESULT" \
    --prepare "rm -rf $WORK/floor; mkdir -p $WORK/floor" \
    --prepare "rm -rf $WORK/floor2; mkdir -p $WORK/floor2" \
    --prepare "rm -rf $WORK/kiosk" \
    -n "pdftoppm floor" "$FLOOR" \
    -n "pdftoppm on split pages" "$SPLIT" \
    -n "Kiosk importer" "$BIN $WORK/in $WORK/kiosk"
echo "images: floor $(ls "$WORK/floor" | wc -l), split floor $(ls "$WORK/floor2" | wc -l), Kiosk $(ls "$WORK"/kiosk/issue/jpg* | grep -c jpg$)" >&2
python3 - "$RESULT" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
kiosk = results["Kiosk importer"]
for name in ("pdftoppm floor", "pdftoppm on split pages"):
    floor = results[name]
    print("%s %.3f s (min %.3f, CPU %.2f s); Kiosk %.3f s (min %.3f, CPU %.2f s): %.2fx (min/min %.2fx)" % (
        name, floor["mean"], floor["min"], floor["user"] + floor["system"], kiosk["mean"], kiosk["min"],
        kiosk["user"] + kiosk["system"], kiosk["mean"] / floor["mean"], kiosk["min"] / floor["min"]))
PY
