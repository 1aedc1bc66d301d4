//! The JSON file nccl-tests writes with `-J FILE.json` (format version 3, what 2.19.6 writes)
//! read into the same [`NcclTestsRun`] as its text output.
//!
//! The format is the one `src/util.cu` writes (github.com/NVIDIA/nccl-tests): one object with
//! `version` (the file format's, 3), `start_time` (`%Y-%m-%d %H:%M:%S`, the host's local time),
//! `args` (the command line), `env` (the whole environment: not kept), `nccl_version` (NCCL's
//! version code), `config` (`nthreads`, `ngpus`, sizes, iterations, and `devices`: the first rank
//! of each process with its `hostname` and `device_info`), `results` (one object per size:
//! `size`, `count`, `type`, `redop`, `root`, and `out_of_place` / `in_place` each `{time` or
//! `cpu_time`, `alg_bw`, `bus_bw`, `nwrong}` or null; NaN written as the string `"nan"`),
//! `out_of_bounds`, `average_bus_bandwidth` (`{bandwidth, okay}`), `errors`, `end_time`. The
//! file does not name nccl-tests' own version or the collective: the collective is read from
//! the command line's binary (`all_reduce_perf`), else the caller's hint (the file's name).

use serde_json::Value;

use super::nccl_tests::{
    self, BYTES, MAX_RANKS, NcclTestsRun, Placement, TIME_US, TYPES, bus_follows_alg, dtype_of,
    not_a_collective, result, skip, skipped_note, version_of_code, wrong_count,
};
use super::tool_error::ToolError;
use crate::model::validate::{Bounds, GBPS, quoted};
use crate::model::{CollectiveOp, CollectiveResult};

/// The file format versions this build reads (`JSON_FILE_VERSION` in util.cu).
pub const VERSIONS: [u64; 1] = [3];

/// The most result rows read (a sweep of every size from 1 B to 16 GiB is ~40; `-R` repeats it).
pub const MAX_ROWS: usize = 1_000_000;

/// True when `text` is a JSON object with the keys nccl-tests writes first (`"version"`, then
/// `"start_time"` or `"args"`): told apart from nvbandwidth's `{"nvbandwidth": …}` and from
/// scalescope's own reports without parsing the whole file.
pub fn is_json_output(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.starts_with('{') && {
        let head: String = t
            .chars()
            .take(4096)
            .filter(|c| !c.is_whitespace())
            .collect();
        head.starts_with("{\"version\":")
            && (head.contains("\"start_time\":") || head.contains("\"args\":"))
    }
}

/// Reads the JSON file. `hint` names the collective when the command line does not (`args`
/// missing, or a binary renamed). Errors are one line naming the key (`results[3].in_place.bus_bw:
/// …`); the file is one line, so a line number adds nothing beyond JSON syntax errors'.
pub fn parse(text: &str, hint: Option<CollectiveOp>) -> Result<NcclTestsRun, ToolError> {
    let root: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| {
        ToolError::at(
            e.line(),
            format!(
                "not the JSON nccl-tests writes (column {}): {e}",
                e.column()
            ),
        )
    })?;
    let obj = root
        .as_object()
        .ok_or_else(|| ToolError::whole("not a JSON object: not nccl-tests' -J output"))?;
    let version = obj
        .get("version")
        .and_then(Value::as_u64)
        .ok_or_else(|| ToolError::whole("no \"version\": not nccl-tests' -J output"))?;
    if !VERSIONS.contains(&version) {
        return Err(ToolError::whole(format!(
            "JSON file version {version}: this build reads version 3 (nccl-tests 2.19.6)"
        )));
    }
    let args = args_of(obj);
    let op = op_of(&args, hint)?;
    let nccl = nccl_of(obj)?;
    let config = obj.get("config");
    let per_process = count(config, "nthreads")? * count(config, "ngpus")?;
    let (hosts, devices) = devices(config, per_process)?;
    let ranks = devices.len().max(per_process);
    // NCCL_TESTS_SPLIT runs list every group's ranks but compute busbw for one group's.
    let groups: std::collections::BTreeSet<String> = config
        .and_then(|c| c.get("devices"))
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|d| d.get("group"))
                .map(Value::to_string)
                .collect()
        })
        .unwrap_or_default();
    let check_bus = groups.len() <= 1;
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    let rows = obj
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| ToolError::whole("no \"results\" list: not nccl-tests' -J output (or the run ended before its table)"))?;
    if rows.len() > MAX_ROWS {
        return Err(ToolError::whole(format!(
            "results: more than {MAX_ROWS} rows"
        )));
    }
    for (i, r) in rows.iter().enumerate() {
        results.extend(
            row(r, op, ranks, check_bus, &mut skipped)
                .map_err(|e| ToolError::whole(format!("results[{i}].{e}")))?,
        );
    }
    if results.is_empty() && skipped.is_empty() {
        return Err(ToolError::whole("the results list is empty"));
    }
    let avg = match obj
        .get("average_bus_bandwidth")
        .and_then(|a| a.get("bandwidth"))
    {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            figure(v, GBPS)
                .map_err(|e| ToolError::whole(format!("average_bus_bandwidth.bandwidth: {e}")))?,
        ),
    };
    let backend = nccl.as_ref().map(|v| format!("NCCL {v}"));
    for r in &mut results {
        r.backend_version = backend.clone();
    }
    let text_of = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .map(|s| s.chars().take(64).collect::<String>())
    };
    Ok(NcclTestsRun {
        op,
        tool_version: None,
        json_version: Some(version as u32),
        nccl,
        parameters: None,
        command_line: (!args.is_empty()).then(|| args.join(" ")),
        date: text_of("start_time"),
        ranks,
        hosts,
        devices,
        results,
        avg_busbw_gbps: avg,
        not_read: skipped_note(&skipped).into_iter().collect(),
    })
}

