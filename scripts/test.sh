#!/usr/bin/env bash
# Runs scalescope's test suite on a machine without GPUs, installing what the GUI snapshot tests
# need to render offscreen (Mesa's software OpenGL/EGL) when it is missing.
#
# Usage: scripts/test.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

need_mesa() {
    ! { ldconfig -p | grep -q 'libEGL.so.1' && ldconfig -p | grep -q 'libEGL_mesa.so.0' &&
        ls /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so /usr/lib/*/dri/swrast_dri.so >/dev/null 2>&1; }
}

if need_mesa; then
    packages="libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "scripts/test.sh: installing Mesa software rendering for the GUI tests: $packages" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages >/dev/null
    else
        echo "scripts/test.sh: the GUI snapshot tests need Mesa's software renderer; install: $packages" >&2
        exit 1
    fi
fi

# Keep Mesa's shader cache out of the home directory.
export MESA_SHADER_CACHE_DIR="${MESA_SHADER_CACHE_DIR:-${TMPDIR:-/tmp}/scalescope-mesa-cache}"
exec cargo test "$@"
