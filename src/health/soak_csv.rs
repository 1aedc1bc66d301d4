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
/// The latest `time_s` read: a year of seconds (a soak lasts at most 7 days; a later time is
/// no recording, and one step of 1e20 s would be a replay that never ends).
pub const MAX_TIME_S: f64 = 365.0 * 86_400.0;
/// The temperatures a GPU or its memory can report, °C (both ends well past any working part).
const TEMP_C: (f64, f64) = (-60.0, 250.0);

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
    let index = column_index(&headers, path)?;
    let mut replay = Replay {
        soak: SoakSection {
            replay_of: Some(path.to_string()),
            interval_s: 1.0,
            finished: true,
            ..Default::default()
        },
        last_phase: Default::default(),
        phase_events: Default::default(),
    };
    // Each GPU's rows move forward in time: a row at or before the GPU's last is a damaged or
    // spliced file (it would be drawn back over the series and counted twice).
    let mut last_t: std::collections::BTreeMap<usize, f64> = Default::default();
    for (n, rec) in r.records().enumerate() {
        let line = n + 2;
        let rec = rec.map_err(|e| format!("{path} line {line}: {e}"))?;
        let row = Row {
            rec: &rec,
            index: &index,
            path,
            line,
        };
        let s = row.sample()?;
        if let Some(prev) = last_t.insert(s.gpu, s.t_s)
            && s.t_s <= prev
        {
            return Err(row.bad(
                "time_s",
                &format!("is not after GPU {}'s row before ({})", s.gpu, number(prev)),
            ));
        }
        replay.add(&row, s);
    }
    replay.finish(path)
}

/// Where each of [`COLUMNS`] is in a file with `headers` (`usize::MAX` where it is missing):
/// an unknown column, or no `time_s` or `gpu`, is refused.
fn column_index(
    headers: &::csv::StringRecord,
    path: &str,
) -> Result<[usize; COLUMNS.len()], String> {
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
    Ok(index)
}

/// An empty cell as `None`, else its value; `Err` when it does not parse.
fn cell_value<T: std::str::FromStr>(v: &str) -> Result<Option<T>, ()> {
    if v.is_empty() {
        Ok(None)
    } else {
        v.parse().map(Some).map_err(|_| ())
    }
}

/// One row of a `soak.csv` being read: its cells by column name, each checked as it is read.
struct Row<'a> {
    rec: &'a ::csv::StringRecord,
    /// Where each of [`COLUMNS`] is ([`column_index`]).
    index: &'a [usize; COLUMNS.len()],
    path: &'a str,
    line: usize,
}

