//! NCCL collectives, as nccl-tests runs them: buffers and in-place offsets per op, one
//! operation per rank inside ncclGroupStart/End, event timing, optional CUDA graph capture, and
//! a separate verification run.
//!
//! The same code serves one process driving every GPU (a [`Job`] with every rank) and one
//! process per GPU (a [`Job`] with this process's rank only).

use std::time::{Duration, Instant};

use cudarc::driver::sys;
use cudarc::nccl::sys::{ncclComm_t, ncclRedOp_t};

use super::kernels::Expected;
use super::{CaseError, GpuState, NcclExtra, POISON, SAMPLES, deadline_for, read_u64};
use super::{time_with_events, values, wait_idle, wait_until};
use crate::bench::collectives::CollCase;
use crate::cuda::memory::DeviceBuffer;
use crate::cuda::nccl::{Buffers, CommStream, Nccl, NcclError, nccl_dtype};
use crate::cuda::stream::{Event, Graph, Stream};
use crate::model::{CollectiveOp, Dtype};

/// One rank driven by this process.
pub(crate) struct LocalRank<'a> {
    /// The rank in the communicator.
    pub rank: usize,
    pub comm: ncclComm_t,
    pub gpu: &'a GpuState,
}

/// The ranks this process drives, and the NCCL they use.
pub(crate) struct Job<'a> {
    pub nccl: &'a Nccl,
    pub extra: Option<&'a NcclExtra>,
    /// Ranks in the communicator (all processes).
    pub nranks: usize,
    pub ranks: Vec<LocalRank<'a>>,
}

impl Job<'_> {
    fn streams(&self) -> Vec<&Stream> {
        self.ranks.iter().map(|r| &r.gpu.stream).collect()
    }

    /// NCCL's asynchronous errors on any local communicator (e.g. a peer process that died).
    fn async_errors(&self) -> Result<(), CaseError> {
        if let Some(x) = self.extra {
            for r in &self.ranks {
                x.async_error(self.nccl, r.comm)?;
            }
        }
        Ok(())
    }

    /// Waits for the local streams, watching NCCL's asynchronous errors.
    fn wait(&self, deadline: Instant) -> Result<(), CaseError> {
        wait_until(&self.streams(), deadline, &|| self.async_errors())
    }
}

/// What a case measured on this process's ranks.
pub(crate) struct Measured {
    /// Per sample, the slowest local rank's time per operation, µs.
    pub samples_us: Vec<f64>,
    /// Wrong elements over the local ranks, or why nothing was verified.
    pub wrong: Result<u64, String>,
    pub graph: bool,
}

/// One rank's buffers for an op, in nccl-tests' layout: out of place, a send and a receive
/// buffer; in place, one buffer, the send data at `rank × count` inside the gathered buffer for
/// all-gather, the received block at `rank × count` inside the scattered buffer for
/// reduce-scatter, and send = receive for the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Elements per rank as the NCCL call takes them.
    pub count: u64,
    pub elem: u64,
    pub in_elems: u64,
    pub out_elems: u64,
    /// Elements of the receive (in place: the only) buffer.
    pub main_elems: u64,
    /// Offsets into the main buffer, in place.
    pub send_off: u64,
    pub recv_off: u64,
    pub in_place: bool,
}

impl Layout {
    /// `None` when the sizes overflow.
    pub fn new(
        op: CollectiveOp,
        count: u64,
        nranks: usize,
        rank: usize,
        in_place: bool,
        dtype: Dtype,
    ) -> Option<Layout> {
        let (in_elems, out_elems) = values::elems_in_out(op, count, nranks)?;
        let at_rank = count.checked_mul(rank as u64)?;
        let (main_elems, send_off, recv_off) = match (in_place, op) {
            (false, _) => (out_elems, 0, 0),
            (true, CollectiveOp::AllGather) => (out_elems, at_rank, 0),
            (true, CollectiveOp::ReduceScatter) => (in_elems, 0, at_rank),
            (true, _) => (in_elems.max(out_elems), 0, 0),
        };
        let elem = dtype.size();
        main_elems.checked_mul(elem)?;
        in_elems.checked_mul(elem)?;
        Some(Layout {
            count,
            elem,
            in_elems,
            out_elems,
            main_elems,
            send_off,
            recv_off,
            in_place,
        })
    }
}

