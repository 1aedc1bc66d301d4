//! Energy and cost: each workload's samples/s, power, samples per joule and cost per million
//! samples at the GPU counts a buyer asks about — measured rows and the model's (labeled).

use super::scaling::row_provenance;
use super::{num, provenance_cell};
use crate::document::{Block, Cell, Column, Paragraph, Section, Table};
use crate::model::energy::{EnergyBasis, TestEnergy};
use crate::report::Report;
use crate::scaling::{Mode, ScalingPoint};

/// GPU counts beyond the box the section shows (where the model projects them).
const BEYOND: [usize; 2] = [64, 512];

/// The rows shown for one workload in weak scaling: every measured row, the model's row at the
/// largest count inside the box, and the projections at 64 and 512 GPUs.
fn rows_of<'a>(rows: &'a [ScalingPoint], w: &str) -> Vec<&'a ScalingPoint> {
    let of_w: Vec<&ScalingPoint> = rows
        .iter()
        .filter(|r| r.workload == w && r.mode == Mode::Weak)
        .collect();
    let mut out: Vec<&ScalingPoint> = of_w
        .iter()
        .copied()
        .filter(|r| r.source.is_measured())
        .collect();
    if let Some(largest) = of_w
        .iter()
        .filter(|r| !r.source.is_measured() && !r.projected)
        .max_by_key(|r| r.n_gpus)
    {
        out.push(largest);
    }
    for n in BEYOND {
        if let Some(r) = of_w.iter().find(|r| r.projected && r.n_gpus == n) {
            out.push(r);
        }
    }
    out
}

/// The measured copy tests and collectives that have their energy: what each moved, at what
/// power, and joules per GB; `None` where none has.
fn tests_table(r: &Report) -> Option<Table> {
    let mut rows = Vec::new();
    let gpus = |g: &[usize]| {
        g.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("+")
    };
    let mut push = |name: String, on: &[usize], bytes: u64, gbps: Option<f64>, e: &TestEnergy| {
        rows.push(vec![
            Cell::plain(name),
            Cell::plain(gpus(on)),
            Cell::plain(crate::model::quantities::format_bytes(bytes)),
            Cell::plain(num(gbps, 1)),
            Cell::plain(num(Some(e.mean_power_w), 0)),
            Cell::plain(num(e.idle_power_w, 0)),
            Cell::plain(num(e.joules_per_gb(gbps), 3)),
            Cell::plain(num(Some(e.seconds), 2)),
        ]);
    };
    for b in r.bandwidth.iter().flat_map(|b| &b.results) {
        if let Some(e) = &b.energy {
            let name = format!("{} {}→{}", b.test.id(), b.src, b.dst);
            push(name, &e.gpus, b.bytes, b.median_gbps, e);
        }
    }
    for c in r.collectives.iter().flat_map(|c| &c.results) {
        if let Some(e) = &c.energy {
            let name = format!("{} {} (busbw)", c.op.id(), c.algo.id());
            push(name, &e.gpus, c.bytes, c.busbw_gbps, e);
        }
    }
    (!rows.is_empty()).then(|| Table {
        id: Some("energy-tests-table".into()),
        columns: vec![
            Column::text("test"),
            Column::text("GPUs"),
            Column::figures("size"),
            Column::figures("GB/s"),
            Column::figures("W (all)"),
            Column::figures("idle W"),
            Column::figures("J/GB"),
            Column::figures("s"),
        ],
        rows,
    })
}

/// The report's energy and cost section; `None` without scaling results or tests with energy.
pub(super) fn section(r: &Report) -> Option<Section> {
    let tests = tests_table(r);
    let Some(sc) = r.scaling.as_ref() else {
        let mut s = Section::new("energy", "Energy and cost");
        push_tests(&mut s, tests?);
        return Some(s);
    };
    let mut s = Section::new("energy", "Energy and cost");
    let mut rows = Vec::new();
    // An ownership cost pays for the energy: at most the figure where the power is a bound.
    let owned = matches!(
        sc.run.pricing,
        Some(crate::scaling::cost::Pricing::Ownership { .. })
    );
    for w in &sc.run.workloads {
        for p in rows_of(&sc.run.rows, &w.name) {
            rows.push(vec![
                Cell::plain(p.workload.clone()),
                Cell::plain(p.n_gpus.to_string()),
                Cell::plain(num(p.throughput, 0)),
                Cell::plain(p.bounded(num(p.watts_per_gpu, 0), '≤')),
                Cell::plain(p.bounded(
                    num(
                        p.samples_per_joule,
                        crate::report::ranking::significant(p.samples_per_joule, 3).max(3),
                    ),
                    '≥',
                )),
                Cell::plain(num(p.energy_j_per_step, 1)),
                Cell::plain(crate::scaling::bound_mark(
                    num(
                        p.cost_per_million_samples,
                        crate::report::ranking::significant(p.cost_per_million_samples, 3),
                    ),
                    p.power_upper_bound() && owned,
                    '≤',
                )),
                Cell::plain(p.energy_basis.map_or("—", EnergyBasis::words)),
                provenance_cell(&row_provenance(p)),
            ]);
        }
    }
    if rows.is_empty() {
        let mut s = Section::new("energy", "Energy and cost");
        push_tests(&mut s, tests?);
        return Some(s);
    }
    s.push(
        Paragraph::note(format!(
            "Weak scaling. Measured rows: the GPUs' energy over the timed steps from NVML (the \
             counter read between the host probes); the model's rows: modeled power (docs/SCALING.md, \"Energy and cost\"). samples/J counts \
             GPU energy only (no CPUs, fans or cooling). {}",
            match &sc.run.pricing {
                Some(p) => format!("Cost at the stated prices: {}.", p.describe()),
                None => "No prices were stated: no cost (give --price-per-gpu-hour, or \
                         ownership prices)."
                    .to_string(),
            }
        ))
        .into(),
    );
    s.push(Block::Table(Table {
        id: Some("energy-table".into()),
        columns: vec![
            Column::text("workload"),
            Column::figures("GPUs"),
            Column::figures("samples/s"),
            Column::figures("W/GPU"),
            Column::figures("samples/J"),
            Column::figures("J/step (all GPUs)"),
            Column::figures("cost/M samples"),
            Column::text("power from"),
            Column::text("provenance"),
        ],
        rows,
    }));
    if let Some(t) = tests {
        push_tests(&mut s, t);
    }
    Some(s)
}

/// The measured tests' energy table, with what it counts.
fn push_tests(s: &mut Section, table: Table) {
    s.push(
        Paragraph::note(
            "Measured tests: the mean power of the GPUs taking part over the timed samples, from \
             NVML's energy counter (docs/CSV.md, \"Energy of a measured test\"); idle W was read \
             before the run; J/GB = W ÷ GB/s.",
        )
        .into(),
    );
    s.push(Block::Table(table));
}
