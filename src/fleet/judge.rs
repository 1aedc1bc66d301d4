//! The per-node reports judged together, pure: what `read.rs` gathered in, a [`FleetOutcome`]
//! out, no file or clock touched. Three rules: consistency (every node against the majority
//! value of each field: GPU model and count, driver, CUDA, VBIOS, ECC mode, PCIe generation and
//! width and NVLinks per GPU, NICs), outliers (every key figure against the fleet's median, by
//! the median absolute deviation with a relative floor: `[fleet]` in the thresholds file) and
//! each node's own health verdict; the all-reduce runs between nodes are `between.rs`'s rule,
//! folded in here. The worst of them is the node's verdict; the nodes that fail are the drain
//! list. A finding and its words are in `finding.rs`; `files.rs` turns the outcome into bytes.

use std::collections::{BTreeMap, HashMap};
use std::time::SystemTime;

use serde::Serialize;

use super::between::{BetweenRecord, BetweenSummary};
use super::finding::{Finding, FindingKind, figure_text, median_of, worse_verdict};
use super::read::{NodeContent, NodeInput};
use crate::health::thresholds::FleetThresholds;
use crate::health::{HealthReport, Thresholds, Verdict};
use crate::model::{
    BandwidthResult, CollectiveResult, Endpoint, Inventory, Shape, Source, Status, Topology,
};
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
    pub between: Vec<BetweenSummary>,
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

impl FleetOutcome {
    /// ` (2 of them modeled, not measured)` where the fleet mixes modeled and measured nodes
    /// (the counts' passes may be a model's), else empty.
    pub fn modeled_share(&self) -> String {
        let modeled = self.nodes.iter().filter(|n| n.modeled()).count();
        if modeled == 0 || modeled == self.nodes.len() {
            return String::new();
        }
        format!(" ({modeled} of them modeled, not measured)")
    }
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
    /// The GPU model a per-GPU field was compared among, where the fleet mixes models (a
    /// VBIOS, power limit or NVLink count of an H100 is not an H200's); `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
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

/// One node as its file reads, the file's content dropped: its outcome before the fleet's rules
/// (its own check's findings, its key figures) and what those rules compare. A fleet report
/// holds one of these per node, never every node's report: 16,000 checked nodes' reports held
/// whole were 6.6 GB.
pub struct NodeRead {
    node: NodeOutcome,
    /// Why its `node.json` could not be read, where one was there.
    record_error: Option<String>,
    origin: String,
    path: std::path::PathBuf,
    facts: Option<Facts>,
    figures: Figures,
}

impl NodeRead {
    /// What the fleet's rules need of `input`, which is dropped.
    pub fn of(input: NodeInput) -> NodeRead {
        let (node, facts, figures) = node_read(&input);
        NodeRead {
            node,
            record_error: input.record_error,
            origin: input.origin,
            path: input.path,
            facts,
            figures,
        }
    }
}

/// [`judge`] of nodes already reduced to what the rules read ([`NodeRead::of`], as they are
/// read), with the all-reduce runs between them and the lines of the records not read.
pub fn judge_read(
    mut nodes: Vec<NodeRead>,
    between: &[BetweenRecord],
    unread: Vec<String>,
    thresholds: &Thresholds,
    made: SystemTime,
) -> FleetOutcome {
    let rules = &thresholds.fleet;
    name_apart(&mut nodes);
    let mut judged: Vec<NodeOutcome> = Vec::with_capacity(nodes.len());
    let mut facts: Vec<Option<Facts>> = Vec::with_capacity(nodes.len());
    let mut figures: Vec<Figures> = Vec::with_capacity(nodes.len());
    let records: Vec<String> = nodes
        .iter()
        .filter_map(|n| {
            let why = n.record_error.as_ref()?;
            Some(format!(
                "{}: the node.json beside its report could not be read ({why}); named by its report",
                n.node.name
            ))
        })
        .collect();
    for n in nodes {
        judged.push(n.node);
        facts.push(n.facts);
        figures.push(n.figures);
    }
    let mut nodes = judged;
    let mut notes: Vec<String> = by_model(&facts, &mut figures)
        .into_iter()
        .chain(modeled_apart(&mut figures, &nodes))
        .collect();
    // The figures as renamed: a node's figures by id (the heat table's) follow them.
    for (node, figs) in nodes.iter_mut().zip(&figures) {
        node.figures = figs.iter().map(|(k, v)| (k.id(), *v)).collect();
    }
    notes.extend(unlike_steps(&figures));
    notes.extend(records);
    let fields = consistency(&facts, rules, &mut nodes);
    let figure_summaries = outliers(&figures, rules, &mut nodes);
    let between = fold_between(between, rules, &mut nodes, &mut notes);
    notes.extend(coverage_notes(&fields, &nodes));
    let counts = settle_verdicts(&mut nodes);
    let mut outcome = FleetOutcome {
        kind: "scalescope-fleet",
        created_at: humantime::format_rfc3339_seconds(made).to_string(),
        verdict: fleet_verdict(&counts),
        drain: nodes
            .iter()
            .filter(|n| n.verdict == Verdict::Fail)
            .map(|n| n.name.clone())
            .collect(),
        counts,
        nodes,
        fields,
        figures: figure_summaries,
        between,
        thresholds: rules.clone(),
        notes,
    };
    outcome.notes.extend(
        unread
            .into_iter()
            .map(|e| format!("a between-nodes record is unreadable: {e}")),
    );
    outcome
}

/// Two nodes of one name (copies of a report, hosts that share a name): each gets its folder
/// or file name beside it, and the path where even that is shared; then sorted by name.
fn name_apart(inputs: &mut [NodeRead]) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for i in inputs.iter() {
        *seen.entry(i.node.name.clone()).or_default() += 1;
    }
    for i in inputs.iter_mut() {
        if seen[&i.node.name] > 1 && i.node.name != i.origin {
            i.node.name = format!("{} ({})", i.node.name, i.origin);
        }
    }
    let mut again: HashMap<String, usize> = HashMap::new();
    for i in inputs.iter() {
        *again.entry(i.node.name.clone()).or_default() += 1;
    }
    for i in inputs.iter_mut() {
        if again[&i.node.name] > 1 {
            i.node.name = format!("{} ({})", i.node.name, i.path.display());
        }
    }
    inputs.sort_by(|a, b| a.node.name.cmp(&b.node.name).then(a.path.cmp(&b.path)));
}

