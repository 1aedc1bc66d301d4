//! CSV exports. The leading columns of each table are fixed by scalescope's documentation
//! (docs/CSV.md); more may follow but these never move.

use super::{ExportError, cell, cell_f};
use crate::model::{P2pCap, Topology};
use crate::report::compare::Comparison;
use crate::report::ranking::significant;

/// Leading columns of `links.csv` / `scalescope topo --format csv --table links`.
pub const LINKS_COLUMNS: [&str; 9] = [
    "gpu_a",
    "gpu_b",
    "link",
    "nvlinks",
    "line_rate_gbps",
    "p2p_read",
    "p2p_write",
    "p2p_nvlink",
    "p2p_atomics",
];

/// Columns of `gpus.csv` / `scalescope topo --format csv --table gpus`.
pub const GPUS_COLUMNS: [&str; 11] = [
    "index",
    "name",
    "uuid",
    "pci_bus_id",
    "memory_mib",
    "pcie_gen_current",
    "pcie_gen_max",
    "pcie_width_current",
    "pcie_width_max",
    "numa_node",
    "cpu_affinity",
];

/// One row per ordered GPU pair `a != b`, sorted by (a, b).
///
/// After the fixed columns: `pcie_path`, `line_rate_basis`, `cuda_can_access_peer`,
/// `cuda_perf_rank`, `source` (live, imported or catalog).
pub fn links(topo: &Topology) -> Result<Vec<u8>, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = LINKS_COLUMNS.to_vec();
    header.extend([
        "pcie_path",
        "line_rate_basis",
        "cuda_can_access_peer",
        "cuda_perf_rank",
        "source",
    ]);
    w.write_record(&header)?;
    for pair in &topo.p2p {
        let link = topo.link(pair.a, pair.b);
        let kind = link.and_then(|l| l.kind);
        let rate = link.and_then(|l| l.line_rate.as_ref());
        let mut row = vec![
            pair.a.to_string(),
            pair.b.to_string(),
            cell(kind.map(|k| k.code())),
            cell(link.and_then(|l| l.nvlinks())),
            cell_f(rate.map(|r| r.gbps), 3),
        ];
        for cap in P2pCap::ALL {
            row.push(cell(pair.caps.get(cap)));
        }
        row.extend([
            cell(link.and_then(|l| l.pcie_path)),
            cell(rate.map(|r| r.basis.clone())),
            cell(pair.cuda_can_access_peer),
            cell(pair.cuda_perf_rank),
            topo.source.kind().to_string(),
        ]);
        w.write_record(&row)?;
    }
    Ok(w.into_inner().map_err(|e| e.into_error())?)
}

/// One row per GPU, sorted by index. After the fixed columns: `nvlinks_active`,
/// `nvlink_gbps_per_link`, `source`, `host_link` and `host_link_gbps` (a link to the CPU other
/// than PCIe, e.g. NVLink-C2C; empty for PCIe).
pub fn gpus(topo: &Topology) -> Result<Vec<u8>, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = GPUS_COLUMNS.to_vec();
    header.extend([
        "nvlinks_active",
        "nvlink_gbps_per_link",
        "source",
        "host_link",
        "host_link_gbps",
    ]);
    w.write_record(&header)?;
    for g in &topo.gpus {
        w.write_record([
            g.index.to_string(),
            cell(g.name.clone()),
            cell(g.uuid.clone()),
            cell(g.pci_bus_id.clone()),
            cell(g.memory_mib),
            cell(g.pcie.gen_current),
            cell(g.pcie.gen_max),
            cell(g.pcie.width_current),
            cell(g.pcie.width_max),
            cell(g.numa_node),
            cell(g.cpu_affinity.clone()),
            cell(g.nvlinks_active),
            cell_f(g.nvlink_gbps_per_link, 3),
            topo.source.kind().to_string(),
            cell(g.host_link.as_ref().map(|h| h.kind.clone())),
            cell_f(g.host_link.as_ref().map(|h| h.gbps), 1),
        ])?;
    }
    Ok(w.into_inner().map_err(|e| e.into_error())?)
}

/// Leading columns of `bandwidth.csv`.
pub const BANDWIDTH_COLUMNS: [&str; 15] = [
    "test",
    "method",
    "src",
    "dst",
    "bytes",
    "samples",
    "median_gbps",
    "min_gbps",
    "max_gbps",
    "cv",
    "line_rate_gbps",
    "efficiency",
    "wrong",
    "status",
    "source",
];

