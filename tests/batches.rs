//! Say what ran (issue U): the per-GPU batch as micro-batch × accumulation, a strong global batch
//! split over the GPUs in whole samples, and the memory figure said to be per micro-batch — in
//! the model's rows, `bench scaling`'s table and CSV, and reports written before.

mod common;

use common::run;
use scalescope::scaling::workload::{self, Pattern};
use scalescope::scaling::{Machine, Mode, RowSource, ScalingPoint, model};
use scalescope::topology::catalog;

/// `bench scaling --modeled` with `args`: (stdout, the CSV's header and rows).
fn bench_scaling(args: &[&str]) -> (String, Vec<String>, Vec<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("scaling.csv");
    let mut all = vec![
        "bench",
        "scaling",
        "--modeled",
        "--csv",
        csv.to_str().unwrap(),
    ];
    all.extend(args);
    let r = run(&all);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let (header, rows) = common::read_csv(&csv);
    (r.stdout, header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// The table line of `n` GPUs in the block of `title` (e.g. `gpt2-xl — … — weak scaling`).
fn table_line<'a>(stdout: &'a str, block: &str, n: usize) -> &'a str {
    let start = stdout
        .find(block)
        .unwrap_or_else(|| panic!("no block {block}:\n{stdout}"));
    stdout[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .find(|l| l.split_whitespace().next() == Some(&n.to_string()))
        .unwrap_or_else(|| panic!("no row of {n} GPUs in {block}:\n{stdout}"))
}

#[test]
fn gpt2_xl_on_an_80_gb_gpu_shows_its_halved_micro_batch_in_the_per_gpu_cell() {
    // GPT-2 XL's micro-batch of 8 does not fit an 80 GB H100 under DDP; 4 does: the weak rows
    // run 8 per GPU as 2 micro-batches of 4, and the table says so where it shows the batch.
    let (stdout, header, rows) = bench_scaling(&[
        "--catalog",
        "dgx-h100",
        "--workload",
        "gpt2-xl",
        "--mode",
        "weak",
    ]);
    for n in [1, 2, 8] {
        let line = table_line(&stdout, "weak scaling", n);
        assert!(line.contains("8 = 4 × 2"), "{line}");
        assert!(!line.contains("8.00"), "{line}");
    }
    assert!(
        stdout.contains("mem GiB is per micro-batch"),
        "the memory figure is said to be per micro-batch:\n{stdout}"
    );
    let (micro, acc, per) = (
        col(&header, "micro_batch"),
        col(&header, "accumulate"),
        col(&header, "per_gpu_batch"),
    );
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!((&*r[per], &*r[micro], &*r[acc]), ("8", "4", "2"), "{r:?}");
    }
}

#[test]
fn strong_rows_split_the_global_batch_in_whole_samples() {
    // ResNet-50's global batch of 1024: on 3 GPUs 342 + 341 + 341, the step set by the 342
    // (one micro-batch of 256 and one of 86); on one GPU 4 micro-batches of 256.
    let (stdout, header, rows) = bench_scaling(&[
        "--catalog",
        "dgx-h100",
        "--workload",
        "resnet50",
        "--mode",
        "strong",
    ]);
    let one = table_line(&stdout, "strong scaling", 1);
    assert!(one.contains("1024 = 256 × 4"), "{one}");
    let three = table_line(&stdout, "strong scaling", 3);
    assert!(three.contains("≤342 = 256 + 86"), "{three}");
    assert!(stdout.contains("per GPU with ≤:"), "{stdout}");
    let (n, global, per, basis) = (
        col(&header, "n_gpus"),
        col(&header, "global_batch"),
        col(&header, "per_gpu_batch"),
        col(&header, "basis"),
    );
    for r in &rows {
        // Whole samples on every GPU, never a fraction.
        let p: u64 = r[per].parse().unwrap_or_else(|_| panic!("{r:?}"));
        let (g, k): (u64, u64) = (r[global].parse().unwrap(), r[n].parse().unwrap());
        assert_eq!(p, g.div_ceil(k), "{r:?}");
        if g % k != 0 {
            assert!(
                r[basis].contains(&format!("{g} samples over {k} GPUs in whole samples")),
                "{r:?}"
            );
        }
    }
    let at = |k: &str| rows.iter().find(|r| r[n] == k).unwrap();
    assert!(
        at("3")[basis].contains("1 GPU takes 342, 2 take 341"),
        "{:?}",
        at("3")
    );
    // 1024 over 72 (a rack's domain, projected): 15 on 16 GPUs, 14 on 56.
    assert!(
        at("72")[basis].contains("16 GPUs take 15, 56 take 14"),
        "{:?}",
        at("72")
    );
}

#[test]
fn every_strong_row_is_whole_samples_summing_to_the_global_batch() {
    // Every catalog workload on every catalog machine: the per-GPU batch is the most any GPU
    // takes, and the GPUs with it plus the others (one fewer) hold the global batch exactly.
    for e in catalog::entries() {
        let Ok(topo) = catalog::load(&e.id) else {
            continue;
        };
        let m = Machine::modeled(&topo);
        for w in workload::catalog() {
            for r in model(&w, &m, &[Mode::Strong], 1024) {
                let (g, n, p) = (r.global_batch, r.n_gpus as f64, r.per_gpu_batch);
                assert_eq!(p.fract(), 0.0, "{} on {}: {r:?}", w.name, e.id);
                assert!(p >= 1.0 && p * n >= g && (p - 1.0) * n < g, "{r:?}");
                let with_most = g - (p - 1.0) * n;
                assert_eq!(with_most * p + (n - with_most) * (p - 1.0), g, "{r:?}");
                if let (Some(micro), Some(acc)) = (r.micro_batch, r.accumulate) {
                    // The micro-batches cover the per-GPU batch, the last one not empty.
                    assert!(
                        micro * (acc - 1) as f64 <= p && p <= micro * acc as f64,
                        "{r:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn rows_without_memory_model_say_no_micro_batch() {
    // The patterns without a memory model have no micro-batch to report: the cell is the
    // batch alone.
    let topo = catalog::load("dgx-h100").unwrap();
    let m = Machine::modeled(&topo);
    let w = workload::catalog()
        .into_iter()
        .find(|w| w.pattern == Pattern::RemoteOffload)
        .unwrap();
    for r in model(&w, &m, &Mode::ALL, 8) {
        assert_eq!((r.micro_batch, r.accumulate), (None, None), "{r:?}");
        assert!(!r.per_gpu_cell().contains('='), "{}", r.per_gpu_cell());
    }
}

#[test]
fn a_report_written_before_micro_batches_were_recorded_still_loads() {
    let w = workload::resolve("resnet50").unwrap();
    let mut row = ScalingPoint::empty(&w, Mode::Strong, RowSource::Modeled, 3);
    row.per_gpu_batch = 1024.0 / 3.0;
    let mut json = serde_json::to_value(&row).unwrap();
    let obj = json.as_object_mut().unwrap();
    assert!(!obj.contains_key("micro_batch") && !obj.contains_key("accumulate"));
    let back: ScalingPoint = serde_json::from_value(json).unwrap();
    assert_eq!((back.micro_batch, back.accumulate), (None, None));
    // Its fractional batch is shown as it was, not as a split.
    assert_eq!(back.per_gpu_cell(), "341.333");
    // A row that has them keeps them.
    row.micro_batch = Some(4.0);
    row.accumulate = Some(2);
    let json = serde_json::to_string(&row).unwrap();
    assert!(json.contains("\"micro_batch\":4.0") && json.contains("\"accumulate\":2"));
}
