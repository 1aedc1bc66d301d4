//! The reference tools' own outputs through every command that imports: nvbandwidth's text and
//! `-j` JSON and nccl-tests' text table and `-J` JSON (tests/data/tools-constructed: written in
//! their formats by hand, labeled so; the device's outputs are tests/data/reference-tools/'s),
//! alone, several at once, beside nvidia-smi captures and from standard input — and their
//! hostile variants, each a one-line error naming the file, exit 2, never a panic.

mod common;

use std::path::{Path, PathBuf};

use common::{data, data_path, one_line_error, run, scalescope};

const NVB_TEXT: &str = "tools-constructed/nvbandwidth.txt";
const NVB_JSON: &str = "tools-constructed/nvbandwidth.json";
const NCCL_TEXT: &str = "tools-constructed/all_reduce_perf.txt";
const NCCL_JSON: &str = "tools-constructed/all_gather_perf.json";
const FORMATS: [&str; 4] = [NVB_TEXT, NVB_JSON, NCCL_TEXT, NCCL_JSON];

/// The 2× H200 captures that give the links (kinds, NVLink speed, PCIe) the figures are judged by.
const CAPTURES: [&str; 3] = [
    "h200-2x-device-topo-m.txt",
    "h200-2x-device-smi-q.xml",
    "h200-2x-device-nvlink-s.txt",
];

