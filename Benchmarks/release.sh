# Sourced by the benchmark scripts. `release_binary PRODUCT` builds PRODUCT as the server is deployed
# (release, Swift runtime linked statically: docs/operations.md, "Build and install") in .build-release, a scratch folder
# of its own so it does not hold the lock of the everyday .build, and prints the binary's path.
# Products with a folder of their name under Benchmarks/ (the benchmarks and PeerBenchServer) come from the
# benchmarks package (Benchmarks/Package.swift), built in .build-release-benchmarks.
release_binary() {
    local root scratch log package
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    scratch="${KIOSK_BENCH_SCRATCH:-$root/.build-release}"
    package="$root"
    if [ -d "$root/Benchmarks/$1" ]; then
        package="$root/Benchmarks"
        scratch="${KIOSK_BENCH_SCRATCH:-$root/.build-release}-benchmarks"
    fi
    local build=(swift build -c release --static-swift-stdlib --package-path "$package" --scratch-path "$scratch" --product "$1")
    echo "building $1 (release, static Swift runtime, in $scratch) ..." >&2
    log="$(mktemp)"
    if ! (cd "$root" && "${build[@]}" >"$log" 2>&1); then
        tail -30 "$log" >&2; rm -f "$log"; return 1
    fi
    tail -1 "$log" >&2; rm -f "$log"
    echo "$(cd "$root" && cd "$scratch/release" && pwd)/$1"   # SwiftPM links release/ to the products
}