impl Row<'_> {
    /// The cell of column `name`, trimmed; empty when the file has no such column.
    fn cell(&self, name: &str) -> &str {
        let c = COLUMNS.iter().position(|c| *c == name).unwrap_or(0);
        if self.index[c] == usize::MAX {
            ""
        } else {
            self.rec.get(self.index[c]).unwrap_or("").trim()
        }
    }

    /// The error for column `name`'s cell: `why` it is refused, with the line and the cell.
    fn bad(&self, name: &str, why: &str) -> String {
        format!(
            "{} line {}, column {name}: {} {why}",
            self.path,
            self.line,
            crate::model::validate::quoted(self.cell(name))
        )
    }

    /// Column `name` as a finite number, `None` when empty.
    fn f64_of(&self, name: &str) -> Result<Option<f64>, String> {
        match cell_value::<f64>(self.cell(name)) {
            Ok(Some(v)) if !v.is_finite() => Err(self.bad(name, "is not a finite number")),
            Ok(v) => Ok(v),
            Err(()) => Err(self.bad(name, "is not a number")),
        }
    }

    /// Column `name` as a whole number, `None` when empty.
    fn u64_of(&self, name: &str) -> Result<Option<u64>, String> {
        cell_value::<u64>(self.cell(name)).map_err(|()| self.bad(name, "is not a whole number"))
    }

    /// Column `name` as a whole number that fits 32 bits, `None` when empty.
    fn u32_of(&self, name: &str) -> Result<Option<u32>, String> {
        cell_value::<u32>(self.cell(name)).map_err(|()| self.bad(name, "is not a whole number"))
    }

    /// A figure that must lie in `lo..=hi` (a percentage, a board's power limit).
    fn within(&self, name: &str, lo: f64, hi: f64) -> Result<Option<f64>, String> {
        match self.f64_of(name)? {
            Some(v) if !(lo..=hi).contains(&v) => Err(self.bad(
                name,
                &format!("is out of range ({}–{})", number(lo), number(hi)),
            )),
            v => Ok(v),
        }
    }

    /// Column `name` as a `;`-separated list of numbers.
    fn list_of(&self, name: &str) -> Result<Vec<u64>, String> {
        self.cell(name)
            .split(';')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| {
                x.parse()
                    .map_err(|_| self.bad(name, "is not a list of numbers"))
            })
            .collect()
    }

    /// The row's time: present, not negative, within [`MAX_TIME_S`].
    fn time(&self) -> Result<f64, String> {
        let t_s = self
            .f64_of("time_s")?
            .ok_or_else(|| self.bad("time_s", "is empty"))?;
        if t_s < 0.0 {
            return Err(self.bad("time_s", "is negative"));
        }
        if t_s > MAX_TIME_S {
            return Err(self.bad(
                "time_s",
                &format!(
                    "is out of range (a recording is at most {} s long)",
                    number(MAX_TIME_S)
                ),
            ));
        }
        Ok(t_s)
    }

    /// The row's GPU: present and a GPU index.
    fn gpu(&self) -> Result<usize, String> {
        let gpu = self
            .u64_of("gpu")?
            .ok_or_else(|| self.bad("gpu", "is empty"))?;
        if gpu >= crate::model::MAX_GPUS as u64 {
            return Err(self.bad("gpu", "is not a GPU index"));
        }
        Ok(gpu as usize)
    }

    /// The row's phase: a load's id, or none when empty.
    fn phase(&self) -> Result<Option<SoakLoad>, String> {
        let phase = match self.cell("phase") {
            "" => None,
            p => Some(SoakLoad::from_id(p).ok_or_else(|| {
                self.bad("phase", "is not a load (gemm, memory, pcie, p2p, nccl)")
            })?),
        };
        // The rate's unit is the phase's (as the recorder writes it), or empty.
        let unit = self.cell("unit");
        if !unit.is_empty() && Some(unit) != phase.map(|p| p.unit()) {
            let want = phase.map_or("empty (no phase)".to_string(), |p| {
                format!("{} for {}", p.unit(), p.id())
            });
            return Err(self.bad("unit", &format!("is not the phase's unit ({want})")));
        }
        Ok(phase)
    }

    /// A whole percentage, 0 to 100.
    fn percent(&self, name: &str) -> Result<Option<u32>, String> {
        match self.u32_of(name)? {
            Some(v) if v > 100 => Err(self.bad(name, "is out of range (0–100)")),
            v => Ok(v),
        }
    }

    /// The row's clock event reasons: unread when empty, none when `none`, else a `;` list.
    fn throttle(&self) -> Result<Option<Vec<ThrottleReason>>, String> {
        match self.cell("throttle") {
            "" => Ok(None),
            "none" => Ok(Some(Vec::new())),
            list => {
                let mut v = Vec::new();
                for part in list.split(';') {
                    let r: ThrottleReason =
                        serde_json::from_value(serde_json::Value::String(part.trim().into()))
                            .map_err(|_| {
                                self.bad("throttle", "holds an unknown clock event reason")
                            })?;
                    v.push(r);
                }
                Ok(Some(v))
            }
        }
    }

    /// The row as a sample, every cell checked (the first bad one is the error).
    fn sample(&self) -> Result<SoakSample, String> {
        let t_s = self.time()?;
        let gpu = self.gpu()?;
        let phase = self.phase()?;
        let throttle = self.throttle()?;
        let xid = self.list_of("xid")?;
        let processes: Vec<u32> = self
            .list_of("processes")?
            .into_iter()
            .map(|p| u32::try_from(p).unwrap_or(u32::MAX))
            .collect();
        Ok(SoakSample {
            t_s,
            gpu,
            phase,
            rate: self.within("rate", 0.0, 1e9)?,
            sm_clock_mhz: self.u32_of("sm_clock_mhz")?,
            mem_clock_mhz: self.u32_of("mem_clock_mhz")?,
            power_w: self.within("power_w", 0.0, 100_000.0)?,
            gpu_temp_c: self.within("gpu_temp_c", TEMP_C.0, TEMP_C.1)?,
            mem_temp_c: self.within("mem_temp_c", TEMP_C.0, TEMP_C.1)?,
            // NVML's fan speed "may exceed 100 % in certain cases" (nvmlDeviceGetFanSpeed):
            // kept as read.
            fan_percent: self.u32_of("fan_percent")?,
            util_percent: self.percent("util_percent")?,
            throttle,
            ecc_corrected: self.u64_of("ecc_corrected")?,
            ecc_uncorrected: self.u64_of("ecc_uncorrected")?,
            remapped_correctable: self.u64_of("remapped_correctable")?,
            remapped_uncorrectable: self.u64_of("remapped_uncorrectable")?,
            retired_pages: self.u64_of("retired_pages")?,
            pcie_replays: self.u64_of("pcie_replays")?,
            nvlink_errors: self.u64_of("nvlink_errors")?,
            xid,
            checked: self.u64_of("checked")?,
            mismatches: self.u64_of("mismatches")?,
            processes,
            power_limit_w: self.within("power_limit_w", 0.0, 100_000.0)?,
            host_cpu_percent: self.within("host_cpu_percent", 0.0, 100.0)?,
            host_steal_percent: self.within("host_steal_percent", 0.0, 100.0)?,
        })
    }
}

