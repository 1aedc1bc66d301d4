//! Bad input a hostile-input audit found after issue O's bounds (2026-12-07): arguments that are
//! not UTF-8, an output flag naming one of the command's own input files, a list naming an entry
//! twice. Each is refused with one line naming what and where, before anything is written.
//! Runs the real binary; needs no GPU and no display.

mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use common::headless;

/// Runs scalescope with `args` (any bytes): exit code and stderr.
fn run_os(args: &[OsString]) -> (Option<i32>, String) {
    let out = headless().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn an_argument_that_is_not_utf8_is_refused_with_its_place_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad = dir.path().as_os_str().to_owned().into_vec();
    bad.extend_from_slice(b"/nu\xff.txt");
    let bad = OsString::from_vec(bad);
    let s = |t: &str| OsString::from(t);
    let lines: Vec<Vec<OsString>> = vec![
        vec![s("topo"), s("--import"), bad.clone()],
        vec![
            s("topo"),
            s("--catalog"),
            s("dgx-h100"),
            s("-o"),
            bad.clone(),
        ],
        vec![
            s("check"),
            s("--catalog"),
            s("dgx-h100"),
            s("--json"),
            bad.clone(),
        ],
        vec![
            s("--bench"),
            s("--modeled"),
            s("--catalog"),
            s("dgx-h100"),
            s("--suite"),
            s("topology"),
            s("--out"),
            bad.clone(),
        ],
        vec![s("compare"), bad.clone()],
    ];
    for args in lines {
        let (code, stderr) = run_os(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        let shown: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(shown.len(), 1, "{args:?}: {stderr}");
        assert!(
            shown[0].starts_with("Error: argument ") && shown[0].contains("not valid UTF-8"),
            "{args:?}: {stderr}"
        );
        assert!(shown[0].contains("nu\u{fffd}.txt"), "{args:?}: {stderr}");
    }
    // Nothing was created under the bad name (the --bench line checked before any folder).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Copies `src` (a file of tests/data or assets) into `dir` as `name`: the input a command reads.
fn copy_in(dir: &std::path::Path, src: &str, name: &str) -> String {
    let to = dir.join(name);
    std::fs::copy(common::crate_file(src), &to).unwrap();
    to.to_str().unwrap().to_string()
}

#[test]
fn no_output_flag_replaces_the_commands_own_input_or_another_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let report = copy_in(d, "assets/reports/h200-2x-sxm-2026-11-28.json", "r.json");
    let other = copy_in(d, "assets/reports/h200-1x-sxm-2026-11-28.json", "r1.json");
    let capture = copy_in(d, "tests/data/h200-2x-device-topo-m.txt", "cap.txt");
    let catalog = copy_in(d, "assets/hardware/h200-2x-sxm.toml", "c.toml");
    let workload = copy_in(d, "assets/workloads/alexnet.toml", "w.toml");
    let same = d.join("x.csv");
    let same = same.to_str().unwrap();
    let lines: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["compare", &other, &report, "--ranking-csv", &report],
            "--ranking-csv",
        ),
        (vec!["topo", "--import", &capture, "-o", &capture], "-o"),
        (
            vec!["check", "--import", &capture, "--json", &capture],
            "--json",
        ),
        (
            vec![
                "bench",
                "bandwidth",
                "--modeled",
                "--catalog",
                &catalog,
                "--json",
                &catalog,
            ],
            "--json",
        ),
        (
            vec![
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--workload",
                &workload,
                "--csv",
                &workload,
            ],
            "--csv",
        ),
        (
            vec![
                "bench",
                "bandwidth",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--csv",
                same,
                "--json",
                same,
            ],
            "name the same file",
        ),
        (
            vec![
                "check",
                "--catalog",
                "dgx-h100",
                "--csv",
                same,
                "--json",
                same,
            ],
            "name the same file",
        ),
    ];
    let before: Vec<Vec<u8>> = [&report, &capture, &catalog, &workload]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    for (args, needle) in lines {
        common::one_line_error(&args, Some(2), &[needle]);
    }
    let after: Vec<Vec<u8>> = [&report, &capture, &catalog, &workload]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(before == after, "an input file was changed");
    assert!(!d.join("x.csv").exists());
    // A catalog name is the built-in entry, never a file of that name: re-running
    // `topo --catalog dgx-h100 -o dgx-h100` in one folder writes it again.
    for _ in 0..2 {
        let out = headless()
            .current_dir(d)
            .args(["topo", "--catalog", "dgx-h100", "-o", "dgx-h100"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // /dev/null named twice replaces nothing: allowed.
    let r = common::run(&[
        "bench",
        "bandwidth",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--tests",
        "h2d",
        "--csv",
        "/dev/null",
        "--json",
        "/dev/null",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn a_list_naming_an_entry_twice_is_refused_here_and_by_the_agent() {
    for (args, needle) in [
        (
            vec![
                "bench",
                "bandwidth",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--tests",
                "h2d,h2d",
            ],
            "--tests: \"h2d\" is listed twice",
        ),
        (
            vec![
                "bench",
                "collectives",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--ops",
                "all_reduce,all_reduce",
            ],
            "--ops: \"all_reduce\" is listed twice",
        ),
        (
            vec![
                "bench",
                "collectives",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--algo",
                "nccl,nccl",
            ],
            "--algo: \"nccl\" is listed twice",
        ),
        (
            vec![
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--workload",
                "resnet50",
                "--workload",
                "resnet50",
            ],
            "--workload: \"resnet50\" is listed twice",
        ),
    ] {
        common::one_line_error(&args, Some(2), &[needle]);
    }
    // A job sent to the agent with a test twice is the job's bad input, not a protocol error.
    let job = scalescope::job::Job::Bandwidth {
        target: scalescope::job::Target::Catalog {
            name: "dgx-h100".into(),
        },
        options: scalescope::bench::plan::BandwidthOptions {
            tests: vec![
                scalescope::model::TestId::H2d,
                scalescope::model::TestId::H2d,
            ],
            ..Default::default()
        },
        modeled: true,
        pcie: None,
        energy_window_s: None,
    };
    let why = job.validate().unwrap_err();
    assert!(why.contains("tests: \"h2d\" is listed twice"), "{why}");
}

/// Your own 1-GPU step is held to the catalog machine's GPU, not only to the fastest GPU there
/// is (3 ms for 256 ResNet-50 images is a typo on an RTX 4090, whose peak needs 38 ms); a
/// catalog record's host floor capped at your step says so instead of calling the cap the
/// record's figure.
#[test]
fn your_own_step_is_held_to_the_machines_gpu_and_a_capped_floor_says_so() {
    common::one_line_error(
        &[
            "bench",
            "scaling",
            "--modeled",
            "--catalog",
            "rtx4090-4x-pcie",
            "--workload",
            "resnet50",
            "--step-ms-1gpu",
            "3",
            "--mode",
            "weak",
        ],
        Some(2),
        &["--step-ms-1gpu 3", "RTX 4090", "datasheet"],
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let r = common::run(&[
        "bench",
        "scaling",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--workload",
        "resnet50",
        "--step-ms-1gpu",
        "10",
        "--mode",
        "weak",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(
        text.contains("capped at your step"),
        "the capped floor is not said"
    );
}

/// nvidia-smi prints one kind of link for a pair from either row: a capture whose two rows
/// disagree (NV18 one way, SYS the other) is refused at the later row's line, as the catalog
/// refuses such a matrix, not settled by either cell; two NVLink counts meet at the fewer.
#[test]
fn a_topo_matrix_whose_rows_disagree_is_refused_at_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::crate_file("tests/data/h200-2x-device-topo-m.txt"))
        .unwrap();
    // The capture with GPU1's row saying `to` towards GPU0, written as `name`.
    let gpu1_says = |to: &str, name: &str| {
        let edited: Vec<String> = text
            .lines()
            .map(|l| {
                if l.starts_with("GPU1\t") {
                    l.replacen("NV18", to, 1)
                } else {
                    l.to_string()
                }
            })
            .collect();
        common::write(dir.path(), name, &edited.join("\n"))
    };
    let path = gpu1_says("SYS", "asym.txt");
    let path = path.to_str().unwrap();
    for cmd in [
        &["topo", "--import", path][..],
        &["check", "--import", path][..],
    ] {
        common::one_line_error(
            cmd,
            Some(2),
            &[
                "asym.txt:3:",
                "GPU1's row has SYS towards GPU0",
                "has NV18",
                "not symmetric",
            ],
        );
    }
    // Two NVLink counts may differ (a GPU with links down through NVSwitch sees fewer): the
    // pair is taken at the fewer, said in a note.
    let path = gpu1_says("NV12", "nv12.txt");
    let r = common::run(&[
        "topo",
        "--import",
        path.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("0,1,NV,12,"), "{}", r.stdout);
    let r = common::run(&["topo", "--import", path.to_str().unwrap()]);
    assert!(
        r.stdout.contains("the pair is taken at NV12"),
        "{}",
        r.stdout
    );
}

/// A catalog file that contradicts itself or holds values no machine has is refused with the
/// field: an NV18 matrix beside `nvlinks = 0`, NVLink generation 99, a PCI bus id that is none
/// or is given twice, a CPU range written backwards (each passed, and `check` judged the file).
#[test]
fn a_catalog_file_that_contradicts_itself_is_refused_with_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(common::crate_file("assets/hardware/h200-2x-sxm.toml")).unwrap();
    for (from, to, needles) in [
        (
            "nvlinks = 18",
            "nvlinks = 0",
            &["GPU0–GPU1 is NV18", "nvlinks = 0"][..],
        ),
        (
            "nvlink_generation = 4",
            "nvlink_generation = 99",
            &["nvlink_generation = 99"][..],
        ),
        (
            "\"00000000:00:07.0\"]",
            "\"zz\"]",
            &["pci_bus_ids", "\"zz\" is not a PCI bus id"][..],
        ),
        (
            "\"00000000:00:07.0\"]",
            "\"00000000:00:06.0\"]",
            &["listed twice"][..],
        ),
        (
            "cpus = \"0-31\"",
            "cpus = \"31-0\"",
            &["cpus \"31-0\"", "ascending"][..],
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let path = common::write(dir.path(), "m.toml", &text.replacen(from, to, 1));
        common::one_line_error(
            &["check", "--catalog", path.to_str().unwrap()],
            Some(2),
            needles,
        );
    }
}

/// A `nvidia-smi -q` capture whose PCIe link is no PCIe link (generation 99, a current width
/// above the maximum) is refused at its line, in the XML and the text form; it was judged PASS
/// ("PCIe Gen99 x16 (idle reading, at its maximum)").
#[test]
fn a_pcie_reading_no_link_can_have_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let xml =
        std::fs::read_to_string(common::crate_file("tests/data/h200-2x-device-smi-q.xml")).unwrap();
    let text =
        std::fs::read_to_string(common::crate_file("tests/data/h200-2x-device-smi-q.txt")).unwrap();
    let at = xml.find("<current_link_gen>").unwrap() + "<current_link_gen>".len();
    let end = at + xml[at..].find('<').unwrap();
    let gen99 = format!("{}99{}", &xml[..at], &xml[end..]);
    let width = text.replacen(
        "                Current                                : 16x",
        "                Current                                : 32x",
        1,
    );
    assert_ne!(width, text);
    for (name, body, needles) in [
        (
            "gen99.xml",
            gen99,
            &[
                "gen99.xml:",
                "GPU 0",
                "generation 99 is not a PCIe generation",
            ][..],
        ),
        (
            "x32.txt",
            width,
            &[
                "x32.txt:",
                "GPU 0",
                "current width x32 is above the link's maximum x16",
            ][..],
        ),
    ] {
        let path = common::write(dir.path(), name, &body);
        common::one_line_error(
            &["check", "--import", path.to_str().unwrap()],
            Some(2),
            needles,
        );
    }
}

/// A report whose copy figures contradict themselves or its machine is refused with the field
/// (it was compared, and ranked in a fleet): a GPU the machine has not, a size of 0 bytes, a
/// median outside its least and most, an efficiency that is not the median over the line rate.
#[test]
fn a_report_whose_figures_contradict_each_other_is_refused_with_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let bundled = common::crate_file("assets/reports/h200-2x-sxm-2026-11-28.json");
    let good: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&bundled).unwrap()).unwrap();
    let edits: [(&str, serde_json::Value, &str); 4] = [
        (
            "dst",
            serde_json::json!("99"),
            "GPU 99 is not one of the report's GPUs",
        ),
        ("bytes", serde_json::json!(0), "0 bytes is no size"),
        (
            "min_gbps",
            serde_json::json!(100.0),
            "is not between its least 100",
        ),
        (
            "efficiency",
            serde_json::json!(7.5),
            "efficiency: 7.5 is not its median over",
        ),
    ];
    for (field, value, needle) in edits {
        let mut report = good.clone();
        report["bandwidth"]["results"][0][field] = value;
        let path = common::write(dir.path(), "r.json", &report.to_string());
        common::one_line_error(
            &["compare", path.to_str().unwrap(), bundled.to_str().unwrap()],
            None,
            &["bandwidth.results[0]", needle],
        );
    }
}

/// A watch recording says each GPU (and each of its NVLinks) once per sample, and its samples
/// move forward in time: a second reading of one GPU in a sample, a link twice, a sample at the
/// time of the one before, or a header watching GPU 0 twice is refused at its line (each was
/// played, the GPU printed twice).
#[test]
fn a_watch_recording_that_repeats_a_reading_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::crate_file("tests/data/watch-h100x2-nvlink.jsonl"))
        .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let edit = |line: usize, f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(lines[line]).unwrap();
        f(&mut v);
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        out[line] = v.to_string();
        out.join("\n") + "\n"
    };
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            edit(2, &|v| {
                let g = v["gpus"][0].clone();
                v["gpus"].as_array_mut().unwrap().push(g);
            }),
            vec![":3:", "\"GPU 0\" is listed twice"],
        ),
        (
            edit(2, &|v| {
                let l = v["gpus"][0]["nvlinks"][0].clone();
                v["gpus"][0]["nvlinks"].as_array_mut().unwrap().push(l);
            }),
            vec![":3:", "\"link 0\" is listed twice"],
        ),
        (
            edit(2, &|v| {
                v["t_s"] =
                    serde_json::from_str::<serde_json::Value>(lines[1]).unwrap()["t_s"].clone();
            }),
            vec![":3:", "repeats the line before's time"],
        ),
        (
            edit(0, &|v| v["gpus"] = serde_json::json!([0, 0])),
            vec![":1:", "gpus: \"0\" is listed twice"],
        ),
    ];
    for (body, needles) in cases {
        let path = common::write(dir.path(), "rec.jsonl", &body);
        common::one_line_error(
            &[
                "watch",
                "--replay",
                path.to_str().unwrap(),
                "--replay-speed",
                "1000",
            ],
            Some(2),
            &needles,
        );
    }
}

