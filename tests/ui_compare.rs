//! The Compare tab against the command line (issue U, like with like): the purchase ranking the
//! tab draws is the one `scalescope compare --ranking-csv` writes — same machines, order, ranks,
//! kinds and figures, what is left out left out with its reason — and the tab and the Scaling
//! view give the cause of every efficiency above 1.00 of the bundled reports.

mod common;

use std::collections::BTreeMap;

use common::modeled_stages;
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};
use scalescope::job::Stage;
use scalescope::report::{self, Report, ranking, superlinear};
use scalescope::ui::views::compare as compare_view;

/// The bundled report of file `name`.
fn bundled(name: &str) -> Report {
    report::bundled::reports()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no bundled {name}"))
        .1
        .unwrap()
}

/// Every label the harness holds, in the order drawn (an empty label as "").
fn labels(h: &Harness<'_>) -> Vec<String> {
    h.query_all(By::new().role(egui::accesskit::Role::Label))
        .map(|n| {
            let a = n.accesskit_node();
            a.value().or_else(|| a.label()).unwrap_or_default()
        })
        .collect()
}

/// A figure cell of the tab or the CSV as a number (`~12.5` → 12.5), `None` for `—` or empty.
fn figure(cell: &str) -> Option<f64> {
    cell.trim_start_matches('~').parse().ok()
}

#[test]
fn the_compare_tab_and_the_ranking_csv_agree() {
    // The README's example: the bundled 2× H200 report (proxy steps, the older method) and
    // the DGX H100 catalog machine, rented at 3.5 and 2.5 per GPU-hour.
    let name = "h200-2x-sxm-2026-11-22.json";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::copy(common::crate_file(&format!("assets/reports/{name}")), &file).unwrap();
    let a = bundled(name);
    let b = modeled_stages("dgx-h100", vec![Stage::Topology, Stage::Scaling]);
    let csv = tab_and_csv_agree(
        &a,
        &b,
        &[
            file.to_str().unwrap(),
            "--catalog",
            "dgx-h100",
            "--price-per-gpu-hour",
            "3.5,2.5",
        ],
    );
    // The README's report is of the older method: its proxy rows are not ranked, anywhere.
    if a.older_method().is_some() {
        let title = &report::compare::titles(&[&a, &b])[0];
        assert!(
            csv.iter()
                .any(|c| &c["machine"] == title && c["rank"].is_empty()),
            "{csv:?}"
        );
    }
}

/// The bundled 1× H200 (steps the mean of their timed steps) and the 1× H100 as a report
/// written before that change reads (no `step_statistic`: medians) for BERT-large, a host-bound
/// step where the two differ: the H100's median is not ranked among means, in the tab and the
/// CSV alike, and both say why.
#[test]
fn a_median_step_is_left_out_in_the_tab_as_in_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let older = common::as_median_report(
        &common::crate_file("assets/reports/h100-1x-sxm-2026-12-07.json"),
        &dir.path().join("h100-1x-median.json"),
    );
    let a = bundled("h200-1x-sxm-2026-11-28.json");
    let b = report::load(&older).unwrap();
    let files: Vec<String> = [
        common::crate_file("assets/reports/h200-1x-sxm-2026-11-28.json"),
        older,
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect();
    let csv = tab_and_csv_agree(
        &a,
        &b,
        &[
            &files[0],
            &files[1],
            "--workload",
            "bert-large",
            "--price-per-gpu-hour",
            "3.5,2.5",
        ],
    );
    let title = &report::compare::titles(&[&a, &b])[1];
    let at_1: Vec<_> = csv
        .iter()
        .filter(|c| c["n_gpus"] == "1" && &c["machine"] == title)
        .collect();
    assert_eq!(at_1.len(), 1, "{csv:?}");
    assert!(at_1[0]["rank"].is_empty(), "{:?}", at_1[0]);
    assert!(
        at_1[0]["note"].contains("median of its timed steps"),
        "{:?}",
        at_1[0]
    );
    // Beyond the box both are the model, ranked apart from measured rows: the H100's is
    // calibrated from its median step and says so, the H200's does not.
    let modeled: Vec<_> = csv
        .iter()
        .filter(|c| c["n_gpus"] == "8" && c["source"] == "projected")
        .collect();
    assert_eq!(modeled.len(), 2, "{csv:?}");
    for c in modeled {
        assert!(!c["rank"].is_empty(), "{c:?}");
        let median = c["note"].contains(ranking::MEDIAN_MODEL_NOTE);
        assert_eq!(median, &c["machine"] == title, "{c:?}");
    }
}

