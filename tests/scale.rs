//! Machines with many GPUs (issue O, the scale paragraph of item 4): the largest GPU count the
//! tool accepts is enforced wherever a topology enters (capture, `-q` capture, catalog entry,
//! report, an agent's answer), with one line naming the limit; machines under it are modeled in
//! bounded time; checkpoint writes stay linear in the results.
//!
//! The machines are generated here as `nvidia-smi topo -m` text and catalog TOML.

mod common;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use common::{scalescope, write};
use scalescope::model::{Gpu, MAX_GPUS, Topology, TopologySource};

/// `nvidia-smi topo -m` of `n` GPUs in NVLink domains of eight (NV18 inside, SYS between).
fn topo_m(n: usize) -> String {
    let mut out = String::from("\t");
    for g in 0..n {
        let _ = write!(out, "GPU{g}\t");
    }
    out.push_str("CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    for a in 0..n {
        let _ = write!(out, "GPU{a}");
        for b in 0..n {
            let cell = match (a == b, a / 8 == b / 8) {
                (true, _) => " X ",
                (false, true) => "NV18",
                (false, false) => "SYS",
            };
            let _ = write!(out, "\t{cell}");
        }
        let _ = writeln!(out, "\t0-63\t{}\t\tN/A", a % 2);
    }
    out.push_str("\nLegend:\n\n  X    = Self\n");
    out
}

/// The error line of a refused count.
fn refused(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).to_string();
    assert_eq!(text.trim().lines().count(), 1, "one line: {text}");
    assert!(text.starts_with("Error: "), "{text}");
    text
}

#[test]
fn the_limit_holds_an_nvl72_rack_easily_and_at_least_1024_gpus() {
    const { assert!(MAX_GPUS >= 1024 && MAX_GPUS >= 72 * 8) };
    assert!(scalescope::model::check_gpu_count(MAX_GPUS).is_ok());
    let why = scalescope::model::check_gpu_count(MAX_GPUS + 1).unwrap_err();
    assert!(
        why.contains("1025 GPUs") && why.contains("at most 1024"),
        "{why}"
    );
}

#[test]
fn a_capture_over_the_limit_is_refused_by_its_header_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let capture = write(dir.path(), "topo.txt", &topo_m(MAX_GPUS + 1));
    for args in [
        vec!["topo", "--import"],
        vec!["bench", "bandwidth", "--modeled", "--import"],
        vec!["--bench", "--modeled", "--suite", "topology", "--import"],
    ] {
        let out = scalescope()
            .args(&args)
            .arg(&capture)
            .current_dir(dir.path())
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let line = refused(&out.stderr);
        assert!(
            line.contains("topo.txt:1:")
                && line.contains("1025 GPUs")
                && line.contains("at most 1024"),
            "{args:?}: {line}"
        );
    }
}

#[test]
fn a_2000_gpu_capture_is_refused_quickly_in_bounded_memory() {
    // The 2,000 GPUs aborted allocating; now the header alone decides.
    let dir = tempfile::tempdir().unwrap();
    let capture = write(dir.path(), "topo.txt", &topo_m(2000));
    let start = Instant::now();
    let out = scalescope()
        .args(["topo", "--import"])
        .arg(&capture)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(refused(&out.stderr).contains("2000 GPUs"));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_catalog_entry_over_the_limit_is_refused_by_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let entry = write(
        dir.path(),
        "big.toml",
        "[machine]\nid = \"big\"\nname = \"Big\"\nsummary = \"s\"\nsource = \"test\"\n\n\
         [gpu]\nmodel = \"H100\"\ncount = 1025\nmemory_mib = 81920\npcie_gen = 5\n\
         pcie_width = 16\n\n[topology]\ngpus = [\"X NV18\", \"NV18 X\"]\n",
    );
    let out = scalescope()
        .args(["topo", "--catalog"])
        .arg(&entry)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = refused(&out.stderr);
    assert!(
        line.contains("[gpu] count") && line.contains("at most 1024"),
        "{line}"
    );
}

#[test]
fn a_smi_query_capture_over_the_limit_is_refused() {
    let mut xml = String::from("<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n");
    for i in 0..=MAX_GPUS {
        let _ = writeln!(xml, "<gpu id=\"00000000:{:02X}:00.0\"></gpu>", i % 256);
    }
    xml.push_str("</nvidia_smi_log>\n");
    let err = scalescope::topology::smi_query::parse_query_xml(&xml, "q.xml").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("1025 GPUs") && !text.contains('\n'), "{text}");
}

