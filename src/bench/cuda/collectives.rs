//! Collectives on real GPUs: NCCL (loaded at run time, one process driving every GPU, or one
//! process per GPU under torchrun/Slurm/MPI) and scalescope's own all-reduce algorithms over
//! P2P — ring, tree and via host — with no NCCL at all.
//!
//! Sizes, algbw and busbw follow nccl-tests (doc/PERFORMANCE.md in
//! <https://github.com/NVIDIA/nccl-tests>), and so does the timing: per sample, an event on every
//! rank's stream, `iters` operations, an event; time per op = the slowest rank's elapsed ÷ iters;
//! the median of [`SAMPLES`] samples is reported. Every case is then verified in a separate run
//! (like nccl-tests' `#wrong`): inputs are a per-rank pattern of small integers, exact in every
//! dtype, and a GPU kernel counts output elements that differ from the op's expected result.
//!
//! Nothing here panics or hangs on a GPU problem: every wait on the GPU has a deadline (NCCL
//! communicators are aborted when it passes) and every failure becomes a row with a status and a
//! reason.

mod kernels;
mod multiprocess;
mod nccl_ops;
mod own;
pub mod schedule;
pub mod values;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys;
use cudarc::nccl::sys::ncclComm_t;

pub use self::multiprocess::run_multiprocess;

use self::kernels::CollKernels;
use super::CaseError;
use crate::bench::collectives::{CollCase, CollectiveBackend};
use crate::bench::{BenchError, Warning};
use crate::cuda::CudaError;
use crate::cuda::context::{self, Context};
use crate::cuda::memory::DeviceBuffer;
use crate::cuda::nccl::{Nccl, NcclError, NcclExtra};
use crate::cuda::stream::{Event, Stream};
use crate::model::{Algo, CollectiveOp, CollectiveResult, Source, Status, Topology};

/// Timed samples per case; the median is reported.
pub const SAMPLES: usize = 3;

/// Byte written over outputs before a verification run: 0x7F7F… is no value the pattern or its
/// sums can take in any dtype (f16: NaN; f32/bf16/f64: ≈ 3·10³⁸ or more; i32: 2139062143).
pub const POISON: u8 = 0x7F;

/// `scalescope 0.1.0`: the version stamped on rows of scalescope's own algorithms.
pub fn own_version() -> String {
    format!("scalescope {}", env!("CARGO_PKG_VERSION"))
}

/// Waits until every stream is idle, polling (so that a hung GPU cannot hang the caller) until
/// `deadline`.
pub(crate) fn wait_idle(streams: &[&Stream], deadline: Instant) -> Result<(), CaseError> {
    wait_until(streams, deadline, &|| Ok(()))
}