/// A soak.csv whose rows no recorder writes is refused at its line and column (each was judged
/// PASS): a utilization of 200 %, a rate in furlongs, a GPU's row back in time or at the time
/// of its row before.
#[test]
fn a_soak_recording_with_impossible_rows_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(common::crate_file("tests/data/soak-h100-faults-seed47.csv"))
            .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let third = lines[3];
    let cases = [
        (
            3,
            third.replacen(",100,sw_power_cap,", ",200,sw_power_cap,", 1),
            "column util_percent: \"200\" is out of range",
        ),
        (
            3,
            third.replacen(",TFLOP/s,", ",furlongs,", 1),
            "column unit: \"furlongs\" is not the phase's unit (TFLOP/s for gemm)",
        ),
        (
            3,
            third.replacen("3.0,0,", "1.0,0,", 1),
            "column time_s: \"1.0\" is not after GPU 0's row before (2)",
        ),
    ];
    for (line, edited, needle) in cases {
        assert_ne!(edited, lines[line], "{needle}");
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        out[line] = edited;
        let path = common::write(dir.path(), "soak.csv", &(out.join("\n") + "\n"));
        common::one_line_error(
            &["check", "--soak-replay", path.to_str().unwrap()],
            Some(2),
            &["soak.csv line 4", needle],
        );
    }
}

