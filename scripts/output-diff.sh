#!/usr/bin/env bash
# Every CLI output and document of scalescope, captured from one binary and compared byte for
# byte with another's (issue W: "every CLI output and document byte-identical before/after").
#
#   scripts/output-diff.sh snapshot BIN DIR    run BIN over every case below into DIR (emptied)
#   scripts/output-diff.sh compare DIR_A DIR_B name every file that differs; exit 1 if any
#   scripts/output-diff.sh cases BIN           list the cases (one a line: name, then arguments)
#
# The cases: the catalog list; every catalog machine (`BIN --catalog`) through topo (table, both
# CSV tables, JSON), `--bench --modeled` (its CSVs, report.json, report.html, the PNGs and
# report.pdf), `bench bandwidth|collectives|scaling --modeled`, `check` on the modeled backend
# (verbose, --json, --csv; and against the published figures) and `compare --catalog`; the
# bundled reports (assets/reports/*.json) through compare (each beside a catalog machine; all
# together, as CSV, with a catalog machine, prices and --ranking-csv, and owning) and `fleet
# report` (the three as a fleet, and each alone: fleet.csv/.json/.html/.png/.pdf); and a few
# captures and recordings from tests/data
# (topo/check/--bench --import, check --soak-replay, watch --replay).
#
# Each case runs in DIR/NAME/cwd (its files land there) with inputs under DIR/in, reached by
# the same relative path in every snapshot, and BIN reached through PATH as `scalescope`, so
# the command line a report records is the same whichever binary and DIR made it. Beside cwd:
# `cmd` (the arguments), `stdout`, `stderr` and `rc` (the exit code).
#
# Time: scalescope has no way to pin the time it stamps on a report (report.json's created_at,
# report.html's and the pages' date, the PDF's date), so the binary runs under libfaketime
# (Debian: apt-get install faketime) with the wall clock frozen at 2026-01-01 00:00:00 UTC and
# the monotonic clock left alone (timeouts and pacing work as ever). That pins every file,
# PNG and PDF included, without normalising their bytes. The one thing still normalised is in
# stdout/stderr only: elapsed times printed in brackets (`[2.2 s]`, `[8.6 s total]`) become
# `[… s]` (and `[… s total]`); no written file is touched.
#
# Two cores: the cases run two at a time (OUTDIFF_JOBS to change); about a minute when idle.
# OUTDIFF_ONLY=REGEX runs only the cases whose name matches (e.g. 'fleet-.*'); compare such a
# snapshot with a full one and the other cases show as "only in".
set -euo pipefail

usage() {
    sed -n '5,7p' "$0" | sed 's/^# *//' >&2
    exit 2
}

repo_root() { cd "$(dirname "$0")/.." && pwd; }

faketime_lib() {
    local lib
    for lib in /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1 \
        /usr/local/lib/faketime/libfaketimeMT.so.1; do
        [ -e "$lib" ] && { echo "$lib"; return 0; }
    done
    echo "output-diff.sh: libfaketime not found: install it (Debian: apt-get install faketime)" >&2
    return 1
}