/// [`wait_idle`], also calling `poll` every 100 ms (NCCL's asynchronous errors end the wait).
pub(crate) fn wait_until(
    streams: &[&Stream],
    deadline: Instant,
    poll: &dyn Fn() -> Result<(), CaseError>,
) -> Result<(), CaseError> {
    let start = Instant::now();
    let mut polled = start;
    let mut pending: Vec<&Stream> = streams.to_vec();
    loop {
        let mut still = Vec::new();
        for s in pending {
            if !s.is_idle()? {
                still.push(s);
            }
        }
        if still.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(CaseError::Timeout(format!(
                "the GPUs did not finish within {:.0} s (hung?)",
                start.elapsed().as_secs_f64()
            )));
        }
        pending = still;
        if polled.elapsed() > Duration::from_millis(100) {
            poll()?;
            polled = Instant::now();
        }
        // Yield at first (short operations), then sleep (long ones).
        if start.elapsed() < Duration::from_millis(20) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// A deadline generous for `bytes` moved `ops` times (at 1 GB/s, plus 60 s).
pub(crate) fn deadline_for(bytes: u64, ops: u64) -> Instant {
    let secs = 60.0 + bytes as f64 * 2.0 * ops.max(1) as f64 / 1e9;
    Instant::now() + Duration::from_secs_f64(secs.min(3600.0))
}

/// Times `run` (which enqueues one sample's work on `streams`) with an event pair per stream:
/// returns, per sample, the slowest stream's elapsed time ÷ `ops_per_sample`, in µs. Untimed
/// samples follow while the case's energy wants a longer window ([`super::energy`]).
pub(crate) fn time_with_events(
    streams: &[&Stream],
    samples: usize,
    ops_per_sample: u32,
    deadline: Instant,
    poll: &dyn Fn() -> Result<(), CaseError>,
    prime: &mut dyn FnMut() -> Result<(), CaseError>,
    run: &mut dyn FnMut() -> Result<(), CaseError>,
) -> Result<Vec<f64>, CaseError> {
    let mut events = Vec::new();
    for s in streams {
        events.push((Event::new(s.ctx())?, Event::new(s.ctx())?));
    }
    let mut out = Vec::new();
    // Extra (untimed) samples for the case's energy get the time a timed one was given.
    let per_sample = deadline.saturating_duration_since(Instant::now()) / samples.max(1) as u32;
    let window_start = Instant::now();
    let mut sample = 0;
    loop {
        let deadline = if sample < samples {
            deadline
        } else if super::energy::wants_more(window_start) {
            Instant::now() + per_sample
        } else {
            break;
        };
        sample += 1;
        // Untimed work queued ahead of the start events (e.g. one operation that absorbs the
        // wake-up cost of the first launch after the streams went idle).
        prime()?;
        for (s, (start, _)) in streams.iter().zip(&events) {
            start.record(s)?;
        }
        let enqueued = run();
        // Record the stops and wait even when enqueuing failed, so no work is left running.
        let mut stop_err = None;
        for (s, (_, stop)) in streams.iter().zip(&events) {
            if let Err(e) = stop.record(s) {
                stop_err.get_or_insert(e);
            }
        }
        wait_until(streams, deadline, poll)?;
        enqueued?;
        if let Some(e) = stop_err {
            return Err(e.into());
        }
        let mut worst = 0f64;
        for (start, stop) in &events {
            worst = worst.max(stop.elapsed_ms_since(start)?);
        }
        if sample <= samples {
            out.push(worst * 1e3 / f64::from(ops_per_sample.max(1)));
        }
    }
    super::energy::timed(window_start, Instant::now());
    Ok(out)
}

/// A finished row: median time, samples, verification outcome.
pub(crate) fn measured_row(
    case: &CollCase,
    version: String,
    samples_us: Vec<f64>,
    wrong: Result<u64, String>,
    graph: bool,
    note: Option<String>,
) -> CollectiveResult {
    let mut r = case.row(Source::Measured, Status::Ok, "");
    r.backend_version = Some(version);
    r.graph = graph;
    let mut notes: Vec<String> = note.into_iter().collect();
    match wrong {
        Ok(w) => {
            r.wrong = Some(w);
            if w > 0 {
                r.status = Status::Failed;
                notes.insert(0, format!("{w} wrong elements"));
            }
        }
        Err(why) => notes.push(format!("not verified: {why}")),
    }
    r.reason = (!notes.is_empty()).then(|| notes.join("; "));
    if let Some(t) = crate::model::median(&samples_us) {
        r.set_time_us(t);
    }
    r.sample_us = samples_us;
    r
}

/// `cuMemcpyAsync` between device addresses (same GPU, or a peer's through UVA).
pub(crate) fn copy_async(
    stream: &Stream,
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
) -> Result<(), CudaError> {
    if bytes == 0 {
        return Ok(());
    }
    stream.ctx().bind()?;
    // SAFETY: callers pass ranges inside live allocations of at least `bytes`, kept alive until
    // the stream is idle; the stream is live and its context current.
    unsafe { stream.copy_dtod(dst, src, bytes) }
}

/// Reads a u64 counter from device memory (the stream that wrote it must be idle).
pub(crate) fn read_u64(buf: &DeviceBuffer) -> Result<u64, CudaError> {
    let mut v = [0u8; 8];
    buf.copy_to_host(&mut v)?;
    Ok(u64::from_ne_bytes(v))
}

/// One communicator per GPU of a set (ncclCommInitAll), destroyed (or aborted) on drop.
struct CommSet {
    comms: Vec<ncclComm_t>,
    nccl: Arc<Nccl>,
    extra: Option<Arc<NcclExtra>>,
    /// Abort instead of destroy (after an error).
    abort: bool,
    /// Already aborted elsewhere: neither destroy nor abort again.
    released: bool,
}

// SAFETY: NCCL communicators may be used from any thread, one thread at a time; the set is only
// reached through `&mut CudaCollectives`.
unsafe impl Send for CommSet {}

impl Drop for CommSet {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        for &c in &self.comms {
            match (&self.extra, self.abort) {
                (Some(x), true) => x.abort(c),
                // SAFETY: each communicator was created by ncclCommInitAll and is destroyed once
                // (nccl-tests destroys the comms of one process this way, one after another).
                _ => unsafe {
                    self.nccl.comm_destroy(c);
                },
            }
        }
    }
}

