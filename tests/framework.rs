//! The framework launcher (real PyTorch runs) against fake `python3` programs: one that answers
//! like PyTorch with canned JSON lines, and ones that crash, hang, print garbage or run out of
//! memory on 2 GPUs — each gives a clear row and note, and the rest of the run is kept.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

use scalescope::scaling::framework::{self, FrameworkOptions, FrameworkRun, PythonEnv};
use scalescope::scaling::workload;
use scalescope::scaling::{Machine, Mode, RowSource, model};

/// The answer to `python3 -c PROBE`.
const PROBE: &str = r#"{"python":"3.12.3","torch":"2.11.0+fake","cuda":"13.0","gpus":2,"transformers":"5.17.0","torchvision":"0.26.0"}"#;

fn result(mode: &str, n: usize, per: f64, median: f64, samples: &str) -> String {
    format!(
        r#"{{"event":"result","workload":"gpt2-xl","mode":"{mode}","world_size":{n},"micro_batch":8,"accumulate":{acc},"per_gpu_batch":{per},"global_batch":{global},"steps":5,"step_ms":{{"median":{median},"min":{min},"max":{max},"mean":{median},"n":5}},"rank_median_ms":[{median}],"step_samples_ms":[{samples}],"fwd_ms":100.0,"bwd_ms":200.0,"opt_ms":12.5,"samples_per_s":1.0,"peak_mem_gib":89.7,"reserved_gib":92.3,"params":1557611200,"model":"fake GPT2LMHeadModel","profile":{{"ranks":[{{"matrix":157.5,"nccl":0.0,"other":214.1,"busy_ms":371.6,"nccl_overlap_ms":0.0,"wall_ms":382.0}}]}}}}"#,
        acc = per / 8.0,
        global = per * n as f64,
        min = median - 1.0,
        max = median + 2.0,
    )
}

/// Tests run in parallel threads: a file being written while another thread forks can stay open
/// in that child until it execs, and running the file then fails with "text file busy". Writers
/// of executables take this lock exclusively; code that starts processes takes it shared.
static SPAWN: RwLock<()> = RwLock::new(());

fn spawning() -> RwLockReadGuard<'static, ()> {
    SPAWN.read().unwrap_or_else(|e| e.into_inner())
}

