//! nvbandwidth's output (plain text, and the `-j` JSON) read into scalescope's bandwidth rows,
//! with the run's source named: nvbandwidth's version, the driver, CUDA, the host and GPUs.
//!
//! The formats are the ones nvbandwidth 0.8 prints (github.com/NVIDIA/nvbandwidth: `output.cpp`,
//! `json_output.cpp`, `inline_common.h`): a `Running NAME.` line per testcase, the matrix's
//! description (`memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)`; the arrow says which way
//! the bytes went), a header of column indices, one row per row label with `N/A` where a cell
//! does not apply, and `SUM NAME value`; in JSON the same under `nvbandwidth.testcases[]`
//! (`name`, `status`, `bandwidth_description`, `bandwidth_matrix` of strings). A testcase
//! scalescope has no counterpart for (the SM host copies, the multinode tests, each direction
//! of a bidirectional pair) is listed in `not_read` with why, never forced onto another test.

use super::tool_error::ToolError;
use crate::model::validate::{Bounds, GBPS, quoted};
use crate::model::{BandwidthResult, Endpoint, Source, Status, TestId};

/// nvbandwidth's default buffer (`-b 512`, MiB): the size its text output does not print.
pub const DEFAULT_BUFFER_BYTES: u64 = 512 << 20;

/// The buffer of nvbandwidth's latency testcases, whatever `-b` says (nvbandwidth.cpp runs
/// `host_device_latency_sm` and `device_to_device_latency_sm` on 2 MiB).
pub const LATENCY_BUFFER_BYTES: u64 = 2 << 20;

/// The largest input read, bytes.
pub const MAX_BYTES: usize = 64 << 20;

/// Latencies: above 0 to one second.
const LATENCY_NS: Bounds = Bounds::above(0.0, 1e9, "ns");

/// The most rows or columns a matrix may have (GPUs of one process's view).
const MAX_CELLS: usize = crate::model::MAX_GPUS;

/// One nvbandwidth run read from its output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NvbandwidthRun {
    /// `v0.8` as printed.
    pub version: Option<String>,
    pub driver: Option<String>,
    /// CUDA runtime version as printed (`12060`).
    pub cuda: Option<String>,
    pub host: Option<String>,
    /// GPU names by index.
    pub devices: Vec<String>,
    /// Every cell of every testcase scalescope has a counterpart for.
    pub results: Vec<BandwidthResult>,
    /// Testcases not read, each with why.
    pub not_read: Vec<String>,
    /// Each matrix's `SUM` as printed (the JSON's `sum`): testcase and value, in order.
    pub sums: Vec<(String, f64)>,
}

impl NvbandwidthRun {
    /// The source as a report names it: `nvbandwidth v0.8, driver 550.127.08 on host`.
    pub fn source_label(&self) -> String {
        let mut out = format!(
            "nvbandwidth{}",
            self.version
                .as_deref()
                .map(|v| format!(" {v}"))
                .unwrap_or_default()
        );
        if let Some(d) = &self.driver {
            out.push_str(&format!(", driver {d}"));
        }
        if let Some(h) = &self.host {
            out.push_str(&format!(" on {h}"));
        }
        out
    }
}

impl NvbandwidthRun {
    /// The run as a report section: every cell, measured, the backend naming the source.
    pub fn section(&self) -> super::BandwidthSection {
        super::BandwidthSection {
            source: Source::Measured,
            backend: format!("imported: {}", self.source_label()),
            results: self.results.clone(),
        }
    }
}

/// The scalescope test an nvbandwidth testcase measures the same way, where there is one.
/// Bidirectional device-to-device tests are read from their `Total` matrix (both directions
/// together, as scalescope's `p2p_bidir_*` figure is).
pub fn test_of(name: &str) -> Option<TestId> {
    Some(match name {
        "host_to_device_memcpy_ce" => TestId::H2d,
        "device_to_host_memcpy_ce" => TestId::D2h,
        "host_to_device_bidirectional_memcpy_ce" => TestId::H2dBidir,
        "device_to_host_bidirectional_memcpy_ce" => TestId::D2hBidir,
        "device_to_device_memcpy_read_ce" => TestId::P2pReadCe,
        "device_to_device_memcpy_write_ce" => TestId::P2pWriteCe,
        "device_to_device_bidirectional_memcpy_read_ce" => TestId::P2pBidirCe,
        "device_to_device_memcpy_read_sm" => TestId::P2pReadSm,
        "device_to_device_memcpy_write_sm" => TestId::P2pWriteSm,
        "device_to_device_bidirectional_memcpy_read_sm" => TestId::P2pBidirSm,
        "device_local_copy" => TestId::LocalCopy,
        "host_to_all_memcpy_ce" => TestId::HostToAll,
        "all_to_host_memcpy_ce" => TestId::AllToHost,
        "device_to_device_latency_sm" => TestId::LatencyD2d,
        "host_device_latency_sm" => TestId::LatencyH2d,
        _ => return None,
    })
}

