//! Between nodes: NCCL all-reduce across the fleet's nodes, so that a bad NIC, cable or switch
//! port shows as the node pair that is slow. `fleet run --slurm --between` starts each run as a
//! Slurm job step (`srun … scalescope bench collectives`, the multi-process path of
//! `bench::launcher`: one rank per GPU, NCCL's own bootstrap through `NCCL_COMM_ID`), one after
//! the other: over all nodes, over each node with the next (a ring of pairs), then over each
//! half of the fleet. Each run's outcome is `OUT/between/<name>.json` ([`BetweenRecord`]), with
//! the transport NCCL used (from its INIT log).
//!
//! [`judge`] reads the pairs: a pair slower than the typical pair (the median over nodes of each
//! node's best pair) by the fleet's outlier rule, one that failed while others ran, or one whose
//! NCCL transport differs from the others' is bad; a node whose every pair is bad is named (its
//! NIC, cable or port), a bad pair between two otherwise good nodes names both (the path between
//! them).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::finding::{Finding, FindingKind, figure_text, median_of, worse_verdict};
use crate::health::Verdict;
use crate::health::thresholds::FleetThresholds;
use crate::model::{Algo, CollectiveOp, CollectiveResult, Status};

/// The folder of the between-nodes runs under a fleet run's `OUT`.
pub const BETWEEN_DIR: &str = "between";

/// Which nodes a run spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Span {
    /// Every node.
    All,
    /// A node and the next (the last with the first).
    Pair,
    /// The first or the second half of the nodes.
    Half,
}

impl Span {
    pub fn word(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Pair => "pair",
            Self::Half => "half",
        }
    }
}

/// A run to start: its file name (without `.json`), span and nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub name: String,
    pub span: Span,
    pub nodes: Vec<String>,
}

/// The runs over `nodes` (in this order): all of them; with three or more, each node with the
/// next (a ring, so every node is in two pairs); with four or more, each half — a node set
/// already planned is not planned again (four nodes' halves are two of their pairs).
pub fn plan(nodes: &[String]) -> Vec<Planned> {
    let n = nodes.len();
    if n < 2 {
        return Vec::new();
    }
    let mut runs = vec![Planned {
        name: "all".into(),
        span: Span::All,
        nodes: nodes.to_vec(),
    }];
    let mut seen: Vec<Vec<String>> = vec![sorted(nodes)];
    let mut add = |runs: &mut Vec<Planned>, name: String, span: Span, set: Vec<String>| {
        let key = sorted(&set);
        if !seen.contains(&key) {
            seen.push(key);
            runs.push(Planned {
                name,
                span,
                nodes: set,
            });
        }
    };
    if n >= 3 {
        for i in 0..n {
            let pair = vec![nodes[i].clone(), nodes[(i + 1) % n].clone()];
            add(&mut runs, format!("pair-{:03}", i + 1), Span::Pair, pair);
        }
    }
    if n >= 4 {
        let (a, b) = nodes.split_at(n / 2);
        add(&mut runs, "half-1".into(), Span::Half, a.to_vec());
        add(&mut runs, "half-2".into(), Span::Half, b.to_vec());
    }
    runs
}

fn sorted(nodes: &[String]) -> Vec<String> {
    let mut v = nodes.to_vec();
    v.sort();
    v
}

/// The job step of one run: `srun --nodes=K --nodelist=a,b --ntasks-per-node=G EXE bench
/// collectives --ops all_reduce --sizes SIZES --json JSON`. The caller sets `NCCL_COMM_ID` (the
/// first node's address and a port of this run) in srun's environment, which srun passes on
/// (`--export=ALL`); `--kill-on-bad-exit` ends the other ranks when one fails, rather than
/// leaving them waiting for it.
pub fn srun_argv(
    planned: &Planned,
    tasks_per_node: usize,
    exe: &Path,
    sizes: &str,
    json: &Path,
) -> Vec<String> {
    vec![
        "srun".to_string(),
        format!("--nodes={}", planned.nodes.len()),
        format!("--nodelist={}", planned.nodes.join(",")),
        format!("--ntasks-per-node={tasks_per_node}"),
        format!("--ntasks={}", planned.nodes.len() * tasks_per_node),
        "--kill-on-bad-exit=1".into(),
        "--export=ALL".into(),
        exe.display().to_string(),
        "bench".into(),
        "collectives".into(),
        "--ops".into(),
        "all_reduce".into(),
        "--algo".into(),
        "nccl".into(),
        "--sizes".into(),
        sizes.to_string(),
        "--json".into(),
        json.display().to_string(),
    ]
}