/// A topology of `n` GPUs with no pair filled in.
fn bare(n: usize) -> Topology {
    let mut t = Topology::new(TopologySource::Imported {
        paths: vec!["t".into()],
    });
    t.gpus = (0..n)
        .map(|index| Gpu {
            index,
            ..Gpu::default()
        })
        .collect();
    t
}

#[test]
fn a_topology_read_from_json_over_the_limit_is_refused() {
    // Reports and an agent's answers both read topologies through serde: one check for both.
    let json = serde_json::to_string(&bare(MAX_GPUS + 1)).unwrap();
    let err = serde_json::from_str::<Topology>(&json).unwrap_err();
    assert!(err.to_string().contains("at most 1024 GPUs"), "{err}");
    let json = serde_json::to_string(&bare(MAX_GPUS)).unwrap();
    assert_eq!(
        serde_json::from_str::<Topology>(&json).unwrap().gpus.len(),
        MAX_GPUS
    );
}

#[test]
fn a_report_whose_topology_is_over_the_limit_is_refused_naming_the_field() {
    let report = common::modeled("dgx-h100");
    let mut value = serde_json::to_value(&report).unwrap();
    value["topology"] = serde_json::to_value(bare(MAX_GPUS + 1)).unwrap();
    let err = scalescope::report::parse(&value.to_string()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("topology.gpus") && text.contains("at most 1024"),
        "{text}"
    );
}

/// `0,1,…,n−1`: every GPU named, which asks `bench bandwidth` for every ordered pair.
fn all_gpus(n: usize) -> String {
    (0..n).map(|g| g.to_string()).collect::<Vec<_>>().join(",")
}

#[test]
fn bandwidth_csv_on_100_gpus_costs_about_what_the_run_without_it_costs() {
    // Was 81 s against 0.14 s: the whole CSV rewritten and fsynced after each of ~10,000 cells.
    let dir = tempfile::tempdir().unwrap();
    let capture = write(dir.path(), "topo.txt", &topo_m(100));
    let csv = dir.path().join("bw.csv");
    // Every GPU named: every ordered pair (unnamed, above 72 GPUs, the first of each kind).
    let all = all_gpus(100);
    let args = [
        "bench",
        "bandwidth",
        "--modeled",
        "--tests",
        "p2p_read_ce",
        "--sizes",
        "64M",
        "--gpus",
        &all,
        "--import",
    ];
    let time = |extra: &[&std::ffi::OsStr]| {
        let start = Instant::now();
        scalescope()
            .args(args)
            .arg(&capture)
            .args(extra)
            .timeout(Duration::from_secs(120))
            .assert()
            .success();
        start.elapsed()
    };
    let without = time(&[]);
    let with = time(&["--csv".as_ref(), csv.as_os_str()]);
    assert!(
        with < without * 3 + Duration::from_secs(2),
        "with --csv {with:?}, without {without:?}"
    );
    // Every cell is in the file: pacing drops writes, never results.
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count();
    assert_eq!(rows, 1 + 100 * 99, "header and one row per ordered pair");
}

#[test]
fn bandwidth_on_a_wide_machine_prints_a_screenful_not_every_pair() {
    // 500 GPUs took 221 s (each matrix cell looked up by a scan of every result) and printed a
    // 5,000-column matrix, 250,000 reason lines and warnings naming every GPU and pair.
    let dir = tempfile::tempdir().unwrap();
    let capture = write(dir.path(), "topo.txt", &topo_m(100));
    let out = scalescope()
        .args(["bench", "bandwidth", "--modeled", "--tests", "p2p_read_ce"])
        .args(["--sizes", "64M", "--gpus", &all_gpus(100), "--import"])
        .arg(&capture)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("the 100 × 100 matrix is not printed above 72 GPUs"),
        "{stdout}"
    );
    assert!(stdout.contains("more cell(s) not measured"), "{stdout}");
    assert!(stdout.contains("summary p2p_read_ce"), "{stdout}");
    for line in stdout.lines().chain(stderr.lines()) {
        assert!(
            line.chars().count() < 400,
            "a line of {} characters: {line:.200}",
            line.len()
        );
    }
    assert!(stdout.lines().count() < 40, "{stdout}");
    // Each assumption once as a warning (and once in the backend's line), not again at the end.
    assert_eq!(
        stderr.matches("warning: assumed PCIe").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("for all 100 GPUs"), "{stderr}");
}
