#!/usr/bin/env python3
"""Scores `scalescope check` against the faults scripts/fault-inject.sh injected: for each fault,
did a finding below PASS (WARN or FAIL) cover it, and did its likely cause name what was done?
Prints markdown tables.

Soak (OUTDIR/soak): the hogs' start/end lines in faults.jsonl, placed on the soak's clock by
health.json's `soak.started_at` (time_s 0 of soak.csv; else the script's estimate). A fault is
detected by a soak_* finding on its GPU (any GPU for `cpu` and `hostmem`) with a window overlapping it (±3 s):
a check's `windows` list (`from_s`, `to_s`, `cause`) where present, else the dips of its detail
(`gemm 2:00–2:30 (-46 %)`, health::soak's `Dip`). "soak.csv saw" is the measured effect: the
median rate in the window against the same phase's median outside every fault, per phase.
Checks (OUTDIR/check-K): a WARN/FAIL on the fault's GPU (either end of a pair; any GPU for
`cpu` and `hostmem`) that the clean run (else the checks before the soak) did not have.
Right cause: another process (or its pid) for compute/memory/copy, the host for cpu and hostmem; "partly"
when it is one of several candidates named, "no" (a wrong cause given as likely) when it names
only other things, "none" when no cause is named.

Usage: fault_compare.py OUTDIR
"""
import csv
import glob
import json
import os
import re
import statistics
import sys
from datetime import datetime

TOL_S = 3.0
CLOCK = r"\d+:\d{2}(?::\d{2})?"
DIP = re.compile(rf"\b(gemm|memory|pcie|p2p|nccl) ({CLOCK})\s*[–-]\s*({CLOCK}) \(([+\-−]?\d+(?:\.\d+)?) %\)")
FINDING = ("warn", "fail")
CAUSES = {  # what a cause text names, by pattern
    "process": r"another (?:process|job)|other process|\bpids?\b|contention|shared it",
    "host CPU": r"\bcpus?\b|processor|host (?:that )?could not keep|host (?:was |is )?(?:busy|loaded|"
                r"overloaded|saturated|starved)|load on the host|host load|host memory pressure",
    "power/thermal": r"thermal|temperature|\bheat|\bhot\b|cooling|power|clock|\bfans?\b|airflow",
    "link/hardware": r"pcie|nvlink|riser|\bslot\b|\becc\b|memory errors?|\bxid\b|\brma\b|seated|cable|"
                     r"bios|corruption",
}
RIGHT = {"compute": "process", "memory": "process", "copy": "process", "cpu": "host CPU",
         "hostmem": "host CPU", "vram": "process"}  # the host's memory bus: a host cause, never a GPU's or a link's
HOST_KINDS = ("cpu", "hostmem")  # faults on the host, not on one GPU


def clock(t):
    if t is None:
        return "—"
    s = int(round(max(t, 0.0)))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def seconds(text):
    v = 0
    for part in text.split(":"):
        v = v * 60 + int(part)
    return float(v)


def short(text, n=70):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def cell(text):
    return str(text).replace("|", "\\|")


def read_json(path):
    """(object, None) or (None, why)."""
    try:
        with open(path) as f:
            return json.load(f), None
    except FileNotFoundError:
        return None, f"no {path}"
    except (OSError, ValueError) as e:
        return None, f"{path}: {e}"


def read_jsonl(path):
    try:
        out = []
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out, None
    except OSError as e:
        return None, f"no {path} ({e.strerror})"


def unix_of(rfc3339):
    try:
        return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()
    except (AttributeError, ValueError):
        return None