/// Draws the Compare tab's purchase ranking of `a` and `b` (rented at 3.5 and 2.5 per
/// GPU-hour) and runs `scalescope compare ARGS --ranking-csv`: the same machines, order, ranks,
/// kinds, figures and reasons, row for row. The CSV's rows.
fn tab_and_csv_agree(a: &Report, b: &Report, args: &[&str]) -> Vec<BTreeMap<String, String>> {
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("ranking.csv");
    let out = common::scalescope()
        .arg("compare")
        .args(args)
        .arg("--ranking-csv")
        .arg(&csv_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = common::csv_rows(&csv_path);
    let workload = csv[0]["workload"].clone();
    assert_eq!(csv[0]["mode"], "weak");

    let mut cost = compare_view::CostSettings::default();
    cost.per_gpu_hour.insert(a.machine_key(), 3.5);
    cost.per_gpu_hour.insert(b.machine_key(), 2.5);
    let (ta, tb) = (a.clone(), b.clone());
    let w = workload.clone();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 4000.0))
        .build_ui(move |ui| {
            scalescope::ui::fonts::install(ui.ctx());
            compare_view::purchase_ranking(ui, &[&ta, &tb], &w, &mut cost.clone());
        });
    h.run();
    let texts = labels(&h);
    // The grid: after its header (GPUs, then the ranking's columns), eight cells per
    // candidate, the GPU count only on a group's first.
    let last_head = ranking::COLUMNS[ranking::COLUMNS.len() - 1];
    let start = texts
        .iter()
        .position(|t| t == last_head)
        .expect("the ranking's header")
        + 1;
    let end = texts
        .iter()
        .position(|t| t.starts_with("~ the model's figure"))
        .expect("the legend under the ranking");
    let grid = &texts[start..end];
    assert_eq!(grid.len() % 8, 0, "{grid:?}");
    let tab_names = [a.name(), b.name()];
    let csv_titles = report::compare::titles(&[a, b]);
    let mut n = String::new();
    let tab: Vec<&[String]> = grid.chunks(8).collect();
    assert_eq!(tab.len(), csv.len(), "one tab row per CSV row: {grid:?}");
    for (row, c) in tab.iter().zip(&csv) {
        if !row[0].is_empty() {
            n = row[0].clone();
        }
        assert_eq!(n, c["n_gpus"], "{row:?} vs {c:?}");
        // The same machine: the tab names it by Report::name, the CSV by its title.
        let m = tab_names
            .iter()
            .position(|x| *x == row[2])
            .expect("a machine");
        assert_eq!(csv_titles[m], c["machine"], "{row:?} vs {c:?}");
        // The same rank (the tab marks the model's with ~) and kind of row.
        let rank = if c["rank"].is_empty() {
            "—"
        } else {
            c["rank"].as_str()
        };
        assert_eq!(row[1].trim_start_matches('~'), rank, "{row:?} vs {c:?}");
        assert_eq!(row[3], c["source"], "{row:?} vs {c:?}");
        // The same figures, to the tab's decimals.
        for (k, col, tol) in [
            (4, "samples_per_s", 0.051_f64),
            (5, "watts_per_gpu", 0.51),
            (7, "cost_per_million_samples", 0.0051),
        ] {
            match (figure(&row[k]), figure(&c[col])) {
                (Some(x), Some(y)) => assert!(
                    (x - y).abs() <= tol.max(y.abs() * 1e-3),
                    "{col}: {x} vs {y}"
                ),
                (None, None) => {}
                (x, y) => panic!("{col}: tab {x:?}, CSV {y:?}: {row:?} vs {c:?}"),
            }
        }
        // What is left out says why, in both.
        if c["note"].starts_with("not ranked: ") {
            let why = c["note"].trim_start_matches("not ranked: ");
            assert!(
                texts.iter().any(|t| t.starts_with(&row[2])
                    && t.contains("not ranked at")
                    && t.contains(why)),
                "the tab does not say why {} is not ranked: {texts:#?}",
                row[2]
            );
        }
    }
    csv
}

