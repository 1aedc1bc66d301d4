//! A report as a document reads it: what the machine is, the health verdict, the key figures
//! with the definition each follows and where each comes from, and the warnings collapsed.
//! Pure functions of a [`Report`], shared by `report.png` (`ui::report_view`) and `report.html`
//! (`document::report_html`) so that both say the same thing.

use crate::health::{Check, Verdict};
use crate::model::quantities::format_bytes;
use crate::model::{
    Algo, BandwidthResult, CollectiveOp, Endpoint, LinkKind, Source, Status, TestId, TopologySource,
};
use crate::scaling::Mode;

use super::Report;
use super::compare;

/// Where a figure comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Provenance {
    /// Measured on GPUs (this machine's run, or a capture of a real one).
    Measured,
    /// Derived from line rates × efficiencies; the text says where the efficiencies came from.
    Modeled(String),
    /// Beyond the box: the scaling model over nodes.
    Projected,
    /// No figure.
    None,
}

impl Provenance {
    /// `measured`, `modeled`, `projected` or "—".
    pub fn word(&self) -> &'static str {
        match self {
            Self::Measured => "measured",
            Self::Modeled(_) => "modeled",
            Self::Projected => "projected",
            Self::None => "—",
        }
    }

    /// The word with where a modeled figure's efficiencies came from.
    pub fn text(&self) -> String {
        match self {
            Self::Modeled(from) if !from.is_empty() => format!("modeled: {from}"),
            other => other.word().to_string(),
        }
    }
}

/// One key figure: what it is, its value and unit, the definition it follows and its
/// provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyFigure {
    /// e.g. `P2P read CE, 512 MiB, GPU 0→1`.
    pub name: String,
    pub value: Option<f64>,
    /// `GB/s`, or empty for a ratio.
    pub unit: &'static str,
    /// The anchor whose definition the figure follows, e.g. `nvbandwidth's
    /// device_to_device_memcpy_read_ce`.
    pub definition: String,
    /// More about the figure (the spread over pairs, the size it was read at).
    pub detail: String,
    pub provenance: Provenance,
}

impl KeyFigure {
    /// The value with one decimal (two for ratios) and its unit; "—" when unknown.
    pub fn value_text(&self) -> String {
        fmt_value(self.value, self.unit)
    }
}

/// A value as text: "—" when unknown or not finite, two decimals at or below 1.5 (ratios), one
/// otherwise, the unit after a space.
pub fn fmt_value(v: Option<f64>, unit: &str) -> String {
    match v.filter(|v| v.is_finite()) {
        None => "—".to_string(),
        Some(v) => {
            let n = if v.abs() <= 1.5 {
                format!("{v:.2}")
            } else {
                format!("{v:.1}")
            };
            if unit.is_empty() {
                n
            } else {
                format!("{n} {unit}")
            }
        }
    }
}

/// The GPU model without the vendor's prefix: `NVIDIA H200` → `H200`.
fn model_name(name: &str) -> &str {
    name.strip_prefix("NVIDIA ").unwrap_or(name).trim()
}

