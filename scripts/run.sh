#!/usr/bin/env bash
# Builds and starts scalescope (the desktop app with no arguments; any arguments go to the CLI),
# installing the X11/Wayland and Mesa run-time libraries a bare Debian/Ubuntu machine lacks.
#
# Usage: scripts/run.sh [scalescope arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

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
