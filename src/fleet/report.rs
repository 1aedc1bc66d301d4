//! `scalescope fleet report`: the per-node reports judged together. Three rules: consistency
//! (every node against the majority value of each field: GPU model and count, driver, CUDA,
//! VBIOS, ECC mode, PCIe generation and width and NVLinks per GPU, NICs), outliers (every key figure
//! against the fleet's median, by the median absolute deviation with a relative floor:
//! `[fleet]` in the thresholds file) and each node's own health verdict. The worst of them is
//! the node's verdict; the nodes that fail are the drain list.
//!
//! [`judge`] reads and judges (pure but for reading the files); `files.rs` turns the outcome into
//! the bytes of fleet.csv, fleet.json, fleet.html, fleet.png and fleet.pdf (and its `report`
//! does both and writes them); a finding and its words are in `finding.rs`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use serde::Serialize;

use super::finding::median_of;
pub use super::finding::{Finding, FindingKind, figure_text, worse_verdict};
use super::read::{self, NodeContent, NodeInput};
use crate::health::thresholds::FleetThresholds;
use crate::health::{HealthReport, Thresholds, Verdict};
use crate::model::{BandwidthResult, Endpoint, Inventory, Status, Topology};
use crate::report::Report;

/// What `fleet report` found: every node with its verdict and findings, the drain list and the
/// fleet's figures. fleet.json is this, serialized.
#[derive(Clone, Debug, Serialize)]
pub struct FleetOutcome {
    /// Always `scalescope-fleet`.
    pub kind: &'static str,
    /// When the report was made, RFC 3339 UTC.
    pub created_at: String,
    /// The worst node verdict (UNKNOWN when no node could be judged).
    pub verdict: Verdict,
    /// Nodes by verdict.
    pub counts: NodeCounts,
    /// The nodes that fail: send them back, or drain them.
    pub drain: Vec<String>,
    /// Every node, sorted by name.
    pub nodes: Vec<NodeOutcome>,
    /// Every consistency field: the majority value and how many nodes hold it.
    pub fields: Vec<FieldSummary>,
    /// Every key figure: the fleet's median and spread.
    pub figures: Vec<FigureSummary>,
    /// The all-reduce runs between nodes (`fleet run --between`), when there are any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub between: Vec<super::between::BetweenSummary>,
    /// The rules it was judged by.
    pub thresholds: FleetThresholds,
    /// What could not be compared and why.
    pub notes: Vec<String>,
}

impl FleetOutcome {
    /// Whether the fleet's verdict rests on modeled figures only: every node that sets it (its
    /// verdict is the fleet's) is modeled. A measured node at that verdict makes it a
    /// measurement's, whatever the other nodes are.
    pub fn verdict_modeled(&self) -> bool {
        let mut setting = self
            .nodes
            .iter()
            .filter(|n| n.verdict == self.verdict)
            .peekable();
        setting.peek().is_some() && setting.all(NodeOutcome::modeled)
    }

    /// The fleet's verdict as the terminal, the documents and the Fleet view write it: `FAIL`,
    /// or `FAIL (modeled)` where [`Self::verdict_modeled`] (as a check's
    /// `Check::verdict_text`).
    pub fn verdict_text(&self) -> String {
        qualified(self.verdict, self.verdict_modeled())
    }
}

/// `FAIL`, or `FAIL (modeled)`.
fn qualified(v: Verdict, modeled: bool) -> String {
    if modeled {
        format!("{} (modeled)", v.word())
    } else {
        v.word().to_string()
    }
}

/// How many nodes got each verdict.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NodeCounts {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    pub unknown: usize,
}