/// One printed matrix: its testcase, description and cells (`None` for `N/A`), and the input
/// line each row is on (text: the row's; JSON: the testcase's name).
struct Matrix {
    test: String,
    description: String,
    rows: Vec<Vec<Option<f64>>>,
    lines: Vec<usize>,
}

/// True when `text` looks like nvbandwidth's output: its JSON object, or its version line or a
/// `Running …` line within the first lines.
pub fn is_output(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('{') {
        let head: String = t.chars().take(256).filter(|c| !c.is_whitespace()).collect();
        return head.starts_with("{\"nvbandwidth\":");
    }
    t.lines().take(200).any(|l| {
        let l = l.trim();
        l.starts_with("nvbandwidth Version:")
            || (l.starts_with("Running ") && (l.ends_with("_ce.") || l.ends_with("_sm.")))
    })
}

/// Reads nvbandwidth's output, text or JSON (told apart by the first character). `bytes` is the
/// buffer size it ran with (`-b`), [`DEFAULT_BUFFER_BYTES`] unless the caller knows better.
/// Errors are one line.
pub fn parse(text: &str, bytes: u64) -> Result<NvbandwidthRun, ToolError> {
    if text.len() > MAX_BYTES {
        return Err(ToolError::whole(format!(
            "larger than {} MiB: not one nvbandwidth run",
            MAX_BYTES >> 20
        )));
    }
    let (mut run, matrices) = if text.trim_start().starts_with('{') {
        parse_json(text)?
    } else {
        parse_text(text)?
    };
    let mut seen: Vec<String> = Vec::new();
    for m in &matrices {
        if seen.contains(&m.test) && !m.description.contains("Total") {
            continue;
        }
        match cells(m, bytes)? {
            Ok(rows) => run.results.extend(rows),
            Err(why) => {
                // One direction of a pair whose Total matrix is read is no testcase left out.
                let total_read = matrices
                    .iter()
                    .any(|o| o.test == m.test && o.description.contains("Total"));
                let bidir_total = total_read && test_of(&m.test).is_some();
                if !bidir_total && !run.not_read.iter().any(|n| n.starts_with(&m.test)) {
                    run.not_read.push(format!("{}: {why}", m.test));
                }
            }
        }
        seen.push(m.test.clone());
    }
    if run.results.is_empty() && run.not_read.is_empty() {
        return Err(ToolError::whole(
            "no testcase results (a \"Running NAME.\" line and its matrix): not nvbandwidth output",
        ));
    }
    Ok(run)
}