def judge(kind, cause, pid, pids=()):
    """(verdict words, wrong?) for the cause a finding gives for a fault of `kind`; `pids`: the
    processes the finding names beside its text (a `busy` finding's, a window's)."""
    if not cause:
        return "none", False
    named = [c for c, rx in CAUSES.items() if re.search(rx, cause, re.I)]
    right = RIGHT.get(kind)
    pids = re.findall(r"pid (\d+)", cause) + [str(p) for p in pids]
    note = ""
    if pids and pid and right == "process":
        note = " (pid ✓)" if str(pid) in pids else f" (pid {','.join(pids)}, hog {pid})"
    if not named:
        return "none (names no cause)", False
    if right in named:
        others = [c for c in named if c != right]
        return ("yes" if not others else "partly: also " + ", ".join(others)) + note, False
    return "no: " + ", ".join(named), True


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def windows_of(check):
    """The windows a soak finding names: its `windows` list if it has one, else its detail's dips."""
    if isinstance(check.get("windows"), list):
        out = []
        for w in check["windows"]:
            if isinstance(w, dict) and isinstance(w.get("from_s"), (int, float)):
                out.append({"from": float(w["from_s"]), "to": float(w.get("to_s", w["from_s"])),
                            "cause": w.get("cause") or check.get("cause"),
                            "gpu": w.get("gpu", check.get("gpu")),
                            "pids": [p for p in w.get("processes") or [] if isinstance(p, int)],
                            "text": w.get("text") or f"{w.get('load', '')} {clock(w['from_s'])}–"
                                                      f"{clock(w.get('to_s', w['from_s']))}".strip()})
        return out
    return [{"from": seconds(m[2]), "to": seconds(m[3]), "cause": check.get("cause"),
             "gpu": check.get("gpu"), "pids": [],
             "text": f"{m[1]} {m[2]}–{m[3]} ({m[4].replace('−', '-')} %)"}
            for m in DIP.finditer(check.get("detail") or "")]


def soak_samples(report, csv_path):
    """(t_s, gpu, phase, rate, pids) rows: from health.json's soak, else soak.csv."""
    rows = []
    for s in ((report or {}).get("soak") or {}).get("samples") or []:
        rows.append((s.get("t_s"), s.get("gpu"), s.get("phase"), s.get("rate"), s.get("processes") or []))
    if rows:
        return rows
    try:
        with open(csv_path, newline="") as f:
            for r in csv.DictReader(f):
                num = lambda k: float(r[k]) if r.get(k) not in (None, "") else None
                pids = [int(p) for p in (r.get("processes") or "").split(";") if p.strip().isdigit()]
                rows.append((num("time_s"), int(r["gpu"]), r.get("phase") or None, num("rate"), pids))
    except (OSError, ValueError, KeyError):
        pass
    return rows


def effect(samples, gpus, f0, f1, pid, faults):
    """The measured effect of a fault: per phase, the window's median rate against the phase's
    median outside every fault window (±2 s)."""
    def inside(t, a, b):
        return t is not None and t > a and t - 1.0 < b
    parts = []
    seen = False
    for g in gpus:
        mine = [s for s in samples if s[1] == g and s[3] is not None]
        clean = [s for s in mine if not any(inside(s[0], a - 2, b + 2) for a, b in faults)]
        win = [s for s in mine if inside(s[0], f0, f1)]
        seen |= any(pid in s[4] for s in samples if s[1] == g and inside(s[0], f0, f1)) if pid else False
        for phase in dict.fromkeys(s[2] for s in win):
            base = [s[3] for s in clean if s[2] == phase]
            here = [s[3] for s in win if s[2] == phase]
            if base and here and statistics.median(base) > 0:
                d = statistics.median(here) / statistics.median(base) - 1
                parts.append((d, f"{'GPU %d ' % g if len(gpus) > 1 else ''}{phase} {d * 100:+.0f} %"))
    parts.sort()
    text = ", ".join(p[1] for p in parts[:3]) or "—"
    return text + (" (pid seen)" if seen else "")


