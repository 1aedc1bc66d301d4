//! Harness code the integration tests share: the binary and how it is run, the test data
//! folder, small files in temporary folders, the two-GPU topology of the GPU tests, a synthetic
//! burn-in report ([`soak`]), fleets of modeled nodes ([`fleet`]), and (with the `gui` feature) the egui_kittest harnesses of the app
//! and of a view drawn alone.
//! [`sshd`] starts real OpenSSH daemons on localhost with throwaway keys for the ssh tests.
//!
//! Each test binary that needs it says `mod common;` and uses a part of it, so the rest would
//! warn as unused there.
#![allow(dead_code)]

pub mod fleet;
pub mod soak;
pub mod sshd;
#[cfg(feature = "gui")]
pub mod ui;

use std::path::{Path, PathBuf};

use scalescope::model::{Gpu, Topology, TopologySource};

/// A CSV file's header and rows, every cell as text.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// A CSV file as maps from column to cell, one per row.
pub fn csv_rows(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let (header, rows) = read_csv(path);
    rows.into_iter()
        .map(|r| header.iter().cloned().zip(r).collect())
        .collect()
}

/// The scalescope binary of this build.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_scalescope"))
}

/// The binary with the tests' environment, for output and exit codes (assert_cmd): no GPU
/// visible, so that a developer's GPU machine does not change what the tests see, and Mesa's
/// shader cache in the temporary folder rather than the home folder.
pub fn scalescope() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(bin());
    c.env("CUDA_VISIBLE_DEVICES", "")
        .env("MESA_SHADER_CACHE_DIR", mesa_cache());
    c
}

/// The same, as a `std::process::Command`, for tests that spawn the binary and signal it.
pub fn process() -> std::process::Command {
    let mut c = std::process::Command::new(bin());
    c.env("CUDA_VISIBLE_DEVICES", "")
        .env("MESA_SHADER_CACHE_DIR", mesa_cache());
    c
}

/// [`process`] with no display either: these runs must never open a window.
pub fn headless() -> std::process::Command {
    let mut c = process();
    c.env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET");
    c
}

/// What one run of the binary did.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Wall time of the run.
    pub took: std::time::Duration,
}

/// Runs the binary ([`headless`], no standard input) with `args` to its end.
pub fn run(args: &[&str]) -> Run {
    let start = std::time::Instant::now();
    let out = headless()
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
        took: start.elapsed(),
    }
}

/// Expects exit `code` (any non-zero one for `None`) and exactly one non-empty stderr line,
/// `Error: …`, containing every needle and no panic; returns the line.
pub fn one_line_error(args: &[&str], code: Option<i32>, needles: &[&str]) -> String {
    let r = run(args);
    let shown: Vec<String> = args.iter().map(|a| a.chars().take(80).collect()).collect();
    match code {
        Some(code) => assert_eq!(r.code, Some(code), "scalescope {shown:?}: {}", r.stderr),
        None => assert!(
            matches!(r.code, Some(c) if c != 0),
            "scalescope {shown:?}: exit {:?}: {}",
            r.code,
            r.stderr
        ),
    }
    let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "{shown:?}: one line expected, got: {}",
        r.stderr
    );
    assert!(lines[0].starts_with("Error: "), "{shown:?}: {}", r.stderr);
    for n in needles {
        assert!(
            lines[0].contains(n),
            "{shown:?}: {:?} should mention {n:?}",
            lines[0]
        );
    }
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    lines[0].to_string()
}

fn mesa_cache() -> PathBuf {
    std::env::temp_dir().join("scalescope-mesa")
}

/// True where no NVIDIA driver is installed (CI, developer laptops): the tests of what the
/// command line says without one run only there.
pub fn no_driver() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        "/usr/lib64/libnvidia-ml.so.1",
        "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
    ]
    .iter()
    .all(|p| !Path::new(p).exists())
}

/// A file of the crate, by its path from the crate's root.
pub fn crate_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// `src` (a report.json) as a report written before 2026-11-28's change to the mean reads: its
/// rows without `step_statistic` (their steps then read as medians), written to `dst`.
pub fn as_median_report(src: &Path, dst: &Path) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    let rows = v["scaling"]["run"]["rows"].as_array_mut().unwrap();
    let mut stripped = 0;
    for row in rows {
        if let Some(o) = row.as_object_mut() {
            stripped += usize::from(o.remove("step_statistic").is_some());
        }
    }
    assert!(
        stripped > 0,
        "{}: no row says its step statistic",
        src.display()
    );
    std::fs::write(dst, v.to_string()).unwrap();
    dst.to_path_buf()
}

/// A capture or fixture in tests/data/.
pub fn data(name: &str) -> PathBuf {
    crate_file("tests/data").join(name)
}

/// A file in tests/data/ as the importers and the command line take it.
pub fn data_path(name: &str) -> String {
    data(name).display().to_string()
}

/// The text of a file in tests/data/.
pub fn read_data(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// GPUs 0 and 1, by CUDA ordinal, and nothing known about their links (the GPU tests measure
/// them; the live topology reader is tested elsewhere).
pub fn two_gpus() -> Topology {
    let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
    t.gpus = (0..2)
        .map(|index| Gpu {
            index,
            ..Default::default()
        })
        .collect();
    t.normalize();
    t
}

/// A modeled quick `--bench` of catalog machine `id`, run in-process through the job API.
pub fn modeled(id: &str) -> scalescope::report::Report {
    modeled_stages(id, scalescope::job::Stage::ALL.to_vec())
}

/// [`modeled`] with only `stages` (topology and scaling are enough for a ranking).
#[allow(dead_code)]
pub fn modeled_stages(id: &str, stages: Vec<scalescope::job::Stage>) -> scalescope::report::Report {
    use scalescope::job::{self, Job};
    let job = Job::modeled_catalog(id, stages);
    job::run(
        &job,
        &std::sync::atomic::AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_or_else(|e| panic!("--bench --modeled --catalog {id}: {e}"))
}