/// One node's verdict and what it rests on.
#[derive(Clone, Debug, Serialize)]
pub struct NodeOutcome {
    /// The node's name (node.json, host name, folder or file name).
    pub name: String,
    /// The report file read.
    pub file: String,
    /// The Slurm job id its node.json names.
    pub slurm_job: Option<String>,
    /// The worst of its own health verdict and its findings; UNKNOWN when it has neither a
    /// health check nor a finding.
    pub verdict: Verdict,
    /// Its own health check's verdict; `None` when the report holds no health check.
    pub health: Option<Verdict>,
    /// Whether its figures are measured or modeled (`None`: unreadable or no figures).
    pub source: Option<crate::model::Source>,
    /// Every finding, worst first.
    pub findings: Vec<Finding>,
    /// Its key figures by id (`h2d GPU 3`, `p2p_read_ce GPU 0→1`, …), for the heat table.
    pub figures: BTreeMap<String, f64>,
    /// The GPU that every one of its outliers involves (at least two outliers): the part to
    /// look at first.
    pub suspect_gpu: Option<usize>,
}

impl NodeOutcome {
    /// Whether its figures are modeled.
    pub fn modeled(&self) -> bool {
        self.source == Some(crate::model::Source::Modeled)
    }

    /// Its verdict as written beside its name: `FAIL`, or `FAIL (modeled)` for a modeled node.
    pub fn verdict_text(&self) -> String {
        qualified(self.verdict, self.modeled())
    }

    /// Its own health check's verdict, written as [`Self::verdict_text`] (a node's source is
    /// its health check's where it has one).
    pub fn health_text(&self) -> Option<String> {
        self.health.map(|h| qualified(h, self.modeled()))
    }

    /// Whether its report could be read (a node whose report could not, or that `fleet run`
    /// could not check, has that as a finding and no report to open).
    pub fn readable(&self) -> bool {
        self.findings
            .iter()
            .all(|f| f.kind != FindingKind::Unreadable)
    }
}

/// A consistency field over the fleet.
#[derive(Clone, Debug, Serialize)]
pub struct FieldSummary {
    pub field: String,
    pub gpu: Option<usize>,
    /// The value most nodes hold; `None` when two or more values tie for the most (then every
    /// node is named with its value).
    pub majority: Option<String>,
    /// Nodes holding it, and nodes where the field is known.
    pub majority_nodes: usize,
    pub known_nodes: usize,
}

/// A key figure over the fleet.
#[derive(Clone, Debug, Serialize)]
pub struct FigureSummary {
    /// `h2d GPU 3`: the figure and its subject.
    pub id: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub nodes: usize,
    pub median: f64,
    /// Median absolute deviation × 1.4826.
    pub scaled_mad: f64,
}

