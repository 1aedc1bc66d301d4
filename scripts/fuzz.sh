#!/usr/bin/env bash
# Fuzzing through the real binary: every campaign of examples/fuzz/ (mutated captures and
# reports, and the others listed there), each case run with a time limit and held to the
# command line's contract: no panic, no hang, exit code 0/1/2 (or what the campaign allows),
# one-line errors, no terminal control characters printed, and each campaign's own checks
# (examples/fuzz/main.rs says how).
#
# Usage: scripts/fuzz.sh [--release] [--only a,b] [--cases a=N,b=M] [--seed S] [--jobs J]
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
