//! The `scale` campaign: machines of 1 to 1,500 GPUs, as generated `nvidia-smi topo -m`
//! captures and catalog entries, through `topo`, `bench bandwidth --modeled` and `--bench
//! --modeled`, every case under a 4 GiB address-space cap and the runner's time limit.
//!
//! A machine within scalescope's limit (`MAX_GPUS`, 1,024) must be modeled: exit 0. One above it
//! must be refused with the one-line error that names the limit: exit 2. Either way within the
//! time limit and the memory cap — the 1,000-GPU `--bench` took over 10 s and a 2,000-GPU
//! capture aborted allocating.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Once;

use crate::{Campaign, Case, Outcome, Rng, contract, no_bad_figures};

/// scalescope's largest GPU count (`scalescope::model::MAX_GPUS`).
const MAX_GPUS: usize = 1024;
/// The address-space cap every case runs under (the "blow-up (4 GB)").
const MEMORY_CAP: u64 = 4 << 30;

pub struct Scale;

/// Caps this process's address space at [`MEMORY_CAP`], once; every binary the runner starts
/// afterwards inherits the cap, as under `prlimit --as`. The runner itself needs a few MB.
fn cap_memory() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let limit = libc::rlimit {
            rlim_cur: MEMORY_CAP,
            rlim_max: MEMORY_CAP,
        };
        // SAFETY: setrlimit reads the struct on this stack frame and changes only this process's
        // limit (inherited by its children).
        let rc = unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
        assert_eq!(rc, 0, "setrlimit(RLIMIT_AS)");
    });
}

/// A GPU count: mostly small machines (cheap in a debug build), some near and above the limit.
fn gpu_count(rng: &mut Rng) -> usize {
    match rng.below(20) {
        0..=11 => 1 + rng.below(16),
        12..=15 => 17 + rng.below(112),
        16..=17 => 129 + rng.below(MAX_GPUS - 128),
        18 => MAX_GPUS - 4 + rng.below(9),
        _ => MAX_GPUS + 1 + rng.below(1500 - MAX_GPUS),
    }
}

/// A symmetric `topo -m` matrix of `n` GPUs in NVLink domains of `domain` GPUs (every pair of a
/// domain NV`k`, other pairs a PCIe path), with `nics` NIC columns.
fn capture(rng: &mut Rng, n: usize, domain: usize, nics: usize) -> String {
    let nv = format!("NV{}", 1 + rng.below(18));
    let paths = ["SYS", "NODE", "PHB", "PXB", "PIX"];
    let far = paths[rng.below(paths.len())];
    let mut out = String::with_capacity(n * n * 6);
    out.push('\t');
    for g in 0..n {
        let _ = write!(out, "GPU{g}\t");
    }
    for k in 0..nics {
        let _ = write!(out, "NIC{k}\t");
    }
    out.push_str("CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    for a in 0..n {
        let _ = write!(out, "GPU{a}");
        for b in 0..n {
            let cell = if a == b {
                " X "
            } else if a / domain == b / domain {
                &nv
            } else {
                far
            };
            let _ = write!(out, "\t{cell}");
        }
        for _ in 0..nics {
            out.push_str("\tSYS");
        }
        let _ = writeln!(out, "\t0-63\t{}\t\tN/A", a % 2);
    }
    for k in 0..nics {
        let _ = write!(out, "NIC{k}");
        for _ in 0..n {
            out.push_str("\tSYS");
        }
        for j in 0..nics {
            out.push_str(if j == k { "\t X " } else { "\tSYS" });
        }
        out.push('\n');
    }
    out.push_str("\nLegend:\n\n  X    = Self\n");
    if nics > 0 {
        out.push_str("\nNIC Legend:\n\n");
        for k in 0..nics {
            let _ = writeln!(out, "  NIC{k}: mlx5_{k}");
        }
    }
    out
}

