#!/usr/bin/env bash
# Builds scalescope for the GPU servers people have, into dist/:
#   scalescope-<version>-x86_64-linux-glibc<G>            the full binary (app + CLI)
#   scalescope-headless-<version>-x86_64-linux-glibc<G>   no GUI libraries: CLI, --bench, agent
#   scalescope-<version>-py3-none-manylinux_<G>_x86_64.whl   the headless binary as a Python wheel
# against glibc G (default 2.28: RHEL/Rocky 8; Ubuntu 20.04 has 2.31), with zig as the linker
# (cargo-zigbuild, and maturin --zig for the wheel). Installs what it needs when missing:
# ziglang and maturin from PyPI, cargo-zigbuild from crates.io. Checks that no binary needs a
# newer GLIBC symbol than G (objdump -T).
#
# Usage: scripts/build-portable.sh [GLIBC_VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."
glibc=${1:-2.28}
target=x86_64-unknown-linux-gnu
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
mkdir -p dist

python3 -c 'import ziglang' 2>/dev/null || python3 -m pip install -q ziglang
command -v maturin >/dev/null || python3 -m pip install -q maturin
command -v cargo-zigbuild >/dev/null || cargo install -q cargo-zigbuild

# The newest GLIBC_x.y a binary's dynamic symbols need, e.g. 2.28.
glibc_needed() {
    objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1
}
check() {
    local need
    need=$(glibc_needed "$1")
    if [ "$(printf '%s\n%s\n' "$need" "$glibc" | sort -V | tail -1)" != "$glibc" ]; then
        echo "build-portable.sh: $1 needs GLIBC_$need, newer than $glibc" >&2
        exit 1
    fi
    echo "$1: highest GLIBC symbol version $need (≤ $glibc)"
}

cargo zigbuild --release --target "$target.$glibc" --target-dir target/portable
cp "target/portable/$target/release/scalescope" "dist/scalescope-$version-x86_64-linux-glibc$glibc"
check "dist/scalescope-$version-x86_64-linux-glibc$glibc"

cargo zigbuild --release --no-default-features --target "$target.$glibc" \
    --target-dir target/portable-headless
cp "target/portable-headless/$target/release/scalescope" \
    "dist/scalescope-headless-$version-x86_64-linux-glibc$glibc"
check "dist/scalescope-headless-$version-x86_64-linux-glibc$glibc"

tag=manylinux_${glibc/./_}
CARGO_TARGET_DIR=target/portable-headless maturin build --release --zig --no-default-features \
    --compatibility "$tag" --target "$target" --out dist
ls -la dist