/// A flag that changes nothing where it is given is said, not silently ignored: measuring flags
/// with the model, a replay's pace without a replay, the burn-in's loads without a burn-in, the
/// quick preset on a replay, prices without the scaling stage.
#[test]
fn a_flag_that_would_change_nothing_is_refused() {
    let soak = common::data_path("soak-h100-5min.csv");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--workload",
                "resnet50",
                "--python",
                "/x",
            ],
            "--python only applies with --measure",
        ),
        (
            vec![
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--workload",
                "resnet50",
                "--framework-timeout",
                "0",
            ],
            "--framework-timeout only applies with --measure",
        ),
        (
            vec![
                "bench",
                "collectives",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--graph",
            ],
            "--graph runs NCCL",
        ),
        (
            vec!["check", "--catalog", "dgx-h100", "--replay-speed", "2"],
            "--replay-speed paces a replay",
        ),
        (
            vec!["check", "--soak-replay", &soak, "--soak-load", "gemm"],
            "--soak-load chooses",
        ),
        (
            vec!["check", "--soak-replay", &soak, "--quick"],
            "--quick shortens",
        ),
        (
            vec![
                "--bench",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--suite",
                "topology",
                "--price-per-gpu-hour",
                "2",
                "--out",
                "/nonexistent/x",
            ],
            "add scaling to --suite",
        ),
    ];
    for (args, needle) in cases {
        common::one_line_error(&args, Some(2), &[needle]);
    }
}

