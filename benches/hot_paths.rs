//! Benchmarks of scalescope's CPU-side hot paths (divan): the `nvidia-smi topo` importer on 8-
//! to 1000-GPU captures, report parsing, the scaling model over the catalog to 1024 GPUs, CSV
//! export, the offscreen rendering of a report's PNGs, and `fleet report` over 1,000 nodes.
//!
//! ```sh
//! cargo bench --bench hot_paths             # all
//! cargo bench --bench hot_paths -- import   # those whose name contains "import"
//! ```
//! Figures measured on the development machine are in docs/BENCHMARKS.md.

use divan::{Bencher, black_box};
use scalescope::report::{self, Report};
use scalescope::scaling::{Machine, Mode, model, workload};
use scalescope::topology::{catalog, import};

fn main() {
    divan::main();
}

/// `nvidia-smi topo -m` text for `n` GPUs on an NVSwitch (NV18 between every pair), with the
/// CPU/NUMA affinity columns nvidia-smi prints.
fn capture(n: usize) -> String {
    let mut s = String::from("\t");
    for i in 0..n {
        s.push_str(&format!("GPU{i}\t"));
    }
    s.push_str("CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    for i in 0..n {
        s.push_str(&format!("GPU{i}"));
        for j in 0..n {
            s.push_str(if i == j { "\t X " } else { "\tNV18" });
        }
        s.push_str("\t0-55\t0\t\tN/A\n");
    }
    s
}

const REPORT_2X: &str = include_str!("../assets/reports/h200-2x-sxm-2026-11-22.json");
const REPORT_8X: &str = include_str!("../assets/reports/h200-8x-sxm-2026-11-22.json");

/// Import of an `n`-GPU `topo -m` capture: text → Topology.
#[divan::bench(args = [8, 64, 256, 1000], sample_count = 10)]
fn import_topo_m(bencher: Bencher, n: usize) {
    let text = capture(n);
    bencher
        .counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| import::parse(black_box(&text), "capture.txt").expect("imports"));
}

/// report.json → Report (the bundled 2- and 8-GPU `--full` reports, 0.5 and 1.1 MB).
#[divan::bench(args = ["2x", "8x"], sample_count = 20)]
fn parse_report(bencher: Bencher, which: &str) {
    let text = if which == "2x" { REPORT_2X } else { REPORT_8X };
    bencher
        .counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| report::parse(black_box(text)).expect("parses"));
}

/// The scaling model: every catalog workload on every catalog machine, weak and strong, to
/// 1024 GPUs.
#[divan::bench(sample_count = 10)]
fn scaling_model_catalog_1024(bencher: Bencher) {
    let machines: Vec<Machine> = catalog::entries()
        .iter()
        .filter_map(|e| catalog::load(&e.id).ok())
        .map(|t| Machine::modeled(&t))
        .collect();
    let workloads = workload::catalog();
    bencher.bench(|| {
        let mut rows = 0;
        for m in &machines {
            for w in &workloads {
                rows += model(w, m, &Mode::ALL, black_box(1024)).len();
            }
        }
        rows
    });
}

fn report_8x() -> Report {
    report::parse(REPORT_8X).expect("bundled report parses")
}

/// CSV export of the 8-GPU report's 817 bandwidth results and its scaling rows.
#[divan::bench(sample_count = 20)]
fn export_csv_8x(bencher: Bencher) {
    let r = report_8x();
    let bw = r
        .bandwidth
        .as_ref()
        .map(|b| b.results.clone())
        .unwrap_or_default();
    let rows = r
        .scaling
        .as_ref()
        .map(|s| s.run.rows.clone())
        .unwrap_or_default();
    bencher.bench(|| {
        let a = scalescope::export::csv::bandwidth(black_box(&bw)).expect("exports");
        let b = scalescope::export::csv::scaling(black_box(&rows)).expect("exports");
        a.len() + b.len()
    });
}

