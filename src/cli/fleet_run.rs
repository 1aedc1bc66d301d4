//! `scalescope fleet run` (the check on every host of a list through ssh, or on every node of a
//! Slurm allocation through `srun`) and the hidden `fleet node` (one Slurm task: the check here,
//! into `OUT/nodes/<node>/`). Each node's folder holds `report.json` (the check, a report that
//! `compare` and `fleet report` read) and `node.json` (`fleet::run::NodeRecord`), written as the
//! node finishes; then the fleet report over OUT (`fleet report`, into OUT/report). Exit 0 when
//! every node was checked and passed, 3 when a node's check failed or the fleet report fails a
//! node, 1 when a node could not be checked (unreachable, dropped, no result), 2 for bad input.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use clap::Args;

use super::interrupt::{self, CANCEL};
use super::output::refuse_links_below;
use super::{CliError, RemoteArgs, SourceArgs, write_file};
use crate::fleet::between::{self, BetweenRecord};
use crate::fleet::run::{
    self as fleet, NodeOutcome, NodeRecord, NodeStatus, Reached, SlurmEnv, SshPlan,
};
use crate::health::run::CheckOptions;
use crate::job::Job;
use crate::model::GpuSelection;
use crate::model::validate::for_terminal;
use crate::remote::RemoteOptions;

/// What every node checks (the options `scalescope check` takes of the same names).
#[derive(Debug, Clone, Args)]
#[command(mut_arg("gpus", |a| a.help("GPUs to check on each node, e.g. 0,1 (default: all)")))]
pub struct NodeCheckArgs {
    /// Check this catalog machine (modeled) on every node instead of the node's own GPUs: a
    /// name (`scalescope --catalog`). For trying a fleet run without GPUs.
    #[arg(long, value_name = "NAME")]
    pub catalog: Option<String>,
    /// Shorter load tests (as `check --quick`).
    #[arg(long)]
    pub quick: bool,
    #[command(flatten)]
    pub gpus: super::flags::GpuArgs,
    /// Check again nodes whose node.json says done (default: skip them).
    #[arg(long)]
    pub rerun: bool,
    /// Run the suite on every node (as `--bench --suite topology,health,bandwidth,collectives`)
    /// instead of the check alone, so that the fleet report compares every copy and collective.
    #[arg(long)]
    pub bench: bool,
    /// After the check, a burn-in of this length on every node (as `check --soak`: 30m, 2h).
    #[arg(long, value_name = "DURATION")]
    pub soak: Option<String>,
    /// The burn-in's loads (as `check --soak-load`).
    #[arg(long, value_name = "LIST")]
    pub soak_load: Option<String>,
}

impl NodeCheckArgs {
    fn job(&self) -> Result<Job, CliError> {
        let source = SourceArgs {
            import: Vec::new(),
            catalog: self.catalog.clone(),
        };
        let target = source.target();
        if self.catalog.is_some() {
            // A catalog name unknown here is unknown on every node: one line, before any.
            target
                .load()
                .map_err(|e| CliError::input(anyhow::anyhow!("--catalog: {e}")))?;
        }
        let soak = match &self.soak {
            None if self.soak_load.is_some() => {
                return Err(CliError::input(anyhow::anyhow!(
                    "--soak-load goes with --soak DURATION"
                )));
            }
            None => None,
            Some(_) if self.catalog.is_some() => {
                return Err(CliError::input(anyhow::anyhow!(
                    "--soak loads the nodes' own GPUs: it cannot run with --catalog"
                )));
            }
            Some(d) => Some(crate::model::SoakOptions {
                duration_s: crate::model::soak::parse_duration(d)
                    .map_err(|e| CliError::input(anyhow::anyhow!("--soak: {e}")))?,
                loads: match &self.soak_load {
                    Some(l) => crate::model::soak::parse_loads(l)
                        .map_err(|e| CliError::input(anyhow::anyhow!("{e}")))?,
                    None => Vec::new(),
                },
                replay: None,
                replay_speed: None,
                nccl_lib: None,
            }),
        };
        let gpus = self.gpus.selection()?;
        if self.bench {
            use crate::job::Stage;
            let mut stages = vec![
                Stage::Topology,
                Stage::Health,
                Stage::Bandwidth,
                Stage::Collectives,
            ];
            if soak.is_some() {
                stages.push(Stage::Soak);
            }
            return Ok(Job::Suite {
                target,
                options: crate::job::SuiteOptions {
                    stages,
                    gpus,
                    full: false,
                    modeled: self.catalog.is_some(),
                    nccl_lib: None,
                    python: None,
                    pricing: None,
                    energy_window_s: None,
                    soak,
                },
            });
        }
        Ok(Job::Check {
            target,
            options: CheckOptions {
                gpus,
                quick: self.quick,
                soak,
                ..CheckOptions::default()
            },
        })
    }