/// A matrix's rows as results; `Ok(Err(why))` for a testcase scalescope does not read.
fn cells(m: &Matrix, bytes: u64) -> Result<Result<Vec<BandwidthResult>, String>, ToolError> {
    let on_row = |r: usize, message: String| match m.lines.get(r).or(m.lines.first()) {
        Some(&line) => ToolError::at(line, message),
        None => ToolError::whole(message),
    };
    let Some(test) = test_of(&m.test) else {
        return Ok(Err("no scalescope test measures it the same way".into()));
    };
    let bidir_d2d = matches!(test, TestId::P2pBidirCe | TestId::P2pBidirSm);
    if bidir_d2d && !m.description.contains("Total") {
        return Ok(Err(
            "one direction of a pair; the Total matrix is read".into()
        ));
    }
    let latency = test.is_latency();
    let unit_ok = if latency {
        m.description.ends_with("(ns)")
    } else {
        m.description.ends_with("(GB/s)")
    };
    if !unit_ok {
        return Err(on_row(
            0,
            format!(
                "{}: description {} does not give the unit expected",
                m.test,
                quoted(&m.description)
            ),
        ));
    }
    // `A(row) -> B(column)`: bytes go from the row's end to the column's; `<-` the other way.
    let from_column = m.description.contains("(row) <- ");
    let host_row = m.description.contains("CPU(row)");
    let mut out = Vec::new();
    for (r, row) in m.rows.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            let Some(v) = *v else { continue };
            let row_end = if host_row {
                Endpoint::Host
            } else {
                Endpoint::Gpu(r)
            };
            let (src, dst) = match test {
                TestId::LocalCopy => (Endpoint::Gpu(c), Endpoint::Gpu(c)),
                TestId::LatencyD2d => (Endpoint::Gpu(c), Endpoint::Gpu(r)),
                TestId::LatencyH2d => (Endpoint::Gpu(c), Endpoint::Host),
                _ if from_column => (Endpoint::Gpu(c), row_end),
                _ => (row_end, Endpoint::Gpu(c)),
            };
            let checked = if latency {
                LATENCY_NS.check(v)
            } else {
                GBPS.check(v)
            }
            .map_err(|e| on_row(r, format!("{} [{r}][{c}]: {e}", m.test)))?;
            let mut x = BandwidthResult::empty(
                test,
                src,
                dst,
                if latency { LATENCY_BUFFER_BYTES } else { bytes },
                Source::Measured,
                Status::Ok,
                format!("nvbandwidth {}", m.test),
            );
            if latency {
                x.latency_ns = Some(checked);
            } else {
                x.median_gbps = Some(checked);
            }
            out.push(x);
        }
    }
    Ok(Ok(out))
}

fn cell(s: &str) -> Result<Option<f64>, String> {
    if s == "N/A" {
        return Ok(None);
    }
    s.parse::<f64>()
        .map(Some)
        .map_err(|_| format!("cell {} is not a figure or N/A", quoted(s)))
}

/// The run being read from text: the testcase running, the matrix open (with its header's
/// column count, once seen) and the one whose `SUM` line is still to come.
#[derive(Default)]
struct TextReading {
    running: Option<String>,
    open: Option<(Matrix, Option<usize>)>,
    awaiting_sum: Option<(String, usize)>,
}

impl TextReading {
    /// Line `t` (number `n`) while a matrix is open: its header, a row (`Ok(true)`: the line is
    /// taken), or the blank or `SUM` line that closes it into `matrices` (`Ok(false)`: read on).
    fn in_matrix(
        &mut self,
        t: &str,
        n: usize,
        matrices: &mut Vec<Matrix>,
    ) -> Result<bool, ToolError> {
        let Some((m, header)) = &mut self.open else {
            return Ok(false);
        };
        let Some(columns) = *header else {
            let columns = t.split_whitespace().count();
            if columns == 0 || columns > MAX_CELLS {
                return Err(ToolError::at(
                    n,
                    format!("{}: no column header under its description", m.test),
                ));
            }
            *header = Some(columns);
            return Ok(true);
        };
        if t.is_empty() || t.starts_with("SUM ") || t.starts_with("&&&&") {
            let (m, _) = self.open.take().expect("open");
            self.awaiting_sum = Some((m.test.clone(), n));
            matrices.push(m);
            return Ok(false);
        }
        let mut words = t.split_whitespace();
        words.next(); // the row label
        let row: Vec<Option<f64>> = words
            .map(cell)
            .collect::<Result<_, _>>()
            .map_err(|e| ToolError::at(n, e))?;
        if row.len() != columns {
            return Err(ToolError::at(
                n,
                format!(
                    "{}: {} cells where the header names {columns} columns (a cut or edited matrix)",
                    m.test,
                    row.len()
                ),
            ));
        }
        if m.rows.len() >= MAX_CELLS {
            return Err(ToolError::at(n, format!("a matrix above {MAX_CELLS} GPUs")));
        }
        m.rows.push(row);
        m.lines.push(n);
        Ok(true)
    }
}

