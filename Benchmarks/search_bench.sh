#!/usr/bin/env bash
# Search latency over a year of issues (8 editions × 365 days × 48 pages, ~300 words a page of generated
# Catalan-like text), on SQLite and on PostgreSQL, through the stores' `searchPages`.
#
#   Benchmarks/search_bench.sh                                  # SQLite, and PostgreSQL when KIOSK_BENCH_POSTGRES is set
#   KIOSK_BENCH_POSTGRES=postgres://postgres@127.0.0.1:55432/kiosk_search_bench Benchmarks/search_bench.sh
#   ARGS="--days 30" Benchmarks/search_bench.sh                 # a smaller data set
#   SEARCH_BENCH_DIR=/tmp/year Benchmarks/search_bench.sh       # keep the SQLite file there, then
#   SEARCH_BENCH_DIR=/tmp/year ARGS=--keep Benchmarks/search_bench.sh   # measure again without loading
#
# SearchBenchmark (Benchmarks/SearchBenchmark) loads the data straight into each store with
# `publishIssue` (one transaction per issue, as a publish commits; no page files), then runs each query
# kind of a mix (common, rare, accented, phrase, prefix, two words, edition and date filters, no match)
# --runs times (default 100) after a warm-up, and prints p50/p99/max per kind and over the mix.
# The PostgreSQL database named in the URL is dropped and created again (with --keep, both stores are
# reused as loaded, and migrations they lack are applied first). Target: p99 ≤ 20 ms.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/release.sh
BIN="${SEARCH_BENCH_BIN:-$(release_binary SearchBenchmark)}"
if [ -n "${SEARCH_BENCH_DIR:-}" ]; then
    WORK="$SEARCH_BENCH_DIR"; mkdir -p "$WORK"
else
    WORK=$(mktemp -d /tmp/kiosk-search-bench.XXXXXX)
    trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
fi
# shellcheck disable=SC2086
"$BIN" --sqlite "$WORK/search.sqlite" ${ARGS:-}
if [ -n "${KIOSK_BENCH_POSTGRES:-}" ]; then
    # shellcheck disable=SC2086
    "$BIN" --postgres "$KIOSK_BENCH_POSTGRES" ${ARGS:-}
fi