/// One row per result, in run order. After the fixed columns: `latency_ns`, `fwd_gbps`,
/// `rev_gbps`, `reason`, `sample_values` (space-separated GB/s, or ns for latency tests), the
/// [`ENERGY_COLUMNS`] and `joules_per_gb` (mean power ÷ median GB/s).
/// GB/s cells of latency tests are empty; cells that were not measured are empty, never 0.
pub fn bandwidth(results: &[crate::model::BandwidthResult]) -> Result<Vec<u8>, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = BANDWIDTH_COLUMNS.to_vec();
    header.extend([
        "latency_ns",
        "fwd_gbps",
        "rev_gbps",
        "reason",
        "sample_values",
    ]);
    header.extend(ENERGY_COLUMNS);
    header.push("joules_per_gb");
    w.write_record(&header)?;
    for r in results {
        let samples = r
            .sample_values
            .iter()
            .map(|v| format!("{v:.3}"))
            .collect::<Vec<_>>()
            .join(" ");
        w.write_record(
            [
                r.test.id().to_string(),
                r.method.to_string(),
                r.src.to_string(),
                r.dst.to_string(),
                r.bytes.to_string(),
                // Modeled and not-run rows have no samples: an empty cell, never 0.
                if r.source == crate::model::Source::Modeled || r.sample_values.is_empty() {
                    String::new()
                } else {
                    r.sample_values.len().to_string()
                },
                cell_f(r.median_gbps, 3),
                cell_f(r.min_gbps, 3),
                cell_f(r.max_gbps, 3),
                cell_f(r.cv, 5),
                cell_f(r.line_rate_gbps, 3),
                cell_f(r.efficiency, 4),
                cell(r.wrong),
                r.status.to_string(),
                r.source.to_string(),
                cell_f(r.latency_ns, 1),
                cell_f(r.fwd_gbps, 3),
                cell_f(r.rev_gbps, 3),
                cell(r.reason.clone()),
                samples,
            ]
            .into_iter()
            .chain(energy_cells(r.energy.as_ref()))
            .chain([cell_f(
                r.energy
                    .as_ref()
                    .and_then(|e| e.joules_per_gb(r.median_gbps)),
                4,
            )]),
        )?;
    }
    Ok(w.into_inner().map_err(|e| e.into_error())?)
}

/// The energy columns of a measured test (`bandwidth.csv`, `collectives.csv`): the GPUs taking
/// part, together, over its timed samples; empty where not measured (docs/CSV.md).
pub const ENERGY_COLUMNS: [&str; 4] = ["energy_j", "mean_power_w", "idle_power_w", "energy_basis"];

fn energy_cells(e: Option<&crate::model::energy::TestEnergy>) -> [String; 4] {
    [
        cell_f(e.map(|e| e.joules), 3),
        cell_f(e.map(|e| e.mean_power_w), 1),
        cell_f(e.and_then(|e| e.idle_power_w), 1),
        cell(e.map(|e| e.basis.id())),
    ]
}

/// Leading columns of `collectives.csv`.
pub const COLLECTIVES_COLUMNS: [&str; 14] = [
    "op",
    "algo",
    "backend_version",
    "n_gpus",
    "gpus",
    "bytes",
    "dtype",
    "in_place",
    "time_us",
    "algbw_gbps",
    "busbw_gbps",
    "wrong",
    "status",
    "source",
];

