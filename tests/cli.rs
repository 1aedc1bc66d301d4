//! The command line, end to end, on a machine without GPUs: catalog and imported topologies,
//! golden CSV files, the modeled backend, and bad input (one-line errors, exit code 2).

mod common;

use std::path::PathBuf;

use common::{crate_file, data, scalescope};

fn golden(name: &str) -> PathBuf {
    crate_file("tests/golden").join(name)
}

/// Compares `actual` with the golden file, or writes it when UPDATE_GOLDEN=1.
fn check_golden(name: &str, actual: &str) {
    let path = golden(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1 once)", path.display()));
    assert_eq!(actual, expected, "output differs from {}", path.display());
}

fn stdout_of(args: &[&str]) -> String {
    let out = scalescope().args(args).output().expect("runs");
    assert!(
        out.status.success(),
        "scalescope {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs and expects failure with `code` and a single-line message on stderr containing `needle`.
fn fails_with(args: &[&str], code: i32, needle: &str) -> String {
    let out = scalescope().args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(code),
        "scalescope {args:?}: {stderr}"
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected a one-line error, got: {stderr}");
    assert!(lines[0].starts_with("Error: "), "{stderr}");
    assert!(
        stderr.contains(needle),
        "{stderr:?} should mention {needle:?}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn catalog_lists_entries() {
    let out = stdout_of(&["--catalog"]);
    for id in [
        "dgx-h100",
        "hgx-a100",
        "l40s-8x-pcie",
        "rtx4090-4x-pcie",
        "h100-pcie-2x-nvlink",
    ] {
        assert!(out.contains(id), "{id} missing from:\n{out}");
    }
}

#[test]
fn links_csv_golden_dgx_h100() {
    check_golden(
        "links-dgx-h100.csv",
        &stdout_of(&["topo", "--catalog", "dgx-h100", "--format", "csv"]),
    );
}

/// The source line names the machine and how it is known, never as live: a catalog entry is
/// "not measured", an import is "imported nvidia-smi output".
#[test]
fn source_line_says_catalog_or_imported_never_live() {
    let out = stdout_of(&["topo", "--catalog", "dgx-h100"]);
    assert!(
        out.contains("Source: NVIDIA DGX H100 (catalog entry, not measured)"),
        "{out}"
    );
    let path = data("dgx-a100-topo-m.txt");
    let out = stdout_of(&["topo", "--import", path.to_str().unwrap()]);
    let line = out
        .lines()
        .find(|l| l.starts_with("Source: "))
        .expect("a source line");
    assert!(line.contains("(imported nvidia-smi output)"), "{line}");
    for out in [&out, &stdout_of(&["topo", "--catalog", "dgx-h100"])] {
        assert!(!out.contains("live"), "{out}");
        assert!(!out.contains("measured here"), "{out}");
    }
}

#[test]
fn gpus_csv_golden_l40s() {
    check_golden(
        "gpus-l40s-8x-pcie.csv",
        &stdout_of(&[
            "topo",
            "--catalog",
            "l40s-8x-pcie",
            "--format",
            "csv",
            "--table",
            "gpus",
        ]),
    );
}

#[test]
fn links_csv_golden_imported_a100() {
    let path = data("dgx-a100-topo-m.txt");
    check_golden(
        "links-dgx-a100-import.csv",
        &stdout_of(&[
            "topo",
            "--import",
            path.to_str().unwrap(),
            "--format",
            "csv",
        ]),
    );
}

#[test]
fn links_csv_has_the_documented_leading_columns_and_every_ordered_pair() {
    let out = stdout_of(&["topo", "--catalog", "dgx-h100", "--format", "csv"]);
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(
        "gpu_a,gpu_b,link,nvlinks,line_rate_gbps,p2p_read,p2p_write,p2p_nvlink,p2p_atomics"
    ));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 8 * 7);
    assert!(rows.iter().all(|r| r.split(',').nth(2) == Some("NV")));
}

#[test]
fn table_output_can_be_imported_again() {
    let table = stdout_of(&["topo", "--catalog", "dgx-h100"]);
    assert!(table.contains("NV18"));
    // The connectivity and P2P blocks are nvidia-smi's format; the line-rate block is ours.
    let start = table.find("Line rate").expect("line-rate block");
    let end = start + table[start..].find("\n\n").expect("block end");
    let table = format!("{}{}", &table[..start], &table[end..]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("table.txt");
    std::fs::write(&path, &table).unwrap();
    let again = stdout_of(&[
        "topo",
        "--import",
        path.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    let original = stdout_of(&["topo", "--catalog", "dgx-h100", "--format", "csv"]);
    // Link class, NVLink count and P2P columns survive the round trip; line rates do not
    // (nvidia-smi text carries none).
    let key = |csv: &str| -> Vec<String> {
        csv.lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split(',').collect();
                format!("{},{},{},{},{},{}", c[0], c[1], c[2], c[3], c[5], c[6])
            })
            .collect()
    };
    assert_eq!(key(&again), key(&original));
}

#[test]
fn json_round_trips() {
    let out = stdout_of(&[
        "topo",
        "--catalog",
        "h100-pcie-2x-nvlink",
        "--format",
        "json",
    ]);
    let topo: scalescope::model::Topology = serde_json::from_str(&out).unwrap();
    assert_eq!(topo.source.kind(), "catalog");
    assert_eq!(topo.gpus.len(), 2);
}

#[test]
fn import_from_stdin() {
    let text = std::fs::read(data("dgx-a100-topo-m.txt")).unwrap();
    let out = scalescope()
        .args(["topo", "--import", "-", "--format", "csv"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        1 + 8 * 7
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    fails_with(&["topo", "--import", empty.to_str().unwrap()], 2, "empty");

    let binary = dir.path().join("binary.txt");
    std::fs::write(&binary, [0u8, 159, 146, 150, 0, 1, 2, 255]).unwrap();
    fails_with(&["topo", "--import", binary.to_str().unwrap()], 2, "binary");

    let missing_col = dir.path().join("missing.txt");
    std::fs::write(
        &missing_col,
        "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-7\nGPU1\tNV4\n",
    )
    .unwrap();
    fails_with(
        &["topo", "--import", missing_col.to_str().unwrap()],
        2,
        ":3:",
    );

    fails_with(&["topo", "--catalog", "nosuch"], 2, "nosuch");
    fails_with(
        &["topo", "--import", "/no/such/file.txt"],
        2,
        "/no/such/file.txt",
    );
    fails_with(
        &[
            "bench",
            "bandwidth",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--gpus",
            "0,9",
        ],
        2,
        "no GPU 9",
    );
    fails_with(
        &[
            "bench",
            "bandwidth",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--sizes",
            "12Q",
        ],
        2,
        "--sizes",
    );
    fails_with(
        &[
            "bench",
            "bandwidth",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--tests",
            "warp",
        ],
        2,
        "warp",
    );
}

#[test]
fn bad_flags_exit_2_without_panic() {
    let out = scalescope()
        .args(["topo", "--format", "xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn topo_without_driver_says_so_and_exits_1() {
    if !common::no_driver() {
        return;
    }
    let err = fails_with(&["topo"], 1, "libnvidia-ml.so.1");
    assert!(
        err.contains("--import") && err.contains("--catalog"),
        "{err}"
    );
}

#[test]
fn bench_without_gpu_exits_1_and_mentions_modeled() {
    if !common::no_driver() {
        return;
    }
    fails_with(&["bench", "bandwidth"], 1, "--modeled");
    fails_with(&["bench", "bandwidth", "--modeled"], 1, "--catalog");
}

#[test]
fn measuring_another_machine_is_refused() {
    fails_with(
        &["bench", "bandwidth", "--catalog", "dgx-h100"],
        2,
        "--modeled",
    );
}

#[test]
fn modeled_bandwidth_writes_labeled_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bw.csv");
    let json = dir.path().join("bw.json");
    let out = stdout_of(&[
        "bench",
        "bandwidth",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--gpus",
        "0,1,2",
        "--tests",
        "h2d,p2p_read_ce,p2p_bidir_ce,latency_d2d,local_copy",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.contains("p2p_read_ce") && out.contains("modeled"),
        "{out}"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header[..15].join(","),
        "test,method,src,dst,bytes,samples,median_gbps,min_gbps,max_gbps,cv,line_rate_gbps,efficiency,wrong,status,source"
    );
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    // 3 h2d + 6 read + 3 bidir + 6 latency + 3 local.
    assert_eq!(rows.len(), 21);
    assert!(rows.iter().all(|r| &r[14] == "modeled"));
    for r in rows.iter().filter(|r| &r[0] == "latency_d2d") {
        assert!(r[6].is_empty(), "latency rows leave GB/s empty");
        assert!(!r[15].is_empty(), "latency rows carry latency_ns");
    }
    for r in rows.iter().filter(|r| &r[0] == "local_copy") {
        assert_eq!(&r[13], "skipped");
        assert!(r[6].is_empty(), "not modeled is empty, never 0");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["source"], "modeled");
    assert_eq!(v["results"].as_array().unwrap().len(), 21);
}

#[test]
fn pairs_per_link_kind_measures_one_pair_of_each_kind() {
    // The DGX H100 is NV18 between every pair: one pair, both directions, instead of 56.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bw.csv");
    stdout_of(&[
        "bench",
        "bandwidth",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--tests",
        "p2p_read_ce,p2p_bidir_ce,h2d",
        "--pairs-per-link-kind",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let cells: Vec<(String, String, String)> = csv::Reader::from_reader(text.as_bytes())
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_string(), r[2].to_string(), r[3].to_string())
        })
        .collect();
    let of = |t: &str| -> Vec<(String, String)> {
        cells
            .iter()
            .filter(|c| c.0 == t)
            .map(|c| (c.1.clone(), c.2.clone()))
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(of("p2p_read_ce"), vec![pair("0", "1"), pair("1", "0")]);
    assert_eq!(of("p2p_bidir_ce"), vec![pair("0", "1")]);
    assert_eq!(of("h2d").len(), 8, "host tests keep every GPU");
}

#[test]
fn modeled_import_warns_about_assumptions() {
    let path = data("dgx-a100-topo-m.txt");
    let out = scalescope()
        .args([
            "bench",
            "bandwidth",
            "--modeled",
            "--import",
            path.to_str().unwrap(),
            "--tests",
            "p2p_read_ce,h2d",
            "--gpus",
            "0,1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("25 GB/s per NVLink"), "{stderr}");
    assert!(stderr.contains("PCIe Gen4 x16"), "{stderr}");
    let with_flag = scalescope()
        .args([
            "bench",
            "bandwidth",
            "--modeled",
            "--import",
            path.to_str().unwrap(),
            "--tests",
            "h2d",
            "--gpus",
            "0",
            "--pcie",
            "gen5x16",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&with_flag.stderr).contains("PCIe Gen5 x16"));
}

#[test]
fn modeled_collectives_csv_has_the_documented_columns_and_busbw_factors() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("coll.csv");
    let out = stdout_of(&[
        "bench",
        "collectives",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--gpus",
        "0,1,2,3",
        "--ops",
        "all_reduce,all_gather",
        "--algo",
        "nccl,ring",
        "--sizes",
        "1M,1G",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.contains("MODELED"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header[..14].join(","),
        "op,algo,backend_version,n_gpus,gpus,bytes,dtype,in_place,time_us,algbw_gbps,busbw_gbps,wrong,status,source"
    );
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    // nccl: 2 ops × 2 sizes; ring: all_reduce only × 2 sizes (skipped: only NCCL is modeled).
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert_eq!(&r[13], "modeled");
        assert_eq!(&r[3], "4");
        if &r[1] == "nccl" {
            let (algbw, busbw): (f64, f64) = (r[9].parse().unwrap(), r[10].parse().unwrap());
            let factor = if &r[0] == "all_reduce" { 1.5 } else { 0.75 };
            assert!((busbw / algbw - factor).abs() < 1e-3, "{r:?}");
        } else {
            assert_eq!(&r[12], "skipped");
            assert!(r[10].is_empty(), "not modeled is empty, never 0");
        }
    }
}

#[test]
fn collectives_bad_flags_exit_2() {
    fails_with(
        &[
            "bench",
            "collectives",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--ops",
            "all_reduce,gossip",
        ],
        2,
        "gossip",
    );
    fails_with(
        &[
            "bench",
            "collectives",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--dtype",
            "f8",
        ],
        2,
        "--dtype",
    );
}

#[test]
fn collectives_without_gpu_exits_1_and_mentions_modeled() {
    if !common::no_driver() {
        return;
    }
    fails_with(&["bench", "collectives"], 1, "--modeled");
}

/// The catalog list ends with the commands that take an entry: `topo` and `--bench --modeled`
/// (issue X: it named only `topo`).
#[test]
fn catalog_list_offers_the_modeled_report() {
    let out = stdout_of(&["--catalog"]);
    let last = out.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(last.contains("scalescope topo --catalog ID"), "{last}");
    assert!(
        last.contains("scalescope --bench --modeled --catalog ID"),
        "{last}"
    );
}

/// A modeled `--bench` of a capture without PCIe links says what supplies them: `--bench`
/// takes no --pcie (issue X: it said "set --pcie gen5x16"), so the advice is another --import
/// or `bench bandwidth --modeled --pcie`; and the capture with `nvidia-smi -q` assumes nothing.
#[test]
fn bench_modeled_advice_on_missing_pcie_names_flags_that_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let topo = data("h200-2x-device-topo-m.txt");
    let q = data("h200-2x-device-smi-q.txt");
    let run = |imports: &[&PathBuf]| {
        let mut args: Vec<String> = vec!["--bench".into(), "--modeled".into()];
        for i in imports {
            args.push("--import".into());
            args.push(i.display().to_string());
        }
        for a in ["--suite", "topology,bandwidth", "--out"] {
            args.push(a.into());
        }
        args.push(out.display().to_string());
        let o = scalescope().args(&args).output().expect("runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let err = run(&[&topo]);
    let line = err
        .lines()
        .find(|l| l.contains("assumed PCIe"))
        .unwrap_or_else(|| panic!("no PCIe assumption: {err}"));
    assert!(!line.contains("set --pcie"), "{line}");
    assert!(
        line.contains("nvidia-smi -q") && line.contains("bench bandwidth --modeled"),
        "{line}"
    );
    let both = run(&[&topo, &q]);
    assert!(!both.contains("assumed PCIe"), "{both}");
    // What it points to is accepted.
    let o = scalescope()
        .args([
            "bench",
            "bandwidth",
            "--modeled",
            "--pcie",
            "gen5x16",
            "--import",
        ])
        .arg(&topo)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A figure that is not known reads "—" and why, never "— GB/s" (issue X: the modeled GB200
/// NVL72's `--bench` summary printed "H2D — GB/s": no host-copy reference over NVLink-C2C).
#[test]
fn a_missing_summary_figure_says_why_without_a_unit() {
    use scalescope::job::Stage;
    use scalescope::report::compare::{format_figure_in, h2d_gbps, p2p_gbps};
    let r = common::modeled_stages("gb200-nvl72", vec![Stage::Topology, Stage::Bandwidth]);
    let h2d = format_figure_in(&h2d_gbps(&r), "GB/s");
    assert!(h2d.starts_with("— (") && !h2d.ends_with("GB/s"), "{h2d}");
    assert!(h2d.contains("NVLink-C2C"), "{h2d}");
    let p2p = format_figure_in(&p2p_gbps(&r), "GB/s");
    assert!(p2p.starts_with('~') && p2p.ends_with(" GB/s"), "{p2p}");
}

/// Inputs a user typed wrong, each one line naming the flag and what is wrong (a user's
/// walkthrough of 2026-12-07 found each printing something less): a command without its
/// subcommand, a calibration faster than any GPU, sizes with an empty item or an open sweep, a
/// negative number where clap took it for a flag, an empty catalog name.
#[test]
fn typed_mistakes_get_one_line_that_names_them() {
    let line = common::one_line_error(
        &["bench"],
        Some(2),
        &["`scalescope bench` needs a subcommand"],
    );
    assert!(
        line.contains("bandwidth, collectives, scaling") && line.len() < 200,
        "{line}"
    );
    common::one_line_error(
        &["fleet"],
        Some(2),
        &["`scalescope fleet`", "report", "run"],
    );
    for (step, needles) in [
        (
            "1e-9",
            &[
                "faster than this GPU",
                "TFLOP/s dense",
                "256 samples per GPU",
            ][..],
        ),
        // 6.4× faster than an H100's dense bf16 peak computes ResNet-50's 256 images: FP8
        // kernels could reach 2×, not 6.
        (
            "1",
            &["over 2× faster than this GPU", "at least 6.37 ms"][..],
        ),
        ("-5", &["not a positive number"][..]),
    ] {
        let line = common::one_line_error(&calibrated(step), Some(2), &["--step-ms-1gpu"]);
        for n in needles {
            assert!(line.contains(n), "{line}");
        }
    }
    for (sizes, needle) in [("4K,,1M", "empty item"), ("4K..", "sweep \"4K..\"")] {
        common::one_line_error(
            &[
                "bench",
                "bandwidth",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--sizes",
                sizes,
            ],
            Some(2),
            &["--sizes", needle],
        );
    }
    common::one_line_error(
        &["check", "--catalog", "dgx-h100", "--gpus", "-1"],
        Some(2),
        &["--gpus", "\"-1\""],
    );
    common::one_line_error(
        &["topo", "--catalog", ""],
        Some(2),
        &["empty name", "scalescope --catalog"],
    );
    let line = common::one_line_error(
        &["check", "--catalog", "dgx-h100", "--gpus", "0,8"],
        Some(2),
        &["no GPU 8"],
    );
    assert!(line.contains("(the machine has GPUs 0–7)"), "{line}");
}

/// `bench scaling` of ResNet-50 on the modeled DGX H100 with your own 1-GPU step of `step` ms.
fn calibrated(step: &str) -> [&str; 9] {
    [
        "bench",
        "scaling",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--workload",
        "resnet50",
        "--step-ms-1gpu",
        step,
    ]
}

/// A user's own 1-GPU step is a calibration only where a GPU could run it; a plausible step
/// still calibrates.
#[test]
fn a_calibration_is_held_to_the_fastest_gpu() {
    let w = scalescope::scaling::workload::resolve("resnet50").unwrap();
    assert!(scalescope::scaling::rates::possible_step(&w, 1e-6).is_err());
    // ResNet-50 at 256 needs 2.5 ms at the fastest peak: 1 ms is a stretch, not a typo.
    assert!(scalescope::scaling::rates::possible_step(&w, 1.0).is_ok());
    assert!(scalescope::scaling::rates::possible_step(&w, 60.0).is_ok());
    let out = stdout_of(&calibrated("60"));
    assert!(out.contains("your 1-GPU step: 60.0 ms"), "{out}");
}

/// `bench bandwidth`'s summary line reads one size (512 MiB, the key figures'), never a pool
/// of a sweep's sizes: over 4 KiB … 1 GiB it said "median 96.8 GB/s … 32% of line rate" for a
/// link modeled at 248 GB/s.
#[test]
fn a_sweep_summary_reads_one_size() {
    let out = common::run(&[
        "bench",
        "bandwidth",
        "--modeled",
        "--catalog",
        "h100-pcie-2x-nvlink",
        "--sizes",
        "4K..1G",
    ]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("summary p2p_write_ce:"))
        .unwrap();
    assert!(line.contains("at 512 MiB"), "{line}");
    let median: f64 = line
        .split("median ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    assert!(median > 200.0, "a pool of sizes: {line}");
}

/// `bench scaling --workload list` lists the catalog's workloads, every one `--workload` takes
/// (only the error of an unknown name listed them).
#[test]
fn the_workload_catalog_can_be_listed() {
    let out = common::run(&["bench", "scaling", "--workload", "list"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    for w in scalescope::scaling::workload::catalog() {
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{} ", w.name))),
            "{} missing: {}",
            w.name,
            out.stdout
        );
    }
    let resnet = out
        .stdout
        .lines()
        .find(|l| l.starts_with("resnet50 "))
        .unwrap();
    assert!(
        resnet.contains("25.6M") && resnet.contains(" 256 "),
        "{resnet}"
    );
}
