//! NCCL with one process per GPU (torchrun, Slurm, MPI): every process drives its local GPU,
//! the ranks meet through NCCL's own bootstrap (`NCCL_COMM_ID=host:port`; rank 0 creates the
//! root inside ncclCommInitRank), and every figure is combined across ranks by NCCL itself (a
//! small all-reduce: max of the times, sum of the wrong elements). Rank 0 returns the rows.
//!
//! Every rank must issue the same NCCL calls in the same order, so a step that may fail on one
//! rank only (allocation) is followed by an agreement (all-reduce max of a status code) before
//! any collective of the case runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::nccl::sys::{ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId};

use super::kernels::{self, CollKernels};
use super::nccl_ops::{self, Job, LocalRank};
use super::{CaseError, GpuState, NcclExtra, SAMPLES, measured_row, wait_idle};
use crate::bench::BenchError;
use crate::bench::collectives::{CollCase, CollectiveOptions, plan};
use crate::bench::launcher::LaunchEnv;
use crate::bench::nccl_log;
use crate::cuda::context::Context;
use crate::cuda::memory::DeviceBuffer;
use crate::cuda::nccl::{Buffers, CommStream, Nccl};
use crate::cuda::stream::Stream;
use crate::model::{Algo, CollectiveResult, Gpu, Source, Status, Topology, TopologySource};

/// How long ncclCommInitRank may wait for the other ranks.
const INIT_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a rank waits for the others at an agreement or a combination of results.
const MEET_TIMEOUT: Duration = Duration::from_secs(600);

fn unavailable(rank: usize, what: impl std::fmt::Display) -> BenchError {
    BenchError::Unavailable(format!("rank {rank}: {what}"))
}

/// This process's communicator: destroyed on drop unless it was aborted.
struct Comm {
    comm: ncclComm_t,
    nccl: Arc<Nccl>,
    aborted: bool,
}

impl Drop for Comm {
    fn drop(&mut self) {
        if !self.aborted {
            // SAFETY: created by ncclCommInitRank, destroyed once, not aborted.
            unsafe { self.nccl.comm_destroy(self.comm) };
        }
    }
}

/// A communicator handle moved out of the init thread.
struct SendComm(ncclComm_t);
// SAFETY: an NCCL communicator may be used from any thread, one at a time; ownership moves.
unsafe impl Send for SendComm {}

/// ncclCommInitRank on a helper thread, so that ranks that never arrive cannot hang this one
/// past [`INIT_TIMEOUT`] (the thread keeps NCCL loaded while it waits).
fn init_rank(
    nccl: &Arc<Nccl>,
    ctx: &Arc<Context>,
    world: usize,
    id: ncclUniqueId,
    rank: usize,
) -> Result<ncclComm_t, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (nccl_t, ctx_t) = (nccl.clone(), ctx.clone());
    let spawned = std::thread::Builder::new()
        .name("scalescope-nccl-init".into())
        .spawn(move || {
            // NCCL takes the device from the thread's current context.
            // `id` is the same on every rank (derived from NCCL_COMM_ID); ranks are below `world`.
            let r = ctx_t.bind().map_err(|e| e.to_string()).and_then(|()| {
                nccl_t
                    .comm_init_rank(world, id, rank)
                    .map(SendComm)
                    .map_err(|e| e.to_string())
            });
            // The receiver may have given up; nothing to do then.
            let _ = tx.send(r);
        });
    if let Err(e) = spawned {
        return Err(format!("cannot start a thread for ncclCommInitRank: {e}"));
    }
    match rx.recv_timeout(INIT_TIMEOUT) {
        Ok(r) => r.map(|c| c.0),
        Err(_) => Err(format!(
            "ncclCommInitRank did not complete within {} s: are all {world} ranks running, and is \
             NCCL_COMM_ID reachable from every node?",
            INIT_TIMEOUT.as_secs()
        )),
    }
}

/// NCCL's INIT log in a file of this process's own, so that the transports it chose can be read
/// back ([`nccl_log`]). Removed on drop; the warnings NCCL wrote there (which would have gone to
/// stderr) are printed then.
struct TransportLog {
    path: PathBuf,
}

