#!/bin/sh
# Runs one fuzz target: Fuzz/run.sh xmlrpc|manifest|links|tar|gzip|zip|pdfinfo SECONDS [extra libFuzzer flags]
# New inputs go to Fuzz/work/<target>/ (not committed); the committed seeds in Fuzz/corpus/<target>/
# are read, never written. Crashers land in Fuzz/crashes/<target>/ and must become regression tests.
set -eu
cd "$(dirname "$0")"
TARGET=$1; SECONDS_=${2:-60}; shift 2 || true
mkdir -p "work/$TARGET" "crashes/$TARGET"
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} exec nice -n 10 "bin/fuzz-$TARGET" "work/$TARGET" "corpus/$TARGET" \
    -max_total_time="$SECONDS_" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -dict="dicts/$TARGET.dict" -artifact_prefix="crashes/$TARGET/" -print_final_stats=1 "$@"
