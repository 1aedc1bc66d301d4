//! `fleet run`'s per-node half: what each node's folder holds (`node.json` beside the node's
//! `report.json`), the host list, the Slurm allocation read from the environment and the `srun`
//! command that starts one `fleet node` per node, and the ssh pool that runs the check on many
//! hosts through [`crate::remote::Client`], a few at a time. Files are written by the caller
//! (cli/), as each node finishes.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::job::{Job, JobError};
use crate::model::validate::quoted;
use crate::remote::{Client, ConnectError, RemoteOptions, Runner};
use crate::report::Report;

/// The folder of every node's files under a fleet run's `OUT`.
pub const NODES_DIR: &str = "nodes";

/// How a node's run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    /// The check ran to its verdict (pass or fail): `report.json` holds it.
    Done,
    /// The node could not be reached, or the connection dropped mid-run.
    Unreachable,
    /// The node answered but the check could not run (no GPUs readable, bad options).
    Failed,
}

/// How a node was reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "via", rename_all = "lowercase")]
pub enum Reached {
    /// Through ssh, as `[user@]host` or an ssh_config alias.
    Ssh { host: String },
    /// As a task of a Slurm job step on this node.
    Slurm {
        job_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step_id: Option<String>,
    },
    /// On the machine that ran `fleet node` outside Slurm.
    Local,
}

/// `OUT/nodes/<node>/node.json`: who the node is, how it was reached, when, and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// The node's name: its folder's name (the host as given, or Slurm's node name).
    pub node: String,
    #[serde(flatten)]
    pub reached: Reached,
    /// The machine's own host name as its agent reported it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    pub status: NodeStatus,
    /// RFC 3339 UTC, to the second.
    pub started: String,
    pub ended: String,
    /// The check's exit code on that node: 0 passed, 3 a check failed, 1 the node could not be
    /// checked, 2 bad options.
    pub exit_code: i32,
    /// One line on why the node was not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl NodeRecord {
    /// True when the node needs no rerun: its check ran to a verdict.
    pub fn done(&self) -> bool {
        self.status == NodeStatus::Done
    }
}

/// RFC 3339 UTC to the second.
pub fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// The folder of `node` under `out`.
pub fn node_dir(out: &Path, node: &str) -> PathBuf {
    out.join(NODES_DIR).join(node)
}

/// The record `out` holds for `node`, if it holds one that can be read.
pub fn read_record(out: &Path, node: &str) -> Option<NodeRecord> {
    let text = std::fs::read_to_string(node_dir(out, node).join("node.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Checks that `name` can be a node's name and folder: a host name, an ssh_config alias or
/// `user@host` (letters, digits, `.`, `-`, `_`, `@`, `:` and `[` `]` for IPv6 literals), not
/// starting with `-` or `.`.
pub fn check_node_name(name: &str) -> Result<(), String> {
    // `[user@]host` as ssh splits it: at the last `@` (a directory user may hold one, as in
    // `alice@corp.example@gpu01`), a user before it and a host after it.
    let host = match name.rsplit_once('@') {
        Some((user, host)) if !user.is_empty() => host,
        Some(_) => "",
        None => name,
    };
    let ok = !host.is_empty()
        && name.len() <= 255
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@:[]".contains(c));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{} is not a host name ([user@]host: a user before the last @ and a host after it; letters, digits, . - _ : [ ] only)",
            quoted(name)
        ))
    }
}

/// The hosts of `--hosts a,b,c` (commas and/or spaces) or of a hosts file (one per line, `#`
/// starts a comment), in order, each once. An error names the first bad entry (with its line
/// in a file).
pub fn parse_hosts(text: &str, file: bool) -> Result<Vec<String>, String> {
    let mut hosts: Vec<String> = Vec::new();
    // Each once, found by hash: a scan of the list per name made 186,000 names take minutes.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let line = if file {
            line.split('#').next().unwrap_or("")
        } else {
            line
        };
        // `a,,b` is a typo (as `--gpus 0,,1` is): said, not skipped.
        if !file && line.split(',').map(str::trim).any(str::is_empty) && line.contains(',') {
            return Err(format!(
                "{}: an empty entry (two commas, or one at an end)",
                quoted(line)
            ));
        }
        for h in line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|h| !h.is_empty())
        {
            check_node_name(h).map_err(|e| {
                if file {
                    format!("line {}: {e}", n + 1)
                } else {
                    e
                }
            })?;
            if seen.insert(h) {
                hosts.push(h.to_string());
            }
        }
    }
    if hosts.is_empty() {
        return Err("no hosts".into());
    }
    Ok(hosts)
}

