//! Cost per million samples at the user's prices (issue P): on every scaling row that has a
//! throughput when a price is given, on none without one, and bad prices refused in one line.

mod common;

use common::{one_line_error, run};

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
    let mut reader = csv::Reader::from_path(out.join("scaling.csv")).unwrap();
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
    // Modeled rows have no measured energy either: empty, not 0.
    let spj = column(&header, "samples_per_joule");
    assert!(rows.iter().all(|r| r[spj].is_empty()));
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
