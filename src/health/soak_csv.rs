//! `soak.csv`: one row per GPU per sampling interval (columns in docs/CSV.md), written in
//! chunks as a soak runs (so an interrupted soak keeps every row it measured) and read back for
//! `check --soak-replay` and the tests' recorded series.

use crate::model::soak::SoakLoad;
use crate::model::validate::number;
use crate::model::{SoakEvent, SoakEventKind, SoakSample, SoakSection, ThrottleReason};

/// The columns, in order.
pub const COLUMNS: [&str; 28] = [
    "time_s",
    "gpu",
    "phase",
    "rate",
    "unit",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "power_w",
    "gpu_temp_c",
    "mem_temp_c",
    "fan_percent",
    "util_percent",
    "throttle",
    "ecc_corrected",
    "ecc_uncorrected",
    "remapped_correctable",
    "remapped_uncorrectable",
    "retired_pages",
    "pcie_replays",
    "nvlink_errors",
    "xid",
    "checked",
    "mismatches",
    "processes",
    "power_limit_w",
    "host_cpu_percent",
    "host_steal_percent",
    "events",
];

/// Largest recording read back (a week of 8 GPUs at one row a second is ~1 GB; a recording to
/// replay is normally minutes to hours).
pub const MAX_BYTES: u64 = 256 << 20;

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn fixed(v: Option<f64>, digits: usize) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| format!("{x:.digits$}"))
        .unwrap_or_default()
}

fn joined<T: ToString>(v: &[T]) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(";")
}