/// One row per result, in run order. `gpus` is the GPU list joined by `+` (e.g. `0+1+3`).
/// After the fixed columns: `processes`, `graph`, `reason`, `sample_us`, the [`ENERGY_COLUMNS`],
/// `transport`.
pub fn collectives(results: &[crate::model::CollectiveResult]) -> Result<Vec<u8>, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = COLLECTIVES_COLUMNS.to_vec();
    header.extend(["processes", "graph", "reason", "sample_us"]);
    header.extend(ENERGY_COLUMNS);
    header.push("transport");
    w.write_record(&header)?;
    for r in results {
        w.write_record(
            [
                r.op.id().to_string(),
                r.algo.id().to_string(),
                cell(r.backend_version.clone()),
                r.gpus.len().to_string(),
                r.gpus
                    .iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join("+"),
                r.bytes.to_string(),
                r.dtype.id().to_string(),
                r.in_place.to_string(),
                cell_f(r.time_us, 3),
                cell_f(r.algbw_gbps, 3),
                cell_f(r.busbw_gbps, 3),
                cell(r.wrong),
                r.status.to_string(),
                r.source.to_string(),
                r.processes.to_string(),
                r.graph.to_string(),
                cell(r.reason.clone()),
                r.sample_us
                    .iter()
                    .map(|v| format!("{v:.3}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            ]
            .into_iter()
            .chain(energy_cells(r.energy.as_ref()))
            .chain([cell(r.transport.clone())]),
        )?;
    }
    Ok(w.into_inner().map_err(|e| e.into_error())?)
}

/// Leading columns of `scaling.csv` / `scalescope bench scaling --csv FILE`.
pub const SCALING_COLUMNS: [&str; 12] = [
    "workload",
    "pattern",
    "mode",
    "source",
    "n_gpus",
    "global_batch",
    "per_gpu_batch",
    "step_time_ms",
    "throughput",
    "speedup",
    "efficiency",
    "bound",
];

/// One row per (workload, mode, source, GPU count), in run order. After the fixed columns:
/// `compute_ms`, `comm_exposed_ms`, `other_ms`, `projected`, `model_error`, … (docs/CSV.md),
/// `basis` last.
pub fn scaling(rows: &[crate::scaling::ScalingPoint]) -> Result<Vec<u8>, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = SCALING_COLUMNS.to_vec();
    header.extend([
        "compute_ms",
        "comm_exposed_ms",
        "other_ms",
        "projected",
        "model_error",
        "model_error_uncalibrated",
        "memory_gib_per_gpu",
        "fits",
        "micro_batch",
        "accumulate",
        "calibration",
        "energy_j_per_step",
        "watts_per_gpu",
        "samples_per_joule",
        "energy_basis",
        "cost_per_million_samples",
        "step_statistic",
        "basis",
    ]);
    w.write_record(&header)?;
    for r in rows {
        w.write_record([
            r.workload.clone(),
            r.pattern.id().to_string(),
            r.mode.id().to_string(),
            r.source.to_string(),
            r.n_gpus.to_string(),
            trim_f(r.global_batch),
            trim_f(r.per_gpu_batch),
            cell_f(r.step_time_ms, 4),
            cell_f(r.throughput, 2),
            cell_f(r.speedup, 4),
            cell_f(r.efficiency, 4),
            cell(r.bound.map(|b| b.id())),
            cell_f(r.compute_ms, 4),
            cell_f(r.comm_exposed_ms, 4),
            cell_f(r.other_ms, 4),
            r.projected.to_string(),
            cell_f(r.model_error, 4),
            cell_f(r.model_error_uncalibrated, 4),
            cell_f(r.memory_gib_per_gpu, 2),
            cell(r.fits.map(|f| if f { "true" } else { "false" })),
            r.micro_batch.map_or(String::new(), trim_f),
            cell(r.accumulate),
            cell(r.calibration.map(|c| c.id())),
            cell_f(r.energy_j_per_step, 3),
            cell_f(r.watts_per_gpu, 1),
            // Four significant digits, at least four decimals: 7.2e-6 samples/J (a 64k-GPU
            // row) was written 0.0000, and two Llama rows alike at four decimals.
            cell_f(
                r.samples_per_joule,
                significant(r.samples_per_joule, 4).max(4),
            ),
            cell(r.energy_basis.map(|b| b.id())),
            cell_f(
                r.cost_per_million_samples,
                significant(r.cost_per_million_samples, 4).max(4),
            ),
            cell(r.step_statistic().map(|s| match s {
                crate::scaling::table::StepStatistic::Mean => "mean",
                crate::scaling::table::StepStatistic::Median => "median",
            })),
            scaling_basis(r, rows),
        ])?;
    }
    Ok(w.into_inner().map_err(|e| e.into_error())?)
}

/// A scaling row's basis as `scaling.csv` writes it: with why its efficiency is above 1 where
/// it reads so at the CSV's four decimals (`1.0013`: an FSDP row's sharded optimizer).
fn scaling_basis(
    r: &crate::scaling::ScalingPoint,
    rows: &[crate::scaling::ScalingPoint],
) -> String {
    match crate::report::superlinear::cause(r, rows) {
        Some(why) => format!("{}; above 1.00: {why}", r.basis),
        None => r.basis.clone(),
    }
}

/// A batch as written: whole numbers without decimals, others with up to 3.
fn trim_f(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Leading columns of `check.csv` (`scalescope check --csv`, `health.csv` of `--bench`).
pub const HEALTH_COLUMNS: [&str; 10] = [
    "check", "subject", "gpu", "peer", "verdict", "source", "figure", "expected", "percent", "unit",
];

/// One row per check, in the order the check printed them. After the fixed columns: `detail`,
/// `cause`, `fix`, `basis`. A figure, expected value or cause that does not apply is an empty
/// cell.
pub fn health(checks: &[crate::health::Check]) -> Result<Vec<u8>, ExportError> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = HEALTH_COLUMNS.to_vec();
    header.extend(["detail", "cause", "fix", "basis"]);
    w.write_record(&header)?;
    for c in checks {
        w.write_record([
            c.check.id().to_string(),
            c.subject.clone(),
            cell(c.gpu),
            cell(c.peer),
            c.verdict.word().to_string(),
            c.source.to_string(),
            cell_f(c.figure, 3),
            cell_f(c.expected, 3),
            cell_f(c.percent, 1),
            cell(c.unit.clone()),
            c.detail.clone(),
            cell(c.cause.clone()),
            cell(c.fix.clone()),
            cell(c.basis.clone()),
        ])?;
    }
    Ok(w.into_inner().map_err(|e| e.into_error())?)
}

/// A comparison of reports ([`crate::report::compare`]) as CSV: `figure,machine,value,source,diff_pct,basis`, one row per figure and
/// report; empty cells where unknown.
pub fn comparison(c: &Comparison) -> Result<Vec<u8>, ExportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["figure", "machine", "value", "source", "diff_pct", "basis"])?;
    for r in &c.rows {
        for (i, f) in r.figures.iter().enumerate() {
            w.write_record([
                r.name.clone(),
                c.machines[i].clone(),
                // Empty, as in the table's "—", for a figure that is not finite; powers of ten
                // beyond 1e15 (`{:.4}` writes 1e308 with 309 digits).
                f.value
                    .filter(|v| v.is_finite())
                    .map(|v| {
                        if v.abs() >= 1e15 {
                            format!("{v:e}")
                        } else {
                            format!("{v:.4}")
                        }
                    })
                    .unwrap_or_default(),
                f.source.map(|s| s.to_string()).unwrap_or_default(),
                r.diff_pct[i].map(|d| format!("{d:.2}")).unwrap_or_default(),
                comparison_basis(r, i),
            ])?;
        }
    }
    w.into_inner().map_err(|e| ExportError::Io(e.into_error()))
}