/// A section being rebuilt from a `soak.csv`'s rows.
struct Replay {
    soak: SoakSection,
    /// Each GPU's phase in its last row.
    last_phase: std::collections::BTreeMap<usize, Option<SoakLoad>>,
    /// The times of the phase events so far, by load (as `f64::to_bits`).
    phase_events: std::collections::BTreeMap<SoakLoad, std::collections::BTreeSet<u64>>,
}

impl Replay {
    /// Sample `s` of `row`, with the events its row shows: a phase change, its Xids, its notes.
    fn add(&mut self, row: &Row, s: SoakSample) {
        let (t_s, gpu, phase) = (s.t_s, s.gpu, s.phase);
        self.phase_change(gpu, phase, t_s);
        let soak = &mut self.soak;
        for &x in &s.xid {
            soak.events.push(SoakEvent {
                t_s,
                gpu: Some(gpu),
                kind: SoakEventKind::Xid { xid: x },
                text: format!("Xid {x}"),
            });
        }
        for text in row
            .cell("events")
            .split(" | ")
            .filter(|t| !t.trim().is_empty())
        {
            if text.starts_with("Xid ") || text.ends_with(" phase") {
                continue;
            }
            // Printed by `check` and shown in reports: escaped as it enters.
            soak.events.push(SoakEvent {
                t_s,
                gpu: Some(gpu),
                kind: SoakEventKind::Note,
                text: crate::model::validate::one_line(text, 200),
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

    /// The phase event for `gpu` entering `phase` at `t_s`. A phase change is one event for
    /// the machine, however many GPUs' rows show it: none when an event of that load lies
    /// within 1.5 s (looked up by time, not by a scan of every event, which made 60,000
    /// alternating rows take 20 s).
    fn phase_change(&mut self, gpu: usize, phase: Option<SoakLoad>, t_s: f64) {
        use std::ops::Bound::{Excluded, Included};
        if self.last_phase.insert(gpu, phase) != Some(phase)
            && let Some(load) = phase
            && !self.phase_events.get(&load).is_some_and(|times| {
                // Times are not negative, so their bit patterns sort as the times do.
                let lo = if t_s < 1.5 {
                    Included(0)
                } else {
                    Excluded((t_s - 1.5).to_bits())
                };
                let hi = Excluded((t_s + 1.5).to_bits());
                times.range((lo, hi)).next().is_some()
            })
        {
            let at = (t_s - 1.0).max(0.0);
            self.phase_events
                .entry(load)
                .or_default()
                .insert(at.to_bits());
            self.soak.events.push(SoakEvent {
                t_s: at,
                gpu: None,
                kind: SoakEventKind::Phase { load },
                text: format!("{load} phase"),
            });
        }
    }

    /// The section, its samples and events in time order, its interval (the smallest step
    /// between one GPU's samples) and its length; refused with no rows.
    fn finish(self, path: &str) -> Result<SoakSection, String> {
        let mut soak = self.soak;
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

    #[test]
    fn absurd_figures_are_refused_naming_line_column_and_value() {
        let head = "time_s,gpu,power_w,gpu_temp_c,mem_temp_c,rate";
        for (row, column) in [
            ("1,0,300,1e308,,", "gpu_temp_c"),
            ("1,0,-500,50,,", "power_w"),
            ("1,0,300,50,1e6,", "mem_temp_c"),
            ("1,0,300,50,,-1", "rate"),
            ("1e20,0,300,50,,", "time_s"),
        ] {
            let e = parse(&format!("{head}\n{row}\n"), "s.csv").unwrap_err();
            assert!(
                e.starts_with(&format!("s.csv line 2, column {column}")) && e.contains("range"),
                "{row}: {e}"
            );
        }
        parse(&format!("{head}\n1,0,300,50,60,700\n"), "s.csv").unwrap();
    }

    #[test]
    fn events_text_is_escaped_as_it_is_read() {
        let text = "time_s,gpu,events\n1,0,\"x\u{1b}]0;pwned\u{7}\u{202e}y\"\n";
        let s = parse(text, "s.csv").unwrap();
        let note = &s
            .events
            .iter()
            .find(|e| e.kind == SoakEventKind::Note)
            .unwrap()
            .text;
        assert!(
            !note.chars().any(crate::model::validate::unsafe_on_terminal),
            "{note}"
        );
        assert!(
            note.contains("\\u{1b}") && note.contains("\\u{202e}"),
            "{note}"
        );
    }

    #[test]
    fn alternating_phases_are_read_in_linear_time() {
        let mut text = String::from("time_s,gpu,phase\n");
        for i in 0..60_000 {
            let phase = if i % 2 == 0 { "gemm" } else { "memory" };
            text.push_str(&format!("{}.0,0,{phase}\n", i * 2 + 1));
        }
        let start = std::time::Instant::now();
        let s = parse(&text, "s.csv").unwrap();
        assert_eq!(s.samples.len(), 60_000);
        let phases = s
            .events
            .iter()
            .filter(|e| matches!(e.kind, SoakEventKind::Phase { .. }))
            .count();
        assert_eq!(phases, 60_000);
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}