/// The Slurm allocation this process runs in, as its environment tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmEnv {
    pub job_id: String,
    /// Nodes in the allocation (`SLURM_NNODES`, else `SLURM_JOB_NUM_NODES`).
    pub nodes: u32,
    /// This node's name (`SLURMD_NODENAME`), set inside a job step.
    pub node_name: Option<String>,
    /// The step (`SLURM_STEP_ID`), set inside a job step.
    pub step_id: Option<String>,
    /// The allocation's nodes in Slurm's compressed form (`SLURM_JOB_NODELIST`, `gpu[01-16]`).
    pub node_list: Option<String>,
}

impl SlurmEnv {
    /// Reads the allocation through `var` (`std::env::var` in a run); an error when this is not
    /// inside one.
    pub fn read(var: impl Fn(&str) -> Option<String>) -> Result<SlurmEnv, String> {
        let job_id = var("SLURM_JOB_ID").filter(|v| !v.trim().is_empty()).ok_or(
            "--slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set): run it under salloc or sbatch",
        )?;
        if !job_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(format!("SLURM_JOB_ID {} is not a job id", quoted(&job_id)));
        }
        let nodes_text = var("SLURM_NNODES")
            .or_else(|| var("SLURM_JOB_NUM_NODES"))
            .ok_or("--slurm: SLURM_NNODES is not set: run it under salloc or sbatch")?;
        let nodes = nodes_text
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("SLURM_NNODES {} is not a node count", quoted(&nodes_text)))?;
        Ok(SlurmEnv {
            job_id,
            nodes,
            node_name: var("SLURMD_NODENAME").filter(|v| !v.is_empty()),
            step_id: var("SLURM_STEP_ID").filter(|v| !v.is_empty()),
            node_list: var("SLURM_JOB_NODELIST").filter(|v| !v.is_empty()),
        })
    }

    /// The allocation's node names, expanded by `scontrol show hostnames` (Slurm's own
    /// reading of its list); `None` when there is no list, scontrol cannot expand it, or it
    /// names another number of nodes than the allocation has (3,000 names for 2 nodes is not
    /// this allocation: each would become a record of a node not checked).
    pub fn node_names(&self) -> Option<Vec<String>> {
        let list = self.node_list.as_deref()?;
        let out = scontrol(&["show", "hostnames", list])?;
        let names: Vec<String> = String::from_utf8_lossy(&out)
            .lines()
            .map(str::trim)
            .filter(|l| check_node_name(l).is_ok())
            .map(str::to_string)
            .collect();
        (!names.is_empty() && names.len() == self.nodes as usize).then_some(names)
    }

    /// The address Slurm reaches `node` at (`NodeAddr` of `scontrol show node`; on most
    /// clusters the node's name); `None` when scontrol cannot say.
    pub fn node_addr(&self, node: &str) -> Option<String> {
        let out = scontrol(&["show", "node", node, "--oneliner"])?;
        String::from_utf8_lossy(&out)
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix("NodeAddr="))
            .map(str::to_string)
            .filter(|a| check_node_name(a).is_ok())
    }

    /// The record of a node of the allocation whose task wrote none (it did not start, or
    /// died before its check ended).
    pub fn silent_node(&self, node: &str, started: SystemTime, why: &str) -> NodeRecord {
        NodeRecord {
            node: node.to_string(),
            reached: Reached::Slurm {
                job_id: self.job_id.clone(),
                step_id: None,
            },
            hostname: None,
            status: NodeStatus::Failed,
            started: timestamp(started),
            ended: timestamp(SystemTime::now()),
            exit_code: 1,
            error: Some(one_line(why)),
        }
    }
}

/// How long `scontrol` may take to answer: it asks slurmctld, which answers in milliseconds or,
/// when it is down or unreachable, not at all.
const SCONTROL_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);
/// The most of scontrol's output read: a hostname a line for 100,000 nodes fits many times.
const SCONTROL_MAX_BYTES: usize = 16 << 20;

/// `scontrol ARGS`' output when it succeeds within [`SCONTROL_LIMIT`] and prints at most
/// [`SCONTROL_MAX_BYTES`]; `None` otherwise (the callers fall back to what they know).
fn scontrol(args: &[&str]) -> Option<Vec<u8>> {
    let mut cmd = std::process::Command::new("scontrol");
    cmd.args(args);
    crate::process::output_within(cmd, scontrol_limit(), SCONTROL_MAX_BYTES)
}

/// [`SCONTROL_LIMIT`], or `SCALESCOPE_TEST_SCONTROL_LIMIT_MS` in debug builds (tests).
fn scontrol_limit() -> std::time::Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("SCALESCOPE_TEST_SCONTROL_LIMIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return std::time::Duration::from_millis(ms);
    }
    SCONTROL_LIMIT
}