fn parse_text(text: &str) -> Result<(NvbandwidthRun, Vec<Matrix>), ToolError> {
    let mut run = NvbandwidthRun::default();
    let mut matrices: Vec<Matrix> = Vec::new();
    let mut at = TextReading::default();
    let mut previous = "";
    let short = |s: &str| s.chars().take(128).collect::<String>();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if at.in_matrix(t, n, &mut matrices)? {
            previous = t;
            continue;
        }
        if let Some(rest) = t
            .strip_prefix("SUM ")
            .or_else(|| t.strip_prefix("&&&& PERF "))
        {
            sum_line(&mut run, &mut at, rest, n)?;
        } else if let Some(v) = t.strip_prefix("nvbandwidth Version:") {
            run.version = Some(short(v.trim()));
        } else if let Some(v) = t.strip_prefix("Driver Version:") {
            run.driver = Some(short(v.trim()));
        } else if let Some(v) = t.strip_prefix("CUDA Runtime Version:") {
            run.cuda = Some(short(v.trim()));
        } else if let Some(rest) = t.strip_prefix("Device ")
            && let Some((index, name)) = rest.split_once(": ")
            && index.parse::<usize>().is_ok()
        {
            if run.devices.is_empty() && !previous.is_empty() && !previous.contains(':') {
                run.host = Some(short(previous));
            }
            if run.devices.len() >= MAX_CELLS {
                return Err(ToolError::at(n, format!("more than {MAX_CELLS} devices")));
            }
            let name = name.rsplit_once(" (").map_or(name, |(n, _)| n);
            run.devices.push(short(name));
        } else if let Some(name) = t.strip_prefix("Running ") {
            if let Some((test, _)) = &at.awaiting_sum {
                return Err(ToolError::at(
                    n,
                    format!("{test}: its matrix has no SUM line (a cut or edited output)"),
                ));
            }
            at.running = Some(short(name.trim_end_matches('.')));
        } else if let Some(status) = t.strip_prefix("ERROR:")
            && let Some(name) = &at.running
        {
            run.not_read
                .push(format!("{name}: nvbandwidth: {}", short(status.trim())));
        } else if let Some(name) = &at.running
            && (t.ends_with("(GB/s)") || t.ends_with("(ns)"))
        {
            at.open = Some((
                Matrix {
                    test: name.clone(),
                    description: short(t),
                    rows: Vec::new(),
                    lines: Vec::new(),
                },
                None,
            ));
        } else if let Some(name) = &at.running
            && t.contains(" bandwidth (")
            && t.ends_with(')')
        {
            return Err(ToolError::at(
                n,
                format!(
                    "{name}: {}: nvbandwidth prints GB/s (or ns for latencies)",
                    quoted(t)
                ),
            ));
        }
        previous = t;
    }
    if let Some((m, _)) = &at.open {
        return Err(ToolError::whole(format!(
            "the output ends inside {}'s matrix (a cut output)",
            m.test
        )));
    }
    if let Some((test, _)) = &at.awaiting_sum {
        return Err(ToolError::whole(format!(
            "the output ends before {test}'s SUM line (a cut output)"
        )));
    }
    Ok((run, matrices))
}

/// `SUM NAME value` (or `&&&& PERF NAME value…`), after `SUM `: the printed sum of the matrix
/// just read.
fn sum_line(
    run: &mut NvbandwidthRun,
    at: &mut TextReading,
    rest: &str,
    n: usize,
) -> Result<(), ToolError> {
    let mut words = rest.split_whitespace();
    let (Some(name), Some(value)) = (words.next(), words.next()) else {
        return Err(ToolError::at(
            n,
            format!("a SUM line without its figure: {}", quoted(rest)),
        ));
    };
    let digits = value.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '/');
    let v = digits
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0 && *v <= 1e9)
        .ok_or_else(|| {
            ToolError::at(
                n,
                format!("SUM {}: {} is not a figure", quoted(name), quoted(value)),
            )
        })?;
    if run.sums.len() < 4 * MAX_CELLS {
        run.sums.push((name.chars().take(128).collect(), v));
    }
    at.awaiting_sum = None;
    Ok(())
}

/// `GPU Device list`: `0: NVIDIA H200 (00000000:18:00): (host)` each.
fn devices_of(root: &serde_json::Value, run: &mut NvbandwidthRun) {
    for d in root
        .get("GPU Device list")
        .and_then(|d| d.as_array())
        .into_iter()
        .flatten()
        .take(MAX_CELLS)
    {
        let Some(d) = d.as_str() else { continue };
        let rest = d.split_once(": ").map_or(d, |(_, r)| r);
        if let Some((_, host)) = rest.rsplit_once(": (") {
            run.host
                .get_or_insert_with(|| host.trim_end_matches(')').chars().take(128).collect());
        }
        let name = rest.split(" (").next().unwrap_or(rest);
        run.devices.push(name.chars().take(128).collect());
    }
}

