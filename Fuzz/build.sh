#!/usr/bin/env bash
# Builds the libFuzzer targets into Fuzz/bin/: fuzz-xmlrpc, fuzz-manifest, fuzz-links, fuzz-tar, fuzz-gzip,
# fuzz-zip, fuzz-pdfinfo, fuzz-inputs.
#
# 1. SwiftPM builds the library targets (XMLRPC, KioskEditions and what it needs: KioskModels,
#    KioskFiles, KioskIntegers, swift-crypto, swift-log) instrumented for libFuzzer + ASan, in its
#    own scratch folder (.build-fuzz), without touching Package.swift or the normal .build.
# 2. swiftc compiles each entry file (Fuzz/targets/*.swift, an LLVMFuzzerTestOneInput each) against
#    those modules and links it with their object files, libFuzzer's main, libxml2, zlib and libdeflate.
#    The archive targets also compile Fuzz/targets/support/ArchiveHarness.swift (fix-ups, writers);
#    they reach internal types with @testable import (SwiftPM's debug build enables testing).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SCRATCH="$ROOT/.build-fuzz"
SAN="-sanitize=fuzzer,address"
JOBS=${JOBS:-2}

for target in XMLRPC KioskEditions; do
    nice -n 10 swift build -j "$JOBS" --scratch-path "$SCRATCH" --target "$target" \
        -Xswiftc "$SAN"
done

DEBUG="$SCRATCH/debug"
MODULES="$DEBUG/Modules"
[ -d "$MODULES" ] || MODULES="$DEBUG"
# Object files of every library target built above (no executable, so no competing main). A Swift
# target's objects are the ones its output-file-map names (stale objects of deleted sources stay on
# disk); a C target's are all of its .o files. Some names have spaces ("Unmanaged extensions.swift").
OBJECTS=()
while IFS= read -r -d '' object; do OBJECTS+=("$object"); done < <(python3 - "$DEBUG" <<'PY'
import glob, json, os, sys
objects = []
for target in sorted(glob.glob(os.path.join(sys.argv[1], "*.build"))):
    mapping = os.path.join(target, "output-file-map.json")
    if os.path.exists(mapping):
        objects += [entry["object"] for entry in json.load(open(mapping)).values() if "object" in entry]
    else:
        objects += sorted(glob.glob(os.path.join(target, "**", "*.o"), recursive=True))
sys.stdout.write("".join(o + "\0" for o in objects if os.path.exists(o)))
PY
)
MAPS=""
for map in $(find "$DEBUG"/ -path '*.build/module.modulemap'); do MAPS="$MAPS -Xcc -fmodule-map-file=$map"; done
INCLUDES=""
for dir in $(find "$SCRATCH/checkouts" -type d -name include -not -path '*/Tests/*' 2>/dev/null); do
    INCLUDES="$INCLUDES -Xcc -I$dir"
done

mkdir -p "$ROOT/Fuzz/bin"
build() {  # name entry-file [more source files under Fuzz/targets/]
    local name=$1 entry=$2
    shift 2
    local more=()
    for file in "$@"; do more+=("$ROOT/Fuzz/targets/$file"); done
    echo "linking $name"
    nice -n 10 swiftc $SAN -parse-as-library -g -O -enable-testing \
        -I "$MODULES" -I "$ROOT/Sources/CLibXML2" -I "$ROOT/Sources/CLibZ" -I "$ROOT/Sources/CLibDeflate" -I "$ROOT/Sources/CSystemCalls" -Xcc -I/usr/include/libxml2 \
        $MAPS $INCLUDES \
        "$ROOT/Fuzz/targets/$entry" "${more[@]}" "${OBJECTS[@]}" -lxml2 -lz -ldeflate -lstdc++ \
        -module-name "$(echo "$entry" | sed 's/\.swift$//')" -o "$ROOT/Fuzz/bin/$name"
}
build fuzz-xmlrpc FuzzXMLRPC.swift
build fuzz-manifest FuzzManifest.swift
build fuzz-links FuzzLinks.swift
build fuzz-tar FuzzTar.swift support/ArchiveHarness.swift
build fuzz-gzip FuzzGzip.swift support/ArchiveHarness.swift
build fuzz-zip FuzzZip.swift support/ArchiveHarness.swift
build fuzz-pdfinfo FuzzPDFInfo.swift
build fuzz-inputs FuzzInputs.swift
echo "built: $(ls "$ROOT/Fuzz/bin")"
