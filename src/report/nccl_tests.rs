//! nccl-tests' text output (`all_reduce_perf`, `all_gather_perf`, … as printed to stdout) read
//! into scalescope's collectives rows, with the run's source named: the tool's version, NCCL's,
//! the ranks and their hosts and GPUs, and the parameter line as printed. The JSON file that
//! `-J FILE.json` writes is read by `nccl_tests_json` into the same [`NcclTestsRun`].
//!
//! The format is the one nccl-tests' `src/util.cu` prints (github.com/NVIDIA/nccl-tests): `#`
//! header lines (`# nccl-tests version …`, `# Collective test starting: NAME`, the `# nThread …`
//! parameter line, one `#  Rank …` line per rank), a two-line column header whose names locate
//! the fields, one row per size (size, count, type, redop, root, then time, algbw, busbw and
//! `#wrong` out of place and again in place; `cputime` for `-C 1`, the per-iteration columns of
//! `-M 1`, a date and time for `-T 1`), `# Out of bounds values` and `# Avg bus bandwidth`.
//! Lines an MPI launcher tags (`[1,0]<stdout>:`) are read without the tag. Every figure is
//! checked against the bounds every other import uses; an error is one line naming the line and
//! what is wrong with it.

use super::tool_error::ToolError;
use crate::model::validate::{Bounds, GBPS, quoted};
use crate::model::{Algo, CollectiveCase, CollectiveOp, CollectiveResult, Dtype, Source, Status};

/// The most lines read (a sweep of every size from 1 B to 16 GiB is ~40 rows; a log with
/// NCCL_DEBUG=INFO of 1,440 ranks is long, but not this long).
pub const MAX_LINES: usize = 1_000_000;

/// The most ranks read from `#  Rank` lines (a cluster's: CoreWeave prints 1,440).
pub const MAX_RANKS: usize = 1 << 20;

/// Sizes nccl-tests may print: 0 B to 1 PiB.
pub(super) const BYTES: Bounds = Bounds::closed(0.0, (1u64 << 50) as f64, "B");

/// Time per operation: above 0 to one hour.
pub(super) const TIME_US: Bounds = Bounds::above(0.0, 3.6e9, "µs");

/// The element types nccl-tests names that scalescope records, as the error lists them.
pub(super) const TYPES: &str = "float, half, bfloat16, double, int32";

/// One nccl-tests run read from its text output or its JSON file.
#[derive(Clone, Debug, PartialEq)]
pub struct NcclTestsRun {
    /// The collective (from `# Collective test starting`, the JSON's command line, else the
    /// caller's hint).
    pub op: CollectiveOp,
    /// nccl-tests' version as printed (`2.19.6`); the JSON file does not say it.
    pub tool_version: Option<String>,
    /// The JSON file's format version (`3`, what 2.19.6 writes); `None` for text.
    pub json_version: Option<u32>,
    /// NCCL's version (`2.30.7`, from `nccl-library=23007` or NCCL's own `NCCL version` line).
    pub nccl: Option<String>,
    /// The parameter line as printed, without its `# ` (`nThread 1 nGpus 1 minBytes …`).
    pub parameters: Option<String>,
    /// The command line as the JSON file records it (its `args`, joined by spaces).
    pub command_line: Option<String>,
    /// When it started, as the JSON file records it (`2026-11-27 23:50:01`, the host's local
    /// time); text output prints no date.
    pub date: Option<String>,
    /// Ranks taking part.
    pub ranks: usize,
    /// The hosts of the ranks, each once, in order of first appearance.
    pub hosts: Vec<String>,
    /// The GPU name of each rank, in rank order; `None` for a rank the output does not describe
    /// (the JSON file lists the first rank of each process only).
    pub devices: Vec<Option<String>>,
    /// One row per size and placement (out of place, then in place).
    pub results: Vec<CollectiveResult>,
    /// `# Avg bus bandwidth`, GB/s.
    pub avg_busbw_gbps: Option<f64>,
    /// Rows not read, each with why (an element type scalescope does not record).
    pub not_read: Vec<String>,
}