/// The command line as recorded (`args`), each argument bounded.
fn args_of(obj: &serde_json::Map<String, Value>) -> Vec<String> {
    obj.get("args")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .take(256)
                .filter_map(Value::as_str)
                .map(|s| s.chars().take(256).collect())
                .collect()
        })
        .unwrap_or_default()
}

/// The collective: the command line's binary, else `hint`.
fn op_of(args: &[String], hint: Option<CollectiveOp>) -> Result<CollectiveOp, ToolError> {
    match args.first() {
        Some(bin) if nccl_tests::op_of_binary(bin).is_some() => nccl_tests::op_of_binary(bin),
        Some(bin) if hint.is_none() => {
            return Err(ToolError::whole(format!(
                "args[0]: {}",
                not_a_collective(bin)
            )));
        }
        _ => hint,
    }
    .ok_or_else(|| {
        ToolError::whole("which collective is this? The file has no command line (\"args\"): name it after the binary (all_reduce_perf.json, …)")
    })
}

/// NCCL's version from `nccl_version`, its code.
fn nccl_of(obj: &serde_json::Map<String, Value>) -> Result<Option<String>, ToolError> {
    Ok(match obj.get("nccl_version") {
        None | Some(Value::Null) => None,
        Some(v) => Some(version_of_code(
            v.as_u64().filter(|c| *c < 1_000_000).ok_or_else(|| {
                ToolError::whole(format!("nccl_version: {v} is not NCCL's version code"))
            })? as u32,
        )),
    })
}

/// `config.KEY` as a count of threads or GPUs (1 when absent).
fn count(config: Option<&Value>, key: &str) -> Result<usize, ToolError> {
    match config.and_then(|c| c.get(key)) {
        None => Ok(1),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=1024).contains(n))
            .map(|n| n as usize)
            .ok_or_else(|| {
                ToolError::whole(format!("config.{key}: {v} is not a count of 1 to 1024"))
            }),
    }
}

/// `config.devices`: the first rank of each process (`per_process` ranks each) with its host
/// and GPU name; the other ranks of a process are not described (`None`).
#[allow(clippy::type_complexity)]
fn devices(
    config: Option<&Value>,
    per_process: usize,
) -> Result<(Vec<String>, Vec<Option<String>>), ToolError> {
    let mut hosts: Vec<String> = Vec::new();
    let mut devices: Vec<Option<String>> = Vec::new();
    let Some(list) = config.and_then(|c| c.get("devices")) else {
        return Ok((hosts, devices));
    };
    let list = list
        .as_array()
        .ok_or_else(|| ToolError::whole("config.devices is not a list"))?;
    if list.len().saturating_mul(per_process) > MAX_RANKS {
        return Err(ToolError::whole(format!(
            "config.devices: more than {MAX_RANKS} ranks"
        )));
    }
    for (i, d) in list.iter().enumerate() {
        let s = |key: &str| -> Result<Option<String>, ToolError> {
            match d.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.trim().chars().take(128).collect())),
                Some(v) => Err(ToolError::whole(format!(
                    "config.devices[{i}].{key}: {} is not text",
                    quoted(&v.to_string())
                ))),
            }
        };
        if let Some(h) = s("hostname")?
            && !h.is_empty()
            && !hosts.contains(&h)
        {
            hosts.push(h);
        }
        devices.push(s("device_info")?.filter(|n| !n.is_empty()));
        devices.extend(std::iter::repeat_n(None, per_process - 1));
    }
    Ok((hosts, devices))
}