/// Why a fleet report could not be made (the user's inputs; nodes' files are findings).
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error(transparent)]
    Read(#[from] read::ReadError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot render {file}: {message}")]
    Render { file: &'static str, message: String },
}

impl crate::model::Blame for FleetError {
    fn fault(&self) -> crate::model::Fault {
        match self {
            Self::Read(_) => crate::model::Fault::Input,
            Self::Write { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                crate::model::Fault::Input
            }
            Self::Write { .. } | Self::Render { .. } => crate::model::Fault::Machine,
        }
    }
}

/// Reads and judges the node reports that `inputs` name (folders or files).
/// The between-nodes runs of a folder input are in its `between/` folder.
pub fn judge(inputs: &[PathBuf], thresholds: &Thresholds) -> Result<FleetOutcome, FleetError> {
    let files = read::discover(inputs)?;
    let nodes = read::read_all(&files);
    let mut between = Vec::new();
    let mut unread = Vec::new();
    for dir in inputs.iter().filter(|p| p.is_dir()) {
        let (records, errors) =
            super::between::read_records(&dir.join(super::between::BETWEEN_DIR));
        between.extend(records);
        unread.extend(errors);
    }
    let mut outcome = judge_nodes(nodes, &between, thresholds);
    outcome.notes.extend(
        unread
            .into_iter()
            .map(|e| format!("a between-nodes record is unreadable: {e}")),
    );
    Ok(outcome)
}

/// Judges nodes already read, with the all-reduce runs between them.
pub fn judge_nodes(
    inputs: Vec<NodeInput>,
    between: &[super::between::BetweenRecord],
    thresholds: &Thresholds,
) -> FleetOutcome {
    let rules = &thresholds.fleet;
    let mut inputs = inputs;
    // Two nodes of one name (copies of a report, hosts that share a name): each gets its folder
    // or file name beside it, and the path where even that is shared.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for i in &inputs {
        *seen.entry(i.name.clone()).or_default() += 1;
    }
    for i in &mut inputs {
        if seen[&i.name] > 1 && i.name != i.origin {
            i.name = format!("{} ({})", i.name, i.origin);
        }
    }
    let mut again: HashMap<String, usize> = HashMap::new();
    for i in &inputs {
        *again.entry(i.name.clone()).or_default() += 1;
    }
    for i in &mut inputs {
        if again[&i.name] > 1 {
            i.name = format!("{} ({})", i.name, i.path.display());
        }
    }
    inputs.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    let mut nodes: Vec<NodeOutcome> = Vec::with_capacity(inputs.len());
    let mut facts: Vec<Option<BTreeMap<FieldKey, String>>> = Vec::with_capacity(inputs.len());
    let mut figures: Vec<Vec<(FigureKey, f64)>> = Vec::with_capacity(inputs.len());
    for input in &inputs {
        let mut node = NodeOutcome {
            name: input.name.clone(),
            file: input.path.display().to_string(),
            slurm_job: input.slurm_job.clone(),
            verdict: Verdict::Unknown,
            health: None,
            source: None,
            findings: Vec::new(),
            figures: BTreeMap::new(),
            suspect_gpu: None,
        };
        match &input.content {
            Err(line) => {
                node.findings.push(Finding {
                    kind: FindingKind::Unreadable,
                    verdict: Verdict::Fail,
                    field: "report".into(),
                    subject: None,
                    gpu: None,
                    peer: None,
                    value: None,
                    fleet_value: None,
                    figure: None,
                    median: None,
                    deviation_percent: None,
                    unit: None,
                    detail: format!("report unreadable: {line}"),
                });
                facts.push(None);
                figures.push(Vec::new());
            }
            Ok(content) => {
                let view = View::of(content);
                if let Some(h) = view.health {
                    node.health = Some(h.verdict);
                    node.source = Some(h.source);
                    node.findings.extend(health_findings(h));
                }
                let figs = key_figures(&view);
                if node.source.is_none() && !figs.is_empty() {
                    node.source = Some(view.source());
                }
                node.figures = figs.iter().map(|(k, v)| (k.id(), *v)).collect();
                facts.push(Some(node_facts(&view)));
                figures.push(figs);
            }
        }
        nodes.push(node);
    }
    let mut notes = unlike_steps(&figures);
    let fields = consistency(&facts, rules, &mut nodes);
    let figure_summaries = outliers(&figures, rules, &mut nodes);
    let between = super::between::judge(between, rules);
    for (name, found) in between.findings {
        match nodes.iter_mut().find(|n| n.name == name) {
            Some(n) => n.findings.extend(found),
            None => notes.extend(
                found
                    .into_iter()
                    .map(|f| format!("{name} (no report among the nodes): {}", f.detail)),
            ),
        }
    }
    notes.extend(between.notes);
    if fields.iter().all(|f| f.field != "vbios") {
        notes.push(
            "VBIOS versions are not compared: no report holds them (catalog or modeled runs, \
             imports without nvidia-smi -q, reports written before scalescope recorded them)"
                .into(),
        );
    }
    let no_health: Vec<&str> = nodes
        .iter()
        .filter(|n| n.health.is_none() && n.readable())
        .map(|n| n.name.as_str())
        .collect();
    if !no_health.is_empty() {
        notes.push(format!(
            "{} {} no health check in their report (run --suite health, or check --json): {}{}",
            no_health.len(),
            if no_health.len() == 1 {
                "node has"
            } else {
                "nodes have"
            },
            no_health[..no_health.len().min(10)].join(", "),
            if no_health.len() > 10 { ", …" } else { "" }
        ));
    }
    let mut counts = NodeCounts::default();
    for n in &mut nodes {
        n.findings
            .sort_by(|a, b| b.verdict.cmp(&a.verdict).then(a.kind.cmp(&b.kind)));
        n.suspect_gpu = suspect_gpu(&n.findings);
        let worst = n.findings.iter().map(|f| f.verdict).max();
        n.verdict = match (n.health, worst) {
            (Some(h), Some(w)) => h.max(w),
            (Some(h), None) => h,
            (None, Some(w)) => w,
            (None, None) => Verdict::Unknown,
        };
        match n.verdict {
            Verdict::Pass => counts.pass += 1,
            Verdict::Warn => counts.warn += 1,
            Verdict::Fail => counts.fail += 1,
            Verdict::Unknown => counts.unknown += 1,
        }
    }
    let verdict = if counts.fail > 0 {
        Verdict::Fail
    } else if counts.warn > 0 {
        Verdict::Warn
    } else if counts.pass > 0 && counts.unknown == 0 {
        Verdict::Pass
    } else {
        Verdict::Unknown
    };
    FleetOutcome {
        kind: "scalescope-fleet",
        created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        verdict,
        drain: nodes
            .iter()
            .filter(|n| n.verdict == Verdict::Fail)
            .map(|n| n.name.clone())
            .collect(),
        counts,
        nodes,
        fields,
        figures: figure_summaries,
        between: between.runs,
        thresholds: rules.clone(),
        notes,
    }
}

