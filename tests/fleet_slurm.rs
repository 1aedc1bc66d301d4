//! `scalescope fleet run --slurm` under a real Slurm: Debian's munge, slurmctld and slurmd
//! started on localhost by the test (root only: slurmd runs jobs as their user) with a generated
//! slurm.conf, munge key and state folders in a temporary folder, on free ports; then
//! `salloc -N1 scalescope fleet run --slurm --catalog dgx-h100` writes the fleet folder through
//! `srun … fleet node`; three slurmd (`slurmd -N n1` … as nodes of one host) run `fleet run
//! --between`'s job steps between nodes. No GPU. Skipped where Slurm is not installed or this is not root, unless
//! SCALESCOPE_SLURM=1 (scripts/test.sh sets it once it installed Slurm): then it fails.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_scalescope");

struct Slurm {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

impl Drop for Slurm {
    fn drop(&mut self) {
        // slurmd and slurmctld first, munged (which they talk to) last.
        for c in self.daemons.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Slurm {
    fn conf(&self) -> std::path::PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.conf())
            .env("CUDA_VISIBLE_DEVICES", "")
            .stdin(Stdio::null());
        c
    }
}

/// Why Slurm cannot run here, or `None` when it can.
fn missing() -> Option<String> {
    for p in ["munged", "slurmctld", "slurmd", "salloc", "srun", "sinfo"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return Some(format!(
                "no {p} (scripts/test.sh installs slurmctld slurmd slurm-client munge)"
            ));
        }
    }
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some("not root (slurmd must be)".into());
    }
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spawn(cmd: &mut Command, log: &Path) -> Child {
    let log = std::fs::File::create(log).unwrap();
    cmd.stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

/// Slurm with one slurmd per name in `nodes`, all on this host.
fn start(nodes: &[&str]) -> Option<Slurm> {
    if let Some(why) = missing() {
        assert!(
            std::env::var("SCALESCOPE_SLURM").as_deref() != Ok("1"),
            "SCALESCOPE_SLURM=1 but Slurm cannot run: {why}"
        );
        eprintln!("skipped: {why}");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["ctld", "d", "munge"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    let key: Vec<u8> = (0..1024u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 ^ std::process::id() as u8)
        .collect();
    let key_file = d.join("munge/munge.key");
    std::fs::write(&key_file, key).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o400)).unwrap();
    let socket = d.join("munge/munge.socket");
    let mut slurm = Slurm {
        dir,
        daemons: Vec::new(),
    };
    let d = slurm.dir.path().to_path_buf();
    slurm.daemons.push(spawn(
        Command::new("munged")
            .arg("-F")
            .arg("-f")
            .arg(format!("--key-file={}", key_file.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!(
                "--pid-file={}",
                d.join("munge/munged.pid").display()
            ))
            .arg(format!("--seed-file={}", d.join("munge/seed").display()))
            .arg(format!("--log-file={}", d.join("munged.log").display())),
        &d.join("munged.out"),
    ));
    let start = Instant::now();
    while !socket.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "munged did not start: {}",
            std::fs::read_to_string(d.join("munged.out")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let conf = format!(
        "ClusterName=scalescope\nSlurmctldHost=localhost\nSlurmUser=root\nSlurmdUser=root\n\
         AuthType=auth/munge\nAuthInfo=socket={socket}\nCredType=cred/munge\n\
         StateSaveLocation={d}/ctld\nSlurmdSpoolDir={d}/d-%n\n\
         SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd-%n.pid\n\
         SlurmctldPort={ctld}\nSlurmdPort={slurmd}\n\
         ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n\
         SelectType=select/cons_tres\nReturnToService=2\nMpiDefault=none\n\
         {node_lines}\
         PartitionName=test Nodes={names} Default=YES MaxTime=INFINITE State=UP\n",
        socket = socket.display(),
        d = d.display(),
        ctld = free_port(),
        slurmd = free_port(),
        node_lines = nodes
            .iter()
            .map(|n| {
                format!(
                    "NodeName={n} NodeHostname=localhost NodeAddr=127.0.0.1 Port={} CPUs={cpus} State=UNKNOWN\n",
                    free_port()
                )
            })
            .collect::<String>(),
        names = nodes.join(","),
    );
    std::fs::write(slurm.conf(), conf).unwrap();
    let ctld = spawn(
        slurm
            .command("slurmctld")
            .args(["-D", "-f"])
            .arg(slurm.conf()),
        &d.join("slurmctld.log"),
    );
    slurm.daemons.push(ctld);
    for n in nodes {
        let slurmd = spawn(
            slurm
                .command("slurmd")
                .args(["-D", "-N", n, "-f"])
                .arg(slurm.conf()),
            &d.join(format!("slurmd-{n}.log")),
        );
        slurm.daemons.push(slurmd);
    }
    // Up when the node is idle.
    let start = Instant::now();
    loop {
        let out = slurm
            .command("sinfo")
            .args(["-h", "-o", "%t"])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&out.stdout).trim() == "idle" {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "Slurm did not come up: sinfo {:?} {:?}\nslurmctld: {}\nslurmd: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(d.join("slurmctld.log")).unwrap_or_default(),
            std::fs::read_to_string(d.join(format!("slurmd-{}.log", nodes[0]))).unwrap_or_default(),
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    Some(slurm)
}

#[test]
fn fleet_run_under_salloc_writes_each_node_s_folder() {
    let Some(slurm) = start(&["localhost"]) else {
        return;
    };
    let out = slurm.dir.path().join("fleet");
    let run = slurm
        .command("timeout")
        .args([
            "120", "salloc", "-N1", BIN, "fleet", "run", "--slurm", "--out",
        ])
        .arg(&out)
        .args(["--catalog", "dgx-h100"])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("localhost: check passed"), "{stdout}");
    assert!(stderr.contains("through srun"), "{stderr}");
    let node = out.join("nodes/localhost");
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(node.join("node.json")).unwrap()).unwrap();
    assert_eq!(rec["node"], "localhost");
    assert_eq!(rec["via"], "slurm");
    assert!(!rec["job_id"].as_str().unwrap().is_empty(), "{rec}");
    assert_eq!(rec["step_id"], "0", "{rec}");
    assert_eq!(rec["status"], "done");
    assert_eq!(rec["exit_code"], 0);
    let report = scalescope::report::load(&node.join("report.json")).unwrap();
    assert!(report.health.is_some());

    // The same allocation again under sbatch --wait: the node is done, so skipped.
    let script = slurm.dir.path().join("job.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec {BIN} fleet run --slurm --out {} --catalog dgx-h100\n",
            out.display()
        ),
    )
    .unwrap();
    let log = slurm.dir.path().join("job.out");
    let batch = slurm
        .command("timeout")
        .args(["120", "sbatch", "--wait", "-N1", "-o"])
        .arg(&log)
        .arg(&script)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        batch.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&batch.stderr)
    );
    assert!(
        text.contains("localhost: done before (exit 0), skipped"),
        "{text}"
    );

    // A node whose task wrote nothing (here srun itself fails: a stand-in srun first on PATH)
    // is named from the allocation's node list (scontrol expands it) and recorded as failed.
    let fake = slurm.dir.path().join("bin");
    std::fs::create_dir_all(&fake).unwrap();
    let srun = fake.join("srun");
    std::fs::write(
        &srun,
        "#!/bin/sh\necho 'srun: error: stand-in' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&srun, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let lost = slurm
        .command(BIN)
        .args(["fleet", "run", "--slurm", "--out"])
        .arg(&out)
        .args(["--catalog", "dgx-h100"])
        .env("PATH", path)
        .env("SLURM_JOB_ID", "999")
        .env("SLURM_NNODES", "2")
        .env("SLURM_JOB_NODELIST", "localhost,ghost")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&lost.stdout),
        String::from_utf8_lossy(&lost.stderr),
    );
    assert_eq!(lost.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ghost: not checked (exit 1) — its srun task wrote no node.json"),
        "{stdout}"
    );
    assert!(stderr.contains("1 node(s) not checked: ghost"), "{stderr}");
    let ghost: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("nodes/ghost/node.json")).unwrap())
            .unwrap();
    assert_eq!(ghost["via"], "slurm");
    assert_eq!(ghost["job_id"], "999");
    assert_eq!(ghost["status"], "failed");
}

