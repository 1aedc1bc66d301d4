//! Scaling: efficiency curves of a workload, its rows with the model's error, and every
//! workload at the largest GPU count in the box.

use super::bandwidth::CHART_WIDTH;
use super::{TABLE_MAX_ROWS, num, provenance_cell};
use crate::document::chart::{self, Axis, Chart, Series};
use crate::document::{Block, Cell, Class, Column, Paragraph, Section, Table};
use crate::report::Report;
use crate::report::compare::default_workload;
use crate::report::summary::Provenance;
use crate::report::superlinear;
use crate::scaling::calibrate::UnderDdp;
use crate::scaling::run::ScalingRun;
use crate::scaling::{Mode, RowSource, ScalingPoint};

/// Workloads drawn on `scaling.png`, the default first.
const PAGE_WORKLOADS: usize = 3;

/// A scaling row's provenance: measured (framework or proxy), modeled, or projected. The
/// section's note says what modeled means here (scalescope's step-time model), once.
pub(super) fn row_provenance(p: &ScalingPoint) -> Provenance {
    if p.projected {
        Provenance::Projected
    } else if p.source.is_measured() {
        Provenance::Measured
    } else {
        Provenance::Modeled(String::new())
    }
}

/// Which rows of a workload a table shows.
#[derive(Clone, Copy, PartialEq)]
enum Rows {
    /// Every row, projections beyond the box included.
    All,
    /// The rows inside the box.
    InBox,
    /// Inside the box at 1, 2, 4, … GPUs and the largest count (the one-page report).
    Headline,
}

/// The efficiency curves of workload `w`: one per mode and kind of row (framework, proxy,
/// modeled — dashed, running on beyond the box where projected).
fn curve(run: &ScalingRun, w: &str, id: &str) -> Option<Block> {
    let mut series = Vec::new();
    for mode in Mode::ALL {
        for (src, dashed) in [
            (RowSource::Framework, false),
            (RowSource::Proxy, false),
            (RowSource::Modeled, true),
        ] {
            let points: Vec<(f64, f64)> = run
                .rows
                .iter()
                .filter(|p| p.workload == w && p.mode == mode && p.source == src)
                .filter_map(|p| Some((p.n_gpus as f64, p.efficiency.filter(|e| e.is_finite())?)))
                .collect();
            if !points.is_empty() {
                series.push(Series {
                    name: format!("{mode}, {}", src.id()),
                    points,
                    dashed,
                });
            }
        }
    }
    chart::chart(&Chart {
        id,
        caption: &format!(
            "Scaling efficiency of {w} vs GPUs (dashed: modeled; beyond the box: projected)"
        ),
        x_label: "GPUs",
        y_label: "efficiency",
        axis: Axis::Gpus,
        series: &series,
        width: CHART_WIDTH,
    })
    .map(Block::Figure)
}

/// The rows of workload `w` that `which` selects, as a table and the words of its "1 GPU under
/// DDP" rows: above [`TABLE_MAX_ROWS`] rows, only those at a power of two GPUs and at the
/// largest count, with a note naming scaling.csv.
fn rows_blocks(run: &ScalingRun, w: &str, id: Option<&str>, which: Rows) -> Vec<Block> {
    let mut points = selected(run, w, which);
    let n = points.len();
    let mut cut = None;
    if n > TABLE_MAX_ROWS {
        let largest = points.iter().map(|p| p.n_gpus).max().unwrap_or(0);
        points.retain(|p| p.n_gpus.is_power_of_two() || p.n_gpus == largest);
        points.truncate(TABLE_MAX_ROWS);
        cut = Some(Paragraph::note(format!(
            "{} of {n} rows (at powers of two GPUs and the largest count); scaling.csv holds every row.",
            points.len()
        )));
    }
    let mut blocks = vec![Block::Table(table_of(run, &points, id))];
    blocks.extend(cut.map(Block::from));
    blocks.extend(under_ddp_notes(run, &points));
    blocks
}

/// The points of workload `w` that `which` selects.
fn selected<'a>(run: &'a ScalingRun, w: &str, which: Rows) -> Vec<&'a ScalingPoint> {
    let largest = run
        .rows
        .iter()
        .filter(|p| p.workload == w && !p.projected)
        .map(|p| p.n_gpus)
        .max()
        .unwrap_or(0);
    run.rows
        .iter()
        .filter(|p| p.workload == w)
        .filter(|p| match which {
            Rows::All => true,
            Rows::InBox => !p.projected,
            Rows::Headline => !p.projected && (p.n_gpus.is_power_of_two() || p.n_gpus == largest),
        })
        .collect()
}

/// The per-GPU cell, in a narrow column broken only before its `=`: `1024` over `= 256 × 4`.
fn per_gpu(p: &ScalingPoint) -> String {
    let cell = p.per_gpu_cell();
    match cell.split_once(' ') {
        Some((batch, how)) => format!("{batch} {}", how.replace(' ', "\u{a0}")),
        None => cell,
    }
}