/// The parts of a node's file the rules read, whichever kind of file it was.
struct View<'a> {
    report: Option<&'a Report>,
    health: Option<&'a HealthReport>,
}

impl<'a> View<'a> {
    fn of(content: &'a NodeContent) -> Self {
        match content {
            NodeContent::Report(r) => View {
                report: Some(r),
                health: r.health.as_ref(),
            },
            NodeContent::Check(h) => View {
                report: None,
                health: Some(h),
            },
        }
    }

    fn topology(&self) -> Option<&'a Topology> {
        self.report.map(|r| &r.topology)
    }

    fn inventory(&self) -> Option<&'a Inventory> {
        self.health
            .and_then(|h| h.before.as_ref().or(h.after.as_ref()))
    }

    fn source(&self) -> crate::model::Source {
        self.report
            .and_then(|r| r.bandwidth.as_ref().map(|b| b.source))
            .unwrap_or(crate::model::Source::Measured)
    }
}

/// A consistency field, per node or per GPU.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct FieldKey {
    field: &'static str,
    gpu: Option<usize>,
}

/// The longest fact (a GPU name, a driver version) kept of a node's report, in characters.
const FACT_MAX_CHARS: usize = 200;

fn node_facts(v: &View) -> BTreeMap<FieldKey, String> {
    let mut f = BTreeMap::new();
    let mut put = |field: &'static str, gpu: Option<usize>, value: Option<String>| {
        if let Some(value) = value.filter(|s| !s.is_empty()) {
            // A value is compared and shown as a label: a 400 KB GPU name is cut, not a
            // table cell taller than any page.
            let value = crate::model::validate::shortened(&value, FACT_MAX_CHARS);
            f.insert(FieldKey { field, gpu }, value);
        }
    };
    let topo = v.topology();
    let inv = v.inventory();
    let machine = v.report.map(|r| &r.machine);
    // GPU names: the report's list, else the topology's, else the inventory's.
    let names: Vec<String> = match machine {
        Some(m) if !m.gpu_names.is_empty() => m.gpu_names.clone(),
        _ => match topo {
            Some(t) => t.gpus.iter().filter_map(|g| g.name.clone()).collect(),
            None => inv
                .map(|i| i.gpus.iter().filter_map(|g| g.name.clone()).collect())
                .unwrap_or_default(),
        },
    };
    let mut distinct: Vec<&String> = Vec::new();
    for n in &names {
        if !distinct.contains(&n) {
            distinct.push(n);
        }
    }
    put(
        "gpu_model",
        None,
        (!distinct.is_empty()).then(|| {
            distinct
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" + ")
        }),
    );
    let count = topo
        .map(|t| t.gpus.len())
        .or(inv.map(|i| i.gpus.len()))
        .filter(|&n| n > 0);
    put("gpu_count", None, count.map(|n| n.to_string()));
    put(
        "driver",
        None,
        machine
            .and_then(|m| m.driver_version.clone())
            .or_else(|| inv.and_then(|i| i.driver_version.clone())),
    );
    put("cuda", None, machine.and_then(|m| m.cuda_version.clone()));
    if let Some(t) = topo {
        for g in &t.gpus {
            put(
                "pcie",
                Some(g.index),
                pcie_word(g.pcie.gen_max, g.pcie.width_max),
            );
            put(
                "nvlinks",
                Some(g.index),
                g.nvlinks_active.map(|n| n.to_string()),
            );
        }
        put(
            "nics",
            None,
            (!t.nics.is_empty()).then(|| {
                t.nics
                    .iter()
                    .map(|n| n.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
        );
    }
    if let Some(i) = inv {
        for g in &i.gpus {
            // The topology's values first; the inventory's where it has none.
            if let Some(w) = pcie_word(g.pcie.link.gen_max, g.pcie.link.width_max) {
                f.entry(FieldKey {
                    field: "pcie",
                    gpu: Some(g.index),
                })
                .or_insert(w);
            }
            if let Some(n) = g.nvlinks_active() {
                f.entry(FieldKey {
                    field: "nvlinks",
                    gpu: Some(g.index),
                })
                .or_insert_with(|| n.to_string());
            }
            if let Some(v) = &g.vbios {
                f.insert(
                    FieldKey {
                        field: "vbios",
                        gpu: Some(g.index),
                    },
                    v.clone(),
                );
            }
            if let Some(on) = g.ecc.enabled {
                f.insert(
                    FieldKey {
                        field: "ecc",
                        gpu: Some(g.index),
                    },
                    if on { "on" } else { "off" }.into(),
                );
            }
            // The settings a fleet operator checks first: a node set apart from the rest
            // (a lowered power limit, locked clocks, persistence off, MIG on) is a finding.
            let st = &g.settings;
            let on_off = |b: Option<bool>| b.map(|on| if on { "on" } else { "off" }.to_string());
            for (field, value) in [
                ("power_limit", st.power_limit_w.map(|w| format!("{w:.0} W"))),
                ("app_clocks", st.app_clock_mhz.map(|m| format!("{m} MHz"))),
                ("persistence", on_off(st.persistence)),
                ("mig", on_off(st.mig_current)),
                (
                    "compute_mode",
                    st.compute_mode.map(|m| m.label().to_string()),
                ),
            ] {
                if let Some(v) = value {
                    f.insert(
                        FieldKey {
                            field,
                            gpu: Some(g.index),
                        },
                        v,
                    );
                }
            }
        }
    }
    f
}

fn pcie_word(generation: Option<u32>, width: Option<u32>) -> Option<String> {
    match (generation, width) {
        (Some(g), Some(w)) => Some(format!("Gen{g} x{w}")),
        (Some(g), None) => Some(format!("Gen{g}")),
        (None, Some(w)) => Some(format!("x{w}")),
        (None, None) => None,
    }
}

/// The majority of every field, and a finding for each node that differs.
fn consistency(
    facts: &[Option<BTreeMap<FieldKey, String>>],
    rules: &FleetThresholds,
    nodes: &mut [NodeOutcome],
) -> Vec<FieldSummary> {
    let mut tally: BTreeMap<&FieldKey, BTreeMap<&str, usize>> = BTreeMap::new();
    for f in facts.iter().flatten() {
        for (k, v) in f {
            *tally.entry(k).or_default().entry(v.as_str()).or_default() += 1;
        }
    }
    let mut summaries = Vec::with_capacity(tally.len());
    for (key, values) in &tally {
        let known: usize = values.values().sum();
        let held = values.values().copied().max().unwrap_or(0);
        let mut top = values.iter().filter(|(_, n)| **n == held).map(|(v, _)| *v);
        // The most common value, unless another is as common: then there is no majority.
        let majority = match (top.next(), top.next()) {
            (Some(v), None) => Some(v),
            _ => None,
        };
        summaries.push(FieldSummary {
            field: key.field.to_string(),
            gpu: key.gpu,
            majority: majority.map(str::to_string),
            majority_nodes: held,
            known_nodes: known,
        });
        if values.len() < 2 {
            continue;
        }
        for (node, f) in nodes.iter_mut().zip(facts) {
            let Some(value) = f.as_ref().and_then(|f| f.get(key)) else {
                continue;
            };
            if Some(value.as_str()) == majority {
                continue;
            }
            let subject = key.gpu.map(|g| format!("GPU {g}"));
            let against = match majority {
                Some(m) => format!("the fleet's majority {m} ({held} of {known} nodes)"),
                None => format!(
                    "no majority ({})",
                    values
                        .iter()
                        .take(6)
                        .map(|(v, n)| format!("{v} on {n}"))
                        .chain((values.len() > 6).then(|| "…".to_string()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            node.findings.push(Finding {
                kind: FindingKind::Consistency,
                verdict: rules.consistency.verdict(),
                field: key.field.to_string(),
                subject: subject.clone(),
                gpu: key.gpu,
                peer: None,
                value: Some(value.clone()),
                fleet_value: majority.map(str::to_string),
                figure: None,
                median: None,
                deviation_percent: None,
                unit: None,
                detail: format!(
                    "{}{}: {value}, {against}",
                    key.field,
                    subject.map(|s| format!(" {s}")).unwrap_or_default()
                ),
            });
        }
    }
    summaries
}

/// A key figure: what it is, of which GPU or pair, and which way is better.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct FigureKey {
    field: String,
    subject: String,
    gpu: Option<usize>,
    peer: Option<usize>,
    unit: &'static str,
    higher_is_better: bool,
}

impl FigureKey {
    fn id(&self) -> String {
        format!("{} {}", self.field, self.subject)
    }
}

/// The figure of a measured framework step's time.
const STEP_TIME: &str = "step_time";
/// The figure of a synthetic proxy step's time, compared only with other proxies'.
const PROXY_STEP_TIME: &str = "proxy_step_time";

/// Where nodes measured one workload, mode and GPU count by different kinds of step (real
/// framework steps on some, synthetic proxies on others): a note naming how many of each, since
/// each is compared only with its own kind.
fn unlike_steps(figures: &[Vec<(FigureKey, f64)>]) -> Vec<String> {
    let mut by_subject: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for figs in figures {
        for (k, _) in figs {
            let e = by_subject.entry(k.subject.as_str()).or_default();
            if k.field == STEP_TIME {
                e.0 += 1;
            } else if k.field == PROXY_STEP_TIME {
                e.1 += 1;
            }
        }
    }
    by_subject
        .into_iter()
        .filter(|(_, (f, p))| *f > 0 && *p > 0)
        .map(|(subject, (f, p))| {
            format!(
                "step time {subject}: {f} node(s) ran the real framework step, {p} a synthetic \
                 proxy step (the older method); each is compared only with its own kind \
                 ({STEP_TIME}, {PROXY_STEP_TIME}), a proxy's step not being the workload's"
            )
        })
        .collect()
}

/// Copy rates (per test, at the largest size measured, per GPU or pair), collective bus
/// bandwidth (per operation and GPU count at the largest size), framework (and proxy) step
/// times and soak jitter.
fn key_figures(v: &View) -> Vec<(FigureKey, f64)> {
    let mut out: Vec<(FigureKey, f64)> = Vec::new();
    // Copy results: the bandwidth stage's, then the check's load tests for what it lacks.
    let mut copies: BTreeMap<(String, String), (u64, &BandwidthResult)> = BTreeMap::new();
    let stage = v.report.and_then(|r| r.bandwidth.as_ref());
    let results = stage
        .map(|b| b.results.iter())
        .into_iter()
        .flatten()
        .chain(v.health.map(|h| h.bandwidth.iter()).into_iter().flatten());
    for r in results {
        if r.status != Status::Ok || (r.median_gbps.is_none() && r.latency_ns.is_none()) {
            continue;
        }
        let key = (r.test.id().to_string(), format!("{}>{}", r.src, r.dst));
        match copies.get(&key) {
            Some((bytes, _)) if *bytes >= r.bytes => {}
            _ => {
                copies.insert(key, (r.bytes, r));
            }
        }
    }
    for (_, r) in copies.values() {
        let (subject, gpu, peer) = endpoints(r.src, r.dst);
        let (value, unit, higher) = match (r.median_gbps, r.latency_ns) {
            (Some(g), _) => (g, "GB/s", true),
            (None, Some(ns)) => (ns, "ns", false),
            (None, None) => continue,
        };
        out.push((
            FigureKey {
                field: r.test.id().to_string(),
                subject,
                gpu,
                peer,
                unit,
                higher_is_better: higher,
            },
            value,
        ));
    }
    if let Some(c) = v.report.and_then(|r| r.collectives.as_ref()) {
        let mut largest: BTreeMap<(String, usize), (u64, f64)> = BTreeMap::new();
        for r in &c.results {
            let Some(busbw) = r.busbw_gbps.filter(|_| r.status == Status::Ok) else {
                continue;
            };
            let key = (format!("{} {} busbw", r.op.id(), r.algo.id()), r.gpus.len());
            match largest.get(&key) {
                Some((bytes, _)) if *bytes >= r.bytes => {}
                _ => {
                    largest.insert(key, (r.bytes, busbw));
                }
            }
        }
        for ((field, n), (bytes, busbw)) in largest {
            out.push((
                FigureKey {
                    field,
                    subject: format!("{n} GPUs @ {}", crate::model::units::format_bytes(bytes)),
                    gpu: None,
                    peer: None,
                    unit: "GB/s",
                    higher_is_better: true,
                },
                busbw,
            ));
        }
    }
    if let Some(s) = v.report.and_then(|r| r.scaling.as_ref()) {
        for row in &s.run.rows {
            // A real framework step only against real framework steps, a synthetic proxy only
            // against proxies: a proxy's step is not the workload's.
            // (By the row's CSV id: fleet/ does not use scaling/.)
            let field = match row.source.id() {
                "measured_framework" => STEP_TIME,
                "proxy" => PROXY_STEP_TIME,
                _ => continue,
            };
            let Some(ms) = row.step_time_ms.filter(|_| !row.projected) else {
                continue;
            };
            out.push((
                FigureKey {
                    field: field.into(),
                    subject: format!("{} {} {} GPUs", row.workload, row.mode, row.n_gpus),
                    gpu: None,
                    peer: None,
                    unit: "ms",
                    higher_is_better: false,
                },
                ms,
            ));
        }
    }
    if let Some(h) = v.health {
        for c in h.checks.iter().filter(|c| c.check.id() == "soak_jitter") {
            let Some(x) = c.figure else { continue };
            out.push((
                FigureKey {
                    field: "soak_jitter".into(),
                    subject: c.subject.clone(),
                    gpu: c.gpu,
                    peer: c.peer,
                    unit: "CV",
                    higher_is_better: false,
                },
                x,
            ));
        }
    }
    // A report of this build refuses them; one read the fast way (`read.rs`) is held to it here.
    out.retain(|(_, x)| x.is_finite() && *x >= 0.0);
    out
}

/// `GPU 3` (to or from the host), `GPU 0→1`, `GPU 2 ← all`, `GPU 2 → all`.
fn endpoints(src: Endpoint, dst: Endpoint) -> (String, Option<usize>, Option<usize>) {
    match (src, dst) {
        (Endpoint::Host, Endpoint::Gpu(g)) | (Endpoint::Gpu(g), Endpoint::Host) => {
            (format!("GPU {g}"), Some(g), None)
        }
        (Endpoint::Gpu(a), Endpoint::Gpu(b)) => (format!("GPU {a}→{b}"), Some(a), Some(b)),
        (Endpoint::All, Endpoint::Gpu(g)) => (format!("GPU {g} ← all"), Some(g), None),
        (Endpoint::Gpu(g), Endpoint::All) => (format!("GPU {g} → all"), Some(g), None),
        (a, b) => (format!("{a}→{b}"), None, None),
    }
}

/// Median and scaled MAD of each figure over the nodes that have it; a finding for each node
/// worse than the median by more than the rule allows.
fn outliers(
    figures: &[Vec<(FigureKey, f64)>],
    rules: &FleetThresholds,
    nodes: &mut [NodeOutcome],
) -> Vec<FigureSummary> {
    let mut by_key: HashMap<&FigureKey, Vec<(usize, f64)>> = HashMap::new();
    for (i, figs) in figures.iter().enumerate() {
        for (k, x) in figs {
            by_key.entry(k).or_default().push((i, *x));
        }
    }
    let mut keys: Vec<&FigureKey> = by_key.keys().copied().collect();
    keys.sort();
    let mut summaries = Vec::with_capacity(keys.len());
    for key in keys {
        let values = &by_key[key];
        let mut xs: Vec<f64> = values.iter().map(|(_, x)| *x).collect();
        let median = median_of(&mut xs);
        let mut dev: Vec<f64> = values.iter().map(|(_, x)| (x - median).abs()).collect();
        let scaled_mad = 1.4826 * median_of(&mut dev);
        summaries.push(FigureSummary {
            id: key.id(),
            unit: key.unit.to_string(),
            higher_is_better: key.higher_is_better,
            nodes: values.len(),
            median,
            scaled_mad,
        });
        let spread = rules.mad_k * scaled_mad;
        for &(i, x) in values {
            // How much worse than the median, in the figure's unit (≤ 0: as good or better).
            let worse = if key.higher_is_better {
                median - x
            } else {
                x - median
            };
            let Some(verdict) = worse_verdict(worse, median, spread, rules) else {
                continue;
            };
            let pct = (median != 0.0).then(|| (x - median) / median * 100.0);
            let fmt = |v: f64| format!("{} {}", figure_text(v), key.unit);
            nodes[i].findings.push(Finding {
                kind: FindingKind::Outlier,
                verdict,
                field: key.field.clone(),
                subject: Some(key.subject.clone()),
                gpu: key.gpu,
                peer: key.peer,
                value: Some(fmt(x)),
                fleet_value: Some(fmt(median)),
                figure: Some(x),
                median: Some(median),
                deviation_percent: pct,
                unit: Some(key.unit.to_string()),
                detail: format!(
                    "{} {}: {}{}, the fleet's median {} ({} nodes)",
                    key.field,
                    key.subject,
                    fmt(x),
                    pct.map(|p| format!(" ({p:+.1} %)")).unwrap_or_default(),
                    fmt(median),
                    values.len()
                ),
            });
        }
    }
    summaries
}

/// The GPU that every outlier finding involves, when there are two or more.
fn suspect_gpu(findings: &[Finding]) -> Option<usize> {
    let outliers: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.kind == FindingKind::Outlier)
        .collect();
    if outliers.len() < 2 {
        return None;
    }
    let first = outliers[0];
    [first.gpu, first.peer].into_iter().flatten().find(|&g| {
        outliers
            .iter()
            .all(|f| f.gpu == Some(g) || f.peer == Some(g))
    })
}

/// The node's own checks below PASS, as findings (UNKNOWN ones are left to its report).
fn health_findings(h: &HealthReport) -> Vec<Finding> {
    h.checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Warn | Verdict::Fail))
        .map(|c| Finding {
            kind: FindingKind::Health,
            verdict: c.verdict,
            field: c.check.id().to_string(),
            subject: Some(c.subject.clone()),
            gpu: c.gpu,
            peer: c.peer,
            value: c.figure.map(figure_text),
            fleet_value: None,
            figure: c.figure,
            median: None,
            deviation_percent: None,
            unit: c.unit.clone(),
            detail: format!("{} {}: {}", c.check.id(), c.subject, c.detail),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_endpoints() {
        assert_eq!(median_of(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_of(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median_of(&mut []).is_nan());
        assert_eq!(
            endpoints(Endpoint::Gpu(0), Endpoint::Gpu(1)).0,
            "GPU 0→1".to_string()
        );
        assert_eq!(endpoints(Endpoint::Host, Endpoint::Gpu(3)).1, Some(3));
    }
}