/// The rows of a `bench collectives --json` file (rank 0 rewrites it after each size).
pub fn read_run_json(path: &Path) -> Result<Vec<CollectiveResult>, String> {
    #[derive(Deserialize)]
    struct Run {
        results: Vec<CollectiveResult>,
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice::<Run>(&bytes)
        .map(|r| r.results)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Why a step gave no rows, from what it printed: the ranks' own `Error:` lines (each once),
/// else srun's last line.
pub fn why_from_log(log: &str) -> String {
    // `rank N: …` lines of one cause are one line.
    let cause = |l: &str| -> String {
        match l.strip_prefix("rank ").and_then(|r| r.split_once(": ")) {
            Some((n, rest)) if n.parse::<usize>().is_ok() => rest.to_string(),
            _ => l.to_string(),
        }
    };
    let mut lines: Vec<&str> = Vec::new();
    // Ranks writing one file at once can interleave within a line: each `Error: ` starts one.
    for l in log.lines().flat_map(|l| l.split("Error: ").skip(1)) {
        let rest = l.trim();
        if !rest.is_empty() && !lines.iter().any(|x| cause(x) == cause(rest)) {
            lines.push(rest);
        }
    }
    if lines.is_empty() {
        let last = log
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("the step printed nothing");
        let hint = if last.contains("More processors requested than permitted") {
            " (the allocation has fewer CPUs per node than ranks: salloc/sbatch with \
             --ntasks-per-node=N, or --exclusive)"
        } else {
            ""
        };
        return format!("{last}{hint}");
    }
    let n = lines.len();
    let mut text = lines.into_iter().take(3).collect::<Vec<_>>().join("; ");
    if n > 3 {
        text.push_str(&format!(" (and {} more)", n - 3));
    }
    text
}

/// `OUT/between/<name>.json`: one run between nodes and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BetweenRecord {
    pub name: String,
    pub span: Span,
    pub nodes: Vec<String>,
    /// Ranks (GPUs) per node.
    pub tasks_per_node: usize,
    /// The Slurm job the step ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    pub started: String,
    pub ended: String,
    /// `ok` when the largest size ran; else why not (`reason`).
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The transports NCCL set up (rank 0's connections), e.g. `NET/IB+GDRDMA (mlx5_0)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// The size judged: the largest all-reduce that ran, bytes as nccl-tests counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Its bus bandwidth, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busbw_gbps: Option<f64>,
    /// Every row the run gave (rank 0's `bench collectives --json`).
    #[serde(default)]
    pub results: Vec<CollectiveResult>,
}

impl BetweenRecord {
    /// The record of a run whose rows are `results` (`Err`: why there are none).
    pub fn new(
        planned: &Planned,
        tasks_per_node: usize,
        job_id: Option<String>,
        (started, ended): (String, String),
        results: Result<Vec<CollectiveResult>, String>,
    ) -> BetweenRecord {
        let mut r = BetweenRecord {
            name: planned.name.clone(),
            span: planned.span,
            nodes: planned.nodes.clone(),
            tasks_per_node,
            job_id,
            started,
            ended,
            status: Status::Failed,
            reason: None,
            transport: None,
            bytes: None,
            busbw_gbps: None,
            results: Vec::new(),
        };
        let rows = match results {
            Ok(rows) => rows,
            Err(why) => {
                r.reason = Some(why);
                return r;
            }
        };
        let all_reduce =
            |x: &&CollectiveResult| x.op == CollectiveOp::AllReduce && x.algo == Algo::Nccl;
        r.transport = rows.iter().rev().find_map(|x| x.transport.clone());
        let judged = rows
            .iter()
            .filter(all_reduce)
            .filter(|x| x.status == Status::Ok && x.busbw_gbps.is_some())
            .max_by_key(|x| x.bytes);
        match judged {
            Some(x) => {
                r.status = Status::Ok;
                r.bytes = Some(x.bytes);
                r.busbw_gbps = x.busbw_gbps;
            }
            None => {
                let worst = rows
                    .iter()
                    .filter(all_reduce)
                    .find(|x| x.status != Status::Ok);
                r.status = worst.map_or(Status::Failed, |x| x.status);
                r.reason = Some(
                    worst
                        .and_then(|x| x.reason.clone())
                        .unwrap_or_else(|| "no NCCL all-reduce row in the run's results".into()),
                );
            }
        }
        r.results = rows;
        r
    }
}

/// The records in `dir` (`OUT/between`), by name; files that do not read are named in the
/// second list (one line each).
pub fn read_records(dir: &Path) -> (Vec<BetweenRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut errors = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (records, errors);
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p.to_string_lossy().ends_with(".run.json")
        })
        .collect();
    paths.sort();
    for p in paths {
        match crate::input::read(&p, RECORD_MAX_BYTES)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<BetweenRecord>(&b).map_err(|e| e.to_string()))
            .and_then(|r| r.check().map(|()| r))
        {
            Ok(r) => records.push(r),
            Err(e) => errors.push(format!(
                "{}: {}",
                crate::model::validate::for_terminal(&p.display().to_string()),
                crate::model::validate::one_line(&e, 120)
            )),
        }
    }
    (records, errors)
}