fn imports(files: &[String]) -> Vec<String> {
    files
        .iter()
        .flat_map(|f| ["--import".to_string(), f.clone()])
        .collect()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn topo_check_and_compare_take_each_format() {
    for f in FORMATS {
        let path = data_path(f);
        let r = run(&["topo", "--import", &path]);
        assert_eq!(r.code, Some(0), "topo {f}: {}", r.stderr);
        assert!(r.stdout.contains("NVIDIA H200"), "topo {f}: {}", r.stdout);
        assert!(
            r.stdout.contains(&format!("imported {path}: ")),
            "topo {f}: {}",
            r.stdout
        );
        let r = run(&["check", "--import", &path]);
        assert_eq!(r.code, Some(0), "check {f}: {}", r.stderr);
        assert!(r.stdout.contains("imported"), "check {f}: {}", r.stdout);
        let r = run(&["compare", &path, "--catalog", "hgx-h200"]);
        assert_eq!(r.code, Some(0), "compare {f}: {}", r.stderr);
        assert!(r.stdout.contains("hostA"), "compare {f}: {}", r.stdout);
    }
}

/// Beside the captures that give the links, every copy and collective is judged against what
/// its link should carry: the constructed healthy figures pass, a P2P read halved fails with
/// exit 3 and its cause, as a live check's would.
#[test]
fn check_import_judges_the_figures_against_the_links() {
    let mut files: Vec<String> = CAPTURES.iter().map(|c| data_path(c)).collect();
    files.extend(FORMATS.iter().map(|f| data_path(f)));
    let r = run(&args(&[vec!["check".into()], imports(&files)].concat()));
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    for id in ["h2d", "p2p_read_ce", "all_reduce", "all_gather"] {
        let line = r
            .stdout
            .lines()
            .find(|l| l.contains(&format!(" {id} ")))
            .unwrap_or_else(|| panic!("no {id} line: {}", r.stdout));
        assert!(line.starts_with("PASS"), "{line}");
        assert!(line.contains("expected"), "{line}");
    }
    // The same output with one P2P read at half of it.
    let dir = tempfile::tempdir().unwrap();
    let slow = common::write(
        dir.path(),
        "nvbandwidth.txt",
        &common::read_data(NVB_TEXT).replacen("391.20", "190.00", 1),
    );
    let mut files: Vec<String> = CAPTURES.iter().map(|c| data_path(c)).collect();
    files.push(slow.display().to_string());
    let r = run(&args(&[vec!["check".into()], imports(&files)].concat()));
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("FAIL") && l.contains("p2p_read_ce"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(line.contains("190.0 GB/s"), "{line}");
    assert!(line.contains(" — do: "), "{line}");
}

/// `-` reads standard input once: nccl-tests' table piped in, beside a capture file.
#[test]
fn standard_input_is_an_output_like_any_file() {
    for f in [NCCL_TEXT, NVB_JSON] {
        let out = scalescope()
            .env_remove("DISPLAY")
            .args([
                "check",
                "--import",
                "-",
                "--import",
                &data_path(CAPTURES[0]),
            ])
            .write_stdin(common::read_data(f))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{f}: {stdout}");
        assert!(stdout.contains("imported"), "{f}: {stdout}");
    }
}

/// `fleet report DIR`: one folder per node of tools' outputs, named by the host they print; a
/// node whose H2D is a quarter below the others' is an outlier and drained.
#[test]
fn fleet_report_takes_folders_of_outputs() {
    let dir = tempfile::tempdir().unwrap();
    for n in 1..=5 {
        let node = dir.path().join(format!("n{n}"));
        std::fs::create_dir(&node).unwrap();
        for f in [NVB_TEXT, NCCL_TEXT, NCCL_JSON] {
            let mut text = common::read_data(f).replace("hostA", &format!("gpu{n:02}"));
            if n == 3 && f == NVB_TEXT {
                text = text.replacen("55.30", "41.00", 1);
            }
            let name = Path::new(f).file_name().unwrap();
            std::fs::write(node.join(name), text).unwrap();
        }
    }
    let out = dir.path().join("out");
    let r = run(&[
        "fleet",
        "report",
        &dir.path().display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("drain: gpu03\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("gpu03") && l.contains("h2d GPU 1")),
        "{}",
        r.stdout
    );
}

/// A copy of a constructed output, edited, in a folder of its own under `dir`.
fn edited(dir: &Path, name: &str, from: &str, to: &str) -> String {
    let text = common::read_data(name);
    assert!(text.contains(from), "{name}: {from}");
    let file_name = Path::new(name).file_name().unwrap().to_str().unwrap();
    let own = tempfile::tempdir_in(dir).unwrap().keep();
    common::write(&own, file_name, &text.replacen(from, to, 1))
        .display()
        .to_string()
}

#[test]
fn hostile_outputs_are_one_line_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(String, &str)> = vec![
        // Huge, NaN, negative, unit, truncated, in each format.
        (
            edited(d, NVB_TEXT, "55.30", "1e300"),
            ":15: host_to_device_memcpy_ce [0][1]: 1e300 GB/s is out of range",
        ),
        (edited(d, NVB_TEXT, "391.20", "-391.2"), "is out of range"),
        (
            edited(d, NVB_TEXT, "bandwidth (GB/s)", "bandwidth (MB/s)"),
            "nvbandwidth prints GB/s",
        ),
        (
            edited(
                d,
                NVB_TEXT,
                "SUM device_to_device_memcpy_write_ce 777.80\n\nRunning host_to_device_memcpy_sm.",
                "SUM dev",
            ),
            "SUM",
        ),
        (
            edited(d, NVB_JSON, "\"55.3\"", "\"NaN\""),
            "is out of range",
        ),
        (
            edited(d, NVB_JSON, "\"testcases\" : ", "\"testcasez\" : "),
            "no \"testcases\" array",
        ),
        (
            edited(d, NCCL_TEXT, "363.98  363.98", "363.98  1e309"),
            ":13: busbw",
        ),
        (
            edited(d, NCCL_TEXT, "5900.0", "nan"),
            ":13: time: NaN µs is out of range",
        ),
        (
            edited(d, NCCL_TEXT, "5900.0", "-5900"),
            ":13: time: -5900 µs is out of range",
        ),
        (
            edited(
                d,
                NCCL_TEXT,
                "(GB/s)  (GB/s)             (us)",
                "(MB/s)  (GB/s)             (us)",
            ),
            ":11: unit",
        ),
        (
            edited(
                d,
                NCCL_TEXT,
                "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 361.315\n",
                "",
            ),
            "a cut or unfinished output",
        ),
        (
            edited(d, NCCL_JSON, "\"bus_bw\":320.000000", "\"bus_bw\":\"nan\""),
            "results[0].out_of_place.bus_bw: NaN GB/s is out of range",
        ),
        (
            edited(d, NCCL_JSON, "\"time\":1677.720000", "\"time\":-1"),
            "results[0].out_of_place.time: -1 µs",
        ),
        (
            edited(
                d,
                NCCL_JSON,
                "\"size\":2147483648",
                "\"size\":99999999999999999999",
            ),
            "results[1].size",
        ),
    ];
    for (path, needle) in &cases {
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        for cmd in [
            &["check", "--import"][..],
            &["topo", "--import"],
            &["compare"],
        ] {
            let mut a: Vec<&str> = cmd.to_vec();
            a.push(path);
            if cmd[0] == "compare" {
                a.extend(["--catalog", "hgx-h200"]);
            }
            one_line_error(&a, Some(2), &[name, needle]);
        }
    }
    // A JSON file cut in half.
    let json = common::read_data(NCCL_JSON);
    let cut = common::write(d, "cut.json", &json[..json.len() / 2]);
    // A cut file no longer says which tool wrote it past its head: it reads as what it is.
    let e = one_line_error(
        &["check", "--import", &cut.display().to_string()],
        Some(2),
        &["cut.json"],
    );
    assert!(!e.contains("panicked"));
    // Binary junk inside an output, and a NUL byte.
    let mut bytes = common::read_data(NCCL_TEXT).into_bytes();
    bytes.splice(600..600, [0xff, 0xfe, 0x00, 0x9f]);
    let junk = d.join("junk.txt");
    std::fs::write(&junk, &bytes).unwrap();
    one_line_error(
        &["check", "--import", &junk.display().to_string()],
        Some(2),
        &["junk.txt", "binary data"],
    );
    let nul = common::write(
        d,
        "nul.txt",
        &common::read_data(NVB_TEXT).replacen("55.12", "55\u{0}12", 1),
    );
    one_line_error(
        &["check", "--import", &nul.display().to_string()],
        Some(2),
        &["nul.txt", "U+0000"],
    );
    // A 100 MB line after nccl-tests' header: refused unread past the bound.
    let big = d.join("big.txt");
    let mut text = common::read_data(NCCL_TEXT).into_bytes();
    text.extend(std::iter::repeat_n(b'9', 100 << 20));
    std::fs::write(&big, &text).unwrap();
    one_line_error(
        &["check", "--import", &big.display().to_string()],
        Some(2),
        &["big.txt", "larger than 64 MiB"],
    );
}

/// The fixtures are what the tests say they are: each format once.
#[test]
fn the_constructed_fixtures_say_they_are_constructed() {
    let readme = std::fs::read_to_string(data("tools-constructed/README.md")).unwrap();
    assert!(readme.contains("Constructed, not device outputs"));
    let names: Vec<PathBuf> = FORMATS.iter().map(|f| data(f)).collect();
    assert!(names.iter().all(|p| p.is_file()));
}

// --- The device's outputs (tests/data/reference-tools/, produced on nvidia-h200-x2 by NVIDIA's
// tools built from their own sources): every figure each file prints comes back from the
// import. The files are read here independently (a line scan, or serde_json's tree), never
// through the parsers under test.

use scalescope::model::{BandwidthResult, Endpoint};
use scalescope::report::reference_tools::{self, Run};

const REAL: &str = "reference-tools";
const OPS: [&str; 6] = [
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
    "alltoall",
    "sendrecv",
];

fn real(name: &str) -> String {
    data_path(&format!("{REAL}/{name}"))
}

fn one_run(path: &str) -> Run {
    let imported = reference_tools::import(&[path.to_string()]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.runs.len(), 1, "{path}");
    imported.runs[0].run.clone()
}

/// Two printed figures agree: nccl-tests prints 2 decimals (`%7.2f`, `%6.2f`), and the
/// import keeps the printed digits, so they are equal as read.
fn same(printed: f64, imported: Option<f64>, what: &str) {
    assert_eq!(Some(printed), imported, "{what}");
}

#[test]
fn every_figure_of_the_nccl_tests_tables_comes_back() {
    for op in OPS {
        let path = real(&format!("nccl-tests-{op}.txt"));
        let text = std::fs::read_to_string(&path).unwrap();
        let Run::NcclTests(run) = one_run(&path) else {
            panic!("{path}: not read as nccl-tests");
        };
        assert_eq!(run.op.id(), op);
        // The rows: size, count, type, redop, root, then time, algbw, busbw, #wrong twice.
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|w| w.first().is_some_and(|f| f.parse::<u64>().is_ok()))
            .collect();
        assert!(!rows.is_empty(), "{path}");
        assert_eq!(run.results.len(), 2 * rows.len(), "{path}");
        for (w, pair) in rows.iter().zip(run.results.chunks(2)) {
            assert_eq!(w.len(), 13, "{path}: {w:?}");
            for (k, r) in pair.iter().enumerate() {
                let at = 5 + 4 * k;
                let what = format!("{path} {} {}", w[0], if k == 0 { "out" } else { "in" });
                assert_eq!(r.in_place, k == 1, "{what}");
                assert_eq!(r.bytes, w[0].parse::<u64>().unwrap(), "{what}");
                same(w[at].parse().unwrap(), r.time_us, &what);
                same(w[at + 1].parse().unwrap(), r.algbw_gbps, &what);
                same(w[at + 2].parse().unwrap(), r.busbw_gbps, &what);
                // `N/A` where nccl-tests does not check (alltoall's and sendrecv's in place).
                assert_eq!(r.wrong, w[at + 3].parse().ok(), "{what}");
                assert_eq!(r.gpus.len(), run.ranks, "{what}");
            }
        }
        let avg = text
            .lines()
            .find_map(|l| l.strip_prefix("# Avg bus bandwidth"))
            .and_then(|r| r.trim_start_matches([' ', ':']).split_whitespace().next())
            .unwrap();
        same(avg.parse().unwrap(), run.avg_busbw_gbps, &path);
        let ranks = text.lines().filter(|l| l.starts_with("#  Rank ")).count();
        assert_eq!(run.ranks, ranks, "{path}");
        assert!(
            text.contains(&format!("on {:>10} device", run.hosts[0])),
            "{path}"
        );
        let code = text
            .split("nccl-library=")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap()
            .parse::<u32>()
            .unwrap();
        assert_eq!(
            run.nccl.as_deref(),
            Some(format!("{}.{}.{}", code / 10000, code / 100 % 100, code % 100).as_str())
        );
        assert!(text.contains(&format!(
            "# nccl-tests version {} ",
            run.tool_version.unwrap()
        )));
    }
}

#[test]
fn every_figure_of_the_nccl_tests_json_files_comes_back() {
    for op in OPS {
        let path = real(&format!("nccl-tests-{op}.json"));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let Run::NcclTests(run) = one_run(&path) else {
            panic!("{path}: not read as nccl-tests");
        };
        assert_eq!(run.op.id(), op);
        let rows = v["results"].as_array().unwrap();
        assert_eq!(run.results.len(), 2 * rows.len(), "{path}");
        for (row, pair) in rows.iter().zip(run.results.chunks(2)) {
            for (key, r) in [("out_of_place", &pair[0]), ("in_place", &pair[1])] {
                let p = &row[key];
                let what = format!("{path} {} {key}", row["size"]);
                assert_eq!(r.bytes, row["size"].as_u64().unwrap(), "{what}");
                assert_eq!(r.time_us, p["time"].as_f64(), "{what}");
                assert_eq!(r.algbw_gbps, p["alg_bw"].as_f64(), "{what}");
                assert_eq!(r.busbw_gbps, p["bus_bw"].as_f64(), "{what}");
                assert_eq!(r.wrong, p["nwrong"].as_f64().map(|w| w as u64), "{what}");
            }
        }
        assert_eq!(
            run.avg_busbw_gbps,
            v["average_bus_bandwidth"]["bandwidth"].as_f64()
        );
        assert_eq!(run.date.as_deref(), v["start_time"].as_str());
        let args: Vec<&str> = v["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(run.command_line.as_deref(), Some(args.join(" ").as_str()));
        let c = &v["config"];
        assert_eq!(
            run.ranks as u64,
            c["nthreads"].as_u64().unwrap()
                * c["ngpus"].as_u64().unwrap()
                * c["devices"].as_array().unwrap().len() as u64
        );
        // The text table printed in the same run holds the same figures, rounded.
        let Run::NcclTests(text) = one_run(&real(&format!("nccl-tests-{op}.txt"))) else {
            panic!()
        };
        for (j, t) in run.results.iter().zip(&text.results) {
            let close = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs() <= 0.0051;
            assert!(close(j.busbw_gbps, t.busbw_gbps), "{path}: {j:?} {t:?}");
            assert_eq!(j.bytes, t.bytes);
        }
    }
}

/// The cell of a testcase's matrix as imported, if scalescope reads that testcase.
fn imported_cell<'a>(
    results: &'a [BandwidthResult],
    test: &str,
    row: usize,
    col: usize,
    host_row: bool,
) -> Vec<&'a BandwidthResult> {
    results
        .iter()
        .filter(|r| r.reason.as_deref() == Some(&format!("nvbandwidth {test}")[..]))
        .filter(|r| {
            if test == "device_local_copy" {
                // `memcpy local GPU(column)`: each GPU copies within itself.
                return r.src == Endpoint::Gpu(col) && r.dst == Endpoint::Gpu(col);
            }
            let ends = [r.src, r.dst];
            let gpu_col = ends.contains(&Endpoint::Gpu(col));
            let other = if host_row {
                ends.contains(&Endpoint::Host) || r.src == r.dst
            } else {
                ends.contains(&Endpoint::Gpu(row))
            };
            gpu_col && other
        })
        .collect()
}

#[test]
fn every_figure_of_nvbandwidths_text_comes_back() {
    let path = real("nvbandwidth-all.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let Run::Nvbandwidth(run) = one_run(&path) else {
        panic!("not read as nvbandwidth");
    };
    // Scan: `Running NAME.`, a description ending in a unit, a header, rows, a blank line,
    // `SUM KEY VALUE`.
    let lines: Vec<&str> = text.lines().collect();
    let mut test = "";
    let mut sums: Vec<(String, f64)> = Vec::new();
    let mut cells = 0;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if let Some(name) = l.strip_prefix("Running ") {
            test = name.trim_end_matches('.');
        } else if (l.ends_with("(GB/s)") || l.ends_with("(ns)")) && !test.is_empty() {
            let description = l;
            let host_row = description.contains("CPU(row)");
            let mut r = i + 2;
            let mut total = 0.0;
            while !lines[r].trim().is_empty() {
                let words: Vec<&str> = lines[r].split_whitespace().collect();
                let row: usize = words[0].parse().unwrap();
                for (col, w) in words[1..].iter().enumerate() {
                    let Ok(v) = w.parse::<f64>() else { continue };
                    total += v;
                    cells += 1;
                    let read = reference_tools_read(&run, test, description);
                    if read {
                        let found = imported_cell(&run.results, test, row, col, host_row);
                        let value = |x: &&BandwidthResult| x.median_gbps.or(x.latency_ns);
                        assert!(
                            found.iter().any(|x| value(x) == Some(v)),
                            "{test} [{row}][{col}] {v}: {found:?}"
                        );
                    }
                }
                r += 1;
            }
            let sum = lines[r + 1].strip_prefix("SUM ").unwrap();
            let (key, value) = sum.split_once(' ').unwrap();
            let value: f64 = value.parse().unwrap();
            // The SUM is of the unrounded cells: within the cells' rounding.
            assert!(
                (value - total).abs() <= 0.01 * 4.0,
                "{key}: {value} vs {total}"
            );
            sums.push((key.to_string(), value));
            i = r + 1;
        }
        i += 1;
    }
    assert!(cells > 60, "{cells}");
    assert_eq!(run.sums, sums);
    assert_eq!(
        run.devices.len(),
        text.lines()
            .filter(|l| l
                .strip_prefix("Device ")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())))
            .count()
    );
    let driver = text
        .lines()
        .find_map(|l| l.strip_prefix("Driver Version: "))
        .unwrap();
    assert_eq!(run.driver.as_deref(), Some(driver));
}