    /// The same options, as `fleet node` takes them.
    fn argv(&self) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(c) = &self.catalog {
            a.extend(["--catalog".to_string(), c.clone()]);
        }
        if self.quick {
            a.push("--quick".into());
        }
        a.extend(["--gpus".to_string(), self.gpus.gpus.clone()]);
        if self.rerun {
            a.push("--rerun".into());
        }
        if self.bench {
            a.push("--bench".into());
        }
        if let Some(d) = &self.soak {
            a.extend(["--soak".to_string(), d.clone()]);
        }
        if let Some(l) = &self.soak_load {
            a.extend(["--soak-load".to_string(), l.clone()]);
        }
        a
    }
}

/// `scalescope fleet run` options.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The hosts to check through ssh, e.g. gpu01,gpu02 (`[user@]host` or ~/.ssh/config
    /// aliases).
    #[arg(long, value_name = "LIST", conflicts_with_all = ["hosts_file", "slurm"])]
    pub hosts: Option<String>,
    /// The hosts, one per line (`#` starts a comment).
    #[arg(long, value_name = "FILE", conflicts_with = "slurm")]
    pub hosts_file: Option<PathBuf>,
    /// Inside a Slurm allocation (salloc, sbatch): one check per node of it, started with
    /// `srun --ntasks-per-node=1`.
    #[arg(long)]
    pub slurm: bool,
    /// Hosts checked at once through ssh.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub parallel: u16,
    /// The fleet folder: OUT/nodes/<node>/report.json and node.json (created if missing; with
    /// --slurm it must be on a file system every node shares).
    #[arg(long, value_name = "DIR", default_value = "scalescope-fleet")]
    pub out: PathBuf,
    /// With --slurm, after the checks: NCCL all-reduce between the nodes checked — over all of
    /// them, each node with the next, then each half — one Slurm job step at a time (`srun …
    /// bench collectives`), into OUT/between/; the fleet report names the slow node or pair.
    #[arg(long)]
    pub between: bool,
    /// Sizes of the between-nodes all-reduce, as `bench collectives --sizes` takes them (the
    /// largest that runs is judged).
    #[arg(long, value_name = "SIZES", default_value = "1G")]
    pub between_sizes: String,
    /// Ranks (GPUs) per node between nodes (default: the --gpus list's length, else the
    /// smallest GPU count of the nodes' reports).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub between_tasks_per_node: Option<u16>,
    /// The TCP port NCCL's bootstrap listens on at a run's first node (the next run the next
    /// port, so that no run waits for the last one's to close).
    #[arg(long, value_name = "PORT", default_value_t = 29640, value_parser = clap::value_parser!(u16).range(1024..))]
    pub between_port: u16,
    #[command(flatten)]
    pub check: NodeCheckArgs,
}

/// `scalescope fleet node` options (one Slurm task; hidden).
#[derive(Debug, Args)]
pub struct NodeArgs {
    /// The fleet folder (shared by every node).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub check: NodeCheckArgs,
}

pub fn run(args: RunArgs, remote: &RemoteArgs) -> Result<(), CliError> {
    let job = args.check.job()?;
    if args.between && !args.slurm {
        return Err(bad(
            "--between runs NCCL between the nodes of a Slurm allocation: it goes with --slurm \
             (ssh hosts have no launcher to start the ranks together)"
                .into(),
        ));
    }
    if !args.between
        && (args.between_tasks_per_node.is_some()
            || args.between_sizes != "1G"
            || args.between_port != 29640)
    {
        return Err(bad(
            "--between-sizes, --between-tasks-per-node and --between-port go with --between".into(),
        ));
    }
    crate::model::quantities::parse_sizes(&args.between_sizes)
        .map_err(|e| bad(format!("--between-sizes: {e}")))?;
    // Ctrl-C: no node or run starts after it; those in flight stop and are recorded as not
    // done, so that the same command again picks them up.
    interrupt::install(|| {});
    let outcome = if args.slurm {
        run_slurm(&args)
    } else {
        run_ssh(&args, remote, &job)
    };
    if interrupt::signalled() {
        // Both ways in end with the fleet report of the nodes done (summarize).
        if let Err(e) = &outcome
            && e.code != super::EXIT_CHECK_FAILED
        {
            crate::stderr_line!("warning: {:#}", e.error);
        }
        return Err(CliError::interrupted(anyhow::anyhow!(
            "interrupted: the fleet report covers the nodes done so far; the same command again \
             checks the rest (nodes done are skipped)"
        )));
    }
    outcome
}