fn write_exe(path: &Path, text: &str) {
    let _w = SPAWN.write().unwrap_or_else(|e| e.into_inner());
    std::fs::write(path, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Shell lines that print `lines`, one `echo` each.
fn echo_all(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("echo '{l}'"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes an executable fake python3 whose 2-GPU launch runs `on_two` (a shell fragment).
fn fake_python(dir: &Path, on_two: &str) -> PathBuf {
    let lines_1 = [
        r#"{"event":"hello","workload":"gpt2-xl","world_size":1,"gpu":"NVIDIA H200","torch":"2.11.0+fake"}"#.to_string(),
        r#"{"event":"progress","phase":"warmup","mode":"weak"}"#.to_string(),
        "some framework chatter that is not JSON".to_string(),
        // The weak step is host-bound: its host floor (the step at a sixteenth of the batch)
        // takes 360 of its 377 ms, timed while the host probe read 1000 µs against 950 µs during
        // the window. Its steps spread, so the script grew the window to 21.4 s.
        result("weak", 1, 8.0, 377.0, "376.0,377.0,378.0,377.5,376.5").replace(
            r#""profile""#,
            r#""host_ms":360.0,"host_micro_batch":1,"host_seq_len":512,"host_probe_us":950.0,"host_probes":14,"host_floor_probe_us":1000.0,"window_s":21.4,"extended":true,"window_steps":4,"window_t":[1764147000.5,1764147002.5],"window_wall_s":2.0,"energy_mj":[[null,null]],"power_mw":[[300000,500000]],"idle_mw":[null],"power_limit_mw":[700000],"profile""#,
        ),
        result("strong", 1, 64.0, 2971.0, "2970.0,2971.0,2972.0,2971.5,2970.5"),
        r#"{"event":"done"}"#.to_string(),
    ];
    let lines_2 = [
        // The hosts ran 1.5× slower while the 2-GPU weak steps were timed (slowest rank).
        result("weak", 2, 8.0, 395.0, "395.0").replace(
            r#""profile""#,
            r#""host_probe_us":1425.0,"host_probe_rank_us":[1425.0,1300.0],"host_probes":6,"profile""#,
        ),
        // Its steps spread to the right (a slow spell): the row's figure is their mean.
        result("strong", 2, 32.0, 1508.0, "1508.0")
            .replace(r#""mean":1508,"#, r#""mean":1509.5,"#),
        r#"{"event":"done"}"#.to_string(),
    ];
    let echo = echo_all;
    let script = format!(
        r#"#!/bin/sh
if [ "$1" = "-c" ]; then echo '{PROBE}'; exit 0; fi
nproc=1
for a in "$@"; do
  case "$a" in --nproc_per_node=*) nproc="${{a#--nproc_per_node=}}";; esac
done
probe='{{"event":"probe","probe":"overlap","world_size":2,"matrix_share":0.42,"bucket_bytes":26214400,"allreduces":128,"compute_ms":201.0,"comm_ms":14.8,"both_ms":206.0,"hidden":0.66,"gemm_tflops":789.2,"copy_gbps":4128.9,"host_probe_us":1000.0,"gpu":"NVIDIA H200"}}'
case "$*" in
  *'--spec {{"allreduces"'*) echo "$nproc" >> "{alone}"; echo "$probe"; exit 0;;
  *'"overlap_probe"'*) echo "$probe" >> "{probed}";;
esac
if [ "$nproc" = 2 ]; then
{on_two}
fi
{}
"#,
        echo(&lines_1),
        probed = dir.join("probed").display(),
        alone = dir.join("probe-alone").display()
    )
    // A launch asked to end with the probe prints its line after the workloads'.
    .replace(
        "{TWO_OK}",
        &format!(
            "{}\n[ -f '{}' ] && echo \"$probe\"",
            echo(&lines_2),
            dir.join("probed").display()
        ),
    );
    let path = dir.join("python3");
    write_exe(&path, &script);
    path
}

/// BERT-large and GPT-2 XL from the catalog: the two workloads of a shared launch.
fn bert_and_gpt() -> Vec<scalescope::scaling::Workload> {
    ["bert-large", "gpt2-xl"]
        .map(|w| workload::resolve(w).unwrap())
        .to_vec()
}

/// Writes an executable fake python3 into `dir` that logs every call's arguments (for
/// [`launches`]) and answers a launch by the first of `arms` (shell `case` arms) that matches;
/// the overlap probe prints nothing, anything else fails.
fn counting_python(dir: &Path, arms: &str) -> PathBuf {
    let script = format!(
        r#"#!/bin/sh
if [ "$1" = "-c" ]; then echo '{PROBE}'; exit 0; fi
echo "$*" >> "{log}"
case "$*" in
  *'--spec {{"allreduces"'*) exit 0;;
{arms}
esac
exit 1
"#,
        log = dir.join("calls").display()
    );
    let path = dir.join("python3");
    write_exe(&path, &script);
    path
}

/// What [`counting_python`] logged: every call, and the launches among them (not the probe).
fn launches(dir: &Path) -> (String, Vec<String>) {
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap();
    let launches = calls
        .lines()
        .filter(|l| !l.contains(r#"--spec {"allreduces""#))
        .map(str::to_string)
        .collect();
    (calls, launches)
}

fn run_with(on_two: &str, timeout: Duration) -> (PythonEnv, FrameworkRun) {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_python(dir.path(), on_two);
    let _spawning = spawning();
    let env = framework::find_python(Some(&py)).unwrap();
    let ws = vec![workload::resolve("gpt2-xl").unwrap()];
    let opts = FrameworkOptions {
        gpus: vec![0, 1],
        timeout,
        ..Default::default()
    };
    let mut labels = Vec::new();
    let run = framework::run(&env, &ws, &opts, &AtomicBool::new(false), &mut |l, _| {
        labels.push(l.to_string())
    })
    .unwrap();
    assert!(
        labels.iter().any(|l| l.contains("gpt2-xl on 2 GPU(s)")),
        "{labels:?}"
    );
    (env, run)
}

fn row(run: &FrameworkRun, n: usize, mode: Mode) -> &scalescope::scaling::ScalingPoint {
    run.rows
        .iter()
        .find(|r| r.n_gpus == n && r.mode == mode)
        .unwrap_or_else(|| panic!("no {mode} row at {n}: {:?}", run.rows))
}

#[test]
fn canned_lines_become_measured_rows_that_calibrate_the_model() {
    let (env, run) = run_with("{TWO_OK}\nexit 0", Duration::from_secs(60));
    assert_eq!(env.torch, "2.11.0+fake");
    assert_eq!(env.gpus, 2);
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    assert_eq!(run.rows.len(), 4);
    assert!(run.rows.iter().all(|r| r.source == RowSource::Framework));
    let w1 = row(&run, 1, Mode::Weak);
    assert_eq!(w1.step_time_ms, Some(377.0));
    assert_eq!(w1.memory_gib_per_gpu, Some(89.7));
    // A grown window says so; a line without the fields (an older script) says nothing.
    assert!(
        w1.basis.contains("5 steps over 21 s (window grown"),
        "{}",
        w1.basis
    );
    assert!(!row(&run, 1, Mode::Strong).basis.contains("window grown"));
    // The weak row says how much of its step the host needs, at the host speed of its window.
    assert!(
        w1.basis.contains(
            "host floor 342.0 ms (91 % of the step: host-bound; timed at 1 × 512 tokens), host probe 950 µs during the window (14 readings)"
        ),
        "{}",
        w1.basis
    );
    assert!(!row(&run, 1, Mode::Strong).basis.contains("host floor"));
    // The 2-GPU row says how fast the hosts ran against the 1-GPU window (the model does not
    // read it); a row without the reading says nothing.
    let w2 = row(&run, 2, Mode::Weak);
    assert!(
        w2.basis.contains(
            "host probe 1425 µs during the window (the slowest of 2 ranks; 1.50× the 1-GPU window's 950 µs)"
        ),
        "{}",
        w2.basis
    );
    let s2 = row(&run, 2, Mode::Strong);
    assert!(!s2.basis.contains("host probe"), "{}", s2.basis);
    assert_eq!((s2.per_gpu_batch, s2.global_batch), (32.0, 64.0));
    // The mean over the steps is the row's step (what a run of them takes per step), the
    // median beside it; the speedup is against the 1-GPU row's: 2971 ÷ 1509.5.
    assert_eq!(s2.step_time_ms, Some(1509.5));
    // report.json says the step is the mean (an earlier report's rows, without it, are medians).
    assert_eq!(
        s2.step_statistic(),
        Some(scalescope::scaling::StepStatistic::Mean)
    );
    // scaling.csv says so too, on framework rows only.
    let csv = String::from_utf8(scalescope::export::csv::scaling(&run.rows).unwrap()).unwrap();
    let mut table = ::csv::Reader::from_reader(csv.as_bytes());
    let at = table
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "step_statistic")
        .unwrap();
    let cells: Vec<String> = table
        .records()
        .map(|r| r.unwrap()[at].to_string())
        .collect();
    assert!(
        !cells.is_empty() && cells.iter().all(|c| c == "mean"),
        "{cells:?}"
    );
    assert!(
        s2.basis
            .contains("mean 1509.50 ms (median 1508.00, min 1507.00, max 1510.00)"),
        "{}",
        s2.basis
    );
    assert!((s2.speedup.unwrap() - 2971.0 / 1509.5).abs() < 1e-9);
    // The 1-GPU steps calibrate; the profile gives the matrix share; the probe the overlap.
    assert_eq!(run.steps.len(), 2);
    let weak = run.steps.iter().find(|s| s.mode == Mode::Weak).unwrap();
    assert_eq!((weak.step_ms, weak.optimizer_ms), (377.0, 12.5));
    assert!((weak.matrix_share.unwrap() - 157.5 / (157.5 + 214.1)).abs() < 1e-9);
    assert_eq!(weak.samples_ms.len(), 5);
    assert_eq!(run.overlap.len(), 1);
    assert_eq!(run.overlap[0].hidden, 0.66);
    assert_eq!(run.probe.as_ref().unwrap().gemm_tflops, 789.2);
    assert_eq!(run.probe.as_ref().unwrap().host_probe_us, Some(1000.0));
    // The floor at the window's host speed: 360 × 950 ÷ 1000.
    assert_eq!(
        (weak.host_ms, weak.host_probe_us),
        (Some(342.0), Some(950.0))
    );
    let strong = run.steps.iter().find(|s| s.mode == Mode::Strong).unwrap();
    assert_eq!(strong.host_ms, None);
    // A model fed with them starts from the measured 1-GPU step.
    let topo = scalescope::topology::catalog::load("hgx-h200").unwrap();
    let mut m = Machine::modeled(&topo);
    m.framework_steps = run.steps.clone();
    m.overlap = run.overlap.clone();
    let w = workload::resolve("gpt2-xl").unwrap();
    let rows = model(&w, &m, &Mode::ALL, 8);
    let one = rows
        .iter()
        .find(|r| r.n_gpus == 1 && r.mode == Mode::Strong)
        .unwrap();
    assert!((one.step_time_ms.unwrap() - 2971.0).abs() < 1e-9);
    assert!(one.basis.contains("framework 1-GPU step measured here"));
    // The host-bound weak step is bound by the host; the strong one (no host floor) by compute.
    let bound = |mode| {
        rows.iter()
            .find(|r| r.n_gpus == 1 && r.mode == mode)
            .and_then(|r| r.bound)
    };
    assert_eq!(
        bound(Mode::Weak),
        Some(scalescope::scaling::table::Bound::Host)
    );
    assert_eq!(
        bound(Mode::Strong),
        Some(scalescope::scaling::table::Bound::Compute)
    );
}

#[test]
fn a_crash_is_a_clear_row_and_the_rest_is_kept() {
    let (_, run) = run_with(
        "echo 'RuntimeError: NCCL error: unhandled system error' >&2\nexit 1",
        Duration::from_secs(60),
    );
    assert_eq!(row(&run, 1, Mode::Weak).step_time_ms, Some(377.0));
    let r = row(&run, 2, Mode::Weak);
    assert!(r.step_time_ms.is_none());
    assert!(
        r.basis.contains("failed: exited with code 1")
            && r.basis.contains("RuntimeError: NCCL error"),
        "{}",
        r.basis
    );
    assert!(
        run.notes.iter().any(|n| n.contains("on 2 GPU(s)")),
        "{:?}",
        run.notes
    );
}

#[test]
fn a_hang_is_killed_at_the_timeout() {
    let start = Instant::now();
    let (_, run) = run_with("sleep 300\nexit 0", Duration::from_secs(3));
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(row(&run, 1, Mode::Strong).step_time_ms, Some(2971.0));
    let r = row(&run, 2, Mode::Strong);
    assert!(r.step_time_ms.is_none());
    assert!(r.basis.contains("timed out after 3 s"), "{}", r.basis);
}

#[test]
fn garbage_is_reported_with_its_first_line() {
    let (_, run) = run_with(
        "printf '{\\033[31mbad\\n'\necho '{not json at all'\necho '{\"event\":\"result\",\"mode\":\"weak\"}'\nexit 0",
        Duration::from_secs(60),
    );
    assert_eq!(row(&run, 1, Mode::Weak).step_time_ms, Some(377.0));
    let r = row(&run, 2, Mode::Weak);
    assert!(r.step_time_ms.is_none());
    assert!(
        r.basis
            .contains("printed no result; 3 line(s) not understood"),
        "{}",
        r.basis
    );
    // The terminal escape of the first line is shown escaped, never raw.
    let note = run.notes.join("\n");
    assert!(
        note.contains("\\u{1b}[31m") && !note.contains('\u{1b}'),
        "{note}"
    );
}

#[test]
fn out_of_memory_runs_again_at_a_smaller_micro_batch() {
    // GPT-2 XL at micro-batch 8 does not fit 2 GPUs here; at 4 (accumulating 2) it does.
    let (_, run) = run_with(
        r#"case "$*" in *'"micro_batch":8.0'*) echo '{"event":"oom","workload":"gpt2-xl","mode":"weak","phase":"measure","world_size":2,"message":"CUDA out of memory.","peak_mem_gib":79.1,"total_mem_gib":79.2}'; exit 3;; esac
{TWO_OK}
exit 0"#,
        Duration::from_secs(60),
    );
    assert_eq!(row(&run, 2, Mode::Weak).step_time_ms, Some(395.0));
    assert!(
        run.notes.iter().any(|n| n
            == "gpt2-xl on 2 GPU(s): out of GPU memory at micro-batch 8; run again at 4"),
        "{:?}",
        run.notes
    );
}

#[test]
fn a_micro_batch_that_ran_out_of_memory_on_one_gpu_is_not_tried_again_on_two() {
    // GPT-2 XL's 8 runs out of memory on an 80 GB GPU at any count (DDP holds more on two, never
    // less): after the 1-GPU launch found 4, the 2-GPU launch starts at 4 — three launches,
    // not four.
    let dir = tempfile::tempdir().unwrap();
    let at_four = |mode: &str, n: usize, per: f64, ms: f64| {
        result(mode, n, per, ms, &format!("{ms}"))
            .replace(r#""micro_batch":8"#, r#""micro_batch":4"#)
            .replace(
                &format!(r#""accumulate":{}"#, per / 8.0),
                &format!(r#""accumulate":{}"#, per / 4.0),
            )
    };
    let one = echo_all(&[at_four("weak", 1, 8.0, 470.0), r#"{"event":"done"}"#.into()]);
    let two = echo_all(&[at_four("weak", 2, 8.0, 490.0), r#"{"event":"done"}"#.into()]);
    let py = counting_python(
        dir.path(),
        &format!(
            r#"  *'"micro_batch":8.0'*) echo '{{"event":"oom","workload":"gpt2-xl","mode":"weak","phase":"measure","world_size":1,"message":"CUDA out of memory."}}'; exit 3;;
  *nproc_per_node=1*) {one}; exit 0;;
  *nproc_per_node=2*) {two}; exit 0;;"#
        ),
    );
    let _spawning = spawning();
    let env = framework::find_python(Some(&py)).unwrap();
    let opts = FrameworkOptions {
        gpus: vec![0, 1],
        modes: vec![Mode::Weak],
        ..Default::default()
    };
    let ws = vec![workload::resolve("gpt2-xl").unwrap()];
    let run = framework::run(&env, &ws, &opts, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    let (calls, launches) = launches(dir.path());
    assert_eq!(launches.len(), 3, "{calls}");
    assert!(
        launches[0].contains(r#""micro_batch":8.0"#),
        "{}",
        launches[0]
    );
    assert!(
        launches[2].contains("nproc_per_node=2") && launches[2].contains(r#""micro_batch":4.0"#)
    );
    assert_eq!(row(&run, 1, Mode::Weak).step_time_ms, Some(470.0));
    assert_eq!(row(&run, 2, Mode::Weak).step_time_ms, Some(490.0));
    assert_eq!(row(&run, 2, Mode::Weak).micro_batch, Some(4.0));
    assert!(
        run.notes
            .iter()
            .any(|n| n
                == "gpt2-xl: micro-batch 4 on more GPUs too (on 1 GPU(s) 8 ran out of memory)"),
        "{:?}",
        run.notes
    );
}

#[test]
fn out_of_memory_is_a_row_that_does_not_fit() {
    let (_, run) = run_with(
        r#"echo '{"event":"oom","workload":"gpt2-xl","mode":"weak","phase":"measure","world_size":2,"message":"CUDA out of memory. Tried to allocate 2.00 GiB","peak_mem_gib":139.1,"total_mem_gib":139.7}'
exit 3"#,
        Duration::from_secs(60),
    );
    let r = row(&run, 2, Mode::Weak);
    assert_eq!(r.fits, Some(false));
    assert!(r.step_time_ms.is_none());
    assert!(
        r.basis.contains("out of GPU memory (measured)"),
        "{}",
        r.basis
    );
    // The strong mode never ran after the OOM: said so, not blank.
    assert!(
        row(&run, 2, Mode::Strong)
            .basis
            .contains("ran out of GPU memory"),
        "{}",
        row(&run, 2, Mode::Strong).basis
    );
}

#[test]
fn a_python_without_torch_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("python3");
    write_exe(
        &path,
        "#!/bin/sh\necho '{\"python\":\"3.11.2\",\"error\":\"ModuleNotFoundError: No module named torch\"}'\n",
    );
    let _spawning = spawning();
    let e = framework::find_python(Some(&path)).unwrap_err().to_string();
    assert!(e.contains("No module named torch"), "{e}");
    let e = framework::find_python(Some(Path::new("/nonexistent/python3")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("--python PATH"), "{e}");
}

/// GPT-2 XL's framework runs on `gpus` with [`fake_python`]'s launches (`on_two` for two GPUs);
/// the fake's folder (its marks of what it was asked) and the run.
fn gpt2_on(on_two: &str, gpus: Vec<usize>) -> (tempfile::TempDir, FrameworkRun) {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_python(dir.path(), on_two);
    let _spawning = spawning();
    let env = framework::find_python(Some(&py)).unwrap();
    let ws = vec![workload::resolve("gpt2-xl").unwrap()];
    let opts = FrameworkOptions {
        gpus,
        ..Default::default()
    };
    let run = framework::run(&env, &ws, &opts, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    (dir, run)
}

#[test]
fn one_gpu_still_runs_the_probe_for_its_rates() {
    // On a 1-GPU machine the probe's GEMM and copy rates are what move another GPU family's
    // calibration here; there is no overlap to measure.
    let (dir, run) = gpt2_on("{TWO_OK}\nexit 0", vec![0]);
    assert_eq!(run.probe.as_ref().map(|p| p.copy_gbps), Some(4128.9));
    assert_eq!(run.rows.len(), 2);
    // With no launch on more GPUs to end with it, the probe had a launch of its own.
    let alone = std::fs::read_to_string(dir.path().join("probe-alone")).unwrap();
    assert_eq!(alone.trim(), "1");
}

#[test]
fn the_probe_ends_the_launch_on_every_gpu_instead_of_a_launch_of_its_own() {
    // On two GPUs the 1-GPU launch measured the matrix shares; the 2-GPU launch runs the probe
    // after its workloads (a launch of its own started Python, CUDA and NCCL again).
    let (dir, run) = gpt2_on("{TWO_OK}\nexit 0", vec![0, 1]);
    assert!(
        dir.path().join("probed").exists(),
        "the 2-GPU launch was not asked"
    );
    assert!(
        !dir.path().join("probe-alone").exists(),
        "the probe had a launch of its own"
    );
    assert_eq!(run.launches, 2);
    assert_eq!(run.overlap.len(), 1, "{:?}", run.overlap);
    assert!((run.overlap[0].hidden - 0.66).abs() < 1e-9);
    assert_eq!(run.probe.as_ref().map(|p| p.gemm_tflops), Some(789.2));
    assert_eq!(run.rows.len(), 4);

    // A 2-GPU launch that crashed before the probe: it runs alone after it.
    let (dir, run) = gpt2_on("exit 1", vec![0, 1]);
    let alone = std::fs::read_to_string(dir.path().join("probe-alone")).unwrap();
    assert_eq!(alone.trim(), "2");
    assert_eq!(run.overlap.len(), 1);
    let notes = run.notes.join("\n");
    assert!(
        notes
            .contains("the launch on 2 GPU(s) ended without the overlap probe (exited with code 1"),
        "{notes}"
    );
}

/// NVML's readings in a result line become energy figures: the counter where every GPU has one,
/// power readings (labeled) where one has none, nothing (never 0) where a GPU gave no figure.
#[test]
fn energy_readings_become_energy_figures() {
    let two = [
        // 2 GPUs, 10 steps in 4 s, each GPU's counter 1,600 J: 3,200 J.
        result("weak", 2, 8.0, 395.0, "395.0").replace(
            r#""profile""#,
            r#""window_steps":10,"window_t":[1764147100.0,1764147104.0],"window_wall_s":4.0,"energy_mj":[[1000000,2600000],[5000000,6600000]],"power_mw":[[390000,410000],[390000,410000]],"idle_mw":[70000,74000],"power_limit_mw":[700000,700000],"sm_mhz":[1980,1755],"clock_events":[1,4],"probe_s":0.5,"probe_t":[[1764147101.0,1764147101.5]],"profile""#,
        ),
        // GPU 1 gave no figure at all.
        result("strong", 2, 32.0, 1508.0, "1508.0").replace(
            r#""profile""#,
            r#""window_steps":3,"window_t":[1764147200.0,1764147204.5],"window_wall_s":4.5,"energy_mj":[[1000,2000000],[null,null]],"power_mw":[[400000,400000],[null,null]],"idle_mw":[70000,null],"power_limit_mw":[700000,null],"profile""#,
        ),
        r#"{"event":"done"}"#.to_string(),
    ];
    let on_two = echo_all(&two) + "\nexit 0";
    let (_, run) = run_with(&on_two, Duration::from_secs(60));
    let w2 = row(&run, 2, Mode::Weak);
    assert_eq!(w2.energy_j_per_step, Some(320.0));
    assert_eq!(w2.watts_per_gpu, Some(400.0));
    assert!((w2.samples_per_joule.unwrap() - 16.0 * 10.0 / 3200.0).abs() < 1e-12);
    assert_eq!(
        w2.energy_basis,
        Some(scalescope::model::energy::EnergyBasis::Counter)
    );
    assert_eq!(w2.energy_window_unix_s, Some([1764147100.0, 1764147104.0]));
    assert_eq!(w2.idle_watts_per_gpu, Some(72.0));
    assert!(
        w2.basis
            .contains("energy 320.0 J per step over 10 steps in 4.0 s (with 1 host probe of 0.50 s in all, the GPU drained: 12 % of the window), 400 W per GPU (NVML energy counter; 72 W per GPU before the run)"),
        "{}",
        w2.basis
    );
    // A GPU held back by its power cap in the window says so (GPU idle, bit 1, is no throttle).
    assert!(
        w2.basis.contains(
            "throttled in the window: software power cap (rank 1), SM 1755 MHz at the lowest"
        ),
        "{}",
        w2.basis
    );
    // No counter: the power readings' mean × the window, labeled.
    let w1 = row(&run, 1, Mode::Weak);
    assert_eq!(w1.energy_j_per_step, Some(200.0));
    assert_eq!(
        w1.energy_basis,
        Some(scalescope::model::energy::EnergyBasis::PowerReadings)
    );
    assert!(w1.basis.contains("NVML power readings"), "{}", w1.basis);
    // A GPU without any figure: no energy (not a sum that leaves it out), and why.
    let s2 = row(&run, 2, Mode::Strong);
    assert_eq!((s2.energy_j_per_step, s2.samples_per_joule), (None, None));
    assert!(
        s2.basis
            .contains("energy not measured: rank 1: NVML gave no energy or power reading"),
        "{}",
        s2.basis
    );
    // An older script's line (no readings) says so.
    let s1 = row(&run, 1, Mode::Strong);
    assert_eq!(s1.watts_per_gpu, None);
    assert!(
        s1.basis
            .contains("energy not measured: the script gave no window for energy"),
        "{}",
        s1.basis
    );
}

#[test]
fn the_steps_own_energy_comes_from_their_stretches_without_the_host_probes() {
    // 2 GPUs. The whole window (with its host probes, the GPU drained) read 3,200 J in 4 s; the
    // stretches of steps between them read rank 0: 2 × 1.5 s at 450 W, rank 1: 1.5 s at 430 W
    // and 1.5 s at 470 W. The steps' power is theirs: 450 W per GPU, not the window's 400.
    let stretches = r#""energy_stretches":[[[100.0,0.0,101.5,675000.0],[102.0,675000.0,103.5,1350000.0]],[[100.0,5000.0,101.5,650000.0],[102.0,650000.0,103.5,1355000.0]]],"#;
    let two = [
        result("weak", 2, 8.0, 395.0, "395.0").replace(
            r#""profile""#,
            &format!(
                r#""window_steps":10,"window_t":[1764147100.0,1764147104.0],"window_wall_s":4.0,"energy_mj":[[1000000,2600000],[5000000,6600000]],"power_mw":[[390000,410000],[390000,410000]],{stretches}"wrapped":"ddp","profile""#
            ),
        ),
        // A stretch that went backwards is no reading: the window's figures are used.
        result("strong", 2, 32.0, 1508.0, "1508.0").replace(
            r#""profile""#,
            r#""window_steps":3,"window_t":[1764147200.0,1764147204.5],"window_wall_s":4.5,"energy_mj":[[1000,2000001],[1000,2000001]],"power_mw":[[400000,400000],[400000,400000]],"energy_stretches":[[[1.0,9.0,2.0,5.0]],[[1.0,5.0,2.0,9.0]]],"profile""#,
        ),
        r#"{"event":"done"}"#.to_string(),
    ];
    let on_two = echo_all(&two) + "\nexit 0";
    let (_, run) = run_with(&on_two, Duration::from_secs(60));
    let w2 = row(&run, 2, Mode::Weak);
    let watts = w2.watts_per_gpu.unwrap();
    assert!((watts - 450.0).abs() < 1e-9, "{watts}");
    // Joules per step: both GPUs' power × the mean step (395 ms).
    assert!((w2.energy_j_per_step.unwrap() - 900.0 * 0.395).abs() < 1e-9);
    assert!((w2.samples_per_joule.unwrap() - 16.0 / (900.0 * 0.395)).abs() < 1e-12);
    assert!(
        w2.basis.contains("over the steps alone (2 stretches between host probes, 3.0 s on the shortest rank; counter resolution ±1.9 %)"),
        "{}",
        w2.basis
    );
    assert!(w2.basis.contains("; under DDP"), "{}", w2.basis);
    let s2 = row(&run, 2, Mode::Strong);
    assert!(
        s2.basis.contains("over 3 steps in 4.5 s"),
        "the window's reading: {}",
        s2.basis
    );
}

#[test]
fn ddp_at_one_rank_is_timed_beside_the_plain_step_and_reaches_the_model() {
    // The 1-GPU launch's weak line also timed DDP on a group of one: 391.5 ms against the plain
    // 377.5 ms in the blocks between (14 ms of DDP's own cost); its strong line could not.
    let (_, run) = run_with("{TWO_OK}\nexit 0", Duration::from_secs(60));
    assert!(run.steps.iter().all(|s| s.wrapper_ms.is_none()));
    let dir = tempfile::tempdir().unwrap();
    let py = fake_python(dir.path(), "{TWO_OK}\nexit 0");
    // The 1-GPU weak line is the one with 14 host probes.
    let text = std::fs::read_to_string(&py).unwrap().replacen(
        r#""host_probes":14,"#,
        r#""host_probes":14,"ddp_one_ms":391.5,"ddp_one_plain_ms":377.5,"ddp_one_steps":9,"#,
        1,
    );
    write_exe(&py, &text);
    let _spawning = spawning();
    let env = framework::find_python(Some(&py)).unwrap();
    let ws = vec![workload::resolve("gpt2-xl").unwrap()];
    let opts = FrameworkOptions {
        gpus: vec![0, 1],
        ..Default::default()
    };
    let run = framework::run(&env, &ws, &opts, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    let weak = run.steps.iter().find(|s| s.mode == Mode::Weak).unwrap();
    assert!((weak.wrapper_ms.unwrap() - 14.0).abs() < 1e-9, "{weak:?}");
    let one = row(&run, 1, Mode::Weak);
    assert!(
        one.basis.contains("the plain step (no DDP wrapper at one GPU); under DDP at one rank 391.50 ms against the plain 377.50 ms in alternating blocks (9 steps each): DDP's own cost +14.00 ms per step"),
        "{}",
        one.basis
    );
    // The model's 2-GPU step carries it; its 1-GPU step (the plain one) does not.
    let mut m = Machine::modeled(&scalescope::topology::catalog::load("hgx-h200").unwrap());
    m.framework_steps = run.steps.clone();
    let rows = model(&ws[0], &m, &[Mode::Weak], 2);
    let two = rows.iter().find(|r| r.n_gpus == 2).unwrap();
    assert!(
        two.basis.contains("+ 14.0 ms of DDP's own cost"),
        "{}",
        two.basis
    );
    let one = rows.iter().find(|r| r.n_gpus == 1).unwrap();
    assert!(!one.basis.contains("DDP's own cost"), "{}", one.basis);
}

#[test]
fn one_launch_per_gpu_count_runs_every_workload_and_an_oom_runs_again_alone() {
    // Two workloads: the 1-GPU launch runs both in turn (one process); on 2 GPUs BERT-large
    // runs out of memory at its micro-batch of 64, which ends that launch before GPT-2 XL ran:
    // BERT-large runs again alone at 32, GPT-2 XL alone.
    let dir = tempfile::tempdir().unwrap();
    let line = |w: &str, mode: &str, n: usize, per: f64, ms: f64| {
        result(mode, n, per, ms, &format!("{ms}"))
            .replace(r#""workload":"gpt2-xl""#, &format!(r#""workload":"{w}""#))
    };
    let echo = echo_all;
    let both_one = echo(&[
        line("bert-large", "weak", 1, 64.0, 66.0),
        line("gpt2-xl", "weak", 1, 8.0, 377.0),
        r#"{"event":"done"}"#.into(),
    ]);
    let bert_two = echo(&[line("bert-large", "weak", 2, 64.0, 80.0)]);
    let gpt_two = echo(&[line("gpt2-xl", "weak", 2, 8.0, 395.0)]);
    let py = counting_python(
        dir.path(),
        &format!(
            r#"  *nproc_per_node=1*) {both_one}; exit 0;;
  *'"workloads"'*) echo '{{"event":"oom","workload":"bert-large","mode":"weak","phase":"measure","world_size":2,"message":"CUDA out of memory."}}'; exit 3;;
  *'"micro_batch":32.0'*) {bert_two}; exit 0;;
  *'"workload":"gpt2-xl"'*) {gpt_two}; exit 0;;"#
        ),
    );
    let _spawning = spawning();
    let env = framework::find_python(Some(&py)).unwrap();
    let ws = bert_and_gpt();
    let opts = FrameworkOptions {
        gpus: vec![0, 1],
        modes: vec![Mode::Weak],
        ..Default::default()
    };
    let run = framework::run(&env, &ws, &opts, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    let (calls, launches) = launches(dir.path());
    // 1 GPU: one launch of both; 2 GPUs: both, then BERT-large at 32, then GPT-2 XL alone.
    assert_eq!(launches.len(), 4, "{calls}");
    assert!(launches[0].contains(r#""workloads""#) && launches[1].contains(r#""workloads""#));
    let step = |w: &str, n: usize| {
        run.rows
            .iter()
            .find(|r| r.workload == w && r.n_gpus == n)
            .and_then(|r| r.step_time_ms)
    };
    assert_eq!(step("bert-large", 1), Some(66.0));
    assert_eq!(step("gpt2-xl", 1), Some(377.0));
    assert_eq!(step("bert-large", 2), Some(80.0));
    assert_eq!(step("gpt2-xl", 2), Some(395.0));
    // Rows in the workloads' order, as before.
    let order: Vec<(&str, usize)> = run
        .rows
        .iter()
        .map(|r| (r.workload.as_str(), r.n_gpus))
        .collect();
    assert_eq!(
        order,
        [
            ("bert-large", 1),
            ("bert-large", 2),
            ("gpt2-xl", 1),
            ("gpt2-xl", 2)
        ]
    );
    assert!(
        run.notes
            .iter()
            .any(|n| n
                == "bert-large on 2 GPU(s): out of GPU memory at micro-batch 64; run again at 32"),
        "{:?}",
        run.notes
    );
}

#[test]
fn side_by_side_the_one_gpu_runs_go_one_launch_per_gpu_at_once() {
    // `--full`'s 1-GPU runs on two alike GPUs: GPT-2 XL (the longer) on GPU 0 and BERT-large on
    // GPU 1, launched together — each fake waits for the other to have started, so launches
    // one after the other would print nothing — then one launch of both on 2 GPUs.
    let dir = tempfile::tempdir().unwrap();
    let line = |w: &str, n: usize, per: f64, ms: f64| {
        result("weak", n, per, ms, &format!("{ms}"))
            .replace(r#""workload":"gpt2-xl""#, &format!(r#""workload":"{w}""#))
    };
    let on = |g: usize| dir.path().join(format!("on.{g}")).display().to_string();
    let wait_both = format!(
        r#"echo "$CUDA_VISIBLE_DEVICES" >> "{visible}"; touch "{mine}"; i=0; while [ ! -f "{a}" ] || [ ! -f "{b}" ]; do i=$((i+1)); [ $i -gt 200 ] && exit 5; sleep 0.05; done"#,
        visible = dir.path().join("visible").display(),
        mine = dir.path().join("on.$CUDA_VISIBLE_DEVICES").display(),
        a = on(0),
        b = on(1),
    );
    let bert_one = echo_all(&[line("bert-large", 1, 64.0, 66.0)]);
    let gpt_one = echo_all(&[line("gpt2-xl", 1, 8.0, 377.0)]);
    let both_two = echo_all(&[
        line("bert-large", 2, 64.0, 80.0),
        line("gpt2-xl", 2, 8.0, 395.0),
        r#"{"event":"done"}"#.into(),
    ]);
    let py = counting_python(
        dir.path(),
        &format!(
            r#"  *nproc_per_node=1*'"workload":"bert-large"'*) {wait_both}; {bert_one}; exit 0;;
  *nproc_per_node=1*'"workload":"gpt2-xl"'*) {wait_both}; {gpt_one}; exit 0;;
  *nproc_per_node=2*'"workloads"'*) {both_two}; exit 0;;"#
        ),
    );
    let _spawning = spawning();
    let env = framework::find_python(Some(&py)).unwrap();
    let ws = bert_and_gpt();
    let opts = FrameworkOptions {
        gpus: vec![0, 1],
        modes: vec![Mode::Weak],
        one_gpu_side_by_side: true,
        // `--full`'s windows: GPT-2 XL's fifteen steps of ~0.38 s outlast the 5 s window.
        warmup_s: 3.0,
        measure_s: 5.0,
        ..Default::default()
    };
    let run = framework::run(&env, &ws, &opts, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
    let (calls, launches) = launches(dir.path());
    let one: Vec<&String> = launches
        .iter()
        .filter(|l| l.contains("nproc_per_node=1") && !l.contains("overlap_probe"))
        .collect();
    assert_eq!(one.len(), 2, "{calls}");
    assert!(one.iter().all(|l| !l.contains(r#""workloads""#)), "{calls}");
    let mut visible: Vec<String> = std::fs::read_to_string(dir.path().join("visible"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    visible.sort();
    assert_eq!(visible, ["0", "1"]);
    let row = |w: &str, n: usize| {
        run.rows
            .iter()
            .find(|r| r.workload == w && r.n_gpus == n)
            .unwrap()
    };
    assert_eq!(row("bert-large", 1).step_time_ms, Some(66.0));
    assert_eq!(row("gpt2-xl", 1).step_time_ms, Some(377.0));
    assert_eq!(row("bert-large", 2).step_time_ms, Some(80.0));
    assert_eq!(row("gpt2-xl", 2).step_time_ms, Some(395.0));
    // Where each ran is said: the share off the first GPU in its rows, both in a note.
    assert!(
        row("bert-large", 1)
            .basis
            .contains("on GPU 1, side by side"),
        "{}",
        row("bert-large", 1).basis
    );
    assert!(!row("gpt2-xl", 1).basis.contains("side by side"));
    assert!(
        run.notes.iter().any(|n| n.contains("side by side")
            && n.contains("gpt2-xl on GPU 0")
            && n.contains("bert-large on GPU 1")),
        "{:?}",
        run.notes
    );
    assert_eq!(run.side_by_side, 2);
    assert!(run.time_note().unwrap().contains("2 of them side by side"));
    // Both calibrate the model as 1-GPU steps.
    assert_eq!(run.steps.len(), 2);
}
