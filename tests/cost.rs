//! Cost per million samples at the user's prices (issue P): on every scaling row that has a
//! throughput when a price is given, on none without one, and bad prices refused in one line.

mod common;

use common::{one_line_error, run, scalescope};

/// The scaling CSV of a quick modeled `--bench` on a catalog machine, with `extra` flags:
/// (header, rows).
fn scaling_csv(extra: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = vec![
        "--bench",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--suite",
        "scaling",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    let r = run(&args);
    assert!(matches!(r.code, Some(0 | 3)), "{}", r.stderr);
    common::read_csv(&out.join("scaling.csv"))
}

fn column(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap()
}

#[test]
fn a_rental_price_costs_every_row_with_a_throughput() {
    let (header, rows) = scaling_csv(&["--price-per-gpu-hour", "2.5"]);
    let (n, thr, batch, step, cost) = (
        column(&header, "n_gpus"),
        column(&header, "throughput"),
        column(&header, "global_batch"),
        column(&header, "step_time_ms"),
        column(&header, "cost_per_million_samples"),
    );
    let mut costed = 0;
    for r in &rows {
        match r[thr].parse::<f64>() {
            Ok(_) => {
                // The throughput cell is rounded to 2 decimals: take it from the batch and the
                // step time (4 decimals).
                let samples_per_s =
                    r[batch].parse::<f64>().unwrap() / (r[step].parse::<f64>().unwrap() / 1e3);
                let gpus: f64 = r[n].parse().unwrap();
                let want = gpus * 2.5 / (samples_per_s * 3600.0) * 1e6;
                let got: f64 = r[cost].parse().unwrap_or_else(|_| panic!("{r:?}"));
                assert!(
                    (got - want).abs() <= want * 1e-3 + 1e-4,
                    "{got} vs {want}: {r:?}"
                );
                costed += 1;
            }
            Err(_) => assert_eq!(r[cost], "", "a row without throughput has no cost: {r:?}"),
        }
    }
    assert!(costed > 50, "{costed} rows costed of {}", rows.len());
}

#[test]
fn without_a_price_there_is_no_cost() {
    let (header, rows) = scaling_csv(&[]);
    let cost = column(&header, "cost_per_million_samples");
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r[cost].is_empty()));
    // Energy is there without a price: the model's power (labeled modeled) on rows with a
    // throughput, empty (not 0) on the others.
    let (spj, basis, thr) = (
        column(&header, "samples_per_joule"),
        column(&header, "energy_basis"),
        column(&header, "throughput"),
    );
    for r in &rows {
        if r[thr].is_empty() {
            assert!(r[spj].is_empty(), "{r:?}");
        } else if !r[spj].is_empty() {
            assert_eq!(r[basis], "modeled", "{r:?}");
            assert!(r[spj].parse::<f64>().unwrap() > 0.0, "{r:?}");
        }
    }
    assert!(rows.iter().any(|r| !r[spj].is_empty()));
}

#[test]
fn bad_prices_are_refused_in_one_line() {
    for bad in ["0", "-1", "NaN", "1e308", "inf"] {
        one_line_error(
            &[
                "--bench",
                "--modeled",
                "--catalog",
                "h200-2x-sxm",
                "--price-per-gpu-hour",
                bad,
            ],
            Some(2),
            &["--price-per-gpu-hour"],
        );
        one_line_error(
            &[
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                "h200-2x-sxm",
                "--price-per-gpu-hour",
                bad,
            ],
            Some(2),
            &["--price-per-gpu-hour"],
        );
    }
    one_line_error(
        &["--price-per-gpu-hour", "2.5"],
        Some(2),
        &["cost the scaling rows"],
    );
    one_line_error(
        &[
            "bench",
            "scaling",
            "--modeled",
            "--catalog",
            "h200-2x-sxm",
            "--capex-per-node",
            "300000",
        ],
        Some(2),
        &["--years", "--power-price-per-kwh"],
    );
}