impl NcclTestsRun {
    /// The source as a report names it: `nccl-tests 2.19.6, NCCL 2.30.7, 8 ranks on node1`.
    pub fn source_label(&self) -> String {
        let mut out = String::from("nccl-tests");
        if let Some(v) = &self.tool_version {
            out.push_str(&format!(" {v}"));
        } else if let Some(v) = self.json_version {
            out.push_str(&format!(" (JSON v{v})"));
        }
        if let Some(n) = &self.nccl {
            out.push_str(&format!(", NCCL {n}"));
        }
        out.push_str(&format!(", {} {}", self.ranks, plural(self.ranks, "rank")));
        if !self.hosts.is_empty() {
            out.push_str(&format!(
                " on {}",
                crate::model::quantities::first_of(&self.hosts, 3)
            ));
        }
        out
    }

    /// [`Self::source_label`] with the collective, the date and the command line (or the
    /// parameter line) as printed: what a report's section names as its source.
    pub fn provenance(&self) -> String {
        let mut out = format!("{}: {}_perf", self.source_label(), self.op);
        if let Some(d) = &self.date {
            out.push_str(&format!(", {d}"));
        }
        if let Some(c) = &self.command_line {
            out.push_str(&format!(", `{c}`"));
        } else if let Some(p) = &self.parameters {
            out.push_str(&format!(", \"{p}\""));
        }
        out
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// Several runs (one per collective binary, the files given together) as one report section:
/// every row, measured, the backend naming each run's source.
pub fn section(runs: &[NcclTestsRun]) -> super::CollectivesSection {
    let mut labels: Vec<String> = Vec::new();
    for r in runs {
        let l = r.provenance();
        if !labels.contains(&l) {
            labels.push(l);
        }
    }
    super::CollectivesSection {
        source: Source::Measured,
        backend: format!("imported: {}", labels.join("; ")),
        results: runs
            .iter()
            .flat_map(|r| r.results.iter().cloned())
            .collect(),
    }
}

/// The collective an nccl-tests binary runs (`all_reduce_perf` → all-reduce; a path and the
/// `_mpi` suffix of MPI builds are allowed).
pub fn op_of_binary(name: &str) -> Option<CollectiveOp> {
    let stem = name.rsplit('/').next()?.trim_end_matches("_mpi");
    Some(match stem.strip_suffix("_perf")? {
        "all_reduce" => CollectiveOp::AllReduce,
        "all_gather" => CollectiveOp::AllGather,
        "reduce_scatter" => CollectiveOp::ReduceScatter,
        "broadcast" => CollectiveOp::Broadcast,
        "alltoall" => CollectiveOp::AllToAll,
        "sendrecv" => CollectiveOp::SendRecv,
        _ => return None,
    })
}

/// The error for a binary [`op_of_binary`] does not know.
pub(super) fn not_a_collective(name: &str) -> String {
    format!(
        "{} is not a collective scalescope records (all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf, alltoall_perf, sendrecv_perf)",
        quoted(name)
    )
}

/// The element type nccl-tests names (`float`, `bfloat16`, …), where scalescope records it.
pub(super) fn dtype_of(name: &str) -> Option<Dtype> {
    Some(match name {
        "float" => Dtype::F32,
        "half" => Dtype::F16,
        "bfloat16" => Dtype::Bf16,
        "double" => Dtype::F64,
        "int32" => Dtype::I32,
        _ => return None,
    })
}

/// The note for rows of element types scalescope does not record, `skipped` naming each type
/// once with its count.
pub(super) fn skipped_note(skipped: &[(String, usize)]) -> Option<String> {
    (!skipped.is_empty()).then(|| {
        let each: Vec<String> = skipped
            .iter()
            .map(|(t, n)| format!("{n} {} row{}", quoted(t), if *n == 1 { "" } else { "s" }))
            .collect();
        format!("{} not read: scalescope records {TYPES}", each.join(", "))
    })
}

/// Counts a row of type `name` that was not read.
pub(super) fn skip(skipped: &mut Vec<(String, usize)>, name: &str) {
    match skipped.iter_mut().find(|(t, _)| t == name) {
        Some(e) => e.1 += 1,
        None => skipped.push((name.chars().take(32).collect(), 1)),
    }
}

/// `line` without an MPI launcher's tag (`[1,0]<stdout>:`).
fn untagged(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with('[')
        && let Some(at) = t.find(">:")
        && t[..at].contains("]<")
    {
        return &t[at + 2..];
    }
    line
}

/// NCCL's version from nccl-tests' `nccl-library=23007` code (major × 10000 + minor × 100 +
/// patch since 2.9).
pub(super) fn version_of_code(code: u32) -> String {
    format!("{}.{}.{}", code / 10000, (code / 100) % 100, code % 100)
}

/// True when `text` looks like nccl-tests' text output: its version line, or a results header
/// (`#  size  count  type … busbw`), within the first lines.
pub fn is_text_output(text: &str) -> bool {
    text.lines().take(10_000).any(|raw| {
        let l = untagged(raw).trim();
        l.starts_with("# nccl-tests version ")
            || (l.starts_with('#') && l.contains("busbw") && l.contains("size"))
    })
}

/// Reads nccl-tests' text output. `hint` names the collective when the output does not (before
/// 2.19 nccl-tests printed no `# Collective test starting` line): the caller takes it from the
/// file name (`all_reduce_perf.txt`, [`op_of_binary`]). Errors are one line: `line N: what`.
pub fn parse(text: &str, hint: Option<CollectiveOp>) -> Result<NcclTestsRun, ToolError> {
    let mut at = Reading::default();
    let mut results: Vec<CollectiveResult> = Vec::new();
    let mut skipped: Vec<(String, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if i >= MAX_LINES {
            return Err(ToolError::whole(format!(
                "more than {MAX_LINES} lines: not one nccl-tests run"
            )));
        }
        let n = i + 1;
        let line = untagged(raw).trim();
        if let Some(rest) = line.strip_prefix("NCCL version ") {
            // NCCL's own banner (NCCL_DEBUG=VERSION): `NCCL version 2.20.3+cuda12.3`.
            let v = rest.split(['+', ' ']).next().unwrap_or(rest);
            if at.nccl.is_none() && !v.is_empty() && v.len() <= 32 {
                at.nccl = Some(v.to_string());
            }
            continue;
        }
        let Some(comment) = line.strip_prefix('#') else {
            if line.is_empty() {
                continue;
            }
            let Some(cols) = &at.columns else {
                // Launcher and NCCL log lines before the table.
                continue;
            };
            let Some(fields) = row_fields(line, cols).map_err(|e| ToolError::at(n, e))? else {
                continue;
            };
            let op = at.op.or(hint).ok_or_else(|| {
                ToolError::at(n, "which collective is this? The output has no \"# Collective test starting\" line: name the file after the binary (all_reduce_perf.txt, …)")
            })?;
            let type_name = column(&fields, cols, "type", 0).unwrap_or("float");
            if dtype_of(type_name).is_none() {
                skip(&mut skipped, type_name);
                continue;
            }
            let ranks = at.devices.len();
            results.extend(
                row(&fields, cols, op, ranks, !at.ranks_unsure).map_err(|e| ToolError::at(n, e))?,
            );
            continue;
        };
        at.comment(comment.trim(), line)
            .map_err(|e| ToolError::at(n, e))?;
    }
    if at.columns.is_none() {
        return Err(ToolError::whole(
            "no results table (a \"#  size  count  type … busbw\" header): not nccl-tests output",
        ));
    }
    if results.is_empty() && skipped.is_empty() {
        return Err(ToolError::whole("the results table has no rows"));
    }
    if at.tool_version.is_some() && at.avg.is_none() {
        // Versions that print their version line close the table with these lines.
        return Err(ToolError::whole(
            "the table ends without nccl-tests' closing lines (\"# Avg bus bandwidth\"): a cut or unfinished output",
        ));
    }
    let op = at.op.or(hint).ok_or_else(|| {
        ToolError::whole("which collective is this? name the file after the binary")
    })?;
    let backend = at.nccl.as_ref().map(|v| format!("NCCL {v}"));
    for r in &mut results {
        r.backend_version = backend.clone();
    }
    Ok(NcclTestsRun {
        op,
        tool_version: at.tool_version,
        json_version: None,
        nccl: at.nccl,
        parameters: at.parameters,
        command_line: None,
        date: None,
        ranks: at.devices.len(),
        hosts: at.hosts,
        devices: at.devices.into_iter().map(Some).collect(),
        results,
        avg_busbw_gbps: at.avg,
        not_read: skipped_note(&skipped).into_iter().collect(),
    })
}

/// A table line's fields, one per header column (`-T 1`'s date and time, two words under one
/// `timestamp` column, as one); `Ok(None)` for a line between rows that is no row (an NCCL INFO
/// line has other words, a row has figures).
fn row_fields<'a>(line: &'a str, cols: &[String]) -> Result<Option<Vec<&'a str>>, String> {
    let mut fields: Vec<&str> = line.split_whitespace().collect();
    if cols.last().is_some_and(|c| c == "timestamp") && fields.len() == cols.len() + 1 {
        fields.pop();
    }
    if fields.len() == cols.len() {
        return Ok(Some(fields));
    }
    if fields.first().is_some_and(|f| f.parse::<u64>().is_ok()) {
        return Err(format!(
            "{} fields where the header names {}: {}",
            fields.len(),
            cols.len(),
            quoted(line)
        ));
    }
    Ok(None)
}