/// The line of the JSON text where testcase `name` is named (`"name" : "NAME"`), if any.
fn line_of(text: &str, name: &str) -> Option<usize> {
    let quoted_name = format!("\"{name}\"");
    text.lines()
        .position(|l| l.contains("\"name\"") && l.contains(&quoted_name))
        .map(|i| i + 1)
}

/// A testcase's `bandwidth_matrix` (rows of strings: figures or `N/A`); errors through `at`,
/// which names the testcase.
fn json_rows(
    rows: &[serde_json::Value],
    at: &dyn Fn(&str) -> ToolError,
) -> Result<Vec<Vec<Option<f64>>>, ToolError> {
    let mut parsed: Vec<Vec<Option<f64>>> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let row = row
            .as_array()
            .ok_or_else(|| at(&format!("bandwidth_matrix[{r}] is not a row")))?;
        if row.len() > MAX_CELLS {
            return Err(at(&format!(
                "bandwidth_matrix[{r}]: above {MAX_CELLS} GPUs"
            )));
        }
        parsed.push(
            row.iter()
                .map(|c| cell(c.as_str().unwrap_or("?")))
                .collect::<Result<_, _>>()
                .map_err(|e| at(&format!("bandwidth_matrix[{r}]: {e}")))?,
        );
    }
    Ok(parsed)
}