#[test]
fn the_table_shows_the_cost_column_with_its_basis() {
    let r = run(&[
        "bench",
        "scaling",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--workload",
        "resnet50",
        "--price-per-gpu-hour",
        "2.5",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("cost/M"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("cost/M: cost of a million samples, rental at 2.5 per GPU-hour"),
        "{}",
        r.stdout
    );
    let plain = run(&[
        "bench",
        "scaling",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--workload",
        "resnet50",
    ]);
    assert!(!plain.stdout.contains("cost/M"), "{}", plain.stdout);
}

/// `scalescope compare …` output, its exit status and stderr.
fn compare(args: &[&str]) -> (bool, String, String) {
    let out = scalescope().arg("compare").args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `scalescope compare` of the DGX H100 and the 2× H200 catalog machines for ResNet-50, with
/// `extra` flags.
fn two_catalogs(extra: &[&str]) -> (bool, String, String) {
    let mut args = vec![
        "--catalog",
        "dgx-h100",
        "--catalog",
        "h200-2x-sxm",
        "--workload",
        "resnet50",
    ];
    args.extend(extra);
    compare(&args)
}

/// The ranking's lines at `n` GPUs, split into cells.
fn ranking_block(text: &str, n: usize) -> Vec<Vec<String>> {
    let at = format!("at {n} GPUs");
    let start = text
        .lines()
        .position(|l| l == at)
        .unwrap_or_else(|| panic!("no {at:?} in:\n{text}"));
    text.lines()
        .skip(start + 2) // the "at" line and the header
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn compare_ranks_machines_by_cost_per_million_samples() {
    let (ok, out, err) = two_catalogs(&["--gpus", "8,64", "--price-per-gpu-hour", "2.5,3.2"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("Purchase ranking: resnet50, weak scaling — by cost per million samples"),
        "{out}"
    );
    assert!(
        out.contains("[A] ") && out.contains("rental at 2.5 per GPU-hour"),
        "{out}"
    );
    for n in [8usize, 64] {
        let block = ranking_block(&out, n);
        assert_eq!(block.len(), 2, "{block:?}");
        let mut last = 0.0;
        for (k, cells) in block.iter().enumerate() {
            // rank, [X], source, samples/s, W/GPU, samples/J, cost/M: all the model's (~).
            assert_eq!(cells[0], format!("~{}", k + 1), "{cells:?}");
            let price = if cells[1] == "[A]" { 2.5 } else { 3.2 };
            let thr: f64 = cells[3].trim_start_matches('~').parse().unwrap();
            let cost: f64 = cells[6].trim_start_matches('~').parse().unwrap();
            let want = n as f64 * price / (thr * 3600.0) * 1e6;
            // Printed to 3 significant digits.
            assert!(
                (cost - want).abs() <= want * 5e-3,
                "{cost} vs {want}: {cells:?}"
            );
            assert!(cost >= last, "cheapest first: {block:?}");
            last = cost;
            let spj: f64 = cells[5].trim_start_matches('~').parse().unwrap();
            assert!(spj > 0.0, "modeled power gives samples/J: {cells:?}");
        }
    }
}

#[test]
fn compare_gives_the_time_and_cost_of_a_run() {
    let (ok, out, err) = two_catalogs(&[
        "--gpus",
        "8",
        "--price-per-gpu-hour",
        "2.5",
        "--samples",
        "1.2e9",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("time for 1.20e9 samples"), "{out}");
    for cells in ranking_block(&out, 8) {
        // rank, [X], source, samples/s, W/GPU, samples/J, cost/M, time (two words), its cost.
        let cost_m: f64 = cells[6].trim_start_matches('~').parse().unwrap();
        let run: f64 = cells[9].trim_start_matches('~').parse().unwrap();
        assert!((run - cost_m * 1200.0).abs() <= run * 5e-3, "{cells:?}");
        let thr: f64 = cells[3].trim_start_matches('~').parse().unwrap();
        let hours: f64 = cells[7].trim_start_matches('~').parse().unwrap();
        assert_eq!(cells[8], "h", "{cells:?}");
        assert!((hours - 1.2e9 / thr / 3600.0).abs() < 0.06, "{cells:?}");
    }
    let bad = scalescope()
        .args([
            "compare",
            "--catalog",
            "dgx-h100",
            "--catalog",
            "h200-2x-sxm",
        ])
        .args(["--samples", "-5"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--samples -5"));
}

#[test]
fn compare_without_prices_ranks_by_samples_per_joule() {
    let (ok, out, err) = two_catalogs(&["--gpus", "8"]);
    assert!(ok, "{err}");
    assert!(out.contains("— by samples per joule"), "{out}");
    for cells in ranking_block(&out, 8) {
        assert_eq!(cells[6], "—", "no price, no cost: {cells:?}");
    }
}

#[test]
fn compare_refuses_price_lists_that_do_not_match_the_machines() {
    for (args, what) in [
        (
            vec!["--price-per-gpu-hour", "1,2,3"],
            "--price-per-gpu-hour: 3 prices for 2 machines",
        ),
        (
            vec!["--price-per-gpu-hour", "2,-1"],
            "--price-per-gpu-hour -1",
        ),
        (vec!["--gpus", "0"], "--gpus"),
    ] {
        let mut all = vec!["--catalog", "dgx-h100", "--catalog", "h200-2x-sxm"];
        all.extend(args);
        let out = scalescope().arg("compare").args(&all).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(what), "{all:?}: {err}");
    }
    let (ok, _, err) = compare(&["--catalog", "dgx-h100"]);
    assert!(!ok && err.contains("two or more machines"), "{err}");
}

#[test]
fn the_report_has_an_energy_and_cost_section() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = run(&[
        "--bench",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--suite",
        "scaling",
        "--price-per-gpu-hour",
        "2.5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(matches!(r.code, Some(0 | 3)), "{}", r.stderr);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let at = html
        .find("Energy and cost")
        .expect("an Energy and cost section");
    let section = &html[at..];
    assert!(
        section.contains("rental at 2.5 per GPU-hour"),
        "{section:.2000}"
    );
    assert!(section.contains("cost/M samples") && section.contains("modeled"));
    // Not a page of dashes: the modeled power gives samples/J on the DGX H100's rows.
    let table = &section[..section.find("</table>").unwrap()];
    assert!(table.matches("<tr").count() > 5, "{table:.3000}");
}

#[test]
fn the_ranking_csv_has_a_row_per_machine_and_count_with_the_printed_costs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ranking.csv");
    let p = path.to_str().unwrap();
    let (ok, _, err) = two_catalogs(&[
        "--gpus",
        "8,64",
        "--capex-per-node",
        "300000,120000",
        "--years",
        "4",
        "--power-price-per-kwh",
        "0.12",
        "--node-overhead-w",
        "4000,1000",
        "--ranking-csv",
        p,
    ]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 4, "two machines at two counts: {text}");
    for r in &rows {
        assert_eq!(&r[col("ranked_by")], "cost_per_million_samples");
        let n: f64 = r[col("n_gpus")].parse().unwrap();
        let thr: f64 = r[col("samples_per_s")].parse().unwrap();
        let w: f64 = r[col("watts_per_gpu")].parse().unwrap();
        let cost: f64 = r[col("cost_per_million_samples")].parse().unwrap();
        // Ownership by hand: nodes of 8 (DGX H100) or 2 (2× H200), each node's overhead as
        // stated, PUE 1.
        let (capex, per_node, overhead) = if r[col("machine")].contains("DGX H100") {
            (300_000.0, 8.0, 4_000.0)
        } else {
            (120_000.0, 2.0, 1_000.0)
        };
        let nodes = (n / per_node).ceil();
        let per_hour = nodes * capex / (4.0 * 8_766.0) + (n * w + nodes * overhead) / 1e3 * 0.12;
        let want = per_hour / (thr * 3_600.0) * 1e6;
        assert!(
            (cost - want).abs() <= want * 2e-3,
            "{cost} vs {want}: {r:?}"
        );
        assert!(r[col("price")].contains("W besides them"), "{r:?}");
    }
}

#[test]
fn node_overhead_is_checked_and_needs_ownership() {
    for bad in ["-1", "NaN", "1e9"] {
        one_line_error(
            &[
                "--bench",
                "--modeled",
                "--catalog",
                "h200-2x-sxm",
                "--capex-per-node",
                "300000",
                "--years",
                "4",
                "--power-price-per-kwh",
                "0.1",
                "--node-overhead-w",
                bad,
            ],
            Some(2),
            &["--node-overhead-w"],
        );
    }
    one_line_error(
        &[
            "--bench",
            "--modeled",
            "--catalog",
            "h200-2x-sxm",
            "--price-per-gpu-hour",
            "2",
            "--node-overhead-w",
            "500",
        ],
        Some(2),
        &["--node-overhead-w", "ownership"],
    );
    one_line_error(
        &[
            "compare",
            "--catalog",
            "dgx-h100",
            "--catalog",
            "h200-2x-sxm",
            "--node-overhead-w",
            "500",
        ],
        Some(2),
        &["--node-overhead-w", "ownership"],
    );
}

/// `compare --catalog` models the machines as `--bench --modeled` does, bandwidth and
/// collectives included: the P2P, H2D and all-reduce rows have figures (issue X: they were "—"
/// with no reason), and where a report has no such results the table says why under it.
#[test]
fn compare_of_catalog_machines_fills_the_copy_and_all_reduce_rows() {
    let (ok, out, err) = compare(&[
        "--catalog",
        "dgx-b200",
        "--catalog",
        "dgx-h100",
        "--price-per-gpu-hour",
        "6,3",
    ]);
    assert!(ok, "{err}");
    for row in ["P2P write CE GB/s", "H2D GB/s", "all-reduce busbw @1 GiB"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no {row} row: {out}"));
        assert!(!line.contains('—'), "{line}");
        assert_eq!(line.matches('~').count(), 2, "both modeled: {line}");
    }
    assert!(
        !out.contains("— for"),
        "nothing missing, nothing to explain: {out}"
    );

    // A report without bandwidth or collectives results: its "—" says why.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let report = common::modeled_stages(
        "h200-2x-sxm",
        vec![
            scalescope::job::Stage::Topology,
            scalescope::job::Stage::Scaling,
        ],
    );
    std::fs::write(&path, serde_json::to_vec(&report).unwrap()).unwrap();
    let (ok, out, err) = compare(&[path.to_str().unwrap(), "--catalog", "dgx-h100"]);
    assert!(ok, "{err}");
    for (row, why) in [
        (
            "P2P write CE GB/s",
            "[A] the report has no bandwidth results",
        ),
        ("H2D GB/s", "[A] the report has no bandwidth results"),
        (
            "all-reduce busbw @1 GiB",
            "[A] the report has no collectives results",
        ),
    ] {
        let note = out
            .lines()
            .find(|l| l.starts_with(row) && l.contains("— for"))
            .unwrap_or_else(|| panic!("no reason for {row}'s —: {out}"));
        assert!(note.contains(why), "{note}");
        assert!(!note.contains("[B]"), "[B] has the figure: {note}");
    }
}