# The cases, one a line: a name (a folder name), then BIN's arguments (no spaces inside one).
# Inputs are named relative to a case's cwd: ../../in/...
cases() {
    local bin=$1 id r
    echo "catalog-list --catalog"
    for id in $("$bin" --catalog | awk '/^  [a-z0-9]/ {print $1}'); do
        echo "topo-$id-table topo --catalog $id"
        echo "topo-$id-csv-links topo --catalog $id --format csv"
        echo "topo-$id-csv-gpus topo --catalog $id --format csv --table gpus -o gpus.csv"
        echo "topo-$id-json topo --catalog $id --format json -o topo.json"
        echo "bench-$id --bench --modeled --catalog $id --out files"
        echo "bandwidth-$id bench bandwidth --modeled --catalog $id --csv bandwidth.csv --json bandwidth.json"
        echo "collectives-$id bench collectives --modeled --catalog $id --csv collectives.csv --json collectives.json"
        echo "scaling-$id bench scaling --modeled --catalog $id --price-per-gpu-hour 2.5 --csv scaling.csv --json scaling.json"
        echo "check-$id check --catalog $id --verbose --json check.json --csv check.csv"
        echo "check-$id-published check --catalog $id --thresholds published"
        echo "compare-$id compare --catalog $id ../../in/reports/h200-2x-sxm-2026-11-22.json"
    done
    for r in $(cd "$(repo_root)/assets/reports" && ls ./*.json | sed 's|^\./||'); do
        echo "compare-catalog-${r%.json} compare ../../in/reports/$r --catalog hgx-h200"
        echo "fleet-one-${r%.json} fleet report ../../in/reports/$r --out fleet"
    done
    local all
    all=$(cd "$(repo_root)/assets/reports" && ls ./*.json | sed 's|^\./|../../in/reports/|' | tr '\n' ' ' | sed 's/ $//')
    echo "compare-bundled compare $all"
    echo "compare-bundled-csv compare $all --csv"
    echo "compare-bundled-ranking compare $all --catalog dgx-h100 --price-per-gpu-hour 3.5 --samples 1.2e9 --ranking-csv ranking.csv"
    echo "compare-bundled-owning compare $all --capex-per-node 300000 --years 4 --power-price-per-kwh 0.12 --pue 1.3 --mode strong"
    echo "fleet-bundled fleet report ../../in/reports --out fleet"
    local d=../../in/data
    echo "topo-import-h200-2x topo --import $d/h200-2x-device-topo-m.txt --import $d/h200-2x-device-topo-p2p.txt --import $d/h200-2x-device-smi-q.xml"
    echo "topo-import-dgx-h100-json topo --import $d/dgx-h100-topo-m.txt --import $d/dgx-h100-topo-p2p-all.txt --format json"
    echo "topo-import-l40s topo --import $d/l40s-8x-pcie-topo-m.txt"
    echo "check-import-h200-2x check --verbose --import $d/h200-2x-device-smi-q.xml --import $d/h200-2x-device-topo-m.txt --import $d/h200-2x-device-nvlink-s.txt --import $d/h200-2x-device-nvlink-e.txt --json check.json"
    echo "check-import-gen4x8 check --import $d/h200-2x-edited-gen4x8-smi-q.xml --import $d/h200-2x-topo-m.txt"
    echo "bench-import-h200-2x --bench --modeled --import $d/h200-2x-device-smi-q.xml --import $d/h200-2x-device-topo-m.txt --out files"
    echo "soak-replay-h100 check --soak-replay $d/soak-h100-5min.csv"
    echo "soak-replay-faults check --soak-replay $d/soak-h200x2-faults-seed7.csv --verbose"
    echo "watch-replay-h100x2 watch --replay $d/watch-h100x2-nvlink.jsonl --replay-speed 1000 --links --csv traffic.csv --record traffic.jsonl"
    echo "watch-replay-pcie watch --replay $d/watch-h100-pcie.jsonl --replay-speed 1000 --csv traffic.csv"
}

# One case: DIR NAME ARGS... (run by snapshot through xargs).
run_case() {
    local dir=$1 name=$2
    shift 2
    local at="$dir/$name"
    mkdir -p "$at/cwd"
    printf '%s\n' "$*" >"$at/cmd"
    local rc=0
    (
        cd "$at/cwd"
        exec env -i PATH="$dir/.bin:/usr/bin:/bin" HOME="$dir/.home" LC_ALL=C.UTF-8 TZ=UTC \
            LD_PRELOAD="$OUTDIFF_FAKETIME" FAKETIME="2026-01-01 00:00:00" \
            FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_NO_CACHE=1 \
            timeout 300 scalescope "$@" >"$at/stdout.raw" 2>"$at/stderr.raw" </dev/null
    ) || rc=$?
    echo "$rc" >"$at/rc"
    local f
    for f in stdout stderr; do
        sed -E 's/\[[0-9]+(\.[0-9]+)? s( total)?\]/[… s\2]/g' "$at/$f.raw" >"$at/$f"
        rm "$at/$f.raw"
    done
}

snapshot() {
    local bin dir
    [ $# -eq 2 ] || usage
    bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
    [ -x "$bin" ] || { echo "output-diff.sh: $1: not an executable" >&2; exit 2; }
    mkdir -p "$2"
    dir=$(cd "$2" && pwd)
    OUTDIFF_FAKETIME=$(faketime_lib)
    export OUTDIFF_FAKETIME
    find "$dir" -mindepth 1 -delete
    mkdir -p "$dir/.bin" "$dir/.home" "$dir/in/reports" "$dir/in/data"
    ln -s "$bin" "$dir/.bin/scalescope"
    local root
    root=$(repo_root)
    cp "$root"/assets/reports/*.json "$dir/in/reports/"
    cp "$root"/tests/data/* "$dir/in/data/" 2>/dev/null || true
    cases "$bin" | grep -E -- "^(${OUTDIFF_ONLY:-.*})( |$)" >"$dir/cases" || true
    local start=$SECONDS
    # shellcheck disable=SC2016
    xargs -P "${OUTDIFF_JOBS:-2}" -L 1 bash -c 'source "$0" _lib; run_case "$@"' "$0" "$dir" \
        <"$dir/cases"
    rm -rf "$dir/.bin" "$dir/.home"
    echo "$(wc -l <"$dir/cases") cases from $bin into $dir in $((SECONDS - start)) s"
}

compare() {
    [ $# -eq 2 ] || usage
    local a=$1 b=$2 f n=0
    [ -d "$a" ] && [ -d "$b" ] || { echo "output-diff.sh: compare needs two snapshot folders" >&2; exit 2; }
    while IFS= read -r f; do
        if [ ! -e "$a/$f" ]; then
            echo "only in $b: $f"; n=$((n + 1))
        elif [ ! -e "$b/$f" ]; then
            echo "only in $a: $f"; n=$((n + 1))
        elif ! cmp -s "$a/$f" "$b/$f"; then
            echo "differs: $f"; n=$((n + 1))
        fi
    done < <( (cd "$a" && find . -type f; cd "$b" && find . -type f) | sed 's|^\./||' | sort -u)
    local total
    total=$( (cd "$a" && find . -type f; cd "$b" && find . -type f) | sort -u | wc -l)
    if [ "$n" -gt 0 ]; then
        echo "$n of $total files differ between $a and $b"
        exit 1
    fi
    echo "all $total files identical between $a and $b"
}

case "${1:-}" in
    _lib) ;; # sourced by the xargs workers for run_case
    snapshot) shift; snapshot "$@" ;;
    compare) shift; compare "$@" ;;
    cases) shift; [ $# -eq 1 ] || usage; cases "$1" ;;
    *) usage ;;
esac