/// A catalog entry of `n` GPUs, all pairs NV18. Its file is at most 1 MiB, so entries above
/// ~200 GPUs carry only a few rows: those test the count's own check.
fn catalog(n: usize) -> String {
    let mut out = String::from(
        "[machine]\nid = \"fuzz-scale\"\nname = \"Generated\"\nsummary = \"generated\"\n\
         source = \"examples/fuzz/scale.rs\"\n\n[gpu]\nmodel = \"NVIDIA H100 80GB HBM3\"\n",
    );
    let _ = writeln!(
        out,
        "count = {n}\nmemory_mib = 81920\npcie_gen = 5\npcie_width = 16\n\
         nvlink_generation = 4\nnvlinks = 18\nnvlink_gbps_per_link = 26.562\n\n[topology]\ngpus = ["
    );
    let rows = if n <= 200 { n } else { 2 };
    for a in 0..rows {
        let cells: Vec<&str> = (0..n).map(|b| if a == b { "X" } else { "NV18" }).collect();
        let _ = writeln!(out, "  \"{}\",", cells.join(" "));
    }
    out.push_str("]\n");
    out
}

impl Campaign for Scale {
    fn name(&self) -> &'static str {
        "scale"
    }

    fn default_cases(&self) -> usize {
        1_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        cap_memory();
        let n = gpu_count(rng);
        let from_catalog = n <= 200 && rng.below(4) == 0 || n > MAX_GPUS && rng.below(4) == 0;
        let (file, bytes, origin) = if from_catalog {
            let bytes = catalog(n).into_bytes();
            (
                dir.join("machine.toml"),
                bytes,
                format!("catalog entry of {n} GPUs"),
            )
        } else {
            let domain = *rng.pick(&[1, 2, 8, 72, n.max(1)]);
            let nics = if rng.below(4) == 0 {
                1 + rng.below(8)
            } else {
                0
            };
            let bytes = capture(rng, n, domain, nics).into_bytes();
            (
                dir.join("topo-m.txt"),
                bytes,
                format!("topo -m of {n} GPUs, NVLink domains of {domain}, {nics} NICs"),
            )
        };
        let _ = std::fs::write(&file, &bytes);
        let f = file.to_string_lossy().to_string();
        let source = if from_catalog {
            "--catalog"
        } else {
            "--import"
        };
        let out = dir.join("out").to_string_lossy().to_string();
        let csv = dir.join("bw.csv").to_string_lossy().to_string();
        // The whole suite only where a debug build models it well within the time limit.
        let args: Vec<String> = match rng.below(if n <= 64 { 5 } else { 4 }) {
            0 => vec!["topo", source, &f],
            1 => vec!["topo", source, &f, "--format", "csv"],
            2 => vec![
                "bench",
                "bandwidth",
                "--modeled",
                source,
                &f,
                "--tests",
                "p2p_read_ce,h2d",
                "--sizes",
                "64M",
                "--csv",
                &csv,
            ],
            3 => vec![
                "--bench",
                "--modeled",
                source,
                &f,
                "--suite",
                "topology,bandwidth",
                "--out",
                &out,
            ],
            _ => vec!["--bench", "--modeled", source, &f, "--out", &out],
        }
        .into_iter()
        .map(str::to_string)
        .collect();
        Case {
            args,
            input: bytes,
            origin,
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        contract(o)?;
        no_bad_figures(o)?;
        let n: usize = case
            .origin
            .split_whitespace()
            .find_map(|w| w.parse().ok())
            .unwrap_or(0);
        if n <= MAX_GPUS && o.code != Some(0) {
            return Err(format!(
                "a machine of {n} GPUs (within the limit) not modeled: exit {:?}",
                o.code
            ));
        }
        if n > MAX_GPUS && (o.code != Some(2) || !o.stderr.contains("at most 1024 GPUs")) {
            return Err(format!(
                "a machine of {n} GPUs (over the limit) not refused by its count: exit {:?}",
                o.code
            ));
        }
        Ok(())
    }
}