/// Bytes as a usize, or a skip.
pub(crate) fn usize_bytes(elems: u64, elem: u64) -> Result<usize, CaseError> {
    elems
        .checked_mul(elem)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| CaseError::Skipped("size exceeds this machine's address space".into()))
}

/// One rank's device memory for a case.
pub(crate) struct RankBufs {
    main: DeviceBuffer,
    send: Option<DeviceBuffer>,
    /// The verification's wrong-element counter (one u64).
    wrong: DeviceBuffer,
    layout: Layout,
}

impl RankBufs {
    pub fn alloc(gpu: &GpuState, layout: Layout) -> Result<RankBufs, CaseError> {
        let main = DeviceBuffer::alloc(&gpu.ctx, usize_bytes(layout.main_elems, layout.elem)?)?;
        let send = if layout.in_place {
            None
        } else {
            Some(DeviceBuffer::alloc(
                &gpu.ctx,
                usize_bytes(layout.in_elems, layout.elem)?,
            )?)
        };
        let wrong = DeviceBuffer::alloc(&gpu.ctx, 8)?;
        Ok(RankBufs {
            main,
            send,
            wrong,
            layout,
        })
    }

    pub fn send_ptr(&self) -> sys::CUdeviceptr {
        match &self.send {
            Some(s) => s.ptr(),
            None => self.main.ptr() + self.layout.send_off * self.layout.elem,
        }
    }

    pub fn recv_ptr(&self) -> sys::CUdeviceptr {
        self.main.ptr() + self.layout.recv_off * self.layout.elem
    }
}

/// Issues one rank's share of `op` (inside a group).
fn issue(
    job: &Job<'_>,
    r: &LocalRank<'_>,
    b: &RankBufs,
    op: CollectiveOp,
    dtype: Dtype,
) -> Result<(), NcclError> {
    let n = job.nccl;
    let dt = nccl_dtype(dtype);
    let count = usize::try_from(b.layout.count).map_err(|_| NcclError::Call {
        call: "ncclGroupStart",
        message: "count exceeds the address space".into(),
    })?;
    let on = CommStream {
        comm: r.comm,
        stream: &r.gpu.stream,
    };
    let (send, recv) = (b.send_ptr(), b.recv_ptr());
    let whole = Buffers {
        send,
        recv,
        count,
        dtype: dt,
    };
    let peer = |p: usize| p as i32;
    let block = b.layout.count * b.layout.elem;
    // SAFETY (every call): the buffers are live device allocations sized by `Layout` for this op
    // and count (send: in_elems, recv: out_elems from their pointers), owned by the caller until
    // the streams are idle; the communicator and stream belong to this rank's GPU.
    match op {
        CollectiveOp::AllReduce => unsafe { n.all_reduce(whole, ncclRedOp_t::ncclSum, on) },
        CollectiveOp::AllGather => unsafe { n.all_gather(whole, on) },
        CollectiveOp::ReduceScatter => unsafe { n.reduce_scatter(whole, ncclRedOp_t::ncclSum, on) },
        CollectiveOp::Broadcast => unsafe { n.broadcast(whole, 0, on) },
        CollectiveOp::AllToAll => {
            // As nccl-tests does for NCCL versions without ncclAlltoAll: a send and a receive
            // of one block to and from every rank, itself included.
            for p in 0..job.nranks {
                let off = block * p as u64;
                // SAFETY: as above; `off` stays inside the buffers (ranks × block elements).
                unsafe {
                    n.send(send + off, count, dt, peer(p), on)?;
                    n.recv(recv + off, count, dt, peer(p), on)?;
                }
            }
            Ok(())
        }
        CollectiveOp::SendRecv => {
            let next = (r.rank + 1) % job.nranks;
            let prev = (r.rank + job.nranks - 1) % job.nranks;
            // SAFETY: as above.
            unsafe {
                n.send(send, count, dt, peer(next), on)?;
                n.recv(recv, count, dt, peer(prev), on)
            }
        }
    }
}