/// The `nth` column named `name` (`time`, `algbw`, … appear twice: out of place, in place).
fn column<'a>(fields: &[&'a str], cols: &[String], name: &str, nth: usize) -> Option<&'a str> {
    cols.iter()
        .enumerate()
        .filter(|(_, c)| c.as_str() == name)
        .nth(nth)
        .map(|(i, _)| fields[i])
}

/// What the `#` lines said so far.
#[derive(Default)]
struct Reading {
    op: Option<CollectiveOp>,
    tool_version: Option<String>,
    nccl: Option<String>,
    parameters: Option<String>,
    hosts: Vec<String>,
    devices: Vec<String>,
    /// The rank lines do not give the ranks busbw was computed for: more than one `Group`
    /// (`NCCL_TESTS_SPLIT`: busbw is the group's) or a line cut short (`...`).
    ranks_unsure: bool,
    /// The table header's column names, once seen.
    columns: Option<Vec<String>>,
    avg: Option<f64>,
}

impl Reading {
    /// One `#` line (`comment` without its `#`; `line` whole, for errors).
    fn comment(&mut self, comment: &str, line: &str) -> Result<(), String> {
        if let Some(rest) = comment.strip_prefix("nccl-tests version ") {
            let mut words = rest.split_whitespace();
            self.tool_version = words.next().map(|v| v.chars().take(32).collect());
            for w in words {
                if let Some(code) = w.strip_prefix("nccl-library=")
                    && let Ok(code) = code.parse::<u32>()
                {
                    self.nccl.get_or_insert_with(|| version_of_code(code));
                }
            }
        } else if let Some(rest) = comment.strip_prefix("Collective test starting:") {
            let name = rest.trim();
            self.op = Some(op_of_binary(name).ok_or_else(|| not_a_collective(name))?);
        } else if comment.starts_with("nThread ") {
            self.parameters = Some(comment.chars().take(400).collect());
        } else if let Some(rest) = comment.strip_prefix("Rank ") {
            self.rank(rest, line)?;
        } else if comment.starts_with("(B)") {
            // The units under the header: nccl-tests prints these and no others.
            if let Some(u) = comment.split_whitespace().find(|u| {
                !matches!(*u, "(B)" | "(elements)" | "(us)" | "(GB/s)" | "(%)")
                    && !u.starts_with("%Y")
                    && !u.starts_with("%H")
            }) {
                return Err(format!(
                    "unit {}: nccl-tests prints sizes in B, times in us and bandwidths in GB/s",
                    quoted(u)
                ));
            }
        } else if comment.contains("busbw") && comment.contains("size") {
            self.columns = Some(header(comment));
        } else if let Some(rest) = comment.strip_prefix("Avg bus bandwidth") {
            let v = rest
                .trim_start_matches([' ', ':'])
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or_else(|| format!("no figure in {}", quoted(line)))?;
            self.avg = Some(
                GBPS.check(v)
                    .map_err(|e| format!("Avg bus bandwidth: {e}"))?,
            );
        }
        Ok(())
    }