/// No modeled copy or collective of a buffer larger than the GPU holds: such a run would end
/// out of memory on the machine (it was modeled at 55 GB/s for 1,024 TiB on 80 GB GPUs), and a
/// size beyond any GPU's memory is refused with the limit.
#[test]
fn a_size_no_gpu_holds_is_refused_or_not_modeled() {
    common::one_line_error(
        &[
            "bench",
            "bandwidth",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--sizes",
            "1024T",
        ],
        Some(2),
        &["--sizes", "larger than any GPU's memory (at most 16T)"],
    );
    let dir = tempfile::tempdir().unwrap();
    for (cmd, file) in [("bandwidth", "bw.json"), ("collectives", "coll.json")] {
        let json = dir.path().join(file);
        let r = common::run(&[
            "bench",
            cmd,
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--sizes",
            "100G",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let rows = v["results"].as_array().unwrap();
        assert!(!rows.is_empty());
        // Latency tests chase a small buffer of their own, whatever the size.
        for row in rows
            .iter()
            .filter(|r| !r["test"].as_str().is_some_and(|t| t.starts_with("latency")))
        {
            assert_ne!(row["status"], "ok", "{cmd}: {row}");
            if row["status"] == "skipped" && row["reason"].as_str().unwrap().contains("buffer") {
                assert!(
                    row["reason"].as_str().unwrap().contains("fit in GPU"),
                    "{row}"
                );
            }
        }
    }
}

/// A copy figure above its line rate (an edited nvbandwidth cell, 99,999 GB/s of H2D) is not
/// set against another machine's: compare leaves the cell out and says so (it printed
/// +90,430 %).
#[test]
fn compare_leaves_out_a_copy_figure_above_its_line_rate() {
    let dir = tempfile::tempdir().unwrap();
    let bundled = common::crate_file("assets/reports/h200-2x-sxm-2026-11-28.json");
    let mut report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&bundled).unwrap()).unwrap();
    let rows = report["bandwidth"]["results"].as_array_mut().unwrap();
    // A cell at the size compare reads (512 MiB, the key figures').
    let h2d = rows
        .iter_mut()
        .find(|r| r["test"] == "h2d" && r["status"] == "ok" && r["bytes"] == 512u64 << 20)
        .unwrap();
    let line = h2d["line_rate_gbps"].as_f64().unwrap();
    for f in ["median_gbps", "max_gbps"] {
        h2d[f] = serde_json::json!(99_999.0);
    }
    h2d["efficiency"] = serde_json::json!(99_999.0 / line);
    let edited = common::write(dir.path(), "edited.json", &report.to_string());
    let r = common::run(&[
        "compare",
        bundled.to_str().unwrap(),
        edited.to_str().unwrap(),
        "--csv",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let edited_row = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("\"H2D"))
        .nth(1)
        .unwrap();
    assert!(
        edited_row.contains("1 cell(s) above the line rate left out"),
        "{edited_row}"
    );
    assert!(!r.stdout.contains("99999"), "{}", r.stdout);
}

/// A negative count or size reaches its flag's own check (clap called it an unexpected
/// argument), and an empty `--remote` is refused before anything says "connecting".
#[test]
fn negative_values_and_an_empty_host_name_their_flag() {
    for (args, needles) in [
        (vec!["watch", "--count", "-1"], vec!["--count", "-1"]),
        (
            vec![
                "bench",
                "bandwidth",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--sizes",
                "-4K",
            ],
            vec!["--sizes", "-4K"],
        ),
        (
            vec!["topo", "--remote", ""],
            vec!["--remote: no host given"],
        ),
    ] {
        common::one_line_error(&args, Some(2), &needles);
    }
}

/// `compare -` reads a machine from standard input: empty input said what `compare` takes (it
/// named `nvidia-smi topo -m` only), and a report piped in is compared as a report.
#[test]
fn compare_reads_standard_input_as_a_report_or_a_capture_and_names_empty_input() {
    use std::io::Write;
    let piped = |bytes: &[u8]| {
        let mut child = headless()
            .args(["compare", "-", "--catalog", "dgx-h100"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, _, err) = piped(b"");
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("<stdin>: empty input") && err.contains("scalescope report"),
        "{err}"
    );
    let report = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/reports/h200-2x-sxm-2026-11-28.json"
    ))
    .unwrap();
    let (code, out, err) = piped(&report);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("[A] 2× H200 SXM"), "{out}");
}

/// A price list with a trailing comma said "invalid value ''", and `1e400` was echoed as `inf`:
/// each now says what is wrong with the entry.
#[test]
fn price_lists_say_which_entry_is_wrong() {
    let report = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/reports/h200-2x-sxm-2026-11-28.json"
    );
    for (value, says) in [
        ("3.5,", "an empty entry"),
        ("3.5,,2", "an empty entry"),
        ("1e400", "1e400 is too large"),
        ("cheap", "'cheap' is not a number"),
    ] {
        common::one_line_error(
            &[
                "compare",
                report,
                "--catalog",
                "dgx-h100",
                "--price-per-gpu-hour",
                value,
            ],
            Some(2),
            &["--price-per-gpu-hour", says],
        );
    }
}