def soak_part(out):
    lines, why = read_jsonl(os.path.join(out, "soak", "faults.jsonl"))
    report, rwhy = read_json(os.path.join(out, "soak", "health.json"))
    notes = []
    if lines is None:
        return "## Soak\n\n—: " + why, (0, 0), 0, 0, 0
    faults, current = [], None
    for x in lines:
        ev = x.get("event")
        if ev == "planned":
            current = {"kind": x.get("kind"), "gpu": x.get("gpu"), "planned": x}
            faults.append(current)
        elif ev == "start":
            if current is None or "start" in current or current["kind"] != x.get("kind"):
                current = {"kind": x.get("kind"), "gpu": x.get("gpu")}
                faults.append(current)
            current["start"], current["pid"] = x, x.get("pid")
        elif ev == "end":
            for f in faults:
                if f.get("pid") == x.get("pid") and "end" not in f:
                    f["end"] = x
        elif ev in ("hog_failed", "skipped") and current is not None:
            current["failed"] = x.get("why") or f"hog exit {x.get('exit')}"
    t0, how = None, None
    if report is not None:
        t0 = unix_of(((report.get("soak") or {}).get("started_at")) or "")
        how = "health.json soak.started_at" if t0 else None
    if t0 is None:
        est = [x["t_unix"] for x in lines if x.get("event") == "soak_t0_estimate"]
        if est:
            t0, how = est[-1], "the script's estimate from soak.csv's first row (±0.2 s)"
    notes.append(f"soak clock: {how}" if t0 else "soak clock unknown: no soak.started_at and no estimate")
    if report is None:
        notes.append(f"no findings to score: {rwhy}")
    checks = [c for c in (report or {}).get("checks", []) if str(c.get("check", "")).startswith("soak_")]
    found = [c for c in checks if str(c.get("verdict", "")).lower() in FINDING]
    wins = [dict(w, check=c.get("check"), verdict=c.get("verdict")) for c in found for w in windows_of(c)]
    samples = soak_samples(report, os.path.join(out, "soak", "soak.csv"))
    span = []
    for f in faults:
        s, e = f.get("start"), f.get("end")
        a = b = None
        if s and t0:
            a = s["t_unix"] - t0
            if e:
                b = e["t_unix"] - t0
            elif "planned" in f:  # no end line: as long as it was asked to run
                b = a + f["planned"]["seconds"]
        f["from"], f["to"] = a, b
        if a is not None and b is not None:
            span.append((a, b))
    rows, wrong, detected, scored = [], 0, 0, 0
    used = set()
    for f in faults:
        kind, gpu = f["kind"], f.get("gpu")
        where = "host" if kind in HOST_KINDS else f"GPU {gpu}"
        if f.get("from") is None:
            why = f.get("failed") or ("no start line" if "start" not in f
                                      else "soak clock unknown" if not t0 else "no end line")
            rows.append([kind, where, "—", f"— ({why})", "—", "—", "—", "—"])
            continue
        window = f"{clock(f['from'])}–{clock(f['to'])}"
        gpus = sorted({s[1] for s in samples}) if kind in HOST_KINDS else [gpu]
        saw = effect(samples, gpus, f["from"], f["to"], f.get("pid"), span) if samples else "— (no series)"
        if report is None:
            rows.append([kind, where, window, saw, f"— ({rwhy})", "—", "—", "—"])
            continue
        scored += 1
        hits = [w for w in wins
                if (kind in HOST_KINDS or w["gpu"] is None or w["gpu"] == gpu)
                and w["from"] <= f["to"] + TOL_S and w["to"] >= f["from"] - TOL_S]
        used.update(id(w) for w in hits)
        if not hits:
            rows.append([kind, where, window, saw, "no", "—", "—", "—"])
            continue
        detected += 1
        text = ", ".join(("" if w["gpu"] is None or kind not in HOST_KINDS else f"GPU {w['gpu']} ") + w["text"]
                         for w in hits)
        cause = hits[0]["cause"]
        verdict, bad = judge(kind, cause, f.get("pid"), hits[0]["pids"])
        wrong += bad
        rows.append([kind, where, window, saw, f"yes ({hits[0]['check']} {str(hits[0]['verdict']).upper()})",
                     short(text, 60), short(cause or "—"), verdict])
    head = ["fault", "on", "injected (soak clock)", "soak.csv saw", "detected?", "window found",
            "cause named", "right?"]
    text = ["## Soak (`check --soak`, faults at random times)", "", table(head, rows), ""]
    extra = [w for w in wins if id(w) not in used]
    for w in extra:
        text.append(f"- finding outside every injected window: GPU {w['gpu']} {w['check']} "
                    f"{w['text']} — likely: {short(w['cause'] or '—', 90)}")
    for c in found:
        if not windows_of(c):
            text.append(f"- {str(c.get('verdict')).upper()} {c.get('subject')} {c.get('check')} (no window): "
                        f"{short(c.get('detail', ''), 90)} — likely: {short(c.get('cause') or '—', 90)}")
    text += [f"- {n}" for n in notes]
    return "\n".join(text), (scored, len(faults)), detected, wrong, len(extra)


def busy_pids(check):
    procs = (check.get("busy") or {}).get("processes") or []
    return [p["pid"] for p in procs if isinstance(p, dict) and p.get("pid") is not None]


def key(c):
    return (c.get("check"), c.get("subject"))