    /// `Rank  0 Group  0 Pid 249104 on node1 device  0 [0000:00:05] NVIDIA B200` (after
    /// `Rank `).
    fn rank(&mut self, rest: &str, line: &str) -> Result<(), String> {
        if self.devices.len() >= MAX_RANKS {
            return Err(format!("more than {MAX_RANKS} ranks"));
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        let group = words
            .iter()
            .position(|w| *w == "Group")
            .and_then(|p| words.get(p + 1));
        if group.is_some_and(|g| *g != "0") || rest.trim_end().ends_with("...") {
            self.ranks_unsure = true;
        }
        let host = words
            .iter()
            .position(|w| *w == "on")
            .and_then(|p| words.get(p + 1))
            .ok_or_else(|| format!("a rank line without its host: {}", quoted(line)))?;
        let name = rest
            .find(']')
            .map(|p| rest[p + 1..].trim())
            .unwrap_or_default();
        if !self.hosts.iter().any(|h| h == host) {
            self.hosts.push(host.chars().take(128).collect());
        }
        self.devices.push(name.chars().take(128).collect());
        Ok(())
    }
}

/// The header's column names, the out-of-place and in-place groups told apart by position
/// (`time` or `cputime`, `algbw`, `busbw`, `#wrong` or `error`, twice).
fn header(comment: &str) -> Vec<String> {
    comment
        .split_whitespace()
        .map(|c| if c == "cputime" { "time" } else { c }.to_string())
        .collect()
}

/// The figures of one placement as read: time (µs), algbw and busbw (GB/s), wrong elements
/// (`None`: not checked).
pub(super) struct Placement {
    pub time_us: Option<f64>,
    pub algbw: Option<f64>,
    pub busbw: Option<f64>,
    pub wrong: Option<u64>,
}

/// The row of one size and placement, as every import of nccl-tests makes it.
pub(super) fn result(
    op: CollectiveOp,
    ranks: usize,
    bytes: u64,
    dtype: Dtype,
    in_place: bool,
    p: Placement,
) -> CollectiveResult {
    let gpus: Vec<usize> = (0..ranks.max(1)).collect();
    let mut r = CollectiveResult::empty(
        CollectiveCase {
            op,
            algo: Algo::Nccl,
            gpus: &gpus,
            bytes,
            dtype,
            in_place,
        },
        Source::Measured,
        if p.wrong.is_some_and(|w| w > 0) {
            Status::Failed
        } else {
            Status::Ok
        },
        "",
    );
    r.reason = p
        .wrong
        .filter(|w| *w > 0)
        .map(|w| format!("nccl-tests found {w} wrong elements"));
    r.time_us = p.time_us;
    r.algbw_gbps = p.algbw;
    r.busbw_gbps = p.busbw;
    r.wrong = p.wrong;
    r.processes = ranks.max(1);
    r
}

/// A `#wrong` count as printed (`%g`: `0`, `1e+06`), `None` for `N/A`.
pub(super) fn wrong_count(v: f64) -> Option<u64> {
    (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 1e18).then_some(v as u64)
}

/// nccl-tests prints busbw as algbw × the op's factor for its rank count (doc/PERFORMANCE.md in
/// github.com/NVIDIA/nccl-tests), both to two decimals: a row where they disagree by more than
/// that rounding was edited or is not nccl-tests' (checked only where the rank lines give the
/// ranks: one group, no line cut short).
pub(super) fn bus_follows_alg(op: CollectiveOp, ranks: usize, p: &Placement) -> Result<(), String> {
    let (Some(alg), Some(bus)) = (p.algbw, p.busbw) else {
        return Ok(());
    };
    if ranks == 0 {
        return Ok(());
    }
    let factor = op.busbw_factor(ranks);
    let want = alg * factor;
    // Each figure rounded to 0.005 GB/s; busbw from the unrounded algbw.
    if (bus - want).abs() > 0.005 * (1.0 + factor) + 1e-3 * want {
        return Err(format!(
            "busbw {bus} GB/s is not algbw {alg} × {factor:.3} (nccl-tests' factor for \
             {ranks} ranks = {want:.2}): an edited row, or not nccl-tests output"
        ));
    }
    Ok(())
}

/// One data row: its out-of-place and in-place results.
/// `check_bus`: whether `ranks` are the ranks busbw was computed for (see `bus_follows_alg`).
fn row(
    fields: &[&str],
    cols: &[String],
    op: CollectiveOp,
    ranks: usize,
    check_bus: bool,
) -> Result<Vec<CollectiveResult>, String> {
    let at = |name: &str, nth: usize| column(fields, cols, name, nth);
    let size = at("size", 0).ok_or("the header has no size column")?;
    let bytes = size
        .parse::<u64>()
        .map_err(|_| format!("size {} is not a byte count", quoted(size)))?;
    BYTES
        .check(bytes as f64)
        .map_err(|e| format!("size: {e}"))?;
    let type_name = at("type", 0).unwrap_or("float");
    let dtype = dtype_of(type_name).ok_or_else(|| {
        format!(
            "type {} is not one scalescope records ({TYPES})",
            quoted(type_name)
        )
    })?;
    let mut out = Vec::new();
    for (group, in_place) in [(0, false), (1, true)] {
        if at("time", group).is_none() {
            continue;
        }
        let figure = |name: &str, b: Bounds| -> Result<Option<f64>, String> {
            let Some(s) = at(name, group) else {
                return Ok(None);
            };
            let v = s
                .parse::<f64>()
                .map_err(|_| format!("{name} {} is not a number", quoted(s)))?;
            b.check(v).map(Some).map_err(|e| format!("{name}: {e}"))
        };
        let wrong = match at("#wrong", group) {
            None | Some("N/A") => None,
            Some(w) => Some(
                w.parse::<f64>()
                    .ok()
                    .and_then(wrong_count)
                    .ok_or_else(|| format!("#wrong {} is not a count", quoted(w)))?,
            ),
        };
        let p = Placement {
            time_us: figure("time", TIME_US)?,
            algbw: figure("algbw", GBPS)?,
            busbw: figure("busbw", GBPS)?,
            wrong,
        };
        if check_bus {
            bus_follows_alg(op, ranks, &p)?;
        }
        out.push(result(op, ranks, bytes, dtype, in_place, p));
    }
    if out.is_empty() {
        return Err("the header has no time column".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Constructed from the format nccl-tests 2.19.6 prints (src/util.cu), not a device's output:
    /// 8 ranks on one host, two sizes.
    const CONSTRUCTED_2_19_6: &str = "\
# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22809
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 2147483648 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid   1000 on      hostA device  0 [0000:18:00] NVIDIA H200
#  Rank  1 Group  0 Pid   1001 on      hostA device  1 [0000:2a:00] NVIDIA H200
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
  1073741824     268435456     float     sum      -1   4000.0  268.44  268.44       0   3990.0  269.11  269.11       0
  2147483648     536870912     float     sum      -1   7900.0  271.84  271.84       0   7895.5  271.99  271.99     N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 270.345
#
# Collective test concluded: all_reduce_perf
";

    #[test]
    fn a_2_19_6_table_gives_every_figure_it_prints() {
        let run = parse(CONSTRUCTED_2_19_6, None).unwrap();
        assert_eq!(run.op, CollectiveOp::AllReduce);
        assert_eq!(run.tool_version.as_deref(), Some("2.19.6"));
        assert_eq!(run.nccl.as_deref(), Some("2.28.9"));
        assert_eq!(run.ranks, 2);
        assert_eq!(run.hosts, vec!["hostA"]);
        assert_eq!(
            run.devices,
            vec![
                Some("NVIDIA H200".to_string()),
                Some("NVIDIA H200".to_string())
            ]
        );
        assert_eq!(run.avg_busbw_gbps, Some(270.345));
        assert_eq!(run.results.len(), 4);
        let r = &run.results[3];
        assert!(r.in_place);
        assert_eq!(r.bytes, 2147483648);
        assert_eq!(r.time_us, Some(7895.5));
        assert_eq!(r.algbw_gbps, Some(271.99));
        assert_eq!(r.busbw_gbps, Some(271.99));
        assert_eq!(r.wrong, None);
        assert_eq!(r.dtype, Dtype::F32);
        assert_eq!(r.gpus, vec![0, 1]);
        assert_eq!(r.backend_version.as_deref(), Some("NCCL 2.28.9"));
        assert_eq!(run.results[0].wrong, Some(0));
        assert!(run.results.iter().all(|r| r.status == Status::Ok));
        assert_eq!(
            run.source_label(),
            "nccl-tests 2.19.6, NCCL 2.28.9, 2 ranks on hostA"
        );
    }

    /// Constructed: an older table (no version line, no test name, an `error` column), lines
    /// tagged by mpirun, NCCL's own version banner.
    #[test]
    fn an_older_tagged_table_reads_with_the_binary_named() {
        let text = "\
[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
[1,0]<stdout>:#  Rank  0 Pid  1 on a device  0 [0x0a] NVIDIA H100 80GB HBM3
[1,0]<stdout>:#  Rank  1 Pid  2 on b device  0 [0x0a] NVIDIA H100 80GB HBM3
[1,0]<stdout>:NCCL version 2.18.5+cuda12.2
[1,0]<stdout>:#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error
[1,0]<stdout>:           8             2     float     sum    12.90    0.00    0.00  0e+00    12.87    0.00    0.00  0e+00
";
        assert!(
            parse(text, None)
                .unwrap_err()
                .to_string()
                .contains("which collective")
        );
        let run = parse(text, op_of_binary("all_reduce_perf")).unwrap();
        assert_eq!(run.nccl.as_deref(), Some("2.18.5"));
        assert_eq!(run.hosts, vec!["a", "b"]);
        assert_eq!(run.results.len(), 2);
        assert_eq!(run.results[0].time_us, Some(12.9));
        assert_eq!(run.results[0].wrong, None);
    }

    /// The imported rows stand beside the published figures as measured ones do: 2 ranks of
    /// H200 against the HGX H200's 8-GPU figures, the GPU count named as a difference.
    #[test]
    fn an_imported_table_is_a_section_with_published_figures_beside_it() {
        let run = parse(CONSTRUCTED_2_19_6, None).unwrap();
        let s = section(std::slice::from_ref(&run));
        assert_eq!(s.source, Source::Measured);
        assert_eq!(
            s.backend,
            "imported: nccl-tests 2.19.6, NCCL 2.28.9, 2 ranks on hostA: all_reduce_perf, \"nThread 1 nGpus 1 minBytes 1073741824 maxBytes 2147483648 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\""
        );
        assert_eq!(s.results.len(), 4);
        crate::model::check_collective_figures(&s.results, "collectives.results").unwrap();
        let mut topo = crate::topology::catalog::load("h200-2x-sxm").unwrap();
        topo.source = crate::model::TopologySource::Imported {
            paths: vec!["all_reduce_perf.txt".into()],
        };
        let list = crate::report::published::beside(&topo, &[], &s.results);
        let azure = list
            .iter()
            .find(|b| b.reference.value == 479.98)
            .expect("Azure's ND H200 v5 all-reduce");
        let ours = azure.ours.as_ref().unwrap();
        assert_eq!(ours.value, 271.99);
        assert!(
            azure.line().contains("differs: 8 GPUs there, 2 GPUs here"),
            "{}",
            azure.line()
        );
    }

    #[test]
    fn hostile_tables_are_one_line_errors() {
        for (from, to, want) in [
            (
                "268.44  268.44       0   3990",
                "268.44  1e300       0   3990",
                "line 12: busbw: 1e300 GB/s is out of range",
            ),
            (
                "268.44  268.44       0   3990",
                "268.44  999.99       0   3990",
                "line 12: busbw 999.99 GB/s is not algbw 268.44 × 1.000",
            ),
            ("4000.0", "-4000", "line 12: time: -4000 µs is out of range"),
            ("4000.0", "NaN", "line 12: time: NaN µs is out of range"),
            (
                "  1073741824     268435456",
                "  1073741824 9 268435456",
                "line 12: 14 fields where the header names 13",
            ),
            (
                "all_reduce_perf\n# nThread",
                "gather_perf\n# nThread",
                "line 2: \"gather_perf\" is not a collective",
            ),
            ("270.345", "fast", "line 15: no figure"),
            (
                "(GB/s)  (GB/s)             (us)",
                "(MB/s)  (GB/s)             (us)",
                "line 11: unit \"(MB/s)\"",
            ),
            (
                "# Avg bus bandwidth    : 270.345\n",
                "",
                "ends without nccl-tests' closing lines",
            ),
            (
                "       0   3990",
                "      -3   3990",
                "#wrong \"-3\" is not a count",
            ),
        ] {
            let text = CONSTRUCTED_2_19_6.replacen(from, to, 1);
            let e = parse(&text, None).unwrap_err().to_string();
            assert!(e.contains(want), "{to}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(
            parse("hello\n", None)
                .unwrap_err()
                .to_string()
                .contains("not nccl-tests output")
        );
        let head_only: String = CONSTRUCTED_2_19_6
            .lines()
            .take(11)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            parse(&head_only, None)
                .unwrap_err()
                .to_string()
                .contains("no rows")
        );
        // A control character in a host name is kept out of the label's terminal line by the
        // caller's escaping; here the name is cut at 128 characters.
        let long = CONSTRUCTED_2_19_6.replace("hostA", &"h".repeat(500));
        assert_eq!(parse(&long, None).unwrap().hosts[0].len(), 128);
    }

    /// A split run (`NCCL_TESTS_SPLIT`: rank lines in two groups) computes busbw for one group's
    /// ranks, not the ranks listed: its rows are read, not refused as edited.
    #[test]
    fn a_split_run_is_read_without_the_bus_check() {
        let edited = CONSTRUCTED_2_19_6.replacen("268.44  268.44", "268.44  999.99", 1);
        assert!(parse(&edited, None).is_err());
        let split = edited.replace("Rank  1 Group  0", "Rank  1 Group  1");
        let run = parse(&split, None).unwrap();
        assert!(run.results.iter().any(|r| r.busbw_gbps == Some(999.99)));
    }

    /// Constructed: `-d all` prints rows of types scalescope does not record; they are counted
    /// in a note, the others read; `-T 1`'s timestamp (a date and a time) and `-C 1`'s cputime.
    #[test]
    fn other_types_are_noted_and_timestamps_and_cputime_read() {
        let text = CONSTRUCTED_2_19_6
            .replace("#wrong\n#        (B)", "#wrong  timestamp\n#        (B)")
            .replace(
                "       0   3990.0  269.11  269.11       0\n",
                "       0   3990.0  269.11  269.11       0 2026-11-27 23:50:01\n",
            )
            .replace("   time  ", "cputime  ")
            .replacen("     float     sum", "      int8     sum", 1);
        let text = text.replace("     N/A\n", "     N/A 2026-11-27 23:50:02\n");
        let run = parse(&text, None).unwrap();
        assert_eq!(run.results.len(), 2, "{:?}", run.not_read);
        assert_eq!(run.results[1].time_us, Some(7895.5));
        assert_eq!(
            run.not_read,
            vec![
                "1 \"int8\" row not read: scalescope records float, half, bfloat16, double, int32"
            ]
        );
    }
}