/// The largest between-nodes record read (one run's rows: a few KB).
const RECORD_MAX_BYTES: u64 = 16 << 20;

impl BetweenRecord {
    /// Checks a record read from a file: its figures within [`crate::model::validate::GBPS`]
    /// (a busbw of −1 GB/s is no run) and its node names host names.
    pub fn check(&self) -> Result<(), String> {
        if let Some(bw) = self.busbw_gbps {
            crate::model::validate::GBPS
                .check(bw)
                .map_err(|e| format!("busbw_gbps: {e}"))?;
        }
        crate::model::check_collective_figures(&self.results, "results")?;
        if self.tasks_per_node == 0 {
            return Err("tasks_per_node: 0: a run has at least one rank per node".into());
        }
        for n in &self.nodes {
            super::run::check_node_name(n).map_err(|e| format!("nodes: {e}"))?;
        }
        Ok(())
    }
}

/// One run between nodes as the fleet report shows it.
#[derive(Clone, Debug, Serialize)]
pub struct BetweenSummary {
    pub name: String,
    pub span: Span,
    pub nodes: Vec<String>,
    pub tasks_per_node: usize,
    pub status: Status,
    pub reason: Option<String>,
    pub transport: Option<String>,
    pub bytes: Option<u64>,
    pub busbw_gbps: Option<f64>,
    /// Pairs: the typical pair — the median over nodes of each node's best pair — and this
    /// pair's difference from it, %.
    pub median_gbps: Option<f64>,
    pub deviation_percent: Option<f64>,
    /// Pairs: PASS, or how bad the pair is (slow, failed, another transport); `None` for the
    /// other spans and where pairs cannot be compared.
    pub verdict: Option<Verdict>,
    /// Why a pair is bad, in one sentence.
    pub detail: Option<String>,
}

/// One line for the runs: how many ran, the pairs that are bad and the transports NCCL used,
/// e.g. `5 of 5 all-reduce run(s) ran, 2 pair(s) bad (n2+n3 -54.8 %, n3+n4 -54.3 %); NCCL
/// transport P2P/CUMEM` (the terminal's and the app's).
pub fn summary_line(runs: &[BetweenSummary]) -> String {
    let ran = runs.iter().filter(|r| r.busbw_gbps.is_some()).count();
    let bad: Vec<String> = runs
        .iter()
        .filter(|r| r.verdict.is_some_and(|v| v > Verdict::Pass))
        .map(|r| {
            let dev = r
                .deviation_percent
                .map_or_else(|| format!(" {}", r.status), |d| format!(" {d:+.1} %"));
            format!("{}{dev}", r.nodes.join("+"))
        })
        .collect();
    let mut transports: Vec<&str> = runs
        .iter()
        .filter(|r| r.busbw_gbps.is_some())
        .filter_map(|r| r.transport.as_deref())
        .collect();
    transports.sort_unstable();
    transports.dedup();
    let mut line = format!(
        "{ran} of {} all-reduce run(s) ran, {} pair(s) bad",
        runs.len(),
        bad.len()
    );
    if !bad.is_empty() {
        const SHOWN: usize = 6;
        line.push_str(&format!(" ({}", bad[..bad.len().min(SHOWN)].join(", ")));
        if bad.len() > SHOWN {
            line.push_str(&format!(", … {} more", bad.len() - SHOWN));
        }
        line.push(')');
    }
    if !transports.is_empty() {
        line.push_str(&format!("; NCCL transport {}", transports.join(" | ")));
    }
    line
}