/// One GPU's long-lived state. `ctx` is declared last so it is released last.
pub(crate) struct GpuState {
    pub cpus: Option<Vec<usize>>,
    pub stream: Stream,
    pub kernels: Result<CollKernels, String>,
    pub ctx: Arc<Context>,
}

/// The collectives backend that measures on this machine's GPUs.
pub struct CudaCollectives {
    // Declared first so that communicators go before streams and contexts.
    comms: HashMap<Vec<usize>, CommSet>,
    nccl: Result<Arc<Nccl>, NcclError>,
    extra: Option<Arc<NcclExtra>>,
    driver_version: i32,
    gpus: BTreeMap<usize, GpuState>,
    missing: BTreeMap<usize, String>,
    poisoned: BTreeMap<usize, String>,
    kernels_summary: String,
    peer_warned: BTreeSet<(usize, usize)>,
    energy: super::energy::BackendEnergy,
}

impl CudaCollectives {
    /// Runs each test on (untimed) until the energy counter has stepped across `seconds` of
    /// it, so that every test gets its energy; 0 (the default): only what the timed samples
    /// cover.
    pub fn set_energy_window(&mut self, seconds: f64) {
        self.energy.set_window(seconds);
    }

    /// Opens every GPU of `topo` (primary context, one non-blocking stream, the collective
    /// kernels) and loads NCCL (`nccl_lib`, else the usual search). NCCL missing is not an
    /// error: its cases are then skipped with the search in the reason. Fails with
    /// [`BenchError::Unavailable`] (naming `--modeled`) when there is no driver or no GPU.
    pub fn new(topo: &Topology, nccl_lib: Option<&Path>) -> Result<CudaCollectives, BenchError> {
        let driver = super::open_driver()?;
        let bus_ids = super::bus_ids(driver.device_count);
        let mut opened = Vec::new();
        let mut missing = BTreeMap::new();
        for g in &topo.gpus {
            let Some(ordinal) = super::ordinal_of(g, &bus_ids) else {
                missing.insert(g.index, format!("GPU {} is not visible to CUDA", g.index));
                continue;
            };
            let cpus = g
                .cpu_affinity
                .as_deref()
                .and_then(crate::cuda::memory::parse_cpu_list);
            match Context::retain(ordinal).and_then(|ctx| Ok((Stream::new(&ctx)?, ctx))) {
                Ok((stream, ctx)) => opened.push((g.index, cpus, stream, ctx)),
                Err(e) => {
                    missing.insert(g.index, format!("GPU {} cannot be opened: {e}", g.index));
                }
            }
        }
        if opened.is_empty() {
            return Err(super::no_usable_gpu(&missing));
        }
        let ccs: BTreeSet<(i32, i32)> = opened
            .iter()
            .map(|(_, _, _, c)| c.compute_capability())
            .collect();
        let (ptx, kernels_summary) = kernels::build(&ccs.into_iter().collect::<Vec<_>>());
        let mut gpus = BTreeMap::new();
        for (index, cpus, stream, ctx) in opened {
            let kernels = match ptx.get(&ctx.compute_capability()) {
                Some(Ok(p)) => CollKernels::load(&ctx, p)
                    .map_err(|e| format!("collective kernels failed to load: {e}")),
                Some(Err(why)) => Err(why.clone()),
                None => Err("no collective kernels built".into()),
            };
            gpus.insert(
                index,
                GpuState {
                    cpus,
                    stream,
                    kernels,
                    ctx,
                },
            );
        }
        let nccl = Nccl::load(nccl_lib).map(Arc::new);
        let extra = nccl
            .as_ref()
            .ok()
            .and_then(|n| NcclExtra::load(n).ok())
            .map(Arc::new);
        let opened: Vec<usize> = gpus.keys().copied().collect();
        Ok(CudaCollectives {
            energy: super::energy::BackendEnergy::open(topo, &opened),
            comms: HashMap::new(),
            nccl,
            extra,
            driver_version: driver.version,
            gpus,
            missing,
            poisoned: BTreeMap::new(),
            kernels_summary,
            peer_warned: BTreeSet::new(),
        })
    }