/// A JSON number (or nccl-tests' `"nan"`) within `b`.
fn figure(v: &Value, b: Bounds) -> Result<f64, String> {
    let x = match v {
        Value::Number(n) => n.as_f64().ok_or("not a number")?,
        Value::String(s) if s.eq_ignore_ascii_case("nan") => f64::NAN,
        other => return Err(format!("{} is not a number", quoted(&other.to_string()))),
    };
    b.check(x).map_err(|e| e.to_string())
}

/// One `results[]` object: its out-of-place and in-place rows (`Err` names the key, without the
/// `results[i].` the caller adds).
fn row(
    r: &Value,
    op: CollectiveOp,
    ranks: usize,
    check_bus: bool,
    skipped: &mut Vec<(String, usize)>,
) -> Result<Vec<CollectiveResult>, String> {
    let size = r.get("size").ok_or("size is missing")?;
    let bytes = size
        .as_u64()
        .ok_or_else(|| format!("size: {} is not a byte count", quoted(&size.to_string())))?;
    BYTES
        .check(bytes as f64)
        .map_err(|e| format!("size: {e}"))?;
    let type_name = r.get("type").and_then(Value::as_str).unwrap_or("float");
    let Some(dtype) = dtype_of(type_name) else {
        skip(skipped, type_name);
        return Ok(Vec::new());
    };
    debug_assert!(!TYPES.is_empty());
    let mut out = Vec::new();
    for (key, in_place) in [("out_of_place", false), ("in_place", true)] {
        let p = match r.get(key) {
            None | Some(Value::Null) => continue,
            Some(p) => p,
        };
        let get = |name: &str, b: Bounds| -> Result<Option<f64>, String> {
            match p.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => figure(v, b)
                    .map(Some)
                    .map_err(|e| format!("{key}.{name}: {e}")),
            }
        };
        let time_us = match get("time", TIME_US)? {
            Some(t) => Some(t),
            None => get("cpu_time", TIME_US)?,
        };
        let wrong = match p.get("nwrong") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_f64().and_then(wrong_count).ok_or_else(|| {
                format!("{key}.nwrong: {} is not a count", quoted(&v.to_string()))
            })?),
        };
        let placement = Placement {
            time_us,
            algbw: get("alg_bw", GBPS)?,
            busbw: get("bus_bw", GBPS)?,
            wrong,
        };
        if check_bus {
            bus_follows_alg(op, ranks, &placement).map_err(|e| format!("{key}: {e}"))?;
        }
        out.push(result(op, ranks, bytes, dtype, in_place, placement));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dtype, Status};

    /// Size, in place, time, algbw, busbw, wrong: every figure of a row.
    type Figures = (
        u64,
        bool,
        Option<f64>,
        Option<f64>,
        Option<f64>,
        Option<u64>,
    );

    /// Constructed from the keys and number formats src/util.cu writes (jsonDouble's `%lf`,
    /// the root as `%6i` text), not a device's output: 2 processes of 1 GPU on two hosts, two
    /// sizes, the environment cut to one entry.
    const CONSTRUCTED_V3: &str = r#"{"version":3,"start_time":"2026-11-27 23:50:01","args":["./build/all_gather_perf","-b","1G","-e","2G","-f","2"],"env":["PATH=\/usr\/bin"],"nccl_version":22809,"config":{"nthreads":1,"ngpus":1,"minimum_bytes":1073741824,"maximum_bytes":2147483648,"step_factor":2,"warmup_iters":5,"iterations":20,"aggregated_iterations":1,"validation":1,"graph":0,"blocking_collectives":"false","per_iter_timing":"false","per_iter_skip":0,"parallel_init":"false","devices":[{"rank":0,"group":0,"pid":1000,"hostname":"hostA","device":0,"device_hex":"0000:18:00","device_info":"NVIDIA H200"},{"rank":1,"group":0,"pid":1001,"hostname":"hostB","device":0,"device_hex":"0000:18:00","device_info":"NVIDIA H200"}]},"results":[{"size":1073741824,"count":134217728,"type":"float","redop":"none","root":"    -1","out_of_place":{"time":4100.500000,"alg_bw":261.850000,"bus_bw":130.925000,"nwrong":0.000000},"in_place":{"time":4090.000000,"alg_bw":262.530000,"bus_bw":131.265000,"nwrong":0.000000},"actual_iterations":20,"experiment_name":""},{"size":2147483648,"count":268435456,"type":"float","redop":"none","root":"    -1","out_of_place":{"time":8100.000000,"alg_bw":265.120000,"bus_bw":132.560000,"nwrong":null},"in_place":{"time":8095.000000,"alg_bw":265.280000,"bus_bw":132.640000,"nwrong":3.000000},"actual_iterations":20,"experiment_name":""}],"out_of_bounds":{"count":3,"okay":"false"},"average_bus_bandwidth":{"bandwidth":131.847500,"okay":"unchecked"},"errors":[],"end_time":"2026-11-27 23:50:09"}"#;

    #[test]
    fn a_version_3_file_gives_every_figure_it_holds() {
        assert!(is_json_output(CONSTRUCTED_V3));
        let run = parse(CONSTRUCTED_V3, None).unwrap();
        assert_eq!(run.op, CollectiveOp::AllGather);
        assert_eq!(run.json_version, Some(3));
        assert_eq!(run.tool_version, None);
        assert_eq!(run.nccl.as_deref(), Some("2.28.9"));
        assert_eq!(run.date.as_deref(), Some("2026-11-27 23:50:01"));
        assert_eq!(
            run.command_line.as_deref(),
            Some("./build/all_gather_perf -b 1G -e 2G -f 2")
        );
        assert_eq!(run.ranks, 2);
        assert_eq!(run.hosts, vec!["hostA", "hostB"]);
        assert_eq!(run.avg_busbw_gbps, Some(131.8475));
        let figures: Vec<Figures> = run
            .results
            .iter()
            .map(|r| {
                (
                    r.bytes,
                    r.in_place,
                    r.time_us,
                    r.algbw_gbps,
                    r.busbw_gbps,
                    r.wrong,
                )
            })
            .collect();
        assert_eq!(
            figures,
            vec![
                (
                    1 << 30,
                    false,
                    Some(4100.5),
                    Some(261.85),
                    Some(130.925),
                    Some(0)
                ),
                (
                    1 << 30,
                    true,
                    Some(4090.0),
                    Some(262.53),
                    Some(131.265),
                    Some(0)
                ),
                (
                    2 << 30,
                    false,
                    Some(8100.0),
                    Some(265.12),
                    Some(132.56),
                    None
                ),
                (
                    2 << 30,
                    true,
                    Some(8095.0),
                    Some(265.28),
                    Some(132.64),
                    Some(3)
                ),
            ]
        );
        assert_eq!(run.results[3].status, Status::Failed);
        assert!(
            run.results
                .iter()
                .all(|r| r.dtype == Dtype::F32 && r.gpus == vec![0, 1])
        );
        assert_eq!(
            run.provenance(),
            "nccl-tests (JSON v3), NCCL 2.28.9, 2 ranks on hostA, hostB: all_gather_perf, 2026-11-27 23:50:01, `./build/all_gather_perf -b 1G -e 2G -f 2`"
        );
        // The environment is not kept anywhere.
        assert!(!format!("{run:?}").contains("PATH="));
    }

    /// One process of 8 GPUs (`-g 8`): the file lists its first rank only.
    #[test]
    fn the_ranks_of_one_process_are_counted_from_the_config() {
        // busbw as nccl-tests prints it for 8 ranks: algbw × 7/8.
        let text = bus_as(CONSTRUCTED_V3, 7.0 / 8.0)
            .replace("\"ngpus\":1", "\"ngpus\":8")
            .replace(r#",{"rank":1,"group":0,"pid":1001,"hostname":"hostB","device":0,"device_hex":"0000:18:00","device_info":"NVIDIA H200"}"#, "");
        let run = parse(&text, None).unwrap();
        assert_eq!(run.ranks, 8);
        assert_eq!(run.devices.len(), 8);
        assert_eq!(run.devices[0].as_deref(), Some("NVIDIA H200"));
        assert_eq!(run.devices[7], None);
        assert_eq!(run.results[0].gpus.len(), 8);
    }

    /// `text` with every bus_bw rewritten as its alg_bw × `factor` (another op or rank count).
    fn bus_as(text: &str, factor: f64) -> String {
        let mut out = text.to_string();
        for (alg, bus) in [
            ("261.850000", "130.925000"),
            ("262.530000", "131.265000"),
            ("265.120000", "132.560000"),
            ("265.280000", "132.640000"),
        ] {
            let now = format!("\"alg_bw\":{alg},\"bus_bw\":{bus}");
            assert!(out.contains(&now), "{now}");
            let v: f64 = alg.parse().unwrap();
            out = out.replace(
                &now,
                &format!("\"alg_bw\":{alg},\"bus_bw\":{:.6}", v * factor),
            );
        }
        out
    }

    #[test]
    fn a_bus_bandwidth_that_is_not_the_ops_factor_is_refused() {
        let e = parse(&bus_as(CONSTRUCTED_V3, 1.0), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("results[0].out_of_place: busbw 261.85 GB/s is not algbw 261.85 × 0.500"),
            "{e}"
        );
    }

    #[test]
    fn hostile_files_are_one_line_errors() {
        for (from, to, want) in [
            (
                "\"bus_bw\":130.925000",
                "\"bus_bw\":1e300",
                "results[0].out_of_place.bus_bw: 1e300 GB/s is out of range",
            ),
            (
                "\"time\":4100.500000",
                "\"time\":\"nan\"",
                "results[0].out_of_place.time: NaN µs is out of range",
            ),
            (
                "\"time\":4100.500000",
                "\"time\":-4",
                "results[0].out_of_place.time: -4 µs is out of range",
            ),
            (
                "\"time\":4100.500000",
                "\"time\":inf",
                "not the JSON nccl-tests writes",
            ),
            (
                "\"size\":1073741824",
                "\"size\":-1",
                "results[0].size: \"-1\" is not a byte count",
            ),
            ("\"size\":1073741824", "\"size\":1e20", "results[0].size"),
            (
                "\"nwrong\":0.000000",
                "\"nwrong\":-2",
                "results[0].out_of_place.nwrong",
            ),
            ("\"version\":3", "\"version\":4", "JSON file version 4"),
            (
                "all_gather_perf",
                "gather_perf",
                "\"./build/gather_perf\" is not a collective",
            ),
            ("\"results\":[", "\"rezults\":[", "no \"results\" list"),
            ("\"ngpus\":1", "\"ngpus\":0", "config.ngpus"),
            (
                "\"bandwidth\":131.847500",
                "\"bandwidth\":\"fast\"",
                "average_bus_bandwidth.bandwidth",
            ),
        ] {
            let text = CONSTRUCTED_V3.replacen(from, to, 1);
            assert_ne!(text, CONSTRUCTED_V3, "{from}");
            let e = parse(&text, None).unwrap_err().to_string();
            assert!(e.contains(want), "{to}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let cut = &CONSTRUCTED_V3[..CONSTRUCTED_V3.len() / 2];
        assert!(
            parse(cut, None)
                .unwrap_err()
                .to_string()
                .contains("line 1: not the JSON")
        );
        assert!(
            parse("[1]", None)
                .unwrap_err()
                .to_string()
                .contains("not a JSON object")
        );
        // Without a command line the file's name decides.
        let bare = CONSTRUCTED_V3.replace(
            r#""args":["./build/all_gather_perf","-b","1G","-e","2G","-f","2"],"#,
            "",
        );
        assert!(
            parse(&bare, None)
                .unwrap_err()
                .to_string()
                .contains("which collective")
        );
        assert_eq!(
            parse(&bus_as(&bare, 1.0), Some(CollectiveOp::Broadcast))
                .unwrap()
                .op,
            CollectiveOp::Broadcast
        );
    }
}