impl TransportLog {
    /// Asks NCCL for its INIT and NET log in a temporary file; `None` when the user set
    /// `NCCL_DEBUG` (their log goes where they asked). Must run before NCCL is loaded.
    fn ask() -> Option<TransportLog> {
        if std::env::var_os("NCCL_DEBUG").is_some() {
            return None;
        }
        let path = std::env::temp_dir().join(format!(
            "scalescope-nccl-{}-{}.log",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        // SAFETY: as for NCCL_COMM_ID in [`run_multiprocess`]: no other thread of this process
        // reads the environment yet.
        unsafe {
            std::env::set_var("NCCL_DEBUG", "INFO");
            std::env::set_var("NCCL_DEBUG_SUBSYS", "INIT,NET");
            std::env::set_var("NCCL_DEBUG_FILE", &path);
        }
        Some(TransportLog { path })
    }

    /// The transports logged so far, as one label.
    fn label(&self) -> Option<String> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        nccl_log::summarize(&text).label()
    }
}

impl Drop for TransportLog {
    fn drop(&mut self) {
        if let Ok(text) = std::fs::read_to_string(&self.path) {
            for line in text.lines().filter(|l| l.contains("NCCL WARN")) {
                crate::stderr_line!("{line}");
            }
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// An all-reduce of a few f64 values across the ranks, through NCCL.
fn combine(
    job: &Job<'_>,
    scratch: &DeviceBuffer,
    vals: &[f64],
    op: ncclRedOp_t,
) -> Result<Vec<f64>, CaseError> {
    let r = &job.ranks[0];
    let s = &r.gpu.stream;
    let n = vals.len().min(scratch.len() / 8);
    s.ctx().bind()?;
    // SAFETY: `n` f64 values from a live slice into the live scratch buffer (≥ 8n bytes); a
    // pageable source is staged before the call returns.
    unsafe { s.copy_htod(scratch.ptr(), vals.as_ptr().cast(), n * 8) }?;
    let nccl = job.nccl;
    // SAFETY: in-place all-reduce of `n` f64 in the live scratch buffer on this rank's stream.
    unsafe {
        nccl.all_reduce(
            Buffers::in_place(scratch.ptr(), n, ncclDataType_t::ncclFloat64),
            op,
            CommStream {
                comm: r.comm,
                stream: s,
            },
        )
    }?;
    wait_idle(&[s], Instant::now() + MEET_TIMEOUT)?;
    // `n` f64 from the scratch buffer; the stream is idle.
    let mut bytes = vec![0u8; n * 8];
    scratch.copy_to_host(&mut bytes)?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            f64::from_ne_bytes(w)
        })
        .collect())
}

/// Status code agreed across ranks: 0 ok, then increasingly severe.
fn code(status: Status) -> f64 {
    match status {
        Status::Ok => 0.0,
        Status::Skipped => 1.0,
        Status::Waived => 2.0,
        Status::Failed => 3.0,
    }
}

fn status_of(code: f64) -> Status {
    if code >= 3.0 {
        Status::Failed
    } else if code >= 2.0 {
        Status::Waived
    } else if code >= 1.0 {
        Status::Skipped
    } else {
        Status::Ok
    }
}

/// Runs NCCL collectives with one process per GPU (torchrun, Slurm, MPI). This process uses
/// CUDA device `launch.local_rank`; `NCCL_COMM_ID` is set to `launch.comm_id` when given. The
/// sweep is what [`plan`] gives for `world_size` GPUs (NCCL only; rows of other algorithms are
/// skipped). Rank 0 returns the rows and calls `on_update` after each size; other ranks return
/// an empty list. Errors (NCCL missing, a rank that never arrives, a hung collective) are
/// [`BenchError::Unavailable`] with NCCL's message.
pub fn run_multiprocess(
    launch: &LaunchEnv,
    opts: &CollectiveOptions,
    nccl_lib: Option<&Path>,
    on_update: &mut dyn FnMut(&[CollectiveResult]),
) -> Result<Vec<CollectiveResult>, BenchError> {
    let rank = launch.rank;
    let world = launch.world_size;
    check_launch(launch)?;
    let gpu = local_gpu(launch)?;
    let log = TransportLog::ask();
    let nccl = Arc::new(Nccl::load(nccl_lib).map_err(|e| unavailable(rank, e))?);
    let extra = NcclExtra::load(&nccl).ok();
    // With NCCL_COMM_ID set, every rank derives the same id from it.
    let id = nccl.unique_id().map_err(|e| unavailable(rank, e))?;
    let raw = init_rank(&nccl, &gpu.ctx, world, id, rank).map_err(|e| unavailable(rank, e))?;
    let mut comm = Comm {
        comm: raw,
        nccl: nccl.clone(),
        aborted: false,
    };
    let scratch =
        DeviceBuffer::alloc(&gpu.ctx, 8 * (SAMPLES + 2)).map_err(|e| unavailable(rank, e))?;
    let cases = world_sweep(world, opts)?;

    let job = Job {
        nccl: &nccl,
        extra: extra.as_ref(),
        nranks: world,
        ranks: vec![LocalRank {
            rank,
            comm: raw,
            gpu: &gpu,
        }],
    };
    let mut results = Vec::new();
    for case in &cases {
        let row = if case.algo == Algo::Nccl {
            match run_one(&job, &scratch, case) {
                Ok(r) => r,
                Err((e, aborted)) => {
                    comm.aborted |= aborted;
                    if !comm.aborted
                        && let Some(x) = job.extra
                    {
                        // A rank that failed mid-case leaves the others waiting: abort so that
                        // they see it, and so that nothing is left running here.
                        x.abort(raw);
                        comm.aborted = true;
                    }
                    return Err(unavailable(rank, e));
                }
            }
        } else {
            skipped_row(case, launch)
        };
        if rank == 0 {
            let mut row = row;
            // Read after the case: NCCL connects lazily, at a communicator's first collective.
            row.transport = log.as_ref().and_then(TransportLog::label);
            results.push(row);
            on_update(&results);
        }
    }
    drop(job);
    drop(comm);
    Ok(if rank == 0 { results } else { Vec::new() })
}

/// Sets `NCCL_COMM_ID` from the launch when it names one, and refuses a launch whose ranks
/// cannot meet: no `NCCL_COMM_ID`, fewer than 2 ranks, or no GPU for this local rank.
fn check_launch(launch: &LaunchEnv) -> Result<(), BenchError> {
    let rank = launch.rank;
    let world = launch.world_size;
    if let Some(id) = &launch.comm_id {
        // SAFETY: called before this process starts any thread of its own or loads NCCL (the
        // CLI calls this first thing in a multi-process run), so no other thread can be reading
        // the environment concurrently.
        unsafe { std::env::set_var("NCCL_COMM_ID", id) };
    }
    if std::env::var_os("NCCL_COMM_ID").is_none_or(|v| v.is_empty()) {
        return Err(unavailable(
            rank,
            format!(
                "{}: set NCCL_COMM_ID=host:port (or MASTER_ADDR and MASTER_PORT) so that the ranks can meet",
                launch.launcher
            ),
        ));
    }
    if rank >= world || world < 2 {
        return Err(unavailable(
            rank,
            format!("rank {rank} of {world}: a multi-process run needs at least 2 ranks"),
        ));
    }
    let driver = crate::cuda::driver().map_err(|e| unavailable(rank, e))?;
    if launch.local_rank >= driver.device_count {
        return Err(unavailable(
            rank,
            format!(
                "local rank {} has no GPU (CUDA sees {}; check CUDA_VISIBLE_DEVICES and the launcher's GPUs per node)",
                launch.local_rank, driver.device_count
            ),
        ));
    }
    Ok(())
}

/// This process's GPU (CUDA device `launch.local_rank`): its context, a stream, and the
/// collective kernels built for it (or why there are none).
fn local_gpu(launch: &LaunchEnv) -> Result<GpuState, BenchError> {
    let rank = launch.rank;
    let ctx = Context::retain(launch.local_rank).map_err(|e| unavailable(rank, e))?;
    let stream = Stream::new(&ctx).map_err(|e| unavailable(rank, e))?;
    let cc = ctx.compute_capability();
    let (ptx, _) = kernels::build(&[cc]);
    let kernels = match ptx.get(&cc) {
        Some(Ok(p)) => CollKernels::load(&ctx, p).map_err(|e| e.to_string()),
        Some(Err(why)) => Err(why.clone()),
        None => Err("no collective kernels built".into()),
    };
    Ok(GpuState {
        cpus: None,
        stream,
        kernels,
        ctx,
    })
}

/// The cases [`plan`] gives for `world` GPUs (one per rank) with the options' sweep.
fn world_sweep(world: usize, opts: &CollectiveOptions) -> Result<Vec<CollCase>, BenchError> {
    let mut topo = Topology::new(TopologySource::Imported { paths: vec![] });
    topo.gpus = (0..world)
        .map(|index| Gpu {
            index,
            ..Default::default()
        })
        .collect();
    topo.normalize();
    let sweep = CollectiveOptions {
        gpus: Default::default(),
        ..opts.clone()
    };
    let (_, cases) = plan(&topo, &sweep)?;
    Ok(cases)
}

/// The row of a case of scalescope's own algorithms, which a multi-process run skips.
fn skipped_row(case: &CollCase, launch: &LaunchEnv) -> CollectiveResult {
    let mut r = case.row(
        Source::Measured,
        Status::Skipped,
        format!(
            "scalescope's {} algorithm needs one process driving every GPU; run without {}",
            case.algo, launch.launcher
        ),
    );
    r.processes = launch.world_size;
    r
}

/// One case on this rank, agreed and combined with the others. `Err` only for failures after
/// which the ranks can no longer stay in step (with whether the communicator was aborted).
fn run_one(
    job: &Job<'_>,
    scratch: &DeviceBuffer,
    case: &CollCase,
) -> Result<CollectiveResult, (CaseError, bool)> {
    let world = job.nranks;
    let local = nccl_ops::alloc(job, case);
    let (mine, reason) = match &local {
        Ok(_) => (0.0, None),
        Err(e) => {
            let (st, why) = e.status(case.bytes);
            (code(st), Some(why))
        }
    };
    let agreed = combine(job, scratch, &[mine], ncclRedOp_t::ncclMax)
        .map_err(|e| (e, false))?
        .first()
        .copied()
        .unwrap_or(3.0);
    let bufs = match local {
        Ok(b) if agreed == 0.0 => b,
        other => {
            drop(other);
            let mut r = case.row(
                Source::Measured,
                status_of(agreed),
                reason.unwrap_or_else(|| {
                    "another rank could not run this size (out of memory or an error)".into()
                }),
            );
            r.backend_version = Some(job.nccl.version());
            r.processes = world;
            return Ok(r);
        }
    };
    let measured = nccl_ops::measure(job, &bufs, case).and_then(|(samples, graph)| {
        let wrong = nccl_ops::verify(job, &bufs, case)?;
        Ok((samples, graph, wrong))
    });
    let (samples, graph, wrong) = match measured {
        Ok(m) => m,
        Err(e) => {
            let aborted = nccl_ops::settle(job, bufs);
            return Err((e, aborted));
        }
    };
    drop(bufs);
    let slowest = combine(job, scratch, &samples, ncclRedOp_t::ncclMax).map_err(|e| (e, false))?;
    let (w, unverified) = match &wrong {
        Ok(w) => (*w as f64, 0.0),
        Err(_) => (0.0, 1.0),
    };
    let sums =
        combine(job, scratch, &[w, unverified], ncclRedOp_t::ncclSum).map_err(|e| (e, false))?;
    let wrong_all = match (sums.first(), sums.get(1), wrong) {
        (_, _, Err(why)) => Err(why),
        (Some(_), Some(u), Ok(_)) if *u > 0.0 => Err("another rank could not verify".into()),
        (Some(w), Some(_), Ok(_)) => Ok(*w as u64),
        _ => Err("the ranks' counts could not be combined".into()),
    };
    let mut r = measured_row(case, job.nccl.version(), slowest, wrong_all, graph, None);
    r.processes = world;
    Ok(r)
}