    fn preflight(&self, case: &CollCase) -> Result<(), CaseError> {
        if case.gpus.len() < 2 {
            return Err(CaseError::Waived(
                "a collective needs at least two GPUs".into(),
            ));
        }
        let mut seen = BTreeSet::new();
        for g in &case.gpus {
            if !seen.insert(*g) {
                return Err(CaseError::Waived(format!("GPU {g} is listed twice")));
            }
            if let Some(e) = self.poisoned.get(g) {
                return Err(CaseError::Failed(format!(
                    "GPU {g} hit an unrecoverable error earlier ({e}); restart scalescope to measure it again"
                )));
            }
            if !self.gpus.contains_key(g) {
                return Err(CaseError::Failed(
                    self.missing
                        .get(g)
                        .cloned()
                        .unwrap_or_else(|| format!("GPU {g} is not part of this run")),
                ));
            }
        }
        if case.iters == 0 {
            return Err(CaseError::Skipped("--iters must be at least 1".into()));
        }
        Ok(())
    }

    fn ranks(&self, gpus: &[usize]) -> Result<Vec<&GpuState>, CaseError> {
        gpus.iter()
            .map(|g| {
                self.gpus
                    .get(g)
                    .ok_or_else(|| CaseError::Failed(format!("GPU {g} is not open")))
            })
            .collect()
    }

    /// The communicators of a GPU set, created on first use.
    fn comm_set(&mut self, gpus: &[usize]) -> Result<Vec<ncclComm_t>, CaseError> {
        if let Some(c) = self.comms.get(gpus) {
            return Ok(c.comms.clone());
        }
        let nccl = self
            .nccl
            .as_ref()
            .map_err(|e| CaseError::Nccl(e.clone()))?
            .clone();
        let ordinals: Vec<i32> = self
            .ranks(gpus)?
            .iter()
            .map(|g| i32::try_from(g.ctx.ordinal()).unwrap_or(i32::MAX))
            .collect();
        let comms = nccl.comm_init_all(&ordinals)?;
        let set = CommSet {
            comms: comms.clone(),
            nccl,
            extra: self.extra.clone(),
            abort: false,
            released: false,
        };
        self.comms.insert(gpus.to_vec(), set);
        Ok(comms)
    }

    /// Drops a GPU set's communicators after an error: aborted when `abort`, left alone when
    /// `released` (they were aborted already).
    fn forget_comms(&mut self, gpus: &[usize], abort: bool, released: bool) {
        if let Some(mut set) = self.comms.remove(gpus) {
            set.abort = abort;
            set.released = released;
        }
    }