def checks_part(out):
    dirs = sorted(glob.glob(os.path.join(out, "check-*")),
                  key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
    runs = []
    for d in dirs:
        fault, why = read_json(os.path.join(d, "fault.json"))
        report, rwhy = read_json(os.path.join(d, "health.json"))
        runs.append((os.path.basename(d), fault, why, report, rwhy))
    # What a clean machine shows: the clean run, else the checks before the soak.
    base, base_from = None, None
    for name, fault, _, report, _ in runs:
        if fault and fault.get("kind") == "clean" and report:
            base, base_from = report.get("checks", []), name
    if base is None:
        soak, _ = read_json(os.path.join(out, "soak", "health.json"))
        if soak:
            base = [c for c in soak.get("checks", []) if not str(c.get("check", "")).startswith("soak_")]
            base_from = "soak/health.json (the checks before the soak)"
    baseline = {key(c) for c in base or [] if str(c.get("verdict", "")).lower() in FINDING}
    rows, wrong, detected, scored, false_pos = [], 0, 0, 0, 0
    per_finding = [0, 0]
    for name, fault, why, report, rwhy in runs:
        if fault is None:
            rows.append([name, "—", "—", "—", "—", f"— ({why})", "—", "—", "—"])
            continue
        kind, gpu = fault.get("kind", "?"), fault.get("gpu")
        where = "host" if kind in HOST_KINDS + ("clean",) else f"GPU {gpu}"
        if kind == "clean":
            where = "—"
        if fault.get("skipped"):
            rows.append([name, kind, where, "—", "—", f"— (skipped: {fault['skipped']})", "—", "—", "—"])
            continue
        start = (fault.get("start") or {}).get("t_unix")
        c0, c1 = fault.get("check_start_unix"), fault.get("check_end_unix")
        inj = "none" if kind == "clean" else (
            f"{c0 - start:.0f} s before → check end ({c1 - c0:.0f} s)" if start and c0 and c1
            else "— (no start line: the hog did not run)")
        if report is None:
            rows.append([name, kind, where, inj, fault.get("exit", "—"), f"— ({rwhy})", "—", "—", "—"])
            continue
        bad = [c for c in report.get("checks", []) if str(c.get("verdict", "")).lower() in FINDING
               and not str(c.get("check", "")).startswith("soak_")]
        if kind == "clean":
            false_pos += len(bad)
            listed = ", ".join(f"{c['check']} {c['subject']} {c['verdict'].upper()}" for c in bad) or "none"
            rows.append([name, kind, where, inj, fault.get("exit", "—"), "(clean run)", short(listed, 80),
                         short(bad[0].get("cause") or "—") if bad else "—", "—"])
            continue
        scored += 1
        mine = [c for c in bad if kind in HOST_KINDS or gpu in (c.get("gpu"), c.get("peer"))]
        new = [c for c in mine if key(c) not in baseline]
        if not new:
            also = f" ({len(mine)} also in the clean run)" if mine else ""
            rows.append([name, kind, where, inj, fault.get("exit", "—"), "no" + also, "—", "—", "—"])
            continue
        detected += 1
        new.sort(key=lambda c: (c.get("check") != "busy", str(c.get("verdict")).lower() != "fail"))
        pid = fault.get("pid")
        for c in new:
            per_finding[0] += 1
            per_finding[1] += judge(kind, c.get("cause"), pid, busy_pids(c))[1]
        verdict, w = judge(kind, new[0].get("cause"), pid, busy_pids(new[0]))
        wrong += w
        listed = ", ".join(f"{c['check']} {c['subject']} {c['verdict'].upper()}" for c in new)
        rows.append([name, kind, where, inj, fault.get("exit", "—"), f"yes ({len(new)})", short(listed, 80),
                     short(new[0].get("cause") or "—"), verdict])
    head = ["run", "fault", "on", "injected", "exit", "detected?", "findings (new vs clean)",
            "cause named (first)", "right?"]
    text = ["## Checks (`check --quick`, one fault throughout)", "",
            table(head, rows) if rows else "—: no check-K folders", ""]
    text.append(f"- clean baseline: {base_from or '— (none: every finding counts as new)'}")
    text.append(f"- findings with a wrong likely cause, over every new finding of the fault runs: "
                f"{per_finding[1]} of {per_finding[0]}")
    return "\n".join(text), scored, detected, wrong, false_pos


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.rsplit("Usage: ", 1)[1])
    out = sys.argv[1]
    soak_text, sn, sd, sw, sx = soak_part(out)
    check_text, cn, cd, cw, cf = checks_part(out)
    print(f"# Fault injection: {out}\n")
    print(soak_text + "\n")
    print(check_text + "\n")
    print("## Counts\n")
    print(f"- soak: {sd} of {sn[0]} faults detected ({sn[1]} injected); wrong cause given as likely: {sw}; "
          f"findings outside every fault: {sx}")
    print(f"- checks: {cd} of {cn} faults detected; wrong cause given as likely: {cw}; "
          f"findings in the clean run: {cf}")
    print(f"- wrong cause given as likely, in all: {sw + cw}")


if __name__ == "__main__":
    main()