/// One table row per point; below a plain 1-GPU framework row, the same step under DDP where it
/// was timed ("1 GPU under DDP", what the wrapper costs).
fn table_of(run: &ScalingRun, points: &[&ScalingPoint], id: Option<&str>) -> Table {
    let mut rows = Vec::new();
    for p in points {
        rows.push(point_cells(p));
        if let Some((_, u)) = run.under_ddp_below(p) {
            rows.push(under_ddp_cells(p, u));
        }
    }
    Table {
        id: id.map(str::to_string),
        columns: vec![
            Column::text("mode"),
            Column::figures("GPUs"),
            Column::text("row"),
            Column::figures("per GPU"),
            Column::figures("step ms"),
            Column::figures("samples/s"),
            Column::figures("speedup"),
            Column::figures("efficiency"),
            Column::text("bound"),
            Column::figures("model error"),
            Column::figures("catalog-only error"),
            Column::figures("memory GiB/GPU, one micro-batch"),
            Column::text("fits memory"),
            Column::text("provenance"),
        ],
        rows,
    }
}

/// One point's cells.
fn point_cells(p: &ScalingPoint) -> Vec<Cell> {
    vec![
        Cell::plain(p.mode.to_string()),
        Cell::plain(p.n_gpus.to_string()),
        Cell::plain(p.source.id()),
        Cell::plain(per_gpu(p)),
        Cell::plain(num(p.step_time_ms, 2)),
        Cell::plain(num(p.throughput, 0)),
        Cell::plain(p.speedup_cell()),
        Cell::plain(superlinear::cell(p)),
        Cell::plain(p.bound.map_or("—".to_string(), |b| b.id().to_string())),
        Cell::plain(p.error_cell()),
        Cell::plain(p.uncalibrated_error_cell()),
        Cell::plain(num(p.memory_gib_per_gpu, 1)),
        Cell::plain(match p.fits {
            Some(true) => "yes",
            Some(false) => "no",
            None => "—",
        }),
        provenance_cell(&row_provenance(p)),
    ]
}

/// The "1 GPU under DDP" row of `plain`'s step: its time and samples/s, no speedup, efficiency,
/// bound or model error of its own (the speedups are against the plain step), and its words.
fn under_ddp_cells(plain: &ScalingPoint, u: &UnderDdp) -> Vec<Cell> {
    let none = || Cell::plain("—");
    vec![
        Cell::plain(plain.mode.to_string()),
        Cell::plain("1"),
        Cell::plain(format!(
            "1 GPU under DDP (the plain step beside it: {:.2} ms)",
            u.plain_ms
        )),
        Cell::plain(per_gpu(plain)),
        Cell::plain(num(Some(u.wrapped_ms), 2)),
        Cell::plain(num(Some(u.samples_per_s(plain.per_gpu_batch)), 0)),
        none(),
        none(),
        none(),
        none(),
        none(),
        none(),
        none(),
        provenance_cell(&Provenance::Measured),
    ]
}

/// The words of each "1 GPU under DDP" row among `points`' tables: both steps and the cost.
fn under_ddp_notes(run: &ScalingRun, points: &[&ScalingPoint]) -> Vec<Block> {
    points
        .iter()
        .filter_map(|p| {
            let (step, u) = run.under_ddp_below(p)?;
            Some(Paragraph::note(format!("{} {}: {}", p.workload, p.mode, u.describe(step))).into())
        })
        .collect()
}

/// Every workload and mode at the largest GPU count in the box with an efficiency; a workload
/// that fits at no count is listed with why (its basis says what would fit). With the rows it
/// shows.
fn workloads_table(run: &ScalingRun) -> (Table, Vec<&ScalingPoint>) {
    let mut rows = Vec::new();
    let mut shown = Vec::new();
    for w in &run.workloads {
        for mode in Mode::ALL {
            let in_box = || {
                run.rows
                    .iter()
                    .filter(|p| p.workload == w.name && p.mode == mode && !p.projected)
            };
            let best = in_box()
                .filter(|p| p.efficiency.is_some())
                .max_by_key(|p| (p.n_gpus, p.source.is_measured()));
            let (p, efficiency) = match best {
                Some(p) => (p, Cell::plain(superlinear::cell(p))),
                None => match in_box()
                    .filter(|p| p.fits == Some(false))
                    .max_by_key(|p| (p.n_gpus, p.source.is_measured()))
                {
                    // The basis says it: "does not fit: …", "out of GPU memory (measured): …".
                    Some(p) => (p, Cell::of(Class::Note, &p.basis)),
                    None => continue,
                },
            };
            shown.push(p);
            rows.push(vec![
                Cell::plain(&w.name),
                Cell::plain(mode.to_string()),
                Cell::plain(p.n_gpus.to_string()),
                efficiency,
                Cell::plain(p.source.id()),
                provenance_cell(&row_provenance(p)),
            ]);
        }
    }
    let table = Table {
        id: Some("workloads-table".into()),
        columns: vec![
            Column::text("workload"),
            Column::text("mode"),
            Column::figures("GPUs"),
            Column::figures("efficiency"),
            Column::text("row"),
            Column::text("provenance"),
        ],
        rows,
    };
    (table, shown)
}