/// `fleet run --hosts/--hosts-file`: the check on every host through ssh, a few at a time.
fn run_ssh(args: &RunArgs, remote: &RemoteArgs, job: &Job) -> Result<(), CliError> {
    let hosts = match (&args.hosts, &args.hosts_file) {
        (Some(list), None) => {
            fleet::parse_hosts(list, false).map_err(|e| bad(format!("--hosts: {e}")))?
        }
        (None, Some(file)) => {
            let text = crate::input::read_text(file, 1 << 20).map_err(|e| {
                bad(format!(
                    "--hosts-file {}: cannot be read ({e})",
                    file.display()
                ))
            })?;
            fleet::parse_hosts(&text, true)
                .map_err(|e| bad(format!("--hosts-file {}: {e}", file.display())))?
        }
        _ => {
            return Err(bad(
                "fleet run: name the nodes with --hosts LIST, --hosts-file FILE or --slurm".into(),
            ));
        }
    };
    let nodes_dir = args.out.join(fleet::NODES_DIR);
    std::fs::create_dir_all(&nodes_dir).map_err(|e| super::output::write_error(&nodes_dir, e))?;
    let mut todo = Vec::new();
    for h in hosts {
        match fleet::read_record(&args.out, &h) {
            Some(r) if r.done() && !args.check.rerun => crate::stdout_line!(
                "{}: done before (exit {}), skipped; --rerun checks it again",
                for_terminal(&h),
                r.exit_code
            ),
            _ => {
                // Before anything is measured: a refusal later would lose the node's check.
                refuse_links_below(&args.out, &fleet::node_dir(&args.out, &h).join("node.json"))?;
                todo.push(h);
            }
        }
    }
    let plan = SshPlan {
        hosts: todo,
        parallel: usize::from(args.parallel),
        options: RemoteOptions {
            host: String::new(),
            ssh: remote.ssh.clone(),
            command: remote.remote_command.clone(),
            silence_limit: remote
                .test_silence_limit_ms
                .map(std::time::Duration::from_millis),
        },
        install: remote.remote_install,
    };
    if !plan.hosts.is_empty() {
        crate::stderr_line!(
            "checking {} host(s) through ssh, {} at a time …",
            plan.hosts.len(),
            plan.parallel.min(plan.hosts.len())
        );
    }
    let write_failed: Mutex<Option<CliError>> = Mutex::new(None);
    fleet::run_ssh(&plan, job, &CANCEL, &|o| {
        let line = outcome_line(&o.record);
        if let Err(e) = write_node(&args.out, &o)
            && let Ok(mut w) = write_failed.lock()
        {
            w.get_or_insert(e);
        }
        crate::stdout_line!("{line}");
    });
    if let Some(e) = write_failed.into_inner().ok().flatten() {
        return Err(e);
    }
    summarize(&args.out)
}

fn bad(msg: String) -> CliError {
    CliError::input(anyhow::anyhow!("{msg}"))
}

