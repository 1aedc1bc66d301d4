#!/usr/bin/env bash
# Runs scalescope's test suite on a machine without GPUs, installing what it needs when missing:
# Mesa's software OpenGL/EGL (the GUI snapshot tests render offscreen), OpenSSH (the remote
# tests start a throwaway sshd on localhost and drive `scalescope agent` through it) and
# Debian's headless Chromium (tests/report_html.rs opens report.html in a real browser engine) and
# Debian's Prometheus (tests/watch.rs checks `watch --prometheus` with promtool and a Prometheus
# server scraping it) and Debian's Slurm (tests/fleet_slurm.rs runs `fleet run --slurm` under a
# Slurm it starts on localhost).
#
# Usage: scripts/test.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

need_mesa() {
    ! { ldconfig -p | grep -q 'libEGL.so.1' && ldconfig -p | grep -q 'libEGL_mesa.so.0' &&
        ls /usr/lib/x86_64-linux-gnu/dri/swrast_dri.so /usr/lib/*/dri/swrast_dri.so >/dev/null 2>&1; }
}

need_ssh() {
    ! { command -v ssh >/dev/null && command -v ssh-keygen >/dev/null &&
        { [ -x /usr/sbin/sshd ] || command -v sshd >/dev/null; }; }
}

browser_path() {
    command -v chromium-headless-shell || command -v chromium || true
}

packages=""
need_mesa && packages="libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1"
need_ssh && packages="$packages openssh-server openssh-client"
if [ -z "$(browser_path)" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        # Chromium without its GUI (~220 MB with its libraries); installed on its own so that a
        # distribution without it still gets the other packages.
        echo "scripts/test.sh: installing chromium-headless-shell for tests/report_html.rs" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            chromium-headless-shell >/dev/null ||
            echo "scripts/test.sh: chromium-headless-shell could not be installed: tests/report_html.rs checks the files without a browser" >&2
    else
        echo "scripts/test.sh: no chromium-headless-shell or chromium (install one as root): tests/report_html.rs checks the files without a browser" >&2
    fi
fi
if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        # promtool and the Prometheus server (~20 MB download); the package's service is not
        # started (the tests start their own server on a free port).
        echo "scripts/test.sh: installing prometheus for tests/watch.rs" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            prometheus >/dev/null ||
            echo "scripts/test.sh: prometheus could not be installed: tests/watch.rs checks /metrics without it" >&2
    else
        echo "scripts/test.sh: no promtool/prometheus (install Debian's prometheus as root): tests/watch.rs checks /metrics without them" >&2
    fi
fi
# Slurm (tests/fleet_slurm.rs starts munged, slurmctld and slurmd on localhost as root and runs
# `fleet run --slurm` under salloc and sbatch); the packages' services are not started.
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v salloc >/dev/null || ! command -v munged >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "scripts/test.sh: installing slurmctld slurmd slurm-client munge for tests/fleet_slurm.rs" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            slurmctld slurmd slurm-client munge >/dev/null ||
            echo "scripts/test.sh: Slurm could not be installed: tests/fleet_slurm.rs is skipped" >&2
    else
        echo "scripts/test.sh: no Slurm (install Debian's slurmctld slurmd slurm-client munge as root): tests/fleet_slurm.rs is skipped" >&2
    fi
fi
# The Slurm test must run (it fails, rather than skips) where root has Slurm.
if [ "$(id -u)" = 0 ] && command -v slurmctld >/dev/null && command -v munged >/dev/null; then
    export SCALESCOPE_SLURM=1
fi
# The Prometheus tools the watch test must use (it fails, rather than skips, when they do not work).
if command -v promtool >/dev/null && command -v prometheus >/dev/null; then
    export SCALESCOPE_PROMTOOL="$(command -v promtool)"
    export SCALESCOPE_PROMETHEUS="$(command -v prometheus)"
fi
# The browser the report test must use (it fails, rather than skips, when this one does not work).
if [ -n "$(browser_path)" ]; then
    export SCALESCOPE_BROWSER="$(browser_path)"
fi
if [ -n "$packages" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "scripts/test.sh: installing what the GUI and remote tests need: $packages" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages >/dev/null
    else
        echo "scripts/test.sh: the GUI and remote tests need: $packages (install them)" >&2
        exit 1
    fi
fi

# Keep Mesa's shader cache out of the home directory.
export MESA_SHADER_CACHE_DIR="${MESA_SHADER_CACHE_DIR:-${TMPDIR:-/tmp}/scalescope-mesa-cache}"
exec cargo test "$@"