/// A figure's basis as the comparison's CSV writes it: with why an efficiency is above 1.00,
/// and why no difference is given where the figure is not like the first machine's.
fn comparison_basis(r: &crate::report::compare::Row, i: usize) -> String {
    let f = &r.figures[i];
    let mut basis = f.basis.clone();
    if let Some(why) = &f.above_one {
        basis.push_str("; above 1.00: ");
        basis.push_str(why);
    }
    let both = f.value.is_some() && r.figures.first().is_some_and(|a| a.value.is_some());
    if i > 0
        && both
        && r.diff_pct[i].is_none()
        && let Some(why) = r.caveat()
    {
        basis.push_str("; no difference: ");
        basis.push_str(&why);
    }
    basis
}

/// Columns of `compare --ranking-csv FILE`: one row per machine and GPU count of the purchase
/// ranking ([`crate::report::ranking`]), measured and modeled kept apart by `source`.
pub const RANKING_COLUMNS: [&str; 18] = [
    "workload",
    "mode",
    "n_gpus",
    "machine",
    "source",
    "projected",
    "rank",
    "ranked_by",
    "samples_per_s",
    "watts_per_gpu",
    "power_modeled",
    "power_upper_bound",
    "samples_per_joule",
    "cost_per_million_samples",
    "price",
    "run_samples",
    "run_seconds",
    "run_cost",
];

/// A purchase ranking as CSV ([`RANKING_COLUMNS`]): empty cells where a figure is unknown (no
/// price, no power, does not fit), never 0; `note` last says why.
pub fn ranking(r: &crate::report::ranking::Ranking) -> Result<Vec<u8>, ExportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = RANKING_COLUMNS.to_vec();
    header.push("note");
    w.write_record(&header)?;
    for g in &r.groups {
        for c in &g.candidates {
            let (secs, money) = r.run_samples.map_or((None, None), |n| c.run_of(n));
            w.write_record([
                r.workload.clone(),
                r.mode.to_string(),
                g.n_gpus.to_string(),
                r.machines.get(c.machine).cloned().unwrap_or_default(),
                c.source_word().to_string(),
                c.projected.to_string(),
                cell(c.rank),
                r.by.id().to_string(),
                cell_f(c.throughput, 3),
                cell_f(c.watts_per_gpu, 1),
                c.power_modeled.to_string(),
                c.power_upper_bound.to_string(),
                cell_f(
                    c.samples_per_joule,
                    significant(c.samples_per_joule, 4).max(5),
                ),
                cell_f(
                    c.cost_per_million,
                    significant(c.cost_per_million, 4).max(4),
                ),
                cell(r.prices.get(c.machine).cloned().flatten()),
                cell(r.run_samples),
                cell_f(secs, 1),
                cell_f(money, 2),
                c.note.clone(),
            ])?;
        }
    }
    Ok(w.into_inner().map_err(|e| e.into_error())?)
}