/// The `srun` command line that starts one `fleet node` task on every node of the allocation:
/// `srun --ntasks-per-node=1 --nodes=N --ntasks=N EXE fleet node --out OUT NODE_ARGS…`. srun does the
/// scheduling; it also waits for every task.
pub fn srun_argv(env: &SlurmEnv, exe: &Path, out: &Path, node_args: &[String]) -> Vec<String> {
    let mut argv = vec![
        "srun".to_string(),
        "--ntasks-per-node=1".into(),
        format!("--nodes={}", env.nodes),
        // Stated, so that an allocation of more tasks (SLURM_NTASKS) does not override it.
        format!("--ntasks={}", env.nodes),
        // One line per task's failure rather than srun killing the others at the first.
        "--kill-on-bad-exit=0".into(),
        exe.display().to_string(),
        "fleet".into(),
        "node".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    argv.extend(node_args.iter().cloned());
    argv
}

/// What one node's run gave.
pub struct NodeOutcome {
    pub record: NodeRecord,
    /// The job's report (`None` when the node was not checked).
    pub report: Option<Report>,
}

/// The exit code a check's report stands for: 3 when a check failed, else 0.
pub fn check_exit(report: &Report) -> i32 {
    match &report.health {
        Some(h) if h.failed() => 3,
        Some(_) => 0,
        None => 1,
    }
}

/// Runs `job` with `runner` and makes the node's record of it.
pub fn run_job(
    runner: &mut Runner,
    node: &str,
    reached: Reached,
    job: &Job,
    cancel: &AtomicBool,
) -> NodeOutcome {
    let started = timestamp(SystemTime::now());
    let hostname = match runner {
        Runner::Remote(c) => c.machine().hostname.clone(),
        Runner::Local(_) => None,
    };
    let result = runner.run(job, cancel, &mut |_| {});
    let mut o = finish(node, reached, hostname, started, result);
    if cancel.load(Ordering::Relaxed) && o.record.status != NodeStatus::Unreachable {
        // Stopped part-way: not done, so that the next run checks it again.
        o.record.status = NodeStatus::Failed;
        o.record.exit_code = 130;
        o.record.error = Some("interrupted before its check ended".into());
        o.report = None;
    }
    o
}

fn finish(
    node: &str,
    reached: Reached,
    hostname: Option<String>,
    started: String,
    result: Result<Report, JobError>,
) -> NodeOutcome {
    let ended = timestamp(SystemTime::now());
    let mut record = NodeRecord {
        node: node.to_string(),
        reached,
        hostname,
        status: NodeStatus::Done,
        started,
        ended,
        exit_code: 0,
        error: None,
    };
    match result {
        Ok(report) if report.health.is_some() => {
            record.exit_code = check_exit(&report);
            NodeOutcome {
                record,
                report: Some(report),
            }
        }
        Ok(_) => {
            record.status = NodeStatus::Failed;
            record.exit_code = 1;
            record.error = Some("the check produced no result".into());
            NodeOutcome {
                record,
                report: None,
            }
        }
        Err(e) => {
            // A connection lost mid-run is the node's, not the check's.
            let lost = e.message.contains("connection") || e.message.contains("said nothing");
            record.status = if lost {
                NodeStatus::Unreachable
            } else {
                NodeStatus::Failed
            };
            record.exit_code = e.code;
            record.error = Some(one_line(&e.message));
            NodeOutcome {
                record,
                report: None,
            }
        }
    }
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How `run_ssh` reaches the hosts.
pub struct SshPlan {
    pub hosts: Vec<String>,
    /// At most this many hosts at once.
    pub parallel: usize,
    /// The options for every host (`host` is replaced by each one).
    pub options: RemoteOptions,
    /// Copy this binary to a host that has none (`--remote-install`).
    pub install: bool,
}

/// Connects to `host` (installing this binary there first when allowed and needed).
fn connect(opts: &RemoteOptions, install: bool) -> Result<Client, ConnectError> {
    match Client::connect(opts) {
        Err(ConnectError::NotInstalled { .. }) if install => {
            crate::remote::client::install(opts)?;
            Client::connect(opts)
        }
        other => other,
    }
}

/// Runs `job` on every host of `plan`, `plan.parallel` at a time, and hands each node's outcome
/// to `done` as it finishes (from the worker threads, which may call it at the same time: each
/// node's files are its own). A host that cannot be reached or drops mid-run gives an
/// `Unreachable` record; the others go on.
pub fn run_ssh(
    plan: &SshPlan,
    job: &Job,
    cancel: &AtomicBool,
    done: &(dyn Fn(NodeOutcome) + Sync),
) {
    let next = Mutex::new(0usize);
    let workers = plan.parallel.clamp(1, plan.hosts.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    if cancel.load(Ordering::Relaxed) {
                        return;
                    }
                    let i = {
                        let Ok(mut n) = next.lock() else { return };
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(host) = plan.hosts.get(i) else {
                        return;
                    };
                    done(run_host(plan, host, job, cancel));
                }
            });
        }
    });
}