/// Enqueues one operation on every local rank, in one NCCL group.
pub(crate) fn enqueue(
    job: &Job<'_>,
    bufs: &[RankBufs],
    op: CollectiveOp,
    dtype: Dtype,
) -> Result<(), CaseError> {
    let n = job.nccl;
    // Balanced by the group end below on every path.
    n.group_start()?;
    let mut issued = Ok(());
    for (r, b) in job.ranks.iter().zip(bufs) {
        issued = issue(job, r, b, op, dtype);
        if issued.is_err() {
            break;
        }
    }
    let ended = n.group_end();
    issued?;
    ended?;
    Ok(())
}

/// Captures what `body` enqueues on every stream into one graph per stream, as nccl-tests does
/// with several GPUs in one thread (NCCL supports stream capture; each rank's kernels land in
/// its stream's graph). Capture is always ended on every stream that began, even on failure.
fn capture(
    streams: &[&Stream],
    body: &mut dyn FnMut() -> Result<(), CaseError>,
) -> Result<Vec<Graph>, CaseError> {
    let mut result: Result<(), CaseError> = Ok(());
    let mut begun = 0;
    for s in streams {
        if let Err(e) = s.begin_capture() {
            result = Err(e.into());
            break;
        }
        begun += 1;
    }
    if result.is_ok() {
        result = body();
    }
    let mut graphs = Vec::new();
    for s in &streams[..begun] {
        let (g, r) = s.end_capture();
        graphs.push(g);
        if let Err(e) = r
            && result.is_ok()
        {
            result = Err(e.into());
        }
    }
    result?;
    for g in &mut graphs {
        g.instantiate()?;
    }
    Ok(graphs)
}

/// Captures what `body` enqueues on several GPUs' streams into ONE graph, launched on the first
/// stream: the first stream forks to the others through an event at the start (which makes them
/// join the capture) and waits for each of them at the end. `body` may order the streams among
/// themselves with events recorded inside it. Capture is always ended, even on failure.
pub(crate) fn capture_forked(
    streams: &[&Stream],
    body: &mut dyn FnMut() -> Result<(), CaseError>,
) -> Result<Graph, CaseError> {
    let (first, rest) = streams
        .split_first()
        .ok_or_else(|| CaseError::Waived("no stream to capture".into()))?;
    // Made before the capture and kept until it ends.
    let fork = Event::new_untimed(first.ctx())?;
    let joins = rest
        .iter()
        .map(|s| Event::new_untimed(s.ctx()))
        .collect::<Result<Vec<_>, _>>()?;
    first.begin_capture()?;
    let mut result = (|| -> Result<(), CaseError> {
        fork.record(first)?;
        for s in rest {
            s.wait_event(&fork)?;
        }
        body()?;
        for (s, join) in rest.iter().zip(&joins) {
            join.record(s)?;
            first.wait_event(join)?;
        }
        Ok(())
    })();
    let (mut g, ended) = first.end_capture();
    if let Err(e) = ended
        && result.is_ok()
    {
        result = Err(e.into());
    }
    result?;
    g.instantiate()?;
    Ok(g)
}

pub(crate) fn launch_graphs(graphs: &[Graph], streams: &[&Stream]) -> Result<(), CaseError> {
    for (g, s) in graphs.iter().zip(streams) {
        // SAFETY: an instantiated graph of this stream's GPU; the buffers its nodes use are
        // alive until the streams are idle.
        unsafe { g.launch(s) }?;
    }
    Ok(())
}

/// Fills each rank's input with the pattern (when the kernels are there), so nothing is timed
/// on uninitialised memory.
fn fill_inputs(job: &Job<'_>, bufs: &[RankBufs], dtype: Dtype) -> Result<(), CaseError> {
    for (r, b) in job.ranks.iter().zip(bufs) {
        if let Ok(k) = &r.gpu.kernels {
            k.fill(
                &r.gpu.stream,
                dtype,
                b.send_ptr(),
                b.layout.in_elems,
                0,
                r.rank as i32,
            )?;
        }
    }
    Ok(())
}