/// `fleet run --slurm`: `srun` starts `fleet node` on every node, which writes its folder.
fn run_slurm(args: &RunArgs) -> Result<(), CliError> {
    let env = SlurmEnv::read(|k| std::env::var(k).ok()).map_err(bad)?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::env(anyhow::anyhow!("cannot find this program's path: {e}")))?;
    let nodes_dir = args.out.join(fleet::NODES_DIR);
    std::fs::create_dir_all(&nodes_dir).map_err(|e| super::output::write_error(&nodes_dir, e))?;
    // Every node resolves OUT itself: an absolute path names the same shared folder on each.
    let out = std::fs::canonicalize(&args.out).unwrap_or_else(|_| args.out.clone());
    let argv = fleet::srun_argv(&env, &exe, &out, &args.check.argv());
    crate::stderr_line!(
        "Slurm job {}: {} node(s) through srun …",
        for_terminal(&env.job_id),
        env.nodes
    );
    let started = std::time::SystemTime::now();
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .status()
        .map_err(|e| {
            CliError::env(anyhow::anyhow!(
                "--slurm: cannot run srun ({e}): is Slurm's client (srun) on PATH?"
            ))
        })?;
    // A node whose task wrote nothing (not started, killed) gets a record saying so, so that
    // it is named, not only counted.
    for name in env.node_names().unwrap_or_default() {
        if fleet::read_record(&args.out, &name).is_none() {
            let record = env.silent_node(
                &name,
                started,
                &format!("its srun task wrote no node.json (srun: {status})"),
            );
            write_node(
                &args.out,
                &NodeOutcome {
                    record,
                    report: None,
                },
            )?;
        }
    }
    let records = records(&args.out);
    for r in &records {
        crate::stdout_line!("{}", outcome_line(r));
    }
    if args.between && !CANCEL.load(std::sync::atomic::Ordering::Relaxed) {
        run_between(args, &env, &exe, &out, &records)?;
    }
    if records.len() < env.nodes as usize {
        return Err(CliError::env(anyhow::anyhow!(
            "srun ended ({status}) with {} of {} node(s) written to {}: the others did not run (see srun's lines above)",
            records.len(),
            env.nodes,
            nodes_dir.display()
        )));
    }
    summarize(&args.out)
}

/// `fleet run --slurm --between`: the all-reduce runs between the nodes checked (each a job
/// step, one after the other), each into OUT/between/<run>.json.
fn run_between(
    args: &RunArgs,
    env: &SlurmEnv,
    exe: &Path,
    out: &Path,
    records: &[NodeRecord],
) -> Result<(), CliError> {
    let nodes: Vec<String> = records
        .iter()
        .filter(|r| r.done())
        .map(|r| r.node.clone())
        .collect();
    let planned = between::plan(&nodes);
    if planned.is_empty() {
        crate::stderr_line!(
            "--between: {} node(s) checked; all-reduce between nodes needs two or more",
            nodes.len()
        );
        return Ok(());
    }
    let gpus = args.check.gpus.selection()?;
    let (tasks, why) = match args.between_tasks_per_node {
        Some(n) => (usize::from(n), "--between-tasks-per-node"),
        None if !gpus.is_empty() => (gpus.len(), "--gpus"),
        None => match measured_gpu_count(out, &nodes) {
            Some(n) => (n, "the nodes' reports"),
            None => (1, "no node report counts its own GPUs"),
        },
    };
    let dir = out.join(between::BETWEEN_DIR);
    refuse_links_below(out, &dir)?;
    std::fs::create_dir_all(&dir).map_err(|e| super::output::write_error(&dir, e))?;
    crate::stderr_line!(
        "between nodes: {} all-reduce run(s) over {} node(s), {tasks} rank(s) per node ({why}), through srun …",
        planned.len(),
        nodes.len()
    );
    // The runs an earlier `fleet run` recorded (read once): skipped unless --rerun.
    let before = if args.check.rerun {
        Vec::new()
    } else {
        between::read_records(&dir).0
    };
    let steps = BetweenSteps {
        args,
        env,
        exe,
        tasks,
        gpus: &gpus,
        runs: planned.len(),
    };
    for (i, p) in planned.iter().enumerate() {
        if CANCEL.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let file = dir.join(format!("{}.json", p.name));
        let json = dir.join(format!("{}.run.json", p.name));
        let log_path = dir.join(format!("{}.log", p.name));
        for f in [&file, &json, &log_path] {
            refuse_links_below(out, f)?;
        }
        if let Some(done) = before
            .iter()
            .find(|r| r.name == p.name && r.nodes == p.nodes && r.tasks_per_node == tasks)
        {
            crate::stdout_line!("{} (done before, skipped)", between_line(done));
            continue;
        }
        let _ = std::fs::remove_file(&json);
        let port = steps.port(i)?;
        let record = steps.run(p, port, &json, &log_path)?;
        let mut bytes = crate::export::json::to_json(&record)?;
        bytes.push(b'\n');
        write_file(&file, &bytes)?;
        let _ = std::fs::remove_file(&json);
        crate::stdout_line!("{}", between_line(&record));
    }
    Ok(())
}

/// What the between-nodes runs of one `fleet run --between` share: the options, the
/// allocation, this executable, ranks per node, the GPUs each node uses and how many runs.
struct BetweenSteps<'a> {
    args: &'a RunArgs,
    env: &'a SlurmEnv,
    exe: &'a Path,
    tasks: usize,
    gpus: &'a GpuSelection,
    runs: usize,
}

