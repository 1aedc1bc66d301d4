#!/usr/bin/env bash
# Mutation fuzzing of the importer and the report parser through the real binary: 20,000
# mutated `nvidia-smi topo` captures (tests/data/) and 5,000 mutated reports (assets/reports/),
# each run with a time limit and checked for: no panic, no hang, exit code 0/1/2 only, one-line
# errors, no NaN/inf figures in comparisons (examples/fuzz.rs says how).
#
# Usage: scripts/fuzz.sh [--release] [--captures N] [--reports N] [--seed S] [--jobs J]
#                        [--timeout-ms MS] [--keep DIR]
# Violations are saved under --keep (default: $TMPDIR/scalescope-fuzz); exit 1 when any.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=debug
args=()
for a in "$@"; do
    if [ "$a" = "--release" ]; then profile=release; else args+=("$a"); fi
done
if [ "$profile" = release ]; then
    cargo build --release --bin scalescope --example fuzz
else
    cargo build --bin scalescope --example fuzz
fi
exec "target/$profile/examples/fuzz" --bin "target/$profile/scalescope" "${args[@]}"