/// One node as its file reads, before it is set against the others: its own check's findings
/// and its key figures, or the one finding that its file could not be read; and the facts and
/// figures the fleet's rules compare (`None` facts: unreadable).
fn node_read(input: &NodeInput) -> (NodeOutcome, Option<Facts>, Figures) {
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
            (node, None, Vec::new())
        }
        Ok(content) => {
            let view = View::of(content);
            if let Some(h) = view.health {
                node.health = Some(h.verdict);
                node.source = Some(h.source);
                node.findings.extend(health_findings(h));
            }
            node.findings.extend(implausible_findings(&view));
            let figs = key_figures(&view);
            if node.source.is_none() && !figs.is_empty() {
                node.source = Some(view.source());
            }
            node.figures = figs.iter().map(|(k, v)| (k.id(), *v)).collect();
            (node, Some(node_facts(&view)), figs)
        }
    }
}

/// In a fleet of several GPU models, each node's figures are named with its model (`h2d GPU 0
/// on NVIDIA H100 80GB HBM3`): a figure is compared only among nodes of the same model, and
/// the heat table has a row per model. The note that says so; `None` for one model.
fn by_model(facts: &[Option<Facts>], figures: &mut [Figures]) -> Option<String> {
    let key = FieldKey {
        field: "gpu_model",
        gpu: None,
    };
    let models: Vec<Option<&String>> = facts
        .iter()
        .map(|f| f.as_ref().and_then(|f| f.get(&key)))
        .collect();
    let mut distinct: Vec<&String> = models
        .iter()
        .zip(figures.iter())
        .filter(|(_, figs)| !figs.is_empty())
        .filter_map(|(m, _)| *m)
        .collect();
    distinct.sort();
    distinct.dedup();
    if distinct.len() < 2 {
        return None;
    }
    for (figs, model) in figures.iter_mut().zip(&models) {
        // Named in every figure's subject: a GPU name of absurd length is cut.
        let model = model.map_or("an unknown GPU model".to_string(), |m| {
            match m.char_indices().nth(SUBJECT_MODEL_CHARS) {
                Some((i, _)) => format!("{}…", &m[..i]),
                None => m.clone(),
            }
        });
        for (k, _) in figs.iter_mut() {
            k.subject = format!("{} on {model}", k.subject);
        }
    }
    Some(format!(
        "{} GPU models in the fleet ({}): each figure is compared only among nodes of the same model",
        distinct.len(),
        distinct
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The longest GPU model a figure's subject names, in characters.
const SUBJECT_MODEL_CHARS: usize = 40;

/// The mark of a modeled figure's field (`h2d (modeled)`).
const MODELED: &str = " (modeled)";

/// In a fleet of measured and modeled nodes, the modeled nodes' figures are named modeled:
/// compared only with each other, never with measurements. The note that says so; `None`
/// where the nodes are all of one kind.
fn modeled_apart(figures: &mut [Figures], nodes: &[NodeOutcome]) -> Option<String> {
    let with_figures = || {
        nodes
            .iter()
            .zip(figures.iter())
            .filter(|(_, f)| !f.is_empty())
    };
    let modeled = with_figures().filter(|(n, _)| n.modeled()).count();
    if modeled == 0 || modeled == with_figures().count() {
        return None;
    }
    for (figs, _) in figures.iter_mut().zip(nodes).filter(|(_, n)| n.modeled()) {
        for (k, _) in figs.iter_mut() {
            if !k.field.ends_with(MODELED) {
                k.field.push_str(MODELED);
            }
        }
    }
    Some(format!(
        "{modeled} modeled node(s) beside measured ones: their figures are compared only with each other's"
    ))
}

/// The all-reduce runs between nodes judged (`between::judge`) and their findings given to
/// their nodes (a node without a report among them: a note); the runs as the outcome keeps them.
fn fold_between(
    records: &[BetweenRecord],
    rules: &FleetThresholds,
    nodes: &mut [NodeOutcome],
    notes: &mut Vec<String>,
) -> Vec<BetweenSummary> {
    let between = super::between::judge(records, rules);
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
    between.runs
}

/// What could not be compared: VBIOS where no report holds it, nodes without a health check.
fn coverage_notes(fields: &[FieldSummary], nodes: &[NodeOutcome]) -> Vec<String> {
    let mut notes = Vec::new();
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
    notes
}

/// Each node's findings worst first, its suspect GPU and its verdict (the worst of its own
/// check and its findings); how many nodes got each verdict.
fn settle_verdicts(nodes: &mut [NodeOutcome]) -> NodeCounts {
    let mut counts = NodeCounts::default();
    for n in nodes {
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
    counts
}

/// The fleet's verdict: FAIL when a node fails, else WARN when one warns, PASS when every node
/// passes, else UNKNOWN.
fn fleet_verdict(counts: &NodeCounts) -> Verdict {
    if counts.fail > 0 {
        Verdict::Fail
    } else if counts.warn > 0 {
        Verdict::Warn
    } else if counts.pass > 0 && counts.unknown == 0 {
        Verdict::Pass
    } else {
        Verdict::Unknown
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

    /// The node's source as its outcome says it: its health check's, else its figures'.
    fn node_source(&self) -> crate::model::Source {
        self.health.map_or_else(|| self.source(), |h| h.source)
    }
}

/// A consistency field, per node or per GPU.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct FieldKey {
    field: &'static str,
    gpu: Option<usize>,
}

/// A node's consistency fields and their values.
type Facts = BTreeMap<FieldKey, String>;

/// A node's key figures.
type Figures = Vec<(FigureKey, f64)>;

/// The longest fact (a GPU name, a driver version) kept of a node's report, in characters.
const FACT_MAX_CHARS: usize = 200;

fn node_facts(v: &View) -> BTreeMap<FieldKey, String> {
    let mut f = BTreeMap::new();
    let topo = v.topology();
    let inv = v.inventory();
    let machine = v.report.map(|r| &r.machine);
    put_fact(&mut f, "gpu_model", None, gpu_model(v));
    let count = topo
        .map(|t| t.gpus.len())
        .or(inv.map(|i| i.gpus.len()))
        .filter(|&n| n > 0);
    put_fact(&mut f, "gpu_count", None, count.map(|n| n.to_string()));
    put_fact(
        &mut f,
        "driver",
        None,
        machine
            .and_then(|m| m.driver_version.clone())
            .or_else(|| inv.and_then(|i| i.driver_version.clone())),
    );
    put_fact(
        &mut f,
        "cuda",
        None,
        machine.and_then(|m| m.cuda_version.clone()),
    );
    if let Some(t) = topo {
        topology_facts(&mut f, t);
    }
    if let Some(i) = inv {
        inventory_facts(&mut f, i);
    }
    f
}

/// Keeps a fact that is known and not empty, shortened: a value is compared and shown as a
/// label, so a 400 KB GPU name is cut, not a table cell taller than any page.
fn put_fact(
    f: &mut BTreeMap<FieldKey, String>,
    field: &'static str,
    gpu: Option<usize>,
    value: Option<String>,
) {
    if let Some(value) = value.filter(|s| !s.is_empty()) {
        let value = crate::model::validate::shortened(&value, FACT_MAX_CHARS);
        f.insert(FieldKey { field, gpu }, value);
    }
}

/// The node's GPU models, each once (`A + B` for a mix): the report's list, else the
/// topology's, else the inventory's.
fn gpu_model(v: &View) -> Option<String> {
    let names: Vec<String> = match v.report.map(|r| &r.machine) {
        Some(m) if !m.gpu_names.is_empty() => m.gpu_names.clone(),
        _ => match v.topology() {
            Some(t) => t.gpus.iter().filter_map(|g| g.name.clone()).collect(),
            None => v
                .inventory()
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
    (!distinct.is_empty()).then(|| {
        distinct
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" + ")
    })
}

/// Each GPU's PCIe link and NVLinks, and the NICs, as the topology has them.
fn topology_facts(f: &mut BTreeMap<FieldKey, String>, t: &Topology) {
    for g in &t.gpus {
        put_fact(
            f,
            "pcie",
            Some(g.index),
            pcie_word(g.pcie.gen_max, g.pcie.width_max),
        );
        put_fact(
            f,
            "nvlinks",
            Some(g.index),
            g.nvlinks_active.map(|n| n.to_string()),
        );
    }
    put_fact(
        f,
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

/// Each GPU's facts from the health inventory: PCIe and NVLinks where the topology has none,
/// VBIOS, ECC mode and the settings an operator checks first.
fn inventory_facts(f: &mut BTreeMap<FieldKey, String>, i: &Inventory) {
    for g in &i.gpus {
        let key = |field: &'static str| FieldKey {
            field,
            gpu: Some(g.index),
        };
        // The topology's values first; the inventory's where it has none.
        if let Some(w) = pcie_word(g.pcie.link.gen_max, g.pcie.link.width_max) {
            f.entry(key("pcie")).or_insert(w);
        }
        if let Some(n) = g.nvlinks_active() {
            f.entry(key("nvlinks")).or_insert_with(|| n.to_string());
        }
        if let Some(v) = &g.vbios {
            f.insert(key("vbios"), v.clone());
        }
        if let Some(on) = g.ecc.enabled {
            f.insert(key("ecc"), if on { "on" } else { "off" }.into());
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
                f.insert(key(field), v);
            }
        }
    }
}

fn pcie_word(generation: Option<u32>, width: Option<u32>) -> Option<String> {
    match (generation, width) {
        (Some(g), Some(w)) => Some(format!("Gen{g} x{w}")),
        (Some(g), None) => Some(format!("Gen{g}")),
        (None, Some(w)) => Some(format!("x{w}")),
        (None, None) => None,
    }
}

/// What a differing node's value is set against: the majority (of one GPU model's nodes where
/// the field was compared among them) with its count, or every value where none holds most.
fn against_words(
    majority: Option<&str>,
    model: Option<&str>,
    (held, known): (usize, usize),
    values: &BTreeMap<&str, usize>,
) -> String {
    match majority {
        Some(m) => match model {
            Some(gpu) => format!("the majority of {gpu} nodes {m} ({held} of {known})"),
            None => format!("the fleet's majority {m} ({held} of {known} nodes)"),
        },
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
    }
}

/// The majority of every field, and a finding for each node that differs.
fn consistency(
    facts: &[Option<BTreeMap<FieldKey, String>>],
    rules: &FleetThresholds,
    nodes: &mut [NodeOutcome],
) -> Vec<FieldSummary> {
    // A per-GPU field is compared among nodes of one GPU model where the fleet mixes models;
    // the model itself (and the node's other fields) fleet-wide.
    fn model_of(f: &Facts) -> Option<&str> {
        let key = FieldKey {
            field: "gpu_model",
            gpu: None,
        };
        f.get(&key).map(String::as_str)
    }
    let models: std::collections::BTreeSet<&str> =
        facts.iter().flatten().filter_map(model_of).collect();
    let group = |f: &Facts, key: &FieldKey| -> Option<String> {
        (models.len() > 1 && key.gpu.is_some())
            .then(|| model_of(f).map(str::to_string))
            .flatten()
    };
    let mut tally: BTreeMap<(&FieldKey, Option<String>), BTreeMap<&str, usize>> = BTreeMap::new();
    for f in facts.iter().flatten() {
        for (k, v) in f {
            *tally
                .entry((k, group(f, k)))
                .or_default()
                .entry(v.as_str())
                .or_default() += 1;
        }
    }
    let mut summaries = Vec::with_capacity(tally.len());
    for ((key, model), values) in &tally {
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
            gpu_model: model.clone(),
            majority: majority.map(str::to_string),
            majority_nodes: held,
            known_nodes: known,
        });
        if values.len() < 2 {
            continue;
        }
        for (node, f) in nodes.iter_mut().zip(facts) {
            let Some(value) = f
                .as_ref()
                .filter(|f| group(f, key) == *model)
                .and_then(|f| f.get(*key))
            else {
                continue;
            };
            if Some(value.as_str()) == majority {
                continue;
            }
            let subject = key.gpu.map(|g| format!("GPU {g}"));
            let against = against_words(majority, model.as_deref(), (held, known), values);
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

/// The figure of a measured framework step's time (the mean of its timed steps).
const STEP_TIME: &str = "step_time";
/// The figure of a framework step from a report written before the change to the mean
/// (2026-11-28), the median of its timed steps: compared only with other such steps (on a
/// host-bound step the median reads up to about 5 % below the mean, near the fleet's WARN
/// share).
const MEDIAN_STEP_TIME: &str = "median_step_time";
/// The figure of a synthetic proxy step's time, compared only with other proxies'.
const PROXY_STEP_TIME: &str = "proxy_step_time";

/// Where nodes measured one workload, mode and GPU count by different kinds of step (real
/// framework steps on some, synthetic proxies or the medians of older reports on others): a
/// note naming how many of each, since each is compared only with its own kind.
fn unlike_steps(figures: &[Vec<(FigureKey, f64)>]) -> Vec<String> {
    let kinds = [
        (STEP_TIME, "the real framework step (its mean)"),
        (
            MEDIAN_STEP_TIME,
            "the real framework step's median (an earlier report)",
        ),
        (PROXY_STEP_TIME, "a synthetic proxy step (the older method)"),
    ];
    let mut by_subject: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for figs in figures {
        for (k, _) in figs {
            if let Some(i) = kinds.iter().position(|(f, _)| k.field == *f) {
                by_subject.entry(k.subject.as_str()).or_default()[i] += 1;
            }
        }
    }
    by_subject
        .into_iter()
        .filter(|(_, c)| c.iter().filter(|&&x| x > 0).count() > 1)
        .map(|(subject, c)| {
            let ran: Vec<String> = kinds
                .iter()
                .zip(c)
                .filter(|(_, x)| *x > 0)
                .map(|((_, words), x)| format!("{x} node(s) ran {words}"))
                .collect();
            format!(
                "step time {subject}: {}; each is compared only with its own kind \
                 ({STEP_TIME}, {MEDIAN_STEP_TIME}, {PROXY_STEP_TIME}): a proxy's step is not the \
                 workload's, and a median is not a mean",
                ran.join(", ")
            )
        })
        .collect()
}

/// Copy rates (per test, at the largest size measured, per GPU or pair), collective bus
/// bandwidth (per operation and GPU count at the largest size), framework (and proxy) step
/// times and soak jitter.
fn key_figures(v: &View) -> Vec<(FigureKey, f64)> {
    let mut out: Vec<(FigureKey, f64)> = copy_figures(v);
    if let Some(c) = v.report.and_then(|r| r.collectives.as_ref()) {
        out.extend(collective_figures(&c.results));
    }
    if let Some(s) = v.report.and_then(|r| r.scaling.as_ref()) {
        out.extend(step_figures(s));
    }
    if let Some(h) = v.health {
        out.extend(soak_figures(h));
    }
    // A report of this build refuses them; one read the fast way (`read.rs`) is held to it here.
    out.retain(|(_, x)| x.is_finite() && *x >= 0.0);
    out
}

/// Copy rates (or latencies) per test and GPU or pair at the largest size measured: the
/// bandwidth stage's results, then the check's load tests for what it lacks.
fn copy_figures(v: &View) -> Vec<(FigureKey, f64)> {
    let mut copies: BTreeMap<(String, String), (u64, &BandwidthResult)> = BTreeMap::new();
    let stage = v.report.and_then(|r| r.bandwidth.as_ref());
    let results = stage
        .map(|b| b.results.iter())
        .into_iter()
        .flatten()
        .chain(v.health.map(|h| h.bandwidth.iter()).into_iter().flatten());
    for r in results {
        if r.status != Status::Ok
            || (r.median_gbps.is_none() && r.latency_ns.is_none())
            // Above its line rate: no link carries more, so it is not compared.
            || r.above_line_rate()
        {
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
    let chosen: Vec<&BandwidthResult> = copies.values().map(|(_, r)| *r).collect();
    let mut out = Vec::new();
    for r in &chosen {
        let (mut subject, gpu, peer) = endpoints(r.src, r.dst);
        let (value, unit, higher) = match (r.median_gbps, r.latency_ns) {
            (Some(g), _) => (g, "GB/s", true),
            (None, Some(ns)) => (ns, "ns", false),
            (None, None) => continue,
        };
        // A test of every GPU at once (host_to_all, all_to_one, all_pairs) shares the host or
        // the fabric among them: its figure is compared only at the same GPU count.
        if matches!(
            r.test.shape(),
            Shape::HostAll { .. } | Shape::Fan { .. } | Shape::AllPairs
        ) {
            let n = gpus_at_once(&chosen, r);
            subject.push_str(&format!(", {}", crate::model::quantities::gpus(n)));
        }
        // A figure modeled from a link's state on a node whose readings are real (a check of
        // captures) is not a measurement: named so, and compared only with modeled figures
        // (a modeled node says so in its verdict; `modeled_apart` names its figures where
        // the fleet also holds measured nodes).
        let field = match r.source {
            Source::Modeled if v.node_source() != Source::Modeled => {
                format!("{}{MODELED}", r.test.id())
            }
            _ => r.test.id().to_string(),
        };
        out.push((
            FigureKey {
                field,
                subject,
                gpu,
                peer,
                unit,
                higher_is_better: higher,
            },
            value,
        ));
    }
    out
}

/// How many GPUs took part in `r`'s test at once: the GPUs of its rows (one per GPU) at its size.
fn gpus_at_once(rows: &[&BandwidthResult], r: &BandwidthResult) -> usize {
    let mut gpus: Vec<usize> = rows
        .iter()
        .filter(|x| x.test == r.test && x.bytes == r.bytes)
        .flat_map(|x| [x.src.gpu(), x.dst.gpu()])
        .flatten()
        .collect();
    gpus.sort_unstable();
    gpus.dedup();
    // all_to_one's peers are `All`: the GPUs are its rows' own, plus at least one other.
    match r.test.shape() {
        Shape::Fan { .. } | Shape::AllPairs => gpus.len().max(2),
        _ => gpus.len().max(1),
    }
}

/// Bus bandwidth per operation, algorithm and GPU count, at the largest size that ran.
fn collective_figures(results: &[CollectiveResult]) -> Vec<(FigureKey, f64)> {
    let mut largest: BTreeMap<(String, usize), (u64, f64)> = BTreeMap::new();
    for r in results {
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
    largest
        .into_iter()
        .map(|((field, n), (bytes, busbw))| {
            (
                FigureKey {
                    field,
                    subject: format!(
                        "{n} GPUs @ {}",
                        crate::model::quantities::format_bytes(bytes)
                    ),
                    gpu: None,
                    peer: None,
                    unit: "GB/s",
                    higher_is_better: true,
                },
                busbw,
            )
        })
        .collect()
}

/// Measured step times: a real framework step only against real framework steps of the same
/// figure (the mean; an older report's median only against medians), a synthetic proxy only
/// against proxies (a proxy's step is not the workload's); projections are not measured.
fn step_figures(s: &crate::report::ScalingSection) -> Vec<(FigureKey, f64)> {
    let mut out = Vec::new();
    for row in &s.run.rows {
        // By the row's CSV id: fleet/ does not use scaling/.
        let field = match row.source.id() {
            "measured_framework" if row.step_statistic.is_none() => MEDIAN_STEP_TIME,
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
    out
}

/// The soak's jitter per GPU, from the node's own check.
fn soak_figures(h: &HealthReport) -> Vec<(FigureKey, f64)> {
    h.checks
        .iter()
        .filter(|c| c.check.id() == "soak_jitter")
        .filter_map(|c| {
            let x = c.figure?;
            Some((
                FigureKey {
                    field: "soak_jitter".into(),
                    subject: c.subject.clone(),
                    gpu: c.gpu,
                    peer: c.peer,
                    unit: "CV",
                    higher_is_better: false,
                },
                x,
            ))
        })
        .collect()
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
        let xs: Vec<f64> = values.iter().map(|(_, x)| *x).collect();
        let median = median_of(&xs);
        let dev: Vec<f64> = values.iter().map(|(_, x)| (x - median).abs()).collect();
        let scaled_mad = 1.4826 * median_of(&dev);
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

/// The node's copy figures above their line rate, as UNKNOWN findings, one per test and size
/// (left out of the comparison: a bundled 8× H200 report of an older method holds one_to_all
/// at 2.14× it on every GPU).
fn implausible_findings(v: &View) -> Vec<Finding> {
    let stage = v.report.and_then(|r| r.bandwidth.as_ref());
    let mut groups: BTreeMap<(&str, u64), Vec<&BandwidthResult>> = BTreeMap::new();
    for r in stage
        .map(|b| b.results.iter())
        .into_iter()
        .flatten()
        .chain(v.health.map(|h| h.bandwidth.iter()).into_iter().flatten())
        .filter(|r| r.status == Status::Ok && r.median_gbps.is_some() && r.above_line_rate())
    {
        groups.entry((r.test.id(), r.bytes)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|((test, bytes), rows)| {
            let (subject, gpu, peer) = match rows.as_slice() {
                [one] => endpoints(one.src, one.dst),
                _ => (format!("{} cells", rows.len()), None, None),
            };
            let figures: Vec<f64> = rows.iter().filter_map(|r| r.median_gbps).collect();
            let (lo, hi) = (
                figures.iter().copied().fold(f64::INFINITY, f64::min),
                figures.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            );
            let range = if hi - lo < 0.05 {
                format!("{hi:.1} GB/s")
            } else {
                format!("{lo:.1}–{hi:.1} GB/s")
            };
            let line = rows[0]
                .line_rate_gbps
                .map_or("unknown".to_string(), |l| format!("{l:.1} GB/s"));
            Finding {
                kind: FindingKind::Implausible,
                verdict: Verdict::Unknown,
                field: test.to_string(),
                subject: Some(format!(
                    "{subject} @ {}",
                    crate::model::quantities::format_bytes(bytes)
                )),
                gpu,
                peer,
                value: Some(range.clone()),
                fleet_value: None,
                figure: Some(hi),
                median: None,
                deviation_percent: None,
                unit: Some("GB/s".into()),
                detail: format!(
                    "{test} {subject}: {range} is above the line rate of the links it crossed \
                     ({line}): a measurement to distrust, not compared with the fleet"
                ),
            }
        })
        .collect()
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
        assert_eq!(median_of(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_of(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median_of(&[]).is_nan());
        // A figure not measured (NaN) is not a figure: the median of the rest.
        assert_eq!(median_of(&[f64::NAN, 3.0, 1.0]), 2.0);
        assert_eq!(
            endpoints(Endpoint::Gpu(0), Endpoint::Gpu(1)).0,
            "GPU 0→1".to_string()
        );
        assert_eq!(endpoints(Endpoint::Host, Endpoint::Gpu(3)).1, Some(3));
    }
}