impl BetweenSteps<'_> {
    /// The port run `i` meets on: `--between-port` + i.
    fn port(&self, i: usize) -> Result<u16, CliError> {
        let port = usize::from(self.args.between_port) + i;
        u16::try_from(port).map_err(|_| {
            bad(format!(
                "--between-port {}: {} runs need ports up to {port}",
                self.args.between_port, self.runs
            ))
        })
    }

    /// Runs `p` as a job step through srun (its output into `log_path`, its rows into `json`)
    /// and waits: its record, with the rows or why there are none (from the log). `Err` only
    /// when the log cannot be written.
    fn run(
        &self,
        p: &between::Planned,
        port: u16,
        json: &Path,
        log_path: &Path,
    ) -> Result<BetweenRecord, CliError> {
        let addr = self
            .env
            .node_addr(&p.nodes[0])
            .unwrap_or_else(|| p.nodes[0].clone());
        let argv = between::srun_argv(p, self.tasks, self.exe, &self.args.between_sizes, json);
        let log =
            std::fs::File::create(log_path).map_err(|e| super::output::write_error(log_path, e))?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env("NCCL_COMM_ID", format!("{addr}:{port}"))
            .stdin(std::process::Stdio::null())
            .stderr(
                log.try_clone()
                    .map_err(|e| super::output::write_error(log_path, e))?,
            )
            .stdout(log);
        if !self.gpus.is_empty() {
            let list: Vec<String> = self.gpus.iter().map(|g| g.to_string()).collect();
            cmd.env("CUDA_VISIBLE_DEVICES", list.join(","));
        }
        let started = std::time::SystemTime::now();
        let status = cmd.status();
        let ended = std::time::SystemTime::now();
        let results = match status {
            Err(e) => Err(format!("cannot run srun: {e}")),
            Ok(_) => match between::read_run_json(json) {
                Ok(rows) if !rows.is_empty() => Ok(rows),
                _ => Err(between::why_from_log(
                    &std::fs::read_to_string(log_path).unwrap_or_default(),
                )),
            },
        };
        Ok(BetweenRecord::new(
            p,
            self.tasks,
            Some(self.env.job_id.clone()),
            (fleet::timestamp(started), fleet::timestamp(ended)),
            results,
        ))
    }
}

/// The smallest GPU count of the nodes' reports read from their own GPUs (catalog and
/// imported reports do not count).
fn measured_gpu_count(out: &Path, nodes: &[String]) -> Option<usize> {
    nodes
        .iter()
        .filter_map(|n| crate::report::load(&fleet::node_dir(out, n).join("report.json")).ok())
        .filter(|r| matches!(r.topology.source, crate::model::TopologySource::Live { .. }))
        .map(|r| r.topology.gpus.len())
        .filter(|&n| n > 0)
        .min()
}

fn between_line(r: &BetweenRecord) -> String {
    let what = format!("between {} ({})", r.name, for_terminal(&r.nodes.join(", ")));
    match (r.status, r.busbw_gbps, r.bytes) {
        (crate::model::Status::Ok, Some(bw), Some(b)) => format!(
            "{what}: all-reduce {} busbw {} GB/s{}",
            crate::model::quantities::format_bytes(b),
            crate::fleet::finding::figure_text(bw),
            r.transport
                .as_deref()
                .map(|t| format!(" via {}", for_terminal(t)))
                .unwrap_or_default()
        ),
        (s, _, _) => format!(
            "{what}: {s} — {}",
            for_terminal(r.reason.as_deref().unwrap_or("no reason recorded"))
        ),
    }
}

/// `fleet node`: the check on this machine, into OUT/nodes/<this node>/.
pub fn node(args: NodeArgs, remote: &RemoteArgs) -> Result<(), CliError> {
    let job = args.check.job()?;
    let slurm = SlurmEnv::read(|k| std::env::var(k).ok()).ok();
    let name = slurm
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "localhost".into());
    fleet::check_node_name(&name).map_err(|e| CliError::env(anyhow::anyhow!("node name: {e}")))?;
    if let Some(r) = fleet::read_record(&args.out, &name)
        && r.done()
        && !args.check.rerun
    {
        crate::stdout_line!(
            "{}: done before (exit {}), skipped; --rerun checks it again",
            for_terminal(&name),
            r.exit_code
        );
        return Ok(());
    }
    let reached = match &slurm {
        Some(s) => Reached::Slurm {
            job_id: s.job_id.clone(),
            step_id: s.step_id.clone(),
        },
        None => Reached::Local,
    };
    refuse_links_below(
        &args.out,
        &fleet::node_dir(&args.out, &name).join("node.json"),
    )?;
    let mut runner = crate::remote::Runner::Local(remote.hooks());
    let o = fleet::run_job(&mut runner, &name, reached, &job, &CANCEL);
    write_node(&args.out, &o)?;
    match o.record.exit_code {
        0 => Ok(()),
        3 => Err(CliError::check_failed(anyhow::anyhow!(
            "{}",
            outcome_line(&o.record)
        ))),
        code => Err(CliError {
            code,
            error: anyhow::anyhow!("{}", outcome_line(&o.record)),
        }),
    }
}