/// links.csv of an imported 1000-GPU topology (999,000 ordered pairs).
#[divan::bench(sample_count = 5)]
fn export_links_csv_1000(bencher: Bencher) {
    let t = import::parse(&capture(1000), "capture.txt").expect("imports");
    bencher.bench(|| scalescope::export::csv::links(black_box(&t)).expect("exports"));
}

/// Every page `--bench` writes (report, topology, bandwidth, collectives, scaling PNGs and
/// report.pdf) for the 2-GPU report, typeset on the CPU.
#[divan::bench(sample_count = 2, sample_size = 1)]
fn render_report_pngs_2x(bencher: Bencher) {
    let r = report::parse(REPORT_2X).expect("parses");
    bencher.bench(|| {
        scalescope::document::render_all(black_box(&r))
            .into_iter()
            .filter(|(_, png)| png.is_ok())
            .count()
    });
}

/// 1,000 node reports in a temporary folder, made once: the modeled DGX H100's health and
/// bandwidth stages (0.6 MB each), one node's GPU 3 copies 20 % slow.
fn fleet_fixture() -> &'static std::path::Path {
    use scalescope::job::{self, Job, Stage};
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary folder");
        let job = Job::modeled_catalog(
            "dgx-h100",
            vec![Stage::Topology, Stage::Health, Stage::Bandwidth],
        );
        let base = job::run(
            &job,
            &std::sync::atomic::AtomicBool::new(false),
            &mut |_| {},
        )
        .expect("modeled report");
        for i in 0..1000 {
            let mut r = base.clone();
            r.machine.hostname = Some(format!("node{i:04}"));
            r.machine.driver_version = Some("580.95.05".into());
            if i == 500 {
                for res in r.bandwidth.iter_mut().flat_map(|b| b.results.iter_mut()) {
                    if res.dst == scalescope::model::Endpoint::Gpu(3) {
                        res.median_gbps = res.median_gbps.map(|x| x * 0.8);
                    }
                }
            }
            let folder = dir.path().join("nodes").join(format!("node{i:04}"));
            std::fs::create_dir_all(&folder).expect("folder");
            std::fs::write(
                folder.join("report.json"),
                serde_json::to_vec(&r).expect("json"),
            )
            .expect("written");
        }
        dir
    })
    .path()
}

/// `fleet report` over 1,000 node reports: read on every core, judged, and fleet.csv,
/// fleet.json, fleet.html, fleet.png and fleet.pdf written — the whole command but argument
/// parsing. Issue T's limit: 2 s.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn fleet_report_1000(bencher: Bencher) {
    let dir = fleet_fixture();
    let inputs = [dir.to_path_buf()];
    let out = dir.join("fleet");
    let thresholds = scalescope::health::Thresholds::default();
    bencher.bench(|| {
        let o =
            scalescope::fleet::report(black_box(&inputs), &out, &thresholds).expect("fleet report");
        assert_eq!(o.drain, ["node0500"]);
        o.nodes.len()
    });
}

/// Its parts: finding, reading and reducing the 1,000 reports …
#[divan::bench(sample_count = 3, sample_size = 1)]
fn fleet_read_1000(bencher: Bencher) {
    let inputs = [fleet_fixture().to_path_buf()];
    bencher.bench(|| {
        let files = scalescope::fleet::read::discover(black_box(&inputs)).expect("found");
        scalescope::fleet::read_nodes(&files).len()
    });
}

/// … and the five files of the outcome (no reading, no writing).
#[divan::bench(sample_count = 3, sample_size = 1)]
fn fleet_files_1000(bencher: Bencher) {
    let inputs = [fleet_fixture().to_path_buf()];
    let o = scalescope::fleet::read_and_judge(&inputs, &scalescope::health::Thresholds::default())
        .expect("judged");
    bencher.bench(|| {
        scalescope::fleet::files::all(black_box(&o))
            .into_iter()
            .map(|(_, bytes)| bytes.expect("files").len())
            .sum::<usize>()
    });
}