/// A throttle reason's CSV word (`sw_power_cap`, …), as JSON names it.
fn reason_id(r: ThrottleReason) -> String {
    serde_json::to_value(r)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `samples` as CSV rows (with the header first when `header`), each event's text in the
/// `events` cell of the first sample at or after it of its GPU (any GPU's for a machine-wide
/// event), else of the last sample.
pub fn rows(samples: &[SoakSample], events: &[SoakEvent], header: bool) -> Vec<u8> {
    let mut texts: Vec<Vec<&str>> = vec![Vec::new(); samples.len()];
    for e in events {
        let fits = |s: &SoakSample| e.gpu.is_none_or(|g| g == s.gpu);
        let at = samples
            .iter()
            .position(|s| fits(s) && s.t_s + 1e-9 >= e.t_s)
            .or_else(|| samples.iter().rposition(fits));
        if let Some(i) = at {
            texts[i].push(&e.text);
        }
    }
    let mut w = ::csv::Writer::from_writer(Vec::new());
    if header {
        let _ = w.write_record(COLUMNS);
    }
    for (s, ev) in samples.iter().zip(&texts) {
        let rec = [
            format!("{:.1}", s.t_s),
            s.gpu.to_string(),
            s.phase.map(|p| p.id().to_string()).unwrap_or_default(),
            fixed(s.rate, 3),
            s.phase.map(|p| p.unit().to_string()).unwrap_or_default(),
            opt(s.sm_clock_mhz),
            opt(s.mem_clock_mhz),
            fixed(s.power_w, 1),
            fixed(s.gpu_temp_c, 0),
            fixed(s.mem_temp_c, 0),
            opt(s.fan_percent),
            opt(s.util_percent),
            s.throttle
                .as_ref()
                .map(|v| {
                    v.iter()
                        .map(|r| reason_id(*r))
                        .collect::<Vec<_>>()
                        .join(";")
                })
                .map(|t| if t.is_empty() { "none".into() } else { t })
                .unwrap_or_default(),
            opt(s.ecc_corrected),
            opt(s.ecc_uncorrected),
            opt(s.remapped_correctable),
            opt(s.remapped_uncorrectable),
            opt(s.retired_pages),
            opt(s.pcie_replays),
            opt(s.nvlink_errors),
            joined(&s.xid),
            opt(s.checked),
            opt(s.mismatches),
            joined(&s.processes),
            fixed(s.power_limit_w, 1),
            fixed(s.host_cpu_percent, 1),
            fixed(s.host_steal_percent, 1),
            ev.join(" | "),
        ];
        let _ = w.write_record(&rec);
    }
    w.into_inner().unwrap_or_default()
}

/// Reads the `soak.csv` at `path` (at most [`MAX_BYTES`]) into a section: [`parse`], with a
/// file that cannot be read named in the error.
pub fn read(path: &std::path::Path) -> Result<SoakSection, String> {
    let name = path.display().to_string();
    let text = crate::input::read_text(path, MAX_BYTES).map_err(|e| format!("{name}: {e}"))?;
    parse(&text, &name)
}

/// Reads a `soak.csv` back into a section (`path` names it in errors and in `replay_of`).
/// Columns may come in any order; unknown columns are refused, as are malformed cells (the error
/// names the line and column). Events come back as notes, with Xids and phase changes rebuilt
/// from their columns.
pub fn parse(text: &str, path: &str) -> Result<SoakSection, String> {
    let mut r = ::csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = r
        .headers()
        .map_err(|e| format!("{path}: not a soak.csv: {e}"))?
        .clone();
    let mut index = [usize::MAX; COLUMNS.len()];
    for (i, h) in headers.iter().enumerate() {
        let Some(c) = COLUMNS.iter().position(|c| *c == h.trim()) else {
            return Err(format!(
                "{path} line 1: unknown column {} (a soak.csv has {})",
                crate::model::validate::quoted(h),
                COLUMNS.join(", ")
            ));
        };
        index[c] = i;
    }
    for need in ["time_s", "gpu"] {
        let c = COLUMNS.iter().position(|c| *c == need).unwrap_or(0);
        if index[c] == usize::MAX {
            return Err(format!("{path} line 1: no {need} column: not a soak.csv"));
        }
    }
    let mut soak = SoakSection {
        replay_of: Some(path.to_string()),
        interval_s: 1.0,
        finished: true,
        ..Default::default()
    };
    let mut last_phase: std::collections::BTreeMap<usize, Option<SoakLoad>> = Default::default();
    for (n, rec) in r.records().enumerate() {
        let line = n + 2;
        let rec = rec.map_err(|e| format!("{path} line {line}: {e}"))?;
        let cell = |name: &str| -> &str {
            let c = COLUMNS.iter().position(|c| *c == name).unwrap_or(0);
            if index[c] == usize::MAX {
                ""
            } else {
                rec.get(index[c]).unwrap_or("").trim()
            }
        };
        let bad = |name: &str, why: &str| {
            format!(
                "{path} line {line}, column {name}: {} {why}",
                crate::model::validate::quoted(cell(name))
            )
        };
        fn num<T: std::str::FromStr>(v: &str) -> Result<Option<T>, ()> {
            if v.is_empty() {
                Ok(None)
            } else {
                v.parse().map(Some).map_err(|_| ())
            }
        }
        let f64_of = |name: &str| -> Result<Option<f64>, String> {
            match num::<f64>(cell(name)) {
                Ok(Some(v)) if !v.is_finite() => Err(bad(name, "is not a finite number")),
                Ok(v) => Ok(v),
                Err(()) => Err(bad(name, "is not a number")),
            }
        };
        let u64_of = |name: &str| -> Result<Option<u64>, String> {
            num::<u64>(cell(name)).map_err(|()| bad(name, "is not a whole number"))
        };
        let u32_of = |name: &str| -> Result<Option<u32>, String> {
            num::<u32>(cell(name)).map_err(|()| bad(name, "is not a whole number"))
        };
        // A figure that must lie in `lo..=hi` (a percentage, a board's power limit).
        let within = |name: &str, lo: f64, hi: f64| -> Result<Option<f64>, String> {
            match f64_of(name)? {
                Some(v) if !(lo..=hi).contains(&v) => Err(bad(
                    name,
                    &format!("is out of range ({}–{})", number(lo), number(hi)),
                )),
                v => Ok(v),
            }
        };
        let t_s = f64_of("time_s")?.ok_or_else(|| bad("time_s", "is empty"))?;
        if t_s < 0.0 {
            return Err(bad("time_s", "is negative"));
        }
        let gpu = u64_of("gpu")?.ok_or_else(|| bad("gpu", "is empty"))?;
        if gpu >= crate::model::MAX_GPUS as u64 {
            return Err(bad("gpu", "is not a GPU index"));
        }
        let gpu = gpu as usize;
        let phase = match cell("phase") {
            "" => None,
            p => Some(
                SoakLoad::from_id(p)
                    .ok_or_else(|| bad("phase", "is not a load (gemm, memory, pcie, p2p, nccl)"))?,
            ),
        };
        let throttle = match cell("throttle") {
            "" => None,
            "none" => Some(Vec::new()),
            list => {
                let mut v = Vec::new();
                for part in list.split(';') {
                    let r: ThrottleReason =
                        serde_json::from_value(serde_json::Value::String(part.trim().into()))
                            .map_err(|_| bad("throttle", "holds an unknown clock event reason"))?;
                    v.push(r);
                }
                Some(v)
            }
        };
        let list_of = |name: &str| -> Result<Vec<u64>, String> {
            cell(name)
                .split(';')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().map_err(|_| bad(name, "is not a list of numbers")))
                .collect()
        };
        let xid = list_of("xid")?;
        let processes: Vec<u32> = list_of("processes")?
            .into_iter()
            .map(|p| u32::try_from(p).unwrap_or(u32::MAX))
            .collect();
        let s = SoakSample {
            t_s,
            gpu,
            phase,
            rate: f64_of("rate")?,
            sm_clock_mhz: u32_of("sm_clock_mhz")?,
            mem_clock_mhz: u32_of("mem_clock_mhz")?,
            power_w: f64_of("power_w")?,
            gpu_temp_c: f64_of("gpu_temp_c")?,
            mem_temp_c: f64_of("mem_temp_c")?,
            fan_percent: u32_of("fan_percent")?,
            util_percent: u32_of("util_percent")?,
            throttle,
            ecc_corrected: u64_of("ecc_corrected")?,
            ecc_uncorrected: u64_of("ecc_uncorrected")?,
            remapped_correctable: u64_of("remapped_correctable")?,
            remapped_uncorrectable: u64_of("remapped_uncorrectable")?,
            retired_pages: u64_of("retired_pages")?,
            pcie_replays: u64_of("pcie_replays")?,
            nvlink_errors: u64_of("nvlink_errors")?,
            xid: xid.clone(),
            checked: u64_of("checked")?,
            mismatches: u64_of("mismatches")?,
            processes,
            power_limit_w: within("power_limit_w", 0.0, 100_000.0)?,
            host_cpu_percent: within("host_cpu_percent", 0.0, 100.0)?,
            host_steal_percent: within("host_steal_percent", 0.0, 100.0)?,
        };
        if last_phase.insert(gpu, phase) != Some(phase)
            && let Some(load) = phase
            && !soak.events.iter().any(|e| {
                matches!(e.kind, SoakEventKind::Phase { load: l } if l == load)
                    && (e.t_s - t_s).abs() < 1.5
            })
        {
            soak.events.push(SoakEvent {
                t_s: (t_s - 1.0).max(0.0),
                gpu: None,
                kind: SoakEventKind::Phase { load },
                text: format!("{load} phase"),
            });
        }
        for x in xid {
            soak.events.push(SoakEvent {
                t_s,
                gpu: Some(gpu),
                kind: SoakEventKind::Xid { xid: x },
                text: format!("Xid {x}"),
            });
        }
        for text in cell("events").split(" | ").filter(|t| !t.trim().is_empty()) {
            if text.starts_with("Xid ") || text.ends_with(" phase") {
                continue;
            }
            soak.events.push(SoakEvent {
                t_s,
                gpu: Some(gpu),
                kind: SoakEventKind::Note,
                text: text.to_string(),
            });
        }
        if !soak.gpus.contains(&gpu) {
            soak.gpus.push(gpu);
        }
        if let Some(p) = phase
            && !soak.loads.contains(&p)
        {
            soak.loads.push(p);
        }
        soak.samples.push(s);
    }
    if soak.samples.is_empty() {
        return Err(format!("{path}: no samples (a header and no rows)"));
    }
    soak.gpus.sort_unstable();
    soak.events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    soak.samples
        .sort_by(|a, b| a.t_s.total_cmp(&b.t_s).then(a.gpu.cmp(&b.gpu)));
    let end = soak.samples.iter().map(|s| s.t_s).fold(0.0, f64::max);
    let start = soak
        .samples
        .iter()
        .map(|s| s.t_s)
        .fold(f64::INFINITY, f64::min);
    // The interval: the smallest step between one GPU's samples.
    let g0 = soak.gpus[0];
    let times: Vec<f64> = soak.gpu_samples(g0).map(|s| s.t_s).collect();
    if let Some(step) = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .reduce(f64::min)
    {
        soak.interval_s = step;
    }
    soak.elapsed_s = end;
    soak.duration_s = end.max(start);
    Ok(soak)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back() {
        let samples = vec![
            SoakSample {
                t_s: 1.0,
                gpu: 0,
                phase: Some(SoakLoad::Gemm),
                rate: Some(701.25),
                throttle: Some(vec![ThrottleReason::SwPowerCap]),
                xid: vec![79],
                checked: Some(8),
                mismatches: Some(1),
                processes: vec![4242],
                ..Default::default()
            },
            SoakSample {
                t_s: 2.0,
                gpu: 0,
                phase: Some(SoakLoad::Memory),
                power_w: None,
                throttle: Some(vec![]),
                ..Default::default()
            },
        ];
        let events = vec![SoakEvent {
            t_s: 0.5,
            gpu: Some(0),
            kind: SoakEventKind::Note,
            text: "wrong element (1, 2)".into(),
        }];
        let bytes = rows(&samples, &events, true);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("time_s,gpu,phase,rate"));
        let back = parse(&text, "x.csv").unwrap();
        assert_eq!(back.samples.len(), 2);
        assert_eq!(back.samples[0].rate, Some(701.25));
        assert_eq!(back.samples[0].xid, vec![79]);
        assert_eq!(back.samples[0].processes, vec![4242]);
        assert_eq!(back.samples[1].power_w, None, "empty stays unknown");
        assert_eq!(back.samples[1].throttle, Some(vec![]));
        assert_eq!(back.loads, vec![SoakLoad::Gemm, SoakLoad::Memory]);
        assert!(back.events.iter().any(|e| e.text == "wrong element (1, 2)"));
        assert!(
            back.events
                .iter()
                .any(|e| matches!(e.kind, SoakEventKind::Xid { xid: 79 }))
        );
    }

    #[test]
    fn malformed_cells_name_line_and_column() {
        let head = COLUMNS.join(",");
        let blank = |f: &dyn Fn(&mut Vec<String>)| {
            let mut v = vec![String::new(); COLUMNS.len()];
            v[0] = "1.0".into();
            v[1] = "0".into();
            f(&mut v);
            format!("{head}\n{}\n", v.join(","))
        };
        let e = parse(&blank(&|v| v[3] = "fast".into()), "s.csv").unwrap_err();
        assert_eq!(e, "s.csv line 2, column rate: \"fast\" is not a number");
        let e = parse(&blank(&|v| v[2] = "disk".into()), "s.csv").unwrap_err();
        assert!(e.contains("column phase"), "{e}");
        let e = parse(&blank(&|v| v[12] = "melting".into()), "s.csv").unwrap_err();
        assert!(e.contains("column throttle"), "{e}");
        let e = parse(&blank(&|v| v[7] = "inf".into()), "s.csv").unwrap_err();
        assert!(e.contains("finite"), "{e}");
        let e = parse("a,b\n1,2\n", "s.csv").unwrap_err();
        assert!(e.contains("unknown column \"a\""), "{e}");
        let e = parse(&format!("{head}\n"), "s.csv").unwrap_err();
        assert!(e.contains("no samples"), "{e}");
        let e = parse(&format!("{head}\n1,2\n"), "s.csv").unwrap_err();
        assert!(e.starts_with("s.csv line 2"), "{e}");
    }
}