/// The Compare tab over every bundled report, and the Scaling view's notes: each efficiency
/// above 1.00 the reports hold comes with its cause, and the tab's tables mark it.
#[test]
fn the_compare_tab_gives_the_cause_of_every_efficiency_above_one() {
    let reports: Vec<Report> = report::bundled::reports()
        .into_iter()
        .map(|(_, r)| r.unwrap())
        .collect();
    let refs_owned = reports.clone();
    let workload = report::compare::default_workload(&reports.iter().collect::<Vec<_>>())
        .expect("a workload every bundled report has");
    let w = workload.clone();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 6000.0))
        .build_ui(move |ui| {
            scalescope::ui::fonts::install(ui.ctx());
            let refs: Vec<&Report> = refs_owned.iter().collect();
            compare_view::show(
                ui,
                &refs,
                Some(&w),
                &mut compare_view::CostSettings::default(),
            );
        });
    h.run();
    let texts = labels(&h);
    let mut expected = 0;
    for r in &reports {
        let Some(s) = &r.scaling else { continue };
        // The tab writes efficiencies in % with one decimal: 100.3 reads above 100.
        for note in superlinear::notes_at(&s.run.rows, Some(&workload), None, 3) {
            expected += 1;
            assert!(
                texts.iter().any(|t| t.ends_with(&note)),
                "{}: no {note:?} in the tab",
                r.name()
            );
        }
    }
    // The scaling table's efficiencies (%, measured and modeled): above 100, marked.
    let start = texts
        .iter()
        .position(|t| t == "memory GiB")
        .expect("the scaling table")
        + 1;
    let end = start
        + texts[start..]
            .iter()
            .position(|t| t.starts_with("Purchase ranking"))
            .expect("the ranking after the scaling table");
    assert_eq!((end - start) % 9, 0, "{:?}", &texts[start..end]);
    for row in texts[start..end].chunks(9) {
        for cell in &row[6..8] {
            if let Ok(v) = cell.parse::<f64>() {
                assert!(v <= 100.0, "{cell} % shown without its mark: {row:?}");
            } else if cell != "—" {
                assert!(cell.ends_with(superlinear::MARK), "{row:?}");
            }
        }
    }
    let bundled_8x = reports.iter().any(|r| {
        r.scaling
            .as_ref()
            .is_some_and(|s| s.run.rows.iter().any(superlinear::above))
    });
    if bundled_8x {
        assert!(expected > 0, "rows above 1.00 but no note for {workload}");
        // Each marked cell also gives its cause on hover, not only in the notes under the table.
        let marked = texts[start..end]
            .iter()
            .find(|t| t.ends_with(superlinear::MARK))
            .expect("a marked efficiency")
            .clone();
        let causes = |h: &Harness<'_>| {
            labels(h)
                .iter()
                .filter(|t| t.contains("per sample"))
                .count()
        };
        let before = causes(&h);
        h.get_all_by_label(&marked).next().unwrap().hover();
        h.run();
        assert!(causes(&h) > before, "no cause on hover of {marked}");
    }
}

/// A "—" in the key figures says why under the table, as `scalescope compare` does: a machine
/// modeled without its bandwidth and collectives stages has no P2P, H2D or all-reduce figure,
/// and each of those rows names that machine and the reason.
#[test]
fn the_compare_tab_says_why_a_figure_is_missing() {
    let a = bundled("h200-2x-sxm-2026-11-22.json");
    let b = modeled_stages("dgx-h100", vec![Stage::Topology, Stage::Scaling]);
    let c = report::compare::compare(&[&a, &b], None);
    let (ta, tb) = (a.clone(), b.clone());
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 2000.0))
        .build_ui(move |ui| {
            scalescope::ui::fonts::install(ui.ctx());
            compare_view::key_table(ui, &report::compare::compare(&[&ta, &tb], None));
        });
    h.run();
    let shown = labels(&h);
    let b_name = &c.machines[1];
    let missing: Vec<&String> = shown
        .iter()
        .filter(|l| l.contains(": — for ") && l.contains(b_name.as_str()))
        .collect();
    for row in c.rows.iter().filter(|r| r.figures[1].value.is_none()) {
        assert!(
            missing
                .iter()
                .any(|l| l.starts_with(&format!("{}: — for", row.name))
                    && l.contains(&row.figures[1].basis)),
            "{}: no reason under the table in {shown:#?}",
            row.name
        );
    }
    assert!(
        missing
            .iter()
            .any(|l| l.contains("the report has no bandwidth results")),
        "{shown:#?}"
    );
}

/// A machine of one GPU has no scaling efficiency to compare: its speedup over itself is 1.00
/// by definition. The 1× H100 example is "—" with that reason, not "1.00 at n=1".
#[test]
fn one_gpu_has_no_efficiency_to_compare() {
    let a = bundled("h200-2x-sxm-2026-11-22.json");
    let b = bundled("h100-1x-sxm-2026-12-07.json");
    let c = report::compare::compare(&[&a, &b], None);
    let rows: Vec<_> = c
        .rows
        .iter()
        .filter(|r| r.name.contains("efficiency"))
        .collect();
    assert!(!rows.is_empty(), "no efficiency rows");
    for r in rows {
        assert!(r.figures[0].value.is_some(), "{}: the 2-GPU figure", r.name);
        assert_eq!(r.figures[1].value, None, "{}", r.name);
        assert!(
            r.figures[1].basis.contains("its own base"),
            "{}",
            r.figures[1].basis
        );
    }
}