/// What the machine is, by its GPUs: `2× H200 SXM`, `8× H100 SXM`, `4× RTX 4090`,
/// `4× H100, 4× A100`; `8 GPUs` when the names are unknown. `SXM` is added only when every GPU
/// has 18 NVLinks active (only SXM modules carry that many) and the name does not say its form.
pub fn machine_name(r: &Report) -> String {
    if let Some(n) = r.machine.display_name.as_deref().map(str::trim)
        && !n.is_empty()
    {
        return n.to_string();
    }
    let mut names: Vec<String> = r
        .machine
        .gpu_names
        .iter()
        .map(|n| model_name(n).to_string())
        .collect();
    if names.is_empty() || names.iter().all(|n| n.is_empty()) {
        names = r
            .topology
            .gpus
            .iter()
            .filter_map(|g| g.name.as_deref().map(|n| model_name(n).to_string()))
            .collect();
    }
    let sxm = !r.topology.gpus.is_empty()
        && r.topology
            .gpus
            .iter()
            .all(|g| g.nvlinks_active.is_some_and(|n| n >= 18));
    let mut counted: Vec<(String, usize)> = Vec::new();
    for n in names.into_iter().filter(|n| !n.is_empty()) {
        match counted.iter_mut().find(|(x, _)| *x == n) {
            Some(e) => e.1 += 1,
            None => counted.push((n, 1)),
        }
    }
    if counted.is_empty() {
        return match r.topology.gpus.len() {
            0 => "No GPU".to_string(),
            1 => "1 GPU".to_string(),
            n => format!("{n} GPUs"),
        };
    }
    counted
        .iter()
        .map(|(n, c)| {
            // Grace superchips (GB200, GB300, GH200) are not SXM modules: their name says
            // what they are.
            let form = ["SXM", "PCIe", "NVL", "HGX", "GB200", "GB300", "GH200"]
                .iter()
                .any(|f| n.to_ascii_uppercase().contains(&f.to_ascii_uppercase()));
            if sxm && !form {
                format!("{c}× {n} SXM")
            } else {
                format!("{c}× {n}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The machine by what it is, its host name second: `2× H200 SXM · vm`; the catalog name
/// for a catalog machine (`NVIDIA DGX H100`).
pub fn machine_title(r: &Report) -> String {
    let host = match &r.topology.source {
        TopologySource::Catalog { name, .. } => return name.clone(),
        TopologySource::Live { hostname, .. } => hostname.clone().or(r.machine.hostname.clone()),
        TopologySource::Imported { .. } | TopologySource::SoakRecording { .. } => {
            Some(r.topology.title())
        }
        TopologySource::ToolOutput { .. } => {
            r.machine.hostname.clone().or(Some(r.topology.title()))
        }
    };
    match host {
        Some(h) if !h.is_empty() => format!("{} · {h}", machine_name(r)),
        _ => machine_name(r),
    }
}

/// Where a report's figures come from, in the words the app's badges and top bar use:
/// `measured on 2× H200 SXM · vm, 2026-11-22`, or for a report with anything modeled (a catalog
/// or imported machine, a modeled section) `modeled for 2× H200 SXM 141 GB, catalog entry
/// h200-2x-sxm, 2026-11-27 · line rates × typical efficiencies`. A modeled report never says
/// "measured on": its machine was documented or captured, not measured.
pub fn origin(r: &Report) -> String {
    let machine = machine_title(r);
    if !r.has_modeled() {
        return format!("measured on {machine}, {}", r.date());
    }
    let entry = match &r.topology.source {
        TopologySource::Catalog { id, .. } => format!(", catalog entry {id}"),
        _ => String::new(),
    };
    format!(
        "modeled for {machine}{entry}, {} · {}",
        r.date(),
        efficiencies_from(r)
    )
}

/// Where a report's modeled figures take their efficiencies from, in words:
/// `efficiencies from nvbandwidth on H200 NVLink`, every distinct source of its bandwidth rows.
pub fn efficiencies_from(r: &Report) -> String {
    let mut from: Vec<String> = r
        .bandwidth
        .iter()
        .flat_map(|b| &b.results)
        .filter(|x| x.source == Source::Modeled)
        .filter_map(|x| x.reason.as_deref().and_then(efficiency_source))
        .map(|s| s.split(" (").next().unwrap_or(&s).to_string())
        .collect();
    from.sort();
    from.dedup();
    if from.is_empty() {
        "line rates × typical efficiencies".to_string()
    } else {
        format!("efficiencies from {}", from.join(", "))
    }
}

/// How the GPUs are connected, in one phrase: `NV18 between every pair`, `PCIe (PIX, SYS)`,
/// `NV4 and SYS`; `None` with fewer than two GPUs or nothing known.
pub fn interconnect(r: &Report) -> Option<String> {
    let kinds: Vec<Option<LinkKind>> = r.topology.links.iter().map(|l| l.kind).collect();
    if kinds.is_empty() {
        return None;
    }
    let mut known: Vec<LinkKind> = kinds.iter().flatten().copied().collect();
    known.sort();
    known.dedup();
    if known.is_empty() {
        return None;
    }
    if known.len() == 1 && kinds.iter().all(|k| k.is_some()) {
        let k = known[0];
        let what = if k.nvlinks().is_some() {
            format!("NVLink {k}")
        } else {
            format!("PCIe {k}")
        };
        return Some(if kinds.len() == 1 {
            what
        } else {
            format!("{what} between every pair")
        });
    }
    let list: Vec<String> = known.iter().map(|k| k.to_string()).collect();
    Some(format!("links {}", list.join(", ")))
}

/// Second to the machine's name: where the figures come from and the software, e.g.
/// `measured on host vm · driver 580.159.04 · CUDA 13.0 · NCCL 2.28.9 · 2026-11-22`.
pub fn identity_line(r: &Report) -> String {
    let m = &r.machine;
    let origin = match &r.topology.source {
        TopologySource::Live { hostname, .. } => format!(
            "run on host {}",
            hostname
                .as_deref()
                .or(m.hostname.as_deref())
                .unwrap_or("(unnamed)")
        ),
        TopologySource::Catalog { name, .. } => format!("catalog entry {name}"),
        TopologySource::Imported { .. } => format!("imported from {}", r.topology.title()),
        TopologySource::SoakRecording { .. } => format!("replay of {}", r.topology.title()),
        TopologySource::ToolOutput { .. } => format!("imported from {}", r.topology.title()),
    };
    let d = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    format!(
        "{origin} · driver {} · CUDA {} · NCCL {} · {} · scalescope {} ({})",
        d(&m.driver_version),
        d(&m.cuda_version),
        // Some NCCL builds name themselves in their version string ("NCCL 2.28.3"); the line
        // names NCCL once.
        d(&nccl_version(r).map(|v| v.trim_start_matches("NCCL ").to_string())),
        r.date(),
        m.scalescope_version,
        m.preset
    )
}

/// What the report as a whole is: measured, modeled, or a mix, in words for the page's head.
pub fn origin_line(r: &Report) -> String {
    let src = |s: Option<Source>| s.map_or("not run".to_string(), |s| s.to_string());
    format!(
        "topology {} · health {} · bandwidth {} · collectives {} · scaling {}",
        match r.topology.source {
            TopologySource::Live { .. } => "read live (NVML)",
            TopologySource::Catalog { .. } => "from the catalog (documented, not measured)",
            TopologySource::Imported { .. } => "imported from nvidia-smi captures",
            TopologySource::SoakRecording { .. } => "the GPUs of a soak.csv recording",
            TopologySource::ToolOutput { .. } =>
                "the GPUs nvbandwidth/nccl-tests output names (links not known)",
        },
        health_origin(
            r.health.as_ref(),
            matches!(r.topology.source, TopologySource::Imported { .. })
        ),
        src(r.bandwidth.as_ref().map(|b| b.source)),
        r.collectives
            .as_ref()
            .map_or("not run".to_string(), |c| c.source_words()),
        src(r.scaling.as_ref().map(|s| s.source)),
    )
}

/// The check's source, and how many of its checks were modeled where it mixes them (a check of
/// captures judges the copies it has no figure for from their line rates): `measured (4 of 30
/// checks modeled)`; a check of `captured` readings (nvidia-smi's, imported) is "read from the
/// captures", never "measured" — scalescope measured nothing there.
fn health_origin(h: Option<&crate::health::HealthReport>, captured: bool) -> String {
    let Some(h) = h else {
        return "not run".to_string();
    };
    let modeled = h
        .checks
        .iter()
        .filter(|c| c.source == Source::Modeled)
        .count();
    let source = match (h.source, captured) {
        (Source::Measured, true) => "read from the captures".to_string(),
        (s, _) => s.to_string(),
    };
    if h.source == Source::Measured && modeled > 0 {
        format!("{source} ({modeled} of {} checks modeled)", h.checks.len())
    } else {
        source
    }
}

/// The health check's worst findings: FAIL first, then WARN, then UNKNOWN, at most `n`.
pub fn worst_findings(r: &Report, n: usize) -> Vec<&Check> {
    let Some(h) = &r.health else {
        return Vec::new();
    };
    let mut bad: Vec<&Check> = h
        .checks
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .collect();
    // Worst first (Fail > Warn > Unknown), then the lowest percent of expected.
    bad.sort_by(|a, b| {
        b.verdict.cmp(&a.verdict).then(
            a.percent
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.percent.unwrap_or(f64::INFINITY)),
        )
    });
    bad.truncate(n);
    bad
}

/// The one line of a finding: `FAIL GPU 0→1 p2p_write_ce: 180.2 GB/s, expected 396.4 (45 %) —
/// likely: … — do: …`.
pub fn finding_line(c: &Check) -> String {
    let mut s = format!(
        "{} {} {}: {}",
        c.verdict_text(),
        c.subject,
        c.check,
        c.detail
    );
    if let Some(cause) = c.cause_words() {
        s.push_str(&format!(" — {cause}"));
    }
    if let Some(fix) = &c.fix {
        s.push_str(&format!(" — do: {fix}"));
    }
    s
}

/// The warnings as a document shows them: their count and the worst named (high variance
/// collapsed into one line naming the noisiest), at most `keep` lines.
pub fn warnings_lines(r: &Report, keep: usize) -> Vec<String> {
    let mut lines = crate::bench::warning::summarize(&r.warnings, 1);
    lines.truncate(keep);
    lines
}

/// Where a result's figure comes from: measured, or modeled with the result's own note on the
/// efficiency it used (`88% of 63.0 GB/s (pinned-copy efficiency, nvbandwidth on H200)`).
pub fn result_provenance(source: Source, reason: Option<&str>) -> Provenance {
    match source {
        Source::Measured => Provenance::Measured,
        Source::Modeled => Provenance::Modeled(
            reason
                .map(|r| r.strip_prefix("modeled: ").unwrap_or(r).to_string())
                .unwrap_or_default(),
        ),
    }
}

/// Where a modeled figure's efficiency came from, out of its `reason`:
/// `modeled: 88% of 63.0 GB/s (pinned-copy efficiency, nvbandwidth on H200)` →
/// `nvbandwidth on H200 (pinned-copy efficiency)`; an assumption without a source
/// (`assumed efficiency of P2P over PCIe switches`) is returned as it is. `None` when the
/// reason has no parenthesised note.
pub fn efficiency_source(reason: &str) -> Option<String> {
    let open = reason.rfind('(')?;
    let note = reason[open + 1..].strip_suffix(')')?.trim();
    Some(match note.rsplit_once(", ") {
        Some((what, from)) => format!("{from} ({what})"),
        None => note.to_string(),
    })
}

/// nvbandwidth's name for the tests it defines, the anchors of the copy figures.
pub fn nvbandwidth_name(test: TestId) -> Option<&'static str> {
    Some(match test {
        TestId::H2d => "host_to_device_memcpy_ce",
        TestId::D2h => "device_to_host_memcpy_ce",
        TestId::H2dBidir => "host_to_device_bidirectional_memcpy_ce",
        TestId::D2hBidir => "device_to_host_bidirectional_memcpy_ce",
        TestId::P2pReadCe => "device_to_device_memcpy_read_ce",
        TestId::P2pWriteCe => "device_to_device_memcpy_write_ce",
        TestId::P2pBidirCe => "device_to_device_bidirectional_memcpy_read_ce",
        TestId::P2pReadSm => "device_to_device_memcpy_read_sm",
        TestId::P2pWriteSm => "device_to_device_memcpy_write_sm",
        TestId::AllToOne => "all_to_one_write_ce",
        TestId::OneToAll => "one_to_all_write_ce",
        TestId::HostToAll => "host_to_all_memcpy_ce",
        TestId::AllToHost => "all_to_host_memcpy_ce",
        _ => return None,
    })
}

/// The size a copy key figure is read at: the Bandwidth view's headline size
/// ([`crate::model::headline_size`]: 512 MiB, nvbandwidth's default, when the test ran at it,
/// else the size with the most cells).
fn key_size(results: &[BandwidthResult], test: TestId) -> Option<u64> {
    crate::model::headline_size(results, test)
}

/// A copy test's key figure: the first cell (lowest GPU indices) at [`key_size`], with the
/// median and least over every cell at that size when there are more.
fn copy_figure(r: &Report, test: TestId, what: &str) -> KeyFigure {
    let definition = match nvbandwidth_name(test) {
        Some(n) => format!("nvbandwidth's definition ({n})"),
        None => "scalescope's definition".to_string(),
    };
    let none = |detail: &str| KeyFigure {
        name: what.to_string(),
        value: None,
        unit: "GB/s",
        definition: definition.clone(),
        detail: detail.to_string(),
        provenance: Provenance::None,
    };
    let Some(b) = &r.bandwidth else {
        return none("bandwidth not run");
    };
    let Some(bytes) = key_size(&b.results, test) else {
        // Run, but with no figure (waived where peer access is refused, skipped, failed): say
        // why rather than "not run".
        return match b.results.iter().find(|x| x.test == test) {
            Some(x) => none(&format!(
                "{test} {}: {}",
                x.status,
                x.reason.as_deref().unwrap_or("no figure")
            )),
            None => none(&format!("{test} not run")),
        };
    };
    let mut cells: Vec<&BandwidthResult> = b
        .results
        .iter()
        .filter(|x| x.test == test && x.bytes == bytes && x.status == Status::Ok)
        .filter(|x| x.median_gbps.is_some_and(f64::is_finite))
        .collect();
    cells.sort_by_key(|x| (x.src, x.dst));
    cells.dedup_by_key(|x| (x.src, x.dst));
    let Some(first) = cells.first() else {
        return none(&format!("no {test} figure"));
    };
    let ends = match (first.src, first.dst) {
        (Endpoint::Host, d) => format!("host→GPU {d}"),
        (s, Endpoint::Host) => format!("GPU {s}→host"),
        (s, d) => format!("GPU {s}→{d}"),
    };
    let mut detail = String::new();
    if cells.len() > 1 {
        let mut v: Vec<f64> = cells.iter().filter_map(|x| x.median_gbps).collect();
        v.sort_by(f64::total_cmp);
        let median = crate::model::Stats::of(&v).map(|s| s.median);
        detail = format!(
            "over all {} cells: median {}, least {}",
            cells.len(),
            fmt_value(median, "GB/s"),
            fmt_value(v.first().copied(), "GB/s")
        );
    }
    if let Some(e) = first.efficiency.filter(|e| e.is_finite()) {
        if !detail.is_empty() {
            detail.push_str("; ");
        }
        detail.push_str(&format!("{:.0} % of line rate", e * 100.0));
    }
    KeyFigure {
        name: format!("{what}, {}, {ends}", format_bytes(bytes)),
        value: first.median_gbps,
        unit: "GB/s",
        definition,
        detail,
        provenance: result_provenance(first.source, first.reason.as_deref()),
    }
}

/// The NCCL all-reduce key figure: busbw at 1 GiB over every GPU of the run.
fn all_reduce_figure(r: &Report) -> KeyFigure {
    let f = compare::all_reduce_busbw_1g(r);
    let (ranks, reason, version) = r
        .collectives
        .as_ref()
        .and_then(|c| {
            c.results
                .iter()
                .filter(|x| x.op == CollectiveOp::AllReduce && x.algo == Algo::Nccl)
                .max_by_key(|x| x.gpus.len())
        })
        .map(|x| (x.gpus.len(), x.reason.clone(), x.backend_version.clone()))
        .unwrap_or((0, None, None));
    let nccl = version
        .or_else(|| r.machine.nccl_version.clone())
        .map(|v| {
            if v.starts_with("NCCL") {
                v
            } else {
                format!("NCCL {v}")
            }
        })
        .unwrap_or_else(|| "NCCL".to_string());
    KeyFigure {
        name: if ranks > 0 {
            format!("all-reduce busbw, 1 GiB, {ranks} GPUs ({nccl})")
        } else {
            "all-reduce busbw, 1 GiB".to_string()
        },
        value: f.value,
        unit: "GB/s",
        definition: "nccl-tests' busbw (algbw × 2(n−1)/n)".to_string(),
        detail: f.basis,
        provenance: match f.source {
            None => Provenance::None,
            Some(s) => result_provenance(s, reason.as_deref()),
        },
    }
}

/// The scaling key figures: efficiency of the default workload, weak and strong, at the
/// largest GPU count inside the box.
fn scaling_figures(r: &Report) -> Vec<KeyFigure> {
    let Some(w) = compare::default_workload(&[r]) else {
        return Vec::new();
    };
    // On one GPU the efficiency is 1 by definition: the step's throughput says something.
    if r.topology.gpus.len() == 1 {
        return vec![one_gpu_throughput(r, &w)];
    }
    Mode::ALL
        .into_iter()
        .map(|mode| {
            let f = compare::efficiency(r, &w, mode);
            let row = r.scaling.as_ref().and_then(|s| {
                s.run
                    .rows
                    .iter()
                    .filter(|x| x.workload == w && x.mode == mode && !x.projected)
                    .filter(|x| x.efficiency.is_some())
                    .max_by_key(|x| (x.n_gpus, x.source.is_measured()))
            });
            let provenance = match row {
                None => Provenance::None,
                Some(x) if x.source.is_measured() => Provenance::Measured,
                Some(x) => Provenance::Modeled(format!(
                    "scalescope's step-time model, compute calibrated from {}",
                    match x.calibration.map(|c| c.id()) {
                        Some("user") => "the user's 1-GPU step",
                        Some("framework") => "this run's 1-GPU PyTorch step",
                        Some("catalog") => "a catalog 1-GPU step of this GPU",
                        Some("transferred") => "another GPU's catalog step, moved by rate ratios",
                        Some("utilization") => "FLOPs ÷ (GEMM rate × catalog utilization)",
                        _ => "—",
                    }
                )),
            };
            let how = match row.map(|x| x.source) {
                Some(crate::scaling::RowSource::Framework) => "real PyTorch steps",
                Some(crate::scaling::RowSource::Proxy) => PROXY_METHOD,
                _ => "the step-time model",
            };
            KeyFigure {
                name: format!("{w}, {mode} scaling efficiency"),
                value: f.value,
                unit: "",
                definition: format!("throughput(n) ÷ (n × throughput(1)), from {how}"),
                // Above 1.00, never without its cause; a step the host sets says so.
                detail: match &f.above_one {
                    Some(why) => format!("{}; above 1.00: {why}", f.basis),
                    None => f.basis.clone(),
                } + &row
                    .filter(|x| x.bound == Some(crate::scaling::Bound::Host))
                    .map(|x| {
                        format!(
                            "; bound host at {}: the host's time to issue the step{} sets it, not the GPU",
                            crate::model::quantities::gpus(x.n_gpus),
                            x.host_floor_ms
                                .map(|h| format!(" ({h:.1} ms)"))
                                .unwrap_or_default()
                        )
                    })
                    .unwrap_or_default(),
                provenance,
            }
        })
        .collect()
}

/// How the key figures name rows of synthetic proxy steps: the method before real framework
/// runs (the bundled examples' rows), measured but not the workload's own step.
pub const PROXY_METHOD: &str = "synthetic proxy steps (GEMMs + NCCL all-reduce), the older \
     method, not the workload's training step";

/// The 1-GPU key figure: the default workload's throughput on the one GPU, a measured row
/// preferred over the model's.
fn one_gpu_throughput(r: &Report, w: &str) -> KeyFigure {
    let rows: Vec<_> = r
        .scaling
        .iter()
        .flat_map(|s| s.run.rows.iter())
        .filter(|x| x.workload == w && x.n_gpus == 1 && !x.projected && x.throughput.is_some())
        .collect();
    let row = rows
        .iter()
        .find(|x| x.source.is_measured())
        .or_else(|| rows.first());
    let (how, provenance) = match row.map(|x| x.source) {
        Some(crate::scaling::RowSource::Framework) => ("real PyTorch steps", Provenance::Measured),
        Some(crate::scaling::RowSource::Proxy) => (PROXY_METHOD, Provenance::Measured),
        Some(crate::scaling::RowSource::Modeled) => (
            "the step-time model",
            Provenance::Modeled("scalescope's step-time model".to_string()),
        ),
        None => ("—", Provenance::None),
    };
    KeyFigure {
        name: format!("{w}, throughput on 1 GPU"),
        value: row.and_then(|x| x.throughput),
        unit: "samples/s",
        definition: format!("samples per second of the training step, from {how}"),
        detail: row.map_or_else(
            || format!("no {w} row on 1 GPU"),
            |x| format!("{w}, {} mode, 1 GPU, {}", x.mode, x.basis),
        ),
        provenance,
    }
}

/// Every key figure of a report, in the order a reader wants them: P2P read and write, host
/// copies, the all-reduce, scaling efficiency. Figures not measured are listed with "—".
pub fn key_figures(r: &Report) -> Vec<KeyFigure> {
    let mut out = Vec::new();
    if r.topology.gpus.len() > 1 {
        out.push(copy_figure(r, TestId::P2pReadCe, "P2P read CE"));
        out.push(copy_figure(r, TestId::P2pWriteCe, "P2P write CE"));
    }
    out.push(copy_figure(r, TestId::H2d, "H2D CE (pinned)"));
    out.push(copy_figure(r, TestId::D2h, "D2H CE (pinned)"));
    if r.topology.gpus.len() > 1 {
        out.push(all_reduce_figure(r));
    }
    out.extend(scaling_figures(r));
    out
}

/// Whether a bandwidth result's data was checked: `verified` (0 wrong), `N wrong`, or
/// `not verified`.
pub fn verified_text(wrong: Option<u64>) -> String {
    match wrong {
        Some(0) => "verified".to_string(),
        Some(n) => format!("{n} wrong"),
        None => "not verified".to_string(),
    }
}

/// The NCCL version a report's collectives ran with: the machine's record, else the measured
/// NCCL rows' own (reports written before the machine recorded it).
pub fn nccl_version(r: &Report) -> Option<String> {
    r.machine.nccl_version.clone().or_else(|| {
        r.collectives.as_ref().and_then(|c| {
            c.results
                .iter()
                .filter(|x| x.algo == Algo::Nccl && x.source != crate::model::Source::Modeled)
                .find_map(|x| x.backend_version.clone())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Report {
        let (_, r) = crate::report::bundled::reports()
            .into_iter()
            .find(|(n, _)| n.contains("2x"))
            .expect("2-GPU example");
        r.expect("parses")
    }

    /// A collectives stage where nothing ran (the 1× H200 example: one GPU) is not called
    /// measured in the page's head; one where results ran is.
    #[test]
    fn a_collectives_stage_where_nothing_ran_says_so() {
        let one = crate::report::bundled::reports()
            .into_iter()
            .find(|(name, _)| name.starts_with("h200-1x"))
            .expect("the 1× H200 example")
            .1
            .expect("parses");
        assert!(
            origin_line(&one).contains("collectives none ran"),
            "{}",
            origin_line(&one)
        );
        assert!(
            origin_line(&example()).contains("collectives measured"),
            "{}",
            origin_line(&example())
        );
    }

    /// On one GPU the scaling key figure is the step's throughput, not an efficiency that is 1
    /// by definition, and nothing says "1 GPUs".
    #[test]
    fn one_gpu_shows_throughput_not_a_trivial_efficiency() {
        let mut r = example();
        r.topology.gpus.truncate(1);
        let figures = key_figures(&r);
        let text = format!("{figures:?}");
        assert!(!text.contains("1 GPUs"), "{text}");
        assert!(!text.contains("scaling efficiency"), "{text}");
        let f = figures
            .iter()
            .find(|f| f.name.contains("throughput on 1 GPU"))
            .expect("a throughput figure");
        assert_eq!(f.unit, "samples/s");
        assert!(f.value.is_some_and(|v| v > 0.0), "{f:?}");
    }

    /// The bundled examples' scaling rows are synthetic proxy steps: the key figures say so,
    /// and that it is the older method.
    #[test]
    fn proxy_rows_are_named_the_older_method() {
        let r = example();
        let figures = key_figures(&r);
        let weak = figures
            .iter()
            .find(|f| f.name.contains("weak scaling efficiency"))
            .expect("weak figure");
        assert!(weak.definition.contains("the older method"), "{weak:?}");
    }

    /// A scaling efficiency whose step the host sets says so beside the figure.
    #[test]
    fn a_host_bound_efficiency_says_the_host_sets_it() {
        let mut r = example();
        let figure = |r: &Report| {
            key_figures(r)
                .into_iter()
                .find(|f| f.name.contains("strong scaling efficiency"))
                .expect("strong figure")
        };
        assert!(!figure(&r).detail.contains("bound host"));
        let w = figure(&r).name.split(',').next().unwrap().to_string();
        let rows = &mut r.scaling.as_mut().unwrap().run.rows;
        let n = rows
            .iter()
            .filter(|x| x.workload == w && x.mode == Mode::Strong && !x.projected)
            .filter(|x| x.efficiency.is_some())
            .map(|x| x.n_gpus)
            .max()
            .unwrap();
        for x in rows
            .iter_mut()
            .filter(|x| x.workload == w && x.mode == Mode::Strong && x.n_gpus == n)
        {
            x.bound = Some(crate::scaling::Bound::Host);
            x.host_floor_ms = Some(26.4);
        }
        let f = figure(&r);
        assert!(f.detail.contains("bound host at"), "{f:?}");
        assert!(f.detail.contains("(26.4 ms)"), "{f:?}");
    }

    /// The facts line names the NCCL version from the measured rows when the machine record has
    /// none (reports written before it was recorded), and says "—" when nothing ran NCCL.
    #[test]
    fn nccl_version_falls_back_to_the_measured_rows() {
        let mut r = example();
        r.machine.nccl_version = None;
        let from_rows = r
            .collectives
            .as_ref()
            .and_then(|c| c.results.iter().find_map(|x| x.backend_version.clone()));
        assert!(
            from_rows.is_some(),
            "the example's NCCL rows carry a version"
        );
        assert_eq!(nccl_version(&r), from_rows);
        r.collectives = None;
        assert_eq!(nccl_version(&r), None);
        assert!(
            identity_line(&r).contains("NCCL —"),
            "{}",
            identity_line(&r)
        );
    }

    #[test]
    fn a_version_that_names_nccl_is_named_once() {
        let mut r = example();
        r.machine.nccl_version = Some("NCCL 2.28.3".into());
        let line = identity_line(&r);
        assert!(line.contains("· NCCL 2.28.3 ·"), "{line}");
        assert!(!line.contains("NCCL NCCL"), "{line}");
    }

    #[test]
    fn the_machine_is_named_by_its_gpus_before_its_host() {
        let r = example();
        assert_eq!(machine_name(&r), "2× H200 SXM");
        assert!(identity_line(&r).starts_with("run on host vm"));
        assert_eq!(interconnect(&r).as_deref(), Some("NVLink NV18"));
        let mut r = r;
        r.machine.gpu_names.clear();
        for g in &mut r.topology.gpus {
            g.name = None;
            g.nvlinks_active = None;
        }
        assert_eq!(machine_name(&r), "2 GPUs");
    }

    #[test]
    fn key_figures_name_their_size_pair_and_anchor() {
        let r = example();
        let k = key_figures(&r);
        let read = &k[0];
        assert!(
            read.name.starts_with("P2P read CE, 512 MiB, GPU 0→1"),
            "{read:?}"
        );
        assert!(read.definition.contains("nvbandwidth"));
        assert_eq!(read.provenance, Provenance::Measured);
        let v = read.value.expect("measured");
        // The figure is the report's own row, not a constant.
        let row = r
            .bandwidth
            .as_ref()
            .unwrap()
            .results
            .iter()
            .find(|x| {
                x.test == TestId::P2pReadCe
                    && x.bytes == 512 << 20
                    && x.src == Endpoint::Gpu(0)
                    && x.dst == Endpoint::Gpu(1)
            })
            .unwrap();
        assert_eq!(Some(v), row.median_gbps);
        let ar = k.iter().find(|f| f.name.starts_with("all-reduce")).unwrap();
        assert!(ar.definition.contains("nccl-tests' busbw"));
        assert!(ar.value.is_some());
    }

    #[test]
    fn figures_not_measured_are_unknown_not_zero() {
        let mut r = example();
        r.bandwidth = None;
        r.collectives = None;
        let k = key_figures(&r);
        assert_eq!(k[0].value, None);
        assert_eq!(k[0].value_text(), "—");
        assert_eq!(k[0].provenance, Provenance::None);
        assert_eq!(fmt_value(Some(f64::NAN), "GB/s"), "—");
        assert_eq!(verified_text(None), "not verified");
    }

    #[test]
    fn modeled_figures_say_where_their_efficiency_came_from() {
        let p = result_provenance(
            Source::Modeled,
            Some("modeled: 88% of 63.0 GB/s (pinned-copy efficiency, nvbandwidth on H200)"),
        );
        assert_eq!(
            p.text(),
            "modeled: 88% of 63.0 GB/s (pinned-copy efficiency, nvbandwidth on H200)"
        );
    }

    #[test]
    fn warnings_collapse_to_a_count_with_the_worst_named() {
        let r = example();
        assert!(r.warnings.len() > 5);
        let lines = warnings_lines(&r, 4);
        assert!(lines.len() <= 4);
        assert!(lines.iter().any(|l| l.contains("the worst")), "{lines:?}");
    }

    #[test]
    fn efficiency_source_names_where_the_efficiency_was_measured() {
        assert_eq!(
            super::efficiency_source(
                "modeled: 88% of 63.0 GB/s (pinned-copy efficiency, nvbandwidth on H200)"
            )
            .as_deref(),
            Some("nvbandwidth on H200 (pinned-copy efficiency)")
        );
        assert_eq!(
            super::efficiency_source(
                "modeled: 70% of 52.0 GB/s (assumed efficiency of P2P over PCIe switches)"
            )
            .as_deref(),
            Some("assumed efficiency of P2P over PCIe switches")
        );
        assert_eq!(super::efficiency_source("modeled: link unknown"), None);
    }

    #[test]
    fn a_waived_copy_test_says_why_not_that_it_did_not_run() {
        let mut r = example();
        let b = r.bandwidth.as_mut().unwrap();
        for x in b.results.iter_mut().filter(|x| x.test == TestId::P2pReadCe) {
            x.status = Status::Waived;
            x.median_gbps = None;
            x.reason = Some("peer access unsupported between GPU 0 and GPU 1".into());
        }
        let f = copy_figure(&r, TestId::P2pReadCe, "P2P read CE");
        assert_eq!(f.value, None);
        assert_eq!(
            f.detail,
            "p2p_read_ce waived: peer access unsupported between GPU 0 and GPU 1"
        );
        r.bandwidth
            .as_mut()
            .unwrap()
            .results
            .retain(|x| x.test != TestId::P2pReadCe);
        let f = copy_figure(&r, TestId::P2pReadCe, "P2P read CE");
        assert_eq!(f.detail, "p2p_read_ce not run");
    }
}