    /// Marks GPUs unusable after a sticky error or work that never finished.
    fn poison(&mut self, gpus: &[usize], why: &str) {
        for g in gpus {
            self.poisoned.entry(*g).or_insert_with(|| why.to_string());
        }
    }

    /// Peer access both ways between every pair of the case's GPUs.
    fn require_peers(
        &mut self,
        gpus: &[usize],
        warnings: &mut Vec<Warning>,
    ) -> Result<(), CaseError> {
        for (i, &a) in gpus.iter().enumerate() {
            for &b in &gpus[i + 1..] {
                let (ca, cb) = {
                    let r = self.ranks(&[a, b])?;
                    (r[0].ctx.clone(), r[1].ctx.clone())
                };
                if !context::enable_peer_access_both(&ca, &cb)? {
                    if self.peer_warned.insert((a.min(b), a.max(b))) {
                        warnings.push(Warning::PeerAccessUnsupported { src: a, dst: b });
                    }
                    return Err(CaseError::Waived(format!(
                        "peer access unsupported between GPU {a} and {b}: scalescope's own algorithms need P2P"
                    )));
                }
            }
        }
        Ok(())
    }

    fn run_checked(&mut self, case: &CollCase, warnings: &mut Vec<Warning>) -> CollectiveResult {
        let version = match case.algo {
            Algo::Nccl => self.nccl.as_ref().ok().map(|n| n.version()),
            _ => Some(own_version()),
        };
        let outcome = self.preflight(case).and_then(|()| match case.algo {
            Algo::Nccl => self.run_nccl(case),
            _ => {
                if case.op != CollectiveOp::AllReduce {
                    return Err(CaseError::Waived(format!(
                        "scalescope's {} algorithm runs all_reduce only",
                        case.algo
                    )));
                }
                self.require_peers(&case.gpus, warnings)?;
                let ranks = self.ranks(&case.gpus)?;
                own::run(&ranks, case)
            }
        });
        match outcome {
            Ok(r) => r,
            Err(e) => {
                match &e {
                    CaseError::Cuda(c) if context::is_sticky(c) => {
                        self.poison(&case.gpus, &c.to_string());
                        self.forget_comms(&case.gpus, true, false);
                    }
                    CaseError::Timeout(t) => self.poison(&case.gpus, t),
                    CaseError::Nccl(_) if case.algo == Algo::Nccl => {
                        // The communicators may be unusable after an error: start afresh.
                        self.forget_comms(&case.gpus, false, false);
                    }
                    _ => {}
                }
                let (status, reason) = e.status(case.bytes);
                let mut r = case.row(Source::Measured, status, reason);
                r.backend_version = version;
                r
            }
        }
    }

    fn run_nccl(&mut self, case: &CollCase) -> Result<CollectiveResult, CaseError> {
        let nccl = self
            .nccl
            .as_ref()
            .map_err(|e| CaseError::Skipped(e.to_string()))?
            .clone();
        let comms = self.comm_set(&case.gpus)?;
        let extra = self.extra.clone();
        let ranks = self.ranks(&case.gpus)?;
        let locals: Vec<nccl_ops::LocalRank<'_>> = ranks
            .iter()
            .zip(&comms)
            .enumerate()
            .map(|(rank, (g, &comm))| nccl_ops::LocalRank { rank, comm, gpu: g })
            .collect();
        let job = nccl_ops::Job {
            nccl: &nccl,
            extra: extra.as_deref(),
            nranks: case.gpus.len(),
            ranks: locals,
        };
        let outcome = nccl_ops::run_case(&job, case);
        drop(job);
        match outcome {
            Ok(nccl_ops::Measured {
                samples_us,
                wrong,
                graph,
            }) => Ok(measured_row(
                case,
                nccl.version(),
                samples_us,
                wrong,
                graph,
                None,
            )),
            Err((e, aborted)) => {
                if aborted {
                    self.forget_comms(&case.gpus, false, true);
                }
                Err(e)
            }
        }
    }
}