fn run_host(plan: &SshPlan, host: &str, job: &Job, cancel: &AtomicBool) -> NodeOutcome {
    let reached = Reached::Ssh { host: host.into() };
    let opts = RemoteOptions {
        host: host.to_string(),
        ..plan.options.clone()
    };
    let started = timestamp(SystemTime::now());
    match connect(&opts, plan.install) {
        Ok(client) => run_job(
            &mut Runner::Remote(Box::new(client)),
            host,
            reached,
            job,
            cancel,
        ),
        Err(e) => {
            let unreachable = !matches!(e, ConnectError::Options(_));
            let mut o = finish(host, reached, None, started, Err(e.into()));
            if unreachable {
                o.record.status = NodeStatus::Unreachable;
            }
            o
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_file_of_186000_names_is_read_in_linear_time() {
        let text: String = (0..186_000).map(|i| format!("node{i}\n")).collect();
        assert!(text.len() > 1_000_000);
        let start = std::time::Instant::now();
        let hosts = parse_hosts(&format!("{text}node7\n"), true).unwrap();
        assert_eq!(hosts.len(), 186_000);
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn hosts_from_a_list_and_a_file() {
        assert_eq!(parse_hosts("a,b, c", false).unwrap(), ["a", "b", "c"]);
        let file = "# racks\nn1\n n2  # spare\n\nroot@n3\nn1\n";
        assert_eq!(parse_hosts(file, true).unwrap(), ["n1", "n2", "root@n3"]);
        assert_eq!(
            parse_hosts("ok\n-oProxyCommand=x\n", true).unwrap_err(),
            "line 2: \"-oProxyCommand=x\" is not a host name ([user@]host: a user before the last @ and a host after it; letters, digits, . - _ : [ ] only)"
        );
        assert!(parse_hosts("../etc", false).is_err());
        assert!(parse_hosts("a/b", false).is_err());
        // A user with no host, a host with no user: not hosts ssh could reach. A user with an
        // `@` of its own is one (ssh splits at the last).
        assert_eq!(
            parse_hosts("alice@corp.example@gpu01", false).unwrap(),
            ["alice@corp.example@gpu01"]
        );
        for bad in ["user@", "@host", "a@b@"] {
            assert!(
                parse_hosts(bad, false)
                    .unwrap_err()
                    .contains("is not a host name"),
                "{bad}"
            );
        }
        assert!(
            parse_hosts("a,,b", false)
                .unwrap_err()
                .contains("empty entry")
        );
        assert!(
            parse_hosts("a,b,", false)
                .unwrap_err()
                .contains("empty entry")
        );
        assert_eq!(parse_hosts("# none\n", true).unwrap_err(), "no hosts");
    }

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn slurm_env_and_srun_command() {
        let e = SlurmEnv::read(env(&[("SLURM_JOB_ID", "417"), ("SLURM_NNODES", "4")])).unwrap();
        assert_eq!(e.nodes, 4);
        assert_eq!(e.node_name, None);
        let argv = srun_argv(
            &e,
            Path::new("/opt/bin/scalescope"),
            Path::new("fleet-out"),
            &["--catalog".into(), "dgx-h100".into()],
        );
        assert_eq!(
            argv.join(" "),
            "srun --ntasks-per-node=1 --nodes=4 --ntasks=4 --kill-on-bad-exit=0 /opt/bin/scalescope fleet node --out fleet-out --catalog dgx-h100"
        );
        let inside = SlurmEnv::read(env(&[
            ("SLURM_JOB_ID", "417"),
            ("SLURM_JOB_NUM_NODES", "2"),
            ("SLURMD_NODENAME", "gpu07"),
            ("SLURM_STEP_ID", "0"),
        ]))
        .unwrap();
        assert_eq!(inside.node_name.as_deref(), Some("gpu07"));
        assert_eq!(inside.step_id.as_deref(), Some("0"));
        assert!(
            SlurmEnv::read(env(&[]))
                .unwrap_err()
                .contains("not inside a Slurm allocation")
        );
        assert!(SlurmEnv::read(env(&[("SLURM_JOB_ID", "1"), ("SLURM_NNODES", "x")])).is_err());
    }

    #[test]
    fn a_record_reads_back() {
        let r = NodeRecord {
            node: "gpu07".into(),
            reached: Reached::Slurm {
                job_id: "417".into(),
                step_id: Some("0".into()),
            },
            hostname: None,
            status: NodeStatus::Done,
            started: "2026-11-26T20:00:00Z".into(),
            ended: "2026-11-26T20:00:05Z".into(),
            exit_code: 0,
            error: None,
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("\"via\":\"slurm\""), "{text}");
        assert!(text.starts_with("{\"node\":\"gpu07\""), "{text}");
        assert_eq!(serde_json::from_str::<NodeRecord>(&text).unwrap(), r);
    }
}