fn parse_json(text: &str) -> Result<(NvbandwidthRun, Vec<Matrix>), ToolError> {
    let v: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| ToolError::at(e.line(), format!("not JSON nvbandwidth wrote: {e}")))?;
    let root = v
        .get("nvbandwidth")
        .ok_or_else(|| ToolError::whole("no \"nvbandwidth\" object: not nvbandwidth -j output"))?;
    let s = |key: &str| -> Option<String> {
        match root.get(key)? {
            serde_json::Value::String(s) => Some(s.chars().take(128).collect()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let mut run = NvbandwidthRun {
        version: s("version"),
        driver: s("Driver Version"),
        cuda: s("CUDA Runtime Version"),
        ..Default::default()
    };
    devices_of(root, &mut run);
    let mut matrices = Vec::new();
    let cases = root
        .get("testcases")
        .and_then(|t| t.as_array())
        .ok_or_else(|| ToolError::whole("no \"testcases\" array"))?;
    for (i, case) in cases.iter().enumerate() {
        let line = case
            .get("name")
            .and_then(|n| n.as_str())
            .and_then(|n| line_of(text, n));
        let at = |what: &str| {
            let message = format!("testcases[{i}].{what}");
            match line {
                Some(l) => ToolError::at(l, message),
                None => ToolError::whole(message),
            }
        };
        let name = case
            .get("name")
            .and_then(|n| n.as_str())
            .ok_or_else(|| at("name is missing"))?;
        let status = case.get("status").and_then(|s| s.as_str()).unwrap_or("");
        if status != "Passed" {
            run.not_read.push(format!(
                "{}: {}",
                name.chars().take(128).collect::<String>(),
                if status.is_empty() {
                    "no status"
                } else {
                    status
                }
            ));
            continue;
        }
        if let Some(sum) = case.get("sum").filter(|v| !v.is_null()) {
            let v = sum
                .as_f64()
                .filter(|v| v.is_finite() && *v >= 0.0 && *v <= 1e9)
                .ok_or_else(|| {
                    at(&format!(
                        "sum: {} is not a figure",
                        quoted(&sum.to_string())
                    ))
                })?;
            if run.sums.len() < 4 * MAX_CELLS {
                run.sums.push((name.chars().take(128).collect(), v));
            }
        }
        let description = case
            .get("bandwidth_description")
            .and_then(|d| d.as_str())
            .ok_or_else(|| at("bandwidth_description is missing"))?;
        let rows = case
            .get("bandwidth_matrix")
            .and_then(|m| m.as_array())
            .ok_or_else(|| at("bandwidth_matrix is missing"))?;
        if rows.len() > 3 * MAX_CELLS {
            return Err(at(&format!("bandwidth_matrix: above {MAX_CELLS} GPUs")));
        }
        let mut parsed = json_rows(rows, &at)?;
        // A testcase of several matrices appends their rows to one: keep the last (`Total`).
        let n = run.devices.len();
        if n > 0 && parsed.len() > n && parsed.len().is_multiple_of(n) {
            parsed = parsed.split_off(parsed.len() - n);
        }
        matrices.push(Matrix {
            test: name.chars().take(128).collect(),
            description: description.chars().take(128).collect(),
            lines: line.map(|l| vec![l; parsed.len()]).unwrap_or_default(),
            rows: parsed,
        });
    }
    Ok((run, matrices))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Constructed from the format nvbandwidth 0.8 prints (output.cpp, inline_common.h), not a
    /// device's output: 2 GPUs, three testcases, one with no scalescope counterpart.
    const CONSTRUCTED_TEXT: &str = "\
nvbandwidth Version: v0.8
Built from Git version: v0.8

CUDA Runtime Version: 13000
CUDA Driver Version: 13000
Driver Version: 580.95.05

hostA
Device 0: NVIDIA H200 (00000000:18:00)
Device 1: NVIDIA H200 (00000000:2a:00)

Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0     55.12     55.30

SUM host_to_device_memcpy_ce 110.42

Running device_to_device_memcpy_write_ce.
memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)
           0         1
 0       N/A    389.10
 1    388.70       N/A

SUM device_to_device_memcpy_write_ce 777.80

Running host_to_device_memcpy_sm.
memcpy SM CPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0     56.00     56.10

SUM host_to_device_memcpy_sm 112.10

NOTE: The reported results may not reflect the full capabilities of the platform.
";

    #[test]
    fn text_output_gives_every_cell_with_its_direction_and_source() {
        let run = parse(CONSTRUCTED_TEXT, DEFAULT_BUFFER_BYTES).unwrap();
        assert_eq!(run.version.as_deref(), Some("v0.8"));
        assert_eq!(run.driver.as_deref(), Some("580.95.05"));
        assert_eq!(run.host.as_deref(), Some("hostA"));
        assert_eq!(run.devices, vec!["NVIDIA H200", "NVIDIA H200"]);
        assert_eq!(
            run.source_label(),
            "nvbandwidth v0.8, driver 580.95.05 on hostA"
        );
        let h2d: Vec<&BandwidthResult> = run
            .results
            .iter()
            .filter(|r| r.test == TestId::H2d)
            .collect();
        assert_eq!(h2d.len(), 2);
        assert_eq!((h2d[1].src, h2d[1].dst), (Endpoint::Host, Endpoint::Gpu(1)));
        assert_eq!(h2d[1].median_gbps, Some(55.30));
        // `GPU(row) <- GPU(column)`: the bytes go from the column's GPU to the row's.
        let w: Vec<&BandwidthResult> = run
            .results
            .iter()
            .filter(|r| r.test == TestId::P2pWriteCe)
            .collect();
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].src, w[0].dst), (Endpoint::Gpu(1), Endpoint::Gpu(0)));
        assert_eq!(w[0].median_gbps, Some(389.10));
        assert!(run.results.iter().all(|r| r.bytes == DEFAULT_BUFFER_BYTES));
        let s = run.section();
        assert_eq!(
            s.backend,
            "imported: nvbandwidth v0.8, driver 580.95.05 on hostA"
        );
        crate::model::check_bandwidth_figures(&s.results, "bandwidth.results", &[]).unwrap();
        assert_eq!(
            run.sums,
            vec![
                ("host_to_device_memcpy_ce".to_string(), 110.42),
                ("device_to_device_memcpy_write_ce".to_string(), 777.80),
                ("host_to_device_memcpy_sm".to_string(), 112.10),
            ]
        );
        assert_eq!(run.not_read.len(), 1);
        assert!(run.not_read[0].starts_with("host_to_device_memcpy_sm: no scalescope test"));
    }

    /// Constructed from json_output.cpp's keys, not a device's output; a bidirectional testcase
    /// whose three matrices' rows were appended to one (Read1, Read2, Total: the Total is read).
    #[test]
    fn json_output_reads_the_same_way() {
        let text = r#"{ "nvbandwidth": {
            "version": "v0.8", "git_version": "v0.8", "CUDA Runtime Version": 13000,
            "Driver Version": "580.95.05",
            "GPU Device list": ["0: NVIDIA H200 (00000000:18:00): (hostA)", "1: NVIDIA H200 (00000000:2a:00): (hostA)"],
            "testcases": [
              { "name": "device_to_device_bidirectional_memcpy_read_ce", "status": "Passed",
                "bandwidth_description": "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)",
                "bandwidth_matrix": [["N/A","370"],["371","N/A"],["N/A","372"],["373","N/A"],["N/A","740.5"],["741.5","N/A"]],
                "sum": 1482.0 },
              { "name": "device_local_copy", "status": "Waived" }
            ] } }"#;
        let run = parse(text, 256 << 20).unwrap();
        assert_eq!(run.host.as_deref(), Some("hostA"));
        assert_eq!(run.devices.len(), 2);
        let b: Vec<f64> = run.results.iter().filter_map(|r| r.median_gbps).collect();
        assert_eq!(b, vec![740.5, 741.5]);
        assert!(
            run.results
                .iter()
                .all(|r| r.test == TestId::P2pBidirCe && r.bytes == 256 << 20)
        );
        assert_eq!(run.not_read, vec!["device_local_copy: Waived"]);
    }

    #[test]
    fn hostile_outputs_are_one_line_errors() {
        for (from, to, want) in [
            (
                "55.30",
                "1e300",
                "host_to_device_memcpy_ce [0][1]: 1e300 GB/s is out of range",
            ),
            ("55.30", "-5", "is out of range"),
            (
                "55.30",
                "fast",
                "line 15: cell \"fast\" is not a figure or N/A",
            ),
            (
                "bandwidth (GB/s)\n           0         1\n 0     55.12",
                "bandwidth (MB/s)\n           0         1\n 0     55.12",
                "line 13: host_to_device_memcpy_ce: \"memcpy CE CPU(row) -> GPU(column) bandwidth (MB/s)\": nvbandwidth prints GB/s",
            ),
            (
                " 0     55.12     55.30\n",
                " 0     55.12\n",
                "line 15: host_to_device_memcpy_ce: 1 cells where the header names 2 columns",
            ),
            (
                "SUM host_to_device_memcpy_ce 110.42",
                "",
                "line 19: host_to_device_memcpy_ce: its matrix has no SUM line",
            ),
            (
                "SUM host_to_device_memcpy_ce 110.42",
                "SUM host_to_device_memcpy_ce NaN",
                "line 17: SUM",
            ),
        ] {
            let text = CONSTRUCTED_TEXT.replacen(from, to, 1);
            match parse(&text, DEFAULT_BUFFER_BYTES) {
                Err(e) => {
                    let e = e.to_string();
                    assert!(!want.is_empty() && e.contains(want), "{to}: {e}");
                    assert!(!e.contains('\n'));
                }
                // An unknown unit is no matrix: that testcase is not read.
                Ok(run) => {
                    assert!(want.is_empty() && run.results.iter().all(|r| r.test != TestId::H2d))
                }
            }
        }
        // Cut after a matrix's rows, or inside one.
        let at = CONSTRUCTED_TEXT
            .find("SUM device_to_device_memcpy_write_ce")
            .unwrap();
        let e = parse(&CONSTRUCTED_TEXT[..at], DEFAULT_BUFFER_BYTES).unwrap_err();
        assert!(
            e.to_string()
                .contains("ends before device_to_device_memcpy_write_ce's SUM line"),
            "{e}"
        );
        let at = CONSTRUCTED_TEXT.find(" 1    388.70").unwrap();
        let e = parse(&CONSTRUCTED_TEXT[..at], DEFAULT_BUFFER_BYTES).unwrap_err();
        assert!(
            e.to_string()
                .contains("ends inside device_to_device_memcpy_write_ce's matrix"),
            "{e}"
        );
        assert!(
            parse("hello", 1)
                .unwrap_err()
                .to_string()
                .contains("not nvbandwidth output")
        );
        assert!(
            parse("{\"x\":1}", 1)
                .unwrap_err()
                .to_string()
                .contains("no \"nvbandwidth\" object")
        );
        assert!(parse("{\"nvbandwidth\":{\"testcases\":[{\"name\":\"h\",\"status\":\"Passed\",\"bandwidth_description\":\"memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\",\"bandwidth_matrix\":[[\"x\"]]}]}}", 1)
            .unwrap_err()
            .to_string()
            .contains("testcases[0].bandwidth_matrix[0]: cell \"x\""));
    }
}