/// Three nodes: the checks, then `--between`'s job steps — all three nodes and each node with
/// the next — started by srun with NCCL_COMM_ID on the first node's address. Without GPUs each
/// step's ranks stop at CUDA; every run is recorded with that reason, and the fleet report says
/// no all-reduce between nodes ran rather than judging any node by it.
#[test]
fn between_nodes_runs_a_job_step_per_pair() {
    let Some(slurm) = start(&["n1", "n2", "n3"]) else {
        return;
    };
    let out = slurm.dir.path().join("fleet");
    // `salloc -N3 --ntasks-per-node=2 fleet run --slurm --between …` over OUT.
    let fleet_run = |extra: &[&str]| {
        slurm
            .command("timeout")
            .args(["300", "salloc", "-N3", "--ntasks-per-node=2", BIN])
            .args(["fleet", "run", "--slurm", "--catalog", "dgx-h100", "--out"])
            .arg(&out)
            .args([
                "--between",
                "--between-sizes",
                "1M",
                "--between-tasks-per-node",
                "2",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let run = fleet_run(&["--bench"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    for n in ["n1", "n2", "n3"] {
        assert!(stdout.contains(&format!("{n}: check passed")), "{stdout}");
    }
    assert!(
        stderr.contains(
            "4 all-reduce run(s) over 3 node(s), 2 rank(s) per node (--between-tasks-per-node)"
        ),
        "{stderr}"
    );
    // --bench: each node's report holds the suite (modeled copies and collectives).
    let report = scalescope::report::load(&out.join("nodes/n2/report.json")).unwrap();
    assert!(report.health.is_some() && report.bandwidth.is_some() && report.collectives.is_some());
    let dir = out.join("between");
    let expected = [
        ("all", vec!["n1", "n2", "n3"]),
        ("pair-001", vec!["n1", "n2"]),
        ("pair-002", vec!["n2", "n3"]),
        ("pair-003", vec!["n3", "n1"]),
    ];
    for (name, nodes) in &expected {
        let rec: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{name}.json"))).unwrap())
                .unwrap();
        assert_eq!(rec["nodes"], serde_json::json!(nodes), "{rec}");
        assert_eq!(rec["tasks_per_node"], 2, "{rec}");
        assert!(!rec["job_id"].as_str().unwrap().is_empty(), "{rec}");
        assert_eq!(rec["status"], "failed", "{rec}");
        // Every rank got to CUDA (so srun started them with the launcher's environment and
        // NCCL_COMM_ID): none complains of a missing rank or address.
        let reason = rec["reason"].as_str().unwrap();
        assert!(reason.starts_with("rank "), "{reason}");
        assert!(!reason.contains("NCCL_COMM_ID"), "{reason}");
        let log = std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap();
        assert!(log.contains(reason), "{log}");
        assert!(
            stdout.contains(&format!("between {name} ({}): failed — ", nodes.join(", "))),
            "{stdout}"
        );
        assert!(!dir.join(format!("{name}.run.json")).exists());
    }
    let fleet: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report/fleet.json")).unwrap()).unwrap();
    assert_eq!(fleet["verdict"], "pass", "{fleet}");
    assert_eq!(fleet["between"].as_array().unwrap().len(), 4, "{fleet}");
    let notes = fleet["notes"].to_string();
    assert!(
        notes.contains("No all-reduce between nodes ran (4 run(s))"),
        "{notes}"
    );
    let html = std::fs::read_to_string(out.join("report/fleet.html")).unwrap();
    assert!(html.contains("Between nodes"), "{html}");

    // Again: the runs recorded are skipped.
    let again = fleet_run(&[]);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(again.status.success(), "{stdout}");
    assert_eq!(
        stdout.matches("(done before, skipped)").count(),
        4,
        "{stdout}"
    );
}