/// Whether the import reads `test`'s matrix of `description` (a testcase scalescope has a
/// counterpart for; of a bidirectional pair between GPUs, its Total), else it is named as not
/// read.
fn reference_tools_read(
    run: &scalescope::report::nvbandwidth::NvbandwidthRun,
    test: &str,
    description: &str,
) -> bool {
    let read = run
        .results
        .iter()
        .any(|r| r.reason.as_deref() == Some(&format!("nvbandwidth {test}")[..]));
    let one_direction = description.contains("Read1")
        || description.contains("Read2")
        || description.contains("Write1")
        || description.contains("Write2");
    if !read {
        assert!(
            run.not_read.iter().any(|n| n.starts_with(test)),
            "{test} is neither read nor named as not read: {:?}",
            run.not_read
        );
    }
    read && !one_direction
}

#[test]
fn every_figure_of_nvbandwidths_json_comes_back() {
    let path = real("nvbandwidth.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let Run::Nvbandwidth(run) = one_run(&path) else {
        panic!("not read as nvbandwidth");
    };
    let n = v["nvbandwidth"]["GPU Device list"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(run.devices.len(), n);
    let mut sums = Vec::new();
    for case in v["nvbandwidth"]["testcases"].as_array().unwrap() {
        let test = case["name"].as_str().unwrap();
        let description = case["bandwidth_description"].as_str().unwrap();
        let rows = case["bandwidth_matrix"].as_array().unwrap();
        // A testcase of several matrices appends their rows: the last n are its Total.
        let rows = &rows[rows.len() - n.min(rows.len())..];
        for (row, cells) in rows.iter().enumerate() {
            for (col, c) in cells.as_array().unwrap().iter().enumerate() {
                let Ok(value) = c.as_str().unwrap().parse::<f64>() else {
                    continue;
                };
                let found = imported_cell(
                    &run.results,
                    test,
                    row,
                    col,
                    description.contains("CPU(row)"),
                );
                assert!(
                    found
                        .iter()
                        .any(|x| x.median_gbps.or(x.latency_ns) == Some(value)),
                    "{test} [{row}][{col}] {value}: {found:?}"
                );
            }
        }
        sums.push((test.to_string(), case["sum"].as_f64().unwrap()));
    }
    assert_eq!(run.sums, sums);
}

/// check --import, compare and fleet report take the device's files, all at once.
#[test]
fn the_commands_take_the_device_outputs() {
    let dir = std::fs::read_dir(data(REAL)).unwrap();
    let mut files: Vec<String> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt" || e == "json"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert_eq!(files.len(), 14, "{files:?}");
    let r = run(&args(&[vec!["check".into()], imports(&files)].concat()));
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    for op in OPS {
        assert!(r.stdout.contains(&format!(" {op} ")), "{op}: {}", r.stdout);
    }
    let r = run(&[
        "compare",
        &real("nvbandwidth-all.txt"),
        "--import",
        &real("nvbandwidth.json"),
        "--import",
        &real("nccl-tests-all_reduce.json"),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("P2P write CE"), "{}", r.stdout);
    // Two nodes with the same outputs: nothing to drain.
    let fleet = tempfile::tempdir().unwrap();
    for node in ["a", "b"] {
        let d = fleet.path().join(node);
        std::fs::create_dir(&d).unwrap();
        for f in &files {
            let name = Path::new(f).file_name().unwrap();
            let text = std::fs::read_to_string(f).unwrap();
            // Each node names its host, as real nodes do.
            std::fs::write(d.join(name), text.replace(" vm", &format!(" node-{node}"))).unwrap();
        }
    }
    let r = run(&[
        "fleet",
        "report",
        &fleet.path().display().to_string(),
        "--out",
        &fleet.path().join("out").display().to_string(),
    ]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("2 nodes"), "{}", r.stdout);
}

/// The device's outputs mutated at random (a seeded generator: the same cases every run) —
/// bytes replaced, lines cut or doubled, the file truncated — never make the import panic: each
/// reads, or fails with one line naming the file.
#[test]
fn mutated_device_outputs_never_panic() {
    let mut seed: u64 = 0x5eed_1234_abcd;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    let junk: [&[u8]; 9] = [
        b"-", b"1e309", b"NaN", b"\xff", b"\0", b"N/A", b"\n", b"}", b"  ",
    ];
    for name in [
        "nvbandwidth-all.txt",
        "nvbandwidth.json",
        "nccl-tests-all_reduce.txt",
        "nccl-tests-sendrecv.json",
    ] {
        let original = std::fs::read(data(&format!("{REAL}/{name}"))).unwrap();
        for case in 0..150 {
            let mut bytes = original.clone();
            match case % 3 {
                0 => {
                    let at = next(bytes.len());
                    let j = junk[next(junk.len())];
                    bytes.splice(at..(at + next(4)).min(bytes.len()), j.iter().copied());
                }
                1 => bytes.truncate(next(bytes.len())),
                _ => {
                    let at = next(bytes.len());
                    let line: Vec<u8> = bytes[at..].iter().take(120).copied().collect();
                    bytes.splice(at..at, line);
                }
            }
            let path = format!("{name}#{case}");
            match reference_tools::import_bytes(vec![(path.clone(), bytes)]) {
                Ok(_) => {}
                Err(e) => {
                    let e = e.to_string();
                    assert!(!e.contains('\n'), "{path}: {e}");
                    assert!(e.contains(&path), "{path}: {e}");
                }
            }
        }
    }
}
