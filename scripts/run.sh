#!/usr/bin/env bash
# Builds and starts scalescope (the desktop app with no arguments; any arguments go to the CLI),
# installing the X11/Wayland and Mesa run-time libraries a bare Debian/Ubuntu machine lacks.
#
# Usage: scripts/run.sh [scalescope arguments]
#
# Without a display (DISPLAY and WAYLAND_DISPLAY unset) the window cannot open: with no
# arguments it says so at once, before a long build, and names the headless way in; with
# arguments it builds the command line alone (--no-default-features: no GUI libraries, a
# shorter build), which is all that can run there.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    if [ $# -eq 0 ]; then
        cat >&2 <<'MSG'
scripts/run.sh: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the desktop app cannot
open here; nothing was built. Without a display, use the command line (no GUI libraries, a
shorter build):
  scripts/run.sh --bench --modeled --catalog dgx-h100   # a modeled report of a catalog machine, no GPU needed
  scripts/run.sh --bench                                # measure this machine's GPUs
  cargo install --locked --path . --no-default-features # put the command line alone on PATH
or run the app where there is a display (ssh -X, a desktop session, Xvfb).
MSG
        exit 1
    fi
    exec cargo run --release --no-default-features -- "$@"
fi

runtime="libx11-6 libxcursor1 libxi6 libxrandr2 libxkbcommon-x11-0 libwayland-client0 libegl1 libegl-mesa0 libgl1-mesa-dri"
missing=""
for p in $runtime; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ $# -eq 0 ] && [ -n "$missing" ] && command -v apt-get >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    elif command -v sudo >/dev/null; then
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    else
        echo "scripts/run.sh: the desktop app needs:$missing" >&2
    fi
fi
exec cargo run --release -- "$@"