impl CollectiveBackend for CudaCollectives {
    fn source(&self) -> Source {
        Source::Measured
    }

    fn describe(&self) -> String {
        let nccl = match &self.nccl {
            Ok(n) => format!("{} ({})", n.version(), n.path),
            Err(e) => e.to_string(),
        };
        let mut s = format!(
            "{nccl} · {} · {}",
            super::cuda_version(self.driver_version),
            super::gpu_summary(self.gpus.values().map(|g| g.ctx.as_ref()))
        );
        if self.gpus.values().any(|g| g.kernels.is_err()) {
            s.push_str(&format!(
                " · {} (verification and own algorithms unavailable)",
                self.kernels_summary
            ));
        }
        s
    }

    fn run_case(&mut self, case: &CollCase, warnings: &mut Vec<Warning>) -> CollectiveResult {
        let recording = self.energy.begin();
        // A panic would be a bug of ours; it must still not end the run.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.run_checked(case, warnings)
        }));
        let outcome = outcome.map(|mut row| {
            // A multi-process run's other ranks hold GPUs this process does not read.
            if row.status == Status::Ok && row.processes == 1 {
                let gpus = [row.gpus.clone()];
                row.energy = self
                    .energy
                    .finish(recording, &gpus, warnings)
                    .pop()
                    .flatten();
            }
            row
        });
        outcome.unwrap_or_else(|p| {
            let what = super::panic_message(p.as_ref());
            case.row(
                Source::Measured,
                Status::Failed,
                format!("internal error in the collectives backend: {what}"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TopologySource;

    #[test]
    fn without_a_driver_new_says_to_use_modeled() {
        if crate::cuda::driver().is_ok() {
            return; // a machine with a driver: covered by tests/gpu_collectives.rs
        }
        let topo = Topology::new(TopologySource::Imported { paths: vec![] });
        match CudaCollectives::new(&topo, None) {
            Err(BenchError::Unavailable(msg)) => assert!(msg.contains("--modeled"), "{msg}"),
            Err(other) => panic!("expected Unavailable, got {other:?}"),
            Ok(_) => panic!("expected an error without a driver"),
        }
    }

    #[test]
    fn backend_can_move_to_a_worker_thread() {
        fn is_send<T: Send>() {}
        is_send::<CudaCollectives>();
    }

    #[test]
    fn rows_carry_verification() {
        let case = CollCase {
            op: CollectiveOp::AllReduce,
            algo: Algo::Ring,
            gpus: vec![0, 1],
            bytes: 1 << 20,
            dtype: crate::model::Dtype::F32,
            in_place: false,
            iters: 20,
            warmup: 5,
            graph: false,
        };
        let ok = measured_row(
            &case,
            own_version(),
            vec![10.0, 12.0, 11.0],
            Ok(0),
            false,
            None,
        );
        assert_eq!(ok.status, Status::Ok);
        assert_eq!(ok.time_us, Some(11.0));
        assert_eq!(ok.reason, None);
        assert_eq!(ok.backend_version.as_deref(), Some(own_version().as_str()));
        let bad = measured_row(&case, own_version(), vec![10.0], Ok(7), false, None);
        assert_eq!(bad.status, Status::Failed);
        assert!(bad.reason.unwrap().contains("7 wrong"));
        let unverified = measured_row(
            &case,
            own_version(),
            vec![10.0],
            Err("x".into()),
            true,
            None,
        );
        assert_eq!(unverified.wrong, None);
        assert!(unverified.graph);
        let (st, why) = CaseError::Cuda(CudaError::Call {
            call: "cuMemAlloc_v2",
            name: "CUDA_ERROR_OUT_OF_MEMORY".into(),
            code: sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY as i32,
        })
        .status(1 << 40);
        assert_eq!(st, Status::Skipped);
        assert!(why.contains("out of memory"), "{why}");
    }
}