/// Writes the node's report.json (when it has one), then its node.json: a node.json that says
/// done always has its report beside it.
fn write_node(out: &Path, o: &NodeOutcome) -> Result<(), CliError> {
    let dir = fleet::node_dir(out, &o.record.node);
    let (report, node) = (dir.join("report.json"), dir.join("node.json"));
    for p in [&report, &node] {
        refuse_links_below(out, p)?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| super::output::write_error(&dir, e))?;
    if let Some(r) = &o.report {
        write_file(&report, &crate::export::json::report(r)?)?;
    }
    let mut record = crate::export::json::to_json(&o.record)?;
    record.push(b'\n');
    write_file(&node, &record)
}

fn outcome_line(r: &NodeRecord) -> String {
    let node = for_terminal(&r.node);
    match (r.status, r.exit_code) {
        (NodeStatus::Done, 0) => format!("{node}: check passed"),
        (NodeStatus::Done, _) => format!("{node}: check FAILED (exit {})", r.exit_code),
        (NodeStatus::Unreachable, _) => format!(
            "{node}: unreachable — {}",
            for_terminal(r.error.as_deref().unwrap_or("no answer"))
        ),
        (NodeStatus::Failed, _) => format!(
            "{node}: not checked (exit {}) — {}",
            r.exit_code,
            for_terminal(r.error.as_deref().unwrap_or("no result"))
        ),
    }
}

/// Every node.json under OUT/nodes, by node name.
fn records(out: &Path) -> Vec<NodeRecord> {
    let mut v: Vec<NodeRecord> = std::fs::read_dir(out.join(fleet::NODES_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| fleet::read_record(out, &e.file_name().to_string_lossy()))
        .collect();
    v.sort_by(|a, b| a.node.cmp(&b.node));
    v
}

/// The fleet's outcome from the node records in OUT: a line of counts, then the fleet report
/// (`fleet report OUT --out OUT/report`, its lines and files); exit 1 when a node was not
/// checked, else the fleet report's exit (3 when a node fails).
fn summarize(out: &Path) -> Result<(), CliError> {
    let records = records(out);
    let not_checked: Vec<&str> = records
        .iter()
        .filter(|r| !r.done())
        .map(|r| r.node.as_str())
        .collect();
    let failed = records
        .iter()
        .filter(|r| r.done() && r.exit_code != 0)
        .count();
    let report_dir = out.join("report");
    refuse_links_below(out, &report_dir)?;
    crate::stderr_line!(
        "{} node(s) in {}: {} passed, {failed} failed, {} not checked; the fleet report in {} (again: scalescope fleet report {} --out {})",
        records.len(),
        out.display(),
        records.len() - failed - not_checked.len(),
        not_checked.len(),
        report_dir.display(),
        out.display(),
        report_dir.display()
    );
    let report = super::fleet_report::run(super::fleet_report::ReportArgs {
        inputs: vec![out.to_path_buf()],
        out: report_dir,
        thresholds: None,
    });
    if !not_checked.is_empty() {
        if let Err(e) = &report
            && e.code != super::EXIT_CHECK_FAILED
        {
            crate::stderr_line!("warning: the fleet report: {:#}", e.error);
        }
        // The first names only: the error is one line, and node.json names every node.
        const NAMED: usize = 10;
        let more = not_checked.len().saturating_sub(NAMED);
        return Err(CliError::env(anyhow::anyhow!(
            "{} node(s) not checked: {}{} (run again to retry them; node.json says why)",
            not_checked.len(),
            for_terminal(&not_checked[..not_checked.len().min(NAMED)].join(", ")),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )));
    }
    report?;
    if failed > 0 {
        return Err(CliError::check_failed(anyhow::anyhow!(
            "{failed} node(s) failed their check"
        )));
    }
    Ok(())
}