/// What the between-nodes runs say: every run, findings by node, notes.
#[derive(Clone, Debug, Default)]
pub struct BetweenOutcome {
    pub runs: Vec<BetweenSummary>,
    pub findings: BTreeMap<String, Vec<Finding>>,
    pub notes: Vec<String>,
}

/// The transport without its devices: `NET/IB+GDRDMA (mlx5_0); P2P/CUMEM` → `NET/IB+GDRDMA;
/// P2P/CUMEM` (the same on every node of one build, whichever NIC a pair used).
fn transport_class(t: &str) -> String {
    t.split("; ")
        .map(|part| part.split(" (").next().unwrap_or(part))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Judges the runs (see the module's text). `rules` are the fleet's outlier thresholds.
pub fn judge(records: &[BetweenRecord], rules: &FleetThresholds) -> BetweenOutcome {
    let mut out = BetweenOutcome::default();
    if records.is_empty() {
        return out;
    }
    let mut runs = summaries(records);
    if !runs.iter().any(ran) {
        let mut reasons: Vec<&str> = runs.iter().filter_map(|s| s.reason.as_deref()).collect();
        reasons.dedup();
        out.notes.push(format!(
            "No all-reduce between nodes ran ({} run(s)): {}",
            runs.len(),
            reasons.first().copied().unwrap_or("no reason recorded")
        ));
        out.runs = runs;
        return out;
    }
    let pairs: Vec<usize> = (0..runs.len())
        .filter(|&i| runs[i].span == Span::Pair)
        .collect();
    let ok_pairs: Vec<usize> = pairs.iter().copied().filter(|&i| ran(&runs[i])).collect();
    if ok_pairs.len() < 3 {
        if !pairs.is_empty() {
            out.notes.push(format!(
                "Pairs of nodes are not compared: {} of {} pair(s) ran (3 needed)",
                ok_pairs.len(),
                pairs.len()
            ));
        }
        out.runs = runs;
        return out;
    }
    let typical = Typical::of(&runs, &ok_pairs, rules);
    for &i in &pairs {
        judge_pair(&mut runs[i], &typical, ok_pairs.len(), rules);
    }
    out.findings = node_findings(&runs, &pairs, typical.median);
    out.notes.extend(halves_note(&runs, rules));
    out.runs = runs;
    out
}

/// Whether a run ran and gave a figure.
fn ran(s: &BetweenSummary) -> bool {
    s.status == Status::Ok && s.busbw_gbps.is_some()
}

/// Each record as the report shows it, not yet judged; by span, then name.
fn summaries(records: &[BetweenRecord]) -> Vec<BetweenSummary> {
    let mut runs: Vec<BetweenSummary> = records
        .iter()
        .map(|r| BetweenSummary {
            name: r.name.clone(),
            span: r.span,
            nodes: r.nodes.clone(),
            tasks_per_node: r.tasks_per_node,
            status: r.status,
            reason: r.reason.clone(),
            transport: r.transport.clone(),
            bytes: r.bytes,
            busbw_gbps: r.busbw_gbps,
            median_gbps: None,
            deviation_percent: None,
            verdict: None,
            detail: None,
        })
        .collect();
    runs.sort_by(|a, b| a.span.cmp(&b.span).then(a.name.cmp(&b.name)));
    runs
}

/// What a pair is judged against: the typical pair, the spread the outlier rule allows around
/// it, and the transport most pairs used.
struct Typical {
    /// The median over nodes of each node's best pair, GB/s.
    median: f64,
    /// `mad_k` × the scaled MAD of the nodes' best pairs.
    spread: f64,
    /// The transport class (devices left out) more than half the pairs that ran used.
    transport: Option<String>,
}

impl Typical {
    fn of(runs: &[BetweenSummary], ok_pairs: &[usize], rules: &FleetThresholds) -> Typical {
        // The reference: the median over nodes of each node's best pair. A good node has at
        // least one good pair, so this holds while fewer than half the nodes are bad; the
        // pairs' own median would not (one bad node of four slows half the ring's pairs).
        let mut best: BTreeMap<&str, f64> = BTreeMap::new();
        for &i in ok_pairs {
            let x = runs[i].busbw_gbps.unwrap_or(f64::NAN);
            for n in &runs[i].nodes {
                let b = best.entry(n.as_str()).or_insert(x);
                *b = b.max(x);
            }
        }
        let bests: Vec<f64> = best.values().copied().collect();
        let median = median_of(&bests);
        let dev: Vec<f64> = bests.iter().map(|x| (x - median).abs()).collect();
        let spread = rules.mad_k * 1.4826 * median_of(&dev);
        // The transport most pairs used (by class: devices may differ).
        let mut classes: BTreeMap<String, usize> = BTreeMap::new();
        for &i in ok_pairs {
            if let Some(t) = &runs[i].transport {
                *classes.entry(transport_class(t)).or_default() += 1;
            }
        }
        let transport = classes
            .iter()
            .max_by_key(|(_, n)| **n)
            .filter(|(_, n)| **n * 2 > ok_pairs.len())
            .map(|(c, _)| c.clone());
        Typical {
            median,
            spread,
            transport,
        }
    }
}

/// One pair against the typical pair: FAIL when it did not run, the outlier rule's verdict
/// when it is slow, WARN when NCCL took another transport than most pairs; its deviation, and
/// why where it is not PASS. `ok_pairs`: how many pairs ran.
fn judge_pair(s: &mut BetweenSummary, typical: &Typical, ok_pairs: usize, rules: &FleetThresholds) {
    let median = typical.median;
    s.median_gbps = Some(median);
    let pair = s.nodes.join("+");
    let (verdict, detail) = match s.busbw_gbps.filter(|_| s.status == Status::Ok) {
        None => (
            Verdict::Fail,
            format!(
                "pair {pair}: all-reduce did not run ({}), while {} other pairs did",
                s.reason.as_deref().unwrap_or("no reason recorded"),
                ok_pairs
            ),
        ),
        Some(x) => {
            s.deviation_percent = Some((x - median) / median * 100.0);
            let slow = worse_verdict(median - x, median, typical.spread, rules);
            let other = match (&typical.transport, &s.transport) {
                (Some(m), Some(t)) if transport_class(t) != *m => Some(t.clone()),
                _ => None,
            };
            let mut why = Vec::new();
            if slow.is_some() {
                why.push(format!(
                    "{} GB/s busbw ({:+.1} %)",
                    figure_text(x),
                    (x - median) / median * 100.0,
                ));
            }
            if let (Some(t), Some(m)) = (&other, &typical.transport) {
                why.push(format!("NCCL used {t} where the other pairs used {m}"));
            }
            let verdict = match (slow, other.is_some()) {
                (Some(v), _) => v,
                (None, true) => Verdict::Warn,
                (None, false) => Verdict::Pass,
            };
            (verdict, format!("pair {pair}: {}", why.join("; ")))
        }
    };
    s.verdict = Some(verdict);
    if verdict > Verdict::Pass {
        s.detail = Some(detail);
    }
}

/// The bad pairs laid at nodes: a node whose every pair is bad is the one (pinned); a bad pair
/// of two otherwise good nodes names both ends.
fn node_findings(
    runs: &[BetweenSummary],
    pairs: &[usize],
    median: f64,
) -> BTreeMap<String, Vec<Finding>> {
    let bad = |i: usize| runs[i].verdict.is_some_and(|v| v > Verdict::Pass);
    let mut node_pairs: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for &i in pairs {
        for n in &runs[i].nodes {
            node_pairs.entry(n.as_str()).or_default().push(i);
        }
    }
    let pinned: Vec<&str> = node_pairs
        .iter()
        .filter(|(_, ps)| ps.len() >= 2 && ps.iter().all(|&i| bad(i)))
        .map(|(n, _)| *n)
        .collect();
    let mut findings: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for (node, ps) in &node_pairs {
        let mine: Vec<usize> = ps.iter().copied().filter(|&i| bad(i)).collect();
        if mine.is_empty() {
            continue;
        }
        let is_pinned = pinned.contains(node);
        // Pairs this node shares with a pinned node are explained by that node.
        let unexplained = mine.iter().any(|&i| {
            runs[i]
                .nodes
                .iter()
                .all(|n| !pinned.contains(&n.as_str()) || n == node)
        });
        if !is_pinned && !unexplained {
            continue;
        }
        findings
            .entry((*node).to_string())
            .or_default()
            .push(pair_finding(runs, node, &mine, is_pinned, median));
    }
    findings
}

/// The finding of `node`'s bad pairs `mine`: every pair bad (`pinned`: its NIC, cable or
/// switch port, at its mildest pair's verdict), or one bad pair among good ones (the path
/// between the two nodes, WARN).
fn pair_finding(
    runs: &[BetweenSummary],
    node: &str,
    mine: &[usize],
    pinned: bool,
    median: f64,
) -> Finding {
    let details: Vec<&str> = mine
        .iter()
        .filter_map(|&i| runs[i].detail.as_deref())
        .collect();
    let size = first_size(runs, mine);
    let median_text = format!(
        "the typical pair (each node's best, median) {} GB/s{size}",
        figure_text(median)
    );
    let (verdict, detail) = if pinned {
        // Its mildest pair: every pair is at least that bad.
        let v = mine
            .iter()
            .filter_map(|&i| runs[i].verdict)
            .min()
            .unwrap_or(Verdict::Warn);
        (
            v,
            format!(
                "every pair with {node} is bad — its NIC, cable or switch port: {}; {median_text}",
                details.join("; ")
            ),
        )
    } else {
        (
            Verdict::Warn,
            format!(
                "one pair with {node} is bad, its other pairs are good — the path between \
                 the two nodes: {}; {median_text}",
                details.join("; ")
            ),
        )
    };
    let first = &runs[mine[0]];
    Finding {
        kind: FindingKind::Between,
        verdict,
        field: "all_reduce between nodes".into(),
        subject: Some(
            mine.iter()
                .map(|&i| format!("pair {}", runs[i].nodes.join("+")))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        gpu: None,
        peer: None,
        value: first.busbw_gbps.map(|x| format!("{} GB/s", figure_text(x))),
        fleet_value: Some(format!("{} GB/s", figure_text(median))),
        figure: first.busbw_gbps,
        median: Some(median),
        deviation_percent: first.deviation_percent,
        unit: Some("GB/s".into()),
        detail,
    }
}

/// The two halves of the fleet against each other: a note naming the slower half when it is
/// slower by more than the warn fraction.
fn halves_note(runs: &[BetweenSummary], rules: &FleetThresholds) -> Option<String> {
    let halves: Vec<&BetweenSummary> = runs
        .iter()
        .filter(|s| s.span == Span::Half && ran(s))
        .collect();
    let [a, b] = halves[..] else {
        return None;
    };
    let (Some(x), Some(y)) = (a.busbw_gbps, b.busbw_gbps) else {
        return None;
    };
    let (slow, fast, xs, xf) = if x < y { (a, b, x, y) } else { (b, a, y, x) };
    ((xf - xs) / xf > rules.warn).then(|| {
        format!(
            "{} ({} nodes) all-reduces {:.0} % slower than {} ({} GB/s vs {} GB/s): the slow node or link is in it",
            slow.name,
            slow.nodes.len(),
            (xf - xs) / xf * 100.0,
            fast.name,
            figure_text(xs),
            figure_text(xf)
        )
    })
}

/// ` at 1 GiB, 8 ranks per node` of the first of `runs[ids]` that ran.
fn first_size(runs: &[BetweenSummary], ids: &[usize]) -> String {
    ids.iter()
        .map(|&i| &runs[i])
        .find_map(|r| {
            r.bytes.map(|b| {
                format!(
                    " at {}, {} rank(s) per node",
                    crate::model::quantities::format_bytes(b),
                    r.tasks_per_node
                )
            })
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CollectiveCase, Dtype};

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("n{i}")).collect()
    }

    #[test]
    fn plans_all_a_ring_of_pairs_and_halves_once_each() {
        assert!(plan(&names(1)).is_empty());
        let two = plan(&names(2));
        assert_eq!(two.len(), 1);
        assert_eq!(two[0].span, Span::All);
        let three: Vec<(Span, Vec<String>)> = plan(&names(3))
            .into_iter()
            .map(|p| (p.span, p.nodes))
            .collect();
        assert_eq!(three.len(), 4);
        assert_eq!(three[3], (Span::Pair, vec!["n3".into(), "n1".into()]));
        // Four nodes: the halves are pairs 1 and 3.
        let four = plan(&names(4));
        assert_eq!(four.iter().filter(|p| p.span == Span::Half).count(), 0);
        assert_eq!(four.len(), 5);
        let nine = plan(&names(9));
        assert_eq!(nine.len(), 1 + 9 + 2);
        assert_eq!(nine[10].nodes, names(4));
        assert_eq!(nine[11].nodes.len(), 5);
        assert_eq!(nine[11].name, "half-2");
    }

    fn row(bytes: u64, busbw: Option<f64>, transport: &str) -> CollectiveResult {
        let mut r = CollectiveResult::empty(
            CollectiveCase {
                op: CollectiveOp::AllReduce,
                algo: Algo::Nccl,
                gpus: &[0, 1],
                bytes,
                dtype: Dtype::F32,
                in_place: false,
            },
            crate::model::Source::Measured,
            Status::Ok,
            "",
        );
        r.reason = None;
        r.busbw_gbps = busbw;
        r.transport = Some(transport.into());
        r
    }

    fn record(p: &Planned, busbw: Option<f64>, transport: &str) -> BetweenRecord {
        let results = match busbw {
            Some(b) => Ok(vec![
                row(1 << 20, Some(b / 3.0), transport),
                row(1 << 30, Some(b), transport),
            ]),
            None => Err("rank 2: ncclCommInitRank did not complete within 300 s".into()),
        };
        BetweenRecord::new(p, 8, Some("42".into()), ("t0".into(), "t1".into()), results)
    }

    const IB: &str = "NET/IB+GDRDMA (mlx5_0, mlx5_1)";

    fn fleet(n: usize, bw: impl Fn(&[String]) -> (Option<f64>, &'static str)) -> BetweenOutcome {
        let records: Vec<BetweenRecord> = plan(&names(n))
            .iter()
            .map(|p| {
                let (b, t) = bw(&p.nodes);
                record(p, b, t)
            })
            .collect();
        judge(&records, &FleetThresholds::default())
    }

    #[test]
    fn srun_line_and_the_reason_a_step_failed() {
        let p = &plan(&names(3))[2];
        let argv = srun_argv(
            p,
            8,
            Path::new("/opt/scalescope"),
            "1G",
            Path::new("/f/b/pair-002.run.json"),
        );
        let line = argv.join(" ");
        assert!(
            line.starts_with("srun --nodes=2 --nodelist=n2,n3 --ntasks-per-node=8 --ntasks=16"),
            "{line}"
        );
        assert!(line.ends_with("/opt/scalescope bench collectives --ops all_reduce --algo nccl --sizes 1G --json /f/b/pair-002.run.json"), "{line}");
        let log = "Error: rank 1: no NVIDIA driver\nError: rank 0: no NVIDIA driver\nsrun: error: n2: task 0: Exited with exit code 1\n";
        assert_eq!(why_from_log(log), "rank 1: no NVIDIA driver");
        let mixed =
            "Error: rank 1: no NVIDIA driverError: rank 0: NCCL 2.28.9: unhandled system error\n\n";
        assert_eq!(
            why_from_log(mixed),
            "rank 1: no NVIDIA driver; rank 0: NCCL 2.28.9: unhandled system error"
        );
        assert_eq!(
            why_from_log("srun: error: Unable to create step\n\n"),
            "srun: error: Unable to create step"
        );
        assert_eq!(why_from_log(""), "the step printed nothing");
    }

    #[test]
    fn the_largest_size_is_judged_and_a_failed_run_keeps_its_reason() {
        let p = &plan(&names(3))[1];
        let r = record(p, Some(180.0), IB);
        assert_eq!(
            (r.status, r.bytes, r.busbw_gbps),
            (Status::Ok, Some(1 << 30), Some(180.0))
        );
        assert_eq!(r.transport.as_deref(), Some(IB));
        let f = record(p, None, IB);
        assert_eq!(f.status, Status::Failed);
        assert!(f.reason.unwrap().contains("ncclCommInitRank"));
    }

    #[test]
    fn a_node_whose_both_pairs_are_slow_is_named_alone() {
        let o = fleet(8, |nodes| {
            let slow = nodes.contains(&"n5".to_string());
            (
                Some(if slow {
                    110.0
                } else {
                    180.0 + nodes.len() as f64
                }),
                IB,
            )
        });
        assert_eq!(o.findings.keys().collect::<Vec<_>>(), ["n5"]);
        let f = &o.findings["n5"][0];
        assert_eq!(f.kind, FindingKind::Between);
        assert_eq!(f.verdict, Verdict::Fail);
        assert!(f.detail.contains("NIC"), "{}", f.detail);
        assert!(
            f.detail.contains("pair n4+n5") && f.detail.contains("pair n5+n6"),
            "{}",
            f.detail
        );
        let dev = f.deviation_percent.unwrap();
        assert!((dev + 39.6).abs() < 0.1, "{dev}");
        // The half holding n5 is named in a note.
        assert!(
            o.notes.iter().any(|n| n.starts_with("half-2")),
            "{:?}",
            o.notes
        );
    }

    /// The pairs of scripts/between-check.sh's run c on an nvidia-h100-x4 (2026-11-26): four
    /// pretend nodes of one GPU each, a PyTorch matmul loop on n3's GPU. Half the ring's pairs
    /// are slow, so the pairs' own median could not tell; each node's best pair can.
    #[test]
    fn one_bad_node_of_four_is_named_from_the_device_figures() {
        let figures = [
            (vec!["n1", "n2", "n3", "n4"], 163.97),
            (vec!["n1", "n2"], 328.47),
            (vec!["n2", "n3"], 151.85),
            (vec!["n3", "n4"], 151.94),
            (vec!["n4", "n1"], 329.63),
        ];
        let o = fleet(4, |nodes| {
            let x = figures
                .iter()
                .find(|(n, _)| n.iter().copied().eq(nodes.iter().map(String::as_str)))
                .map(|f| f.1);
            (x, "P2P/CUMEM")
        });
        assert_eq!(o.findings.keys().collect::<Vec<_>>(), ["n3"]);
        let f = &o.findings["n3"][0];
        assert_eq!(f.verdict, Verdict::Fail);
        let dev = f.deviation_percent.unwrap();
        assert!((-55.0..-50.0).contains(&dev), "{dev}");
    }

    #[test]
    fn one_slow_pair_names_both_ends_as_a_warning() {
        let o = fleet(6, |nodes| {
            let slow = nodes == ["n2", "n3"];
            (Some(if slow { 120.0 } else { 180.0 }), IB)
        });
        assert_eq!(o.findings.keys().collect::<Vec<_>>(), ["n2", "n3"]);
        for f in o.findings.values().flatten() {
            assert_eq!(f.verdict, Verdict::Warn);
            assert!(f.detail.contains("path between"), "{}", f.detail);
        }
    }

    #[test]
    fn a_pair_on_sockets_or_failed_is_bad_and_equal_pairs_pass() {
        let o = fleet(5, |nodes| {
            if nodes.contains(&"n3".to_string()) && nodes.len() == 2 {
                (Some(178.0), "NET/Socket (eth0)")
            } else {
                (Some(180.0), IB)
            }
        });
        assert_eq!(o.findings.keys().collect::<Vec<_>>(), ["n3"]);
        assert!(o.findings["n3"][0].detail.contains("NET/Socket"));
        let o = fleet(5, |nodes| {
            if nodes == ["n5", "n1"] || nodes == ["n1", "n2"] {
                (None, IB)
            } else {
                (Some(180.0), IB)
            }
        });
        assert_eq!(o.findings.keys().collect::<Vec<_>>(), ["n1"]);
        assert_eq!(o.findings["n1"][0].verdict, Verdict::Fail);
        let o = fleet(7, |_| (Some(180.0), IB));
        assert!(o.findings.is_empty());
        assert!(
            o.runs
                .iter()
                .filter(|r| r.span == Span::Pair)
                .all(|r| r.verdict == Some(Verdict::Pass))
        );
    }

    #[test]
    fn the_summary_line_names_the_bad_pairs() {
        let o = fleet(6, |nodes| {
            let slow = nodes == ["n2", "n3"];
            (Some(if slow { 120.0 } else { 180.0 }), IB)
        });
        assert_eq!(
            summary_line(&o.runs),
            "9 of 9 all-reduce run(s) ran, 1 pair(s) bad (n2+n3 -33.3 %); NCCL transport \
             NET/IB+GDRDMA (mlx5_0, mlx5_1)"
        );
    }

    #[test]
    fn runs_that_all_failed_are_a_note_not_a_verdict() {
        let o = fleet(4, |_| (None, IB));
        assert!(o.findings.is_empty());
        assert_eq!(o.notes.len(), 1);
        assert!(
            o.notes[0].contains("No all-reduce between nodes ran (5 run(s))"),
            "{:?}",
            o.notes
        );
    }
}
