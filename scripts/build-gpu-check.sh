#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs on a GPU machine that has no Rust toolchain: the release
# binary and the GPU integration-test binaries, stripped, in .gpucheck/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
mkdir -p .gpucheck/tests
cp target/release/scalescope .gpucheck/scalescope
strip .gpucheck/scalescope
cargo test --release --no-run --message-format=json --test 'gpu_*' 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"].startswith("gpu_"):
        print(m["target"]["name"], m["executable"])
' | while read -r name exe; do
    cp "$exe" ".gpucheck/tests/$name"
    strip ".gpucheck/tests/$name"
done
ls -la .gpucheck .gpucheck/tests
du -sh .gpucheck
