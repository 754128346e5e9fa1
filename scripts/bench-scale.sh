#!/bin/sh
# Scale benchmarks of issue 31: store open + first page at 10k / 100k threads (one day, a
# year), written to bench-results/. Needs ~1 GB of free disk for the temporary homes.
#   scripts/bench-scale.sh            # both sizes
#   OI_BENCH_SIZES=10000 scripts/bench-scale.sh
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench-results
out="bench-results/open_scale-$(git rev-parse --short HEAD).txt"
cargo bench -p oi-thread-store --bench open_scale 2>/dev/null | tee "$out"
if [ -x target/release/interpreter ]; then
    printf 'release binary: %s bytes\n' "$(stat -c %s target/release/interpreter)" | tee -a "$out"
fi
echo "saved $out"