/// Warm-up, then [`SAMPLES`] timed samples of `iters` operations (launched from a CUDA graph
/// with `case.graph`). Returns per-sample µs per op and whether a graph ran.
/// Shortest timed sample for small operations, seconds, and the most iterations used to reach it.
const MIN_SAMPLE_S: f64 = 2e-3;
const MAX_SMALL_ITERS: u32 = 1000;

pub(crate) fn measure(
    job: &Job<'_>,
    bufs: &[RankBufs],
    case: &CollCase,
) -> Result<(Vec<f64>, bool), CaseError> {
    let streams = job.streams();
    // Small operations are latency-bound and the first ones after a communicator is created are
    // slow (connections, proxy threads): give them at least 20 warm-ups; they cost microseconds.
    let warmup = if case.bytes <= 1 << 20 {
        case.warmup.max(20)
    } else {
        case.warmup
    };
    let warm_deadline = deadline_for(case.bytes, u64::from(warmup));
    fill_inputs(job, bufs, case.dtype)?;
    let started = std::time::Instant::now();
    for _ in 0..warmup {
        enqueue(job, bufs, case.op, case.dtype)?;
    }
    job.wait(warm_deadline)?;
    // Tiny operations take microseconds: time each sample over at least MIN_SAMPLE of them so
    // the start/stop events and the first launch weigh nothing (nccl-tests uses a fixed count).
    let per_op = started.elapsed().as_secs_f64() / f64::from(warmup.max(1));
    let iters = if per_op > 0.0 && per_op * f64::from(case.iters) < MIN_SAMPLE_S {
        ((MIN_SAMPLE_S / per_op).ceil() as u32)
            .min(MAX_SMALL_ITERS)
            .max(case.iters)
    } else {
        case.iters
    };
    let ops = u64::from(iters) * (SAMPLES as u64 + 2);
    let deadline = deadline_for(case.bytes, ops);
    let once = || enqueue(job, bufs, case.op, case.dtype);
    if case.graph {
        let graphs = capture(&streams, &mut || {
            for _ in 0..iters {
                once()?;
            }
            Ok(())
        })?;
        // The first launch uploads the graph: keep it out of the samples.
        launch_graphs(&graphs, &streams)?;
        job.wait(deadline)?;
        let poll = || job.async_errors();
        let samples = time_with_events(
            &streams,
            SAMPLES,
            iters,
            deadline,
            &poll,
            &mut || Ok(()),
            &mut || launch_graphs(&graphs, &streams),
        )?;
        return Ok((samples, true));
    }
    let poll = || job.async_errors();
    // One untimed operation ahead of each sample: after the previous sample's synchronisation
    // the first NCCL launch pays a wake-up cost that is not the operation's.
    let samples = time_with_events(
        &streams,
        SAMPLES,
        iters,
        deadline,
        &poll,
        &mut || once(),
        &mut || {
            for _ in 0..iters {
                once()?;
            }
            Ok(())
        },
    )?;
    Ok((samples, false))
}

/// The verification run: poisoned outputs, pattern inputs, one operation, then the check kernel
/// on every local rank's output. `Ok(Err(why))` when the kernels are missing.
pub(crate) fn verify(
    job: &Job<'_>,
    bufs: &[RankBufs],
    case: &CollCase,
) -> Result<Result<u64, String>, CaseError> {
    for r in &job.ranks {
        if let Err(why) = &r.gpu.kernels {
            return Ok(Err(why.clone()));
        }
    }
    let deadline = deadline_for(case.bytes, 4);
    for (r, b) in job.ranks.iter().zip(bufs) {
        let s = &r.gpu.stream;
        b.main.memset_async(POISON, s)?;
        b.wrong.memset_async(0, s)?;
    }
    fill_inputs(job, bufs, case.dtype)?;
    enqueue(job, bufs, case.op, case.dtype)?;
    for (r, b) in job.ranks.iter().zip(bufs) {
        if let Ok(k) = &r.gpu.kernels {
            k.check(
                &r.gpu.stream,
                case.dtype,
                b.recv_ptr(),
                b.layout.out_elems,
                Expected {
                    op: values::op_code(case.op),
                    rank: r.rank as i32,
                    nranks: job.nranks as i32,
                    count: b.layout.count,
                },
                b.wrong.ptr(),
            )?;
        }
    }
    job.wait(deadline)?;
    let mut wrong = 0u64;
    for b in bufs {
        wrong = wrong.saturating_add(read_u64(&b.wrong)?);
    }
    Ok(Ok(wrong))
}