/// Notes under a curve or table of workload `w` (every workload where `None`): the cause of
/// each efficiency above 1.00 (marked `*`); GPUs do not speed each other up.
fn above_one(run: &ScalingRun, w: Option<&str>) -> Vec<Block> {
    superlinear::notes(&run.rows, w, None)
        .into_iter()
        .map(|n| Paragraph::note(n).into())
        .collect()
}

const DEFINITIONS: &str = "efficiency = throughput(n) ÷ (n × throughput(1)); measured_framework \
     rows are real PyTorch steps, proxy rows synthetic steps (GEMMs + NCCL all-reduce), modeled \
     rows scalescope's model (docs/SCALING.md), projected rows the model beyond one node; model \
     error = (model − measured) ÷ measured step time on measured rows (cal.: the step the model \
     is calibrated from, so no error), catalog-only error the same for the model with catalog \
     figures only; per GPU = samples per GPU per step, `8 = 2 × 4` where it is run as 4 \
     micro-batches of 2 with their gradients accumulated (memory is per micro-batch), `≤342` \
     where the global batch does not split evenly in whole samples (the GPUs with the most, \
     which set the step; the others take one fewer); an efficiency marked * reads above 1.00 — \
     GPUs do not speed each other up, and the note under its table gives the cause";

/// The report's scaling section: the default workload's curve and rows, then every workload.
pub(super) fn section(r: &Report) -> Option<Section> {
    let mut s = Section::new("scaling", "Scaling");
    let Some(sc) = &r.scaling else {
        s.push(Paragraph::plain("Not run in this report.").into());
        return Some(s);
    };
    s.push(Paragraph::note(format!("{} · {DEFINITIONS}", sc.source)).into());
    if let Some(w) = default_workload(&[r]) {
        s.blocks.extend(curve(&sc.run, &w, "scaling-curve"));
        s.push(Block::Subheading { text: w.clone() });
        s.blocks
            .extend(rows_blocks(&sc.run, &w, Some("scaling-table"), Rows::All));
        s.blocks.extend(above_one(&sc.run, Some(&w)));
    }
    s.push(Block::Subheading {
        text: "Every workload, largest GPU count in the box".into(),
    });
    let (table, shown) = workloads_table(&sc.run);
    s.push(Block::Table(table));
    s.blocks.extend(
        superlinear::notes_of(shown, &sc.run.rows)
            .into_iter()
            .map(|n| Paragraph::note(n).into()),
    );
    for n in &sc.run.notes {
        s.push(Paragraph::note(n.to_string()).into());
    }
    Some(s)
}

/// The one-page report's scaling: the default workload's curve and its rows inside the box.
pub(super) fn summary(r: &Report) -> Option<Section> {
    let sc = r.scaling.as_ref()?;
    let w = default_workload(&[r])?;
    let mut s = Section::new(
        "scaling",
        format!("Scaling efficiency — {w} (dashed: modeled; beyond the box: projected)"),
    );
    s.blocks.extend(curve(&sc.run, &w, "scaling-curve"));
    let points = selected(&sc.run, &w, Rows::Headline);
    s.push(Block::Table(table_of(
        &sc.run,
        &points,
        Some("scaling-table"),
    )));
    s.blocks.extend(under_ddp_notes(&sc.run, &points));
    s.blocks.extend(above_one(&sc.run, Some(&w)));
    Some(s)
}

/// The Scaling view as a page: the section, then the curves and rows of a few more workloads.
pub(super) fn page(r: &Report) -> Vec<Section> {
    let mut out: Vec<Section> = section(r).into_iter().collect();
    let (Some(sc), Some(first)) = (&r.scaling, default_workload(&[r])) else {
        return out;
    };
    let others = sc
        .run
        .workloads
        .iter()
        .map(|w| w.name.clone())
        .filter(|w| *w != first)
        .take(PAGE_WORKLOADS - 1);
    for (i, w) in others.enumerate() {
        let mut s = Section::new(&format!("scaling-{}", i + 2), w.clone());
        s.blocks
            .extend(curve(&sc.run, &w, &format!("scaling-curve-{}", i + 2)));
        s.blocks.extend(rows_blocks(&sc.run, &w, None, Rows::InBox));
        s.blocks.extend(above_one(&sc.run, Some(&w)));
        out.push(s);
    }
    out
}