/// Allocates every local rank's buffers for `case`.
pub(crate) fn alloc(job: &Job<'_>, case: &CollCase) -> Result<Vec<RankBufs>, CaseError> {
    let count = case.op.count_per_rank(case.bytes, case.dtype, job.nranks);
    if count == 0 {
        return Err(CaseError::Skipped(
            "smaller than one element per rank: nothing to move".into(),
        ));
    }
    let mut bufs = Vec::new();
    for r in &job.ranks {
        let layout = Layout::new(
            case.op,
            count,
            job.nranks,
            r.rank,
            case.in_place,
            case.dtype,
        )
        .ok_or_else(|| CaseError::Skipped("size exceeds this machine's address space".into()))?;
        bufs.push(RankBufs::alloc(r.gpu, layout)?);
    }
    Ok(bufs)
}

/// After a failure: waits for the streams; when they do not go idle, aborts the communicators
/// (returns true: they must not be used or destroyed again) and, if even that does not stop
/// the work, leaks the buffers rather than free memory under running kernels.
pub(crate) fn settle(job: &Job<'_>, bufs: Vec<RankBufs>) -> bool {
    let streams = job.streams();
    if wait_idle(&streams, Instant::now() + Duration::from_secs(10)).is_ok() {
        return false;
    }
    let mut aborted = false;
    if let Some(x) = job.extra {
        for r in &job.ranks {
            x.abort(r.comm);
        }
        aborted = true;
    }
    if wait_idle(&streams, Instant::now() + Duration::from_secs(20)).is_err() {
        std::mem::forget(bufs);
    }
    aborted
}

/// Runs one case on every local rank: allocate, time, verify. On failure the error, and whether
/// the communicators were aborted.
pub(crate) fn run_case(job: &Job<'_>, case: &CollCase) -> Result<Measured, (CaseError, bool)> {
    let bufs = alloc(job, case).map_err(|e| (e, false))?;
    let outcome = measure(job, &bufs, case).and_then(|(samples_us, graph)| {
        let wrong = verify(job, &bufs, case)?;
        Ok(Measured {
            samples_us,
            wrong,
            graph,
        })
    });
    match outcome {
        Ok(m) => Ok(m),
        Err(e) => {
            let aborted = settle(job, bufs);
            Err((e, aborted))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_follow_nccl_tests() {
        let f = Dtype::F32;
        let ag = Layout::new(CollectiveOp::AllGather, 100, 4, 2, true, f).unwrap();
        assert_eq!((ag.main_elems, ag.send_off, ag.recv_off), (400, 200, 0));
        let rs = Layout::new(CollectiveOp::ReduceScatter, 100, 4, 3, true, f).unwrap();
        assert_eq!((rs.main_elems, rs.send_off, rs.recv_off), (400, 0, 300));
        assert_eq!((rs.in_elems, rs.out_elems), (400, 100));
        let a2a = Layout::new(CollectiveOp::AllToAll, 100, 4, 1, true, f).unwrap();
        assert_eq!((a2a.main_elems, a2a.send_off, a2a.recv_off), (400, 0, 0));
        let oop = Layout::new(CollectiveOp::AllGather, 100, 4, 1, false, f).unwrap();
        assert_eq!((oop.main_elems, oop.in_elems), (400, 100));
        assert!(Layout::new(CollectiveOp::AllToAll, u64::MAX / 2, 4, 1, false, f).is_none());
        assert!(usize_bytes(u64::MAX, 8).is_err());
    }
}
