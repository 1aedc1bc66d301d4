//! scalescope's own all-reduce algorithms, no NCCL: ring and tree over P2P (peer pointers read
//! by our reduce kernel, peer copies by the copy engines), and via host memory (the floor).
//! See [`super::schedule`] for who does what at each step.
//!
//! Ordering across GPUs uses events only: a step waits (cuStreamWaitEvent) on the event of the
//! step it reads from. Between iterations every GPU waits for every other GPU's last step, so an
//! iteration never overwrites data a neighbour is still reading. The ring is captured once into a
//! CUDA graph over every GPU (forked from the first GPU's stream and joined back, which also
//! orders successive iterations) and replayed; enqueued step by step from one host thread it was
//! host-bound on 4 or more GPUs.

use std::time::Instant;

use cudarc::driver::sys;

use super::kernels::{CollKernels, Expected};
use super::nccl_ops::{capture_forked, launch_graphs, usize_bytes};
use super::schedule::{self, RingLayout};
use super::{
    CaseError, GpuState, POISON, SAMPLES, copy_async, deadline_for, measured_row, own_version,
    read_u64, time_with_events, values, wait_idle,
};
use crate::bench::collectives::CollCase;
use crate::cuda::memory::{DeviceBuffer, PinnedBuffer, host_memory_available};
use crate::cuda::stream::{Event, Stream};
use crate::model::{Algo, CollectiveOp, CollectiveResult, Dtype};

/// Ring chunks per segment at most, and their smallest size.
const MAX_CHUNKS: usize = 8;
const MIN_CHUNK_BYTES: u64 = 1 << 20;

/// One GPU's buffers: the input (out of place) and the result, plus a wrong-element counter.
struct Bufs {
    send: Option<DeviceBuffer>,
    recv: DeviceBuffer,
    wrong: DeviceBuffer,
}

impl Bufs {
    /// Where this GPU's contribution lives (the result buffer itself, in place).
    fn src(&self) -> sys::CUdeviceptr {
        self.send
            .as_ref()
            .map_or(self.recv.ptr(), DeviceBuffer::ptr)
    }
}

/// The case's GPUs, buffers and kernels.
struct Setup<'a> {
    gpus: &'a [&'a GpuState],
    bufs: Vec<Bufs>,
    dtype: Dtype,
    count: u64,
    elem: u64,
}

impl<'a> Setup<'a> {
    /// Every GPU's buffers for `count` elements (`bytes`) of the case's type: a separate input
    /// unless in place, the result, and the wrong-element counter.
    fn alloc(
        gpus: &'a [&'a GpuState],
        case: &CollCase,
        count: u64,
        bytes: usize,
    ) -> Result<Setup<'a>, CaseError> {
        let mut bufs = Vec::new();
        for g in gpus {
            bufs.push(Bufs {
                send: if case.in_place {
                    None
                } else {
                    Some(DeviceBuffer::alloc(&g.ctx, bytes)?)
                },
                recv: DeviceBuffer::alloc(&g.ctx, bytes)?,
                wrong: DeviceBuffer::alloc(&g.ctx, 8)?,
            });
        }
        Ok(Setup {
            gpus,
            bufs,
            dtype: case.dtype,
            count,
            elem: case.dtype.size(),
        })
    }

    fn streams(&self) -> Vec<&Stream> {
        self.gpus.iter().map(|g| &g.stream).collect()
    }

    fn kernels(&self, g: usize) -> Result<&CollKernels, CaseError> {
        self.gpus[g].kernels.as_ref().map_err(|why| {
            CaseError::Skipped(format!(
                "scalescope's own algorithms need their kernels: {why}"
            ))
        })
    }

    fn at(&self, base: sys::CUdeviceptr, elem_index: u64) -> sys::CUdeviceptr {
        base + elem_index * self.elem
    }
}

/// Runs one all-reduce case with scalescope's ring, tree or host algorithm.
pub(crate) fn run(gpus: &[&GpuState], case: &CollCase) -> Result<CollectiveResult, CaseError> {
    if case.op != CollectiveOp::AllReduce {
        return Err(CaseError::Waived(
            "own algorithms run all_reduce only".into(),
        ));
    }
    let n = gpus.len();
    let count = case.op.count_per_rank(case.bytes, case.dtype, n);
    if count == 0 {
        return Err(CaseError::Skipped(
            "smaller than one element: nothing to move".into(),
        ));
    }
    let elem = case.dtype.size();
    let bytes = usize_bytes(count, elem)?;
    check_runnable(gpus, case, bytes)?;
    let setup = Setup::alloc(gpus, case, count, bytes)?;
    // The ring runs as one CUDA graph over every GPU, captured once and replayed: enqueued step
    // by step from one host thread (n·2(n−1)·chunks operations) the host, not the links, set its
    // pace on 4 and more GPUs (8× H200: 64 MiB and 256 MiB both 5.6 ms). Where capture fails it
    // runs enqueued, with a note saying why. The tree has 2·log2(n) steps and is enqueued: as a
    // graph it ran slower at large sizes (4× H200, 1 GiB: 117 against 144 GB/s busbw).
    let mut graph_note = None;
    let outcome = match case.algo {
        Algo::Host => run_host(&setup, case, bytes).map(|r| (r, false)),
        Algo::Ring => {
            let plan = Ring::new(&setup)?;
            run_own(&setup, case, &mut graph_note, &mut |s, fenced| {
                plan.enqueue(s, fenced)
            })
        }
        _ => {
            let plan = Tree::new(&setup)?;
            run_events(&setup, case, &mut || plan.enqueue(&setup)).map(|r| (r, false))
        }
    };
    match outcome {
        Ok(((samples, wrong), graph)) => {
            let note = graph_note.or_else(|| {
                (case.graph && !graph).then(|| {
                    "graph mode applies to NCCL and the own ring; ran without a graph".to_string()
                })
            });
            Ok(measured_row(
                case,
                own_version(),
                samples,
                wrong,
                graph,
                note,
            ))
        }
        Err(e) => {
            // Never free memory under running work: wait, and leak if it does not finish.
            let streams = setup.streams();
            if wait_idle(
                &streams,
                Instant::now() + std::time::Duration::from_secs(20),
            )
            .is_err()
            {
                std::mem::forget(setup.bufs);
            }
            Err(e)
        }
    }
}

/// Skips a case this machine cannot run: the via-host algorithm without the pinned host memory
/// for every GPU's `bytes`, the ring and tree without their kernels on every GPU.
fn check_runnable(gpus: &[&GpuState], case: &CollCase, bytes: usize) -> Result<(), CaseError> {
    if case.algo == Algo::Host {
        let need = (bytes as u64).saturating_mul(gpus.len() as u64);
        if let Some(avail) = host_memory_available()
            && need > avail / 4 * 3
        {
            return Err(CaseError::Skipped(format!(
                "the via-host all-reduce needs {} of pinned host memory; {} is available",
                crate::model::quantities::format_bytes(need),
                crate::model::quantities::format_bytes(avail)
            )));
        }
    } else {
        for g in gpus {
            if let Err(why) = &g.kernels {
                return Err(CaseError::Skipped(format!(
                    "scalescope's own algorithms need their kernels: {why}"
                )));
            }
        }
    }
    Ok(())
}

/// Fills every GPU's input with the pattern (and poisons separate outputs when `poison`), and
/// waits until every GPU is done: the algorithms read their peers' buffers, and a peer's fill
/// runs on the peer's own stream, which nothing else orders them after.
fn prepare(setup: &Setup<'_>, poison: bool) -> Result<(), CaseError> {
    for (g, b) in setup.bufs.iter().enumerate() {
        let s = &setup.gpus[g].stream;
        if poison && b.send.is_some() {
            b.recv.memset_async(POISON, s)?;
        }
        if let Ok(k) = &setup.gpus[g].kernels {
            k.fill(s, setup.dtype, b.src(), setup.count, 0, g as i32)?;
        }
    }
    wait_idle(
        &setup.streams(),
        deadline_for(setup.count.saturating_mul(setup.elem), 2),
    )
}

/// Runs the check kernel on every GPU's result and sums the wrong elements; `Err(why)` inside
/// when there are no kernels to check with.
fn check_results(setup: &Setup<'_>, deadline: Instant) -> Result<Result<u64, String>, CaseError> {
    for g in setup.gpus {
        if let Err(why) = &g.kernels {
            return Ok(Err(why.clone()));
        }
    }
    let n = setup.gpus.len() as i32;
    for (g, b) in setup.bufs.iter().enumerate() {
        let s = &setup.gpus[g].stream;
        b.wrong.memset_async(0, s)?;
        setup.kernels(g)?.check(
            s,
            setup.dtype,
            b.recv.ptr(),
            setup.count,
            Expected {
                op: values::op_code(CollectiveOp::AllReduce),
                rank: g as i32,
                nranks: n,
                count: setup.count,
            },
            b.wrong.ptr(),
        )?;
    }
    wait_idle(&setup.streams(), deadline)?;
    let mut wrong = 0u64;
    for b in &setup.bufs {
        wrong = wrong.saturating_add(read_u64(&b.wrong)?);
    }
    Ok(Ok(wrong))
}

/// Enqueues one all-reduce; `true`: fenced (see [`run_own`]).
type Enqueue<'e> = dyn FnMut(&Setup<'_>, bool) -> Result<(), CaseError> + 'e;

/// Per-operation samples (µs) and the verification outcome.
type Timed = (Vec<f64>, Result<u64, String>);

/// The ring: one all-reduce per call of `enqueue(setup, fenced)` — `fenced` when it is enqueued
/// directly (it must then wait for every GPU's previous iteration itself); unfenced inside a
/// graph, whose fork and join order the iterations. Runs the graph when capture works, else
/// enqueued with `note` saying why; returns whether the graph ran.
fn run_own(
    setup: &Setup<'_>,
    case: &CollCase,
    note: &mut Option<String>,
    enqueue: &mut Enqueue<'_>,
) -> Result<(Timed, bool), CaseError> {
    let streams = setup.streams();
    prepare(setup, false)?;
    match capture_forked(&streams, &mut || enqueue(setup, false)) {
        Ok(graph) => {
            let first = [streams[0]];
            let launch = &mut || launch_graphs(std::slice::from_ref(&graph), &first);
            run_events(setup, case, launch).map(|r| (r, true))
        }
        Err(e) => {
            wait_idle(&streams, deadline_for(case.bytes, 1))?;
            *note = Some(format!("ran without a CUDA graph: capture failed ({e})"));
            run_events(setup, case, &mut || enqueue(setup, true)).map(|r| (r, false))
        }
    }
}

/// Warm-up, event-timed samples, then the verification run, for an algorithm that enqueues one
/// all-reduce per call of `enqueue`.
fn run_events(
    setup: &Setup<'_>,
    case: &CollCase,
    enqueue: &mut dyn FnMut() -> Result<(), CaseError>,
) -> Result<Timed, CaseError> {
    let streams = setup.streams();
    let ops = u64::from(case.warmup) + u64::from(case.iters) * SAMPLES as u64 + 1;
    let deadline = deadline_for(case.bytes, ops);
    prepare(setup, false)?;
    for _ in 0..case.warmup {
        enqueue()?;
    }
    wait_idle(&streams, deadline)?;
    let samples = time_with_events(
        &streams,
        SAMPLES,
        case.iters,
        deadline,
        &|| Ok(()),
        &mut || Ok(()),
        &mut || {
            for _ in 0..case.iters {
                enqueue()?;
            }
            Ok(())
        },
    )?;
    prepare(setup, true)?;
    enqueue()?;
    // A graph's work on the other GPUs is not on their streams: wait for all of it before the
    // check kernels read the results.
    wait_idle(&streams, deadline)?;
    let wrong = check_results(setup, deadline_for(case.bytes, 4))?;
    Ok((samples, wrong))
}

/// Makes every GPU wait for every other GPU's `done` event (the previous iteration's end).
fn barrier(setup: &Setup<'_>, done: &[Event]) -> Result<(), CaseError> {
    for (g, gpu) in setup.gpus.iter().enumerate() {
        for (h, e) in done.iter().enumerate() {
            if h != g {
                gpu.stream.wait_event(e)?;
            }
        }
    }
    Ok(())
}

fn record_done(setup: &Setup<'_>, done: &[Event]) -> Result<(), CaseError> {
    for (gpu, e) in setup.gpus.iter().zip(done) {
        e.record(&gpu.stream)?;
    }
    Ok(())
}

fn untimed_events(gpu: &GpuState, k: usize) -> Result<Vec<Event>, CaseError> {
    (0..k)
        .map(|_| Event::new_untimed(&gpu.ctx).map_err(CaseError::from))
        .collect()
}

/// The ring's layout and one event per (GPU, step, chunk).
struct Ring {
    layout: RingLayout,
    steps: usize,
    chunks: usize,
    /// `events[g][s * chunks + c]`.
    events: Vec<Vec<Event>>,
    done: Vec<Event>,
}

impl Ring {
    fn new(setup: &Setup<'_>) -> Result<Ring, CaseError> {
        let n = setup.gpus.len();
        let layout = RingLayout::new(setup.count, setup.elem, n, MAX_CHUNKS, MIN_CHUNK_BYTES);
        let steps = schedule::ring_steps(n);
        let chunks = layout.chunks_per_segment();
        let mut events = Vec::new();
        let mut done = Vec::new();
        for g in setup.gpus {
            events.push(untimed_events(g, steps * chunks)?);
            done.extend(untimed_events(g, 1)?);
        }
        Ok(Ring {
            layout,
            steps,
            chunks,
            events,
            done,
        })
    }

    /// One all-reduce: reduce-scatter steps (our kernel on GPU g reads the predecessor's
    /// partial sum through its peer pointer and adds its own contribution), then all-gather
    /// steps (a peer copy of the finished chunk from the predecessor). Step s of chunk c on GPU
    /// g waits only on step s − 1 of chunk c on the predecessor.
    fn enqueue(&self, setup: &Setup<'_>, fenced: bool) -> Result<(), CaseError> {
        let n = setup.gpus.len();
        if fenced {
            barrier(setup, &self.done)?;
        }
        for s in 0..self.steps {
            for c in 0..self.chunks {
                for g in 0..n {
                    let p = schedule::ring_pred(g, n);
                    let stream = &setup.gpus[g].stream;
                    if s > 0 {
                        stream.wait_event(&self.events[p][(s - 1) * self.chunks + c])?;
                    }
                    let seg = schedule::ring_segment(g, n, s);
                    let r = self.layout.chunks[seg][c].clone();
                    let len = r.end - r.start;
                    let (mine, pred) = (&setup.bufs[g], &setup.bufs[p]);
                    if len > 0 {
                        if s < n - 1 {
                            // Step 0 reads the predecessor's input, later steps its partial sum.
                            let other = if s == 0 { pred.src() } else { pred.recv.ptr() };
                            setup.kernels(g)?.reduce(
                                stream,
                                setup.dtype,
                                setup.at(mine.recv.ptr(), r.start),
                                setup.at(mine.src(), r.start),
                                setup.at(other, r.start),
                                len,
                            )?;
                        } else {
                            copy_async(
                                stream,
                                setup.at(mine.recv.ptr(), r.start),
                                setup.at(pred.recv.ptr(), r.start),
                                usize_bytes(len, setup.elem)?,
                            )?;
                        }
                    }
                    self.events[g][s * self.chunks + c].record(stream)?;
                }
            }
        }
        if fenced {
            record_done(setup, &self.done)?;
        }
        Ok(())
    }
}

/// The tree's levels and one event per (level, pair) in each direction.
struct Tree {
    levels: Vec<Vec<(usize, usize)>>,
    /// `up[level][pair]`, recorded on the parent's stream after it added the child's sum.
    up: Vec<Vec<Event>>,
    /// `down[level][pair]`, recorded on the child's stream after it copied the parent's result.
    down: Vec<Vec<Event>>,
    done: Vec<Event>,
}

impl Tree {
    fn new(setup: &Setup<'_>) -> Result<Tree, CaseError> {
        let levels = schedule::tree_levels(setup.gpus.len());
        let mut up = Vec::new();
        let mut down = Vec::new();
        for level in &levels {
            let mut u = Vec::new();
            let mut d = Vec::new();
            for &(p, c) in level {
                u.push(Event::new_untimed(&setup.gpus[p].ctx)?);
                d.push(Event::new_untimed(&setup.gpus[c].ctx)?);
            }
            up.push(u);
            down.push(d);
        }
        let mut done = Vec::new();
        for g in setup.gpus {
            done.extend(untimed_events(g, 1)?);
        }
        Ok(Tree {
            levels,
            up,
            down,
            done,
        })
    }

    /// One all-reduce: up the tree, each parent's kernel reads its child's sum through the peer
    /// pointer and adds it into its own buffer; GPU 0 ends with the total; then down the tree,
    /// each child copies its parent's result.
    fn enqueue(&self, setup: &Setup<'_>) -> Result<(), CaseError> {
        let n = setup.gpus.len();
        barrier(setup, &self.done)?;
        // The event of each GPU's latest write, and whether its result buffer holds its sum.
        let mut last: Vec<Option<&Event>> = vec![None; n];
        let mut has = vec![false; n];
        for (k, level) in self.levels.iter().enumerate() {
            for (i, &(p, c)) in level.iter().enumerate() {
                let stream = &setup.gpus[p].stream;
                if let Some(e) = last[c] {
                    stream.wait_event(e)?;
                }
                let (bp, bc) = (&setup.bufs[p], &setup.bufs[c]);
                let a = if has[p] { bp.recv.ptr() } else { bp.src() };
                let b = if has[c] { bc.recv.ptr() } else { bc.src() };
                setup
                    .kernels(p)?
                    .reduce(stream, setup.dtype, bp.recv.ptr(), a, b, setup.count)?;
                let e = &self.up[k][i];
                e.record(stream)?;
                last[p] = Some(e);
                has[p] = true;
            }
        }
        let bytes = usize_bytes(setup.count, setup.elem)?;
        for (k, level) in self.levels.iter().enumerate().rev() {
            for (i, &(p, c)) in level.iter().enumerate() {
                let stream = &setup.gpus[c].stream;
                if let Some(e) = last[p] {
                    stream.wait_event(e)?;
                }
                copy_async(
                    stream,
                    setup.bufs[c].recv.ptr(),
                    setup.bufs[p].recv.ptr(),
                    bytes,
                )?;
                let e = &self.down[k][i];
                e.record(stream)?;
                last[c] = Some(e);
            }
        }
        record_done(setup, &self.done)
    }
}

/// The via-host floor: every GPU's buffer to pinned host memory (concurrently), a
/// multi-threaded sum on the CPU, the sum back to every GPU (concurrently). Timed with the wall
/// clock around whole, synchronised iterations.
fn run_host(
    setup: &Setup<'_>,
    case: &CollCase,
    bytes: usize,
) -> Result<(Vec<f64>, Result<u64, String>), CaseError> {
    let streams = setup.streams();
    let mut host = Vec::new();
    for g in setup.gpus {
        host.push(PinnedBuffer::alloc(&g.ctx, bytes, g.cpus.as_deref())?);
    }
    let outcome = host_body(setup, case, bytes, &mut host);
    // The copies read and write `host`: never free it under them.
    if outcome.is_err()
        && wait_idle(
            &streams,
            Instant::now() + std::time::Duration::from_secs(20),
        )
        .is_err()
    {
        std::mem::forget(host);
    }
    outcome
}

fn host_body(
    setup: &Setup<'_>,
    case: &CollCase,
    bytes: usize,
    host: &mut Vec<PinnedBuffer>,
) -> Result<Timed, CaseError> {
    let streams = setup.streams();
    let ops = u64::from(case.warmup) + u64::from(case.iters) * SAMPLES as u64 + 1;
    let deadline = deadline_for(case.bytes, ops);
    let once = |host: &mut Vec<PinnedBuffer>| -> Result<(), CaseError> {
        for ((g, b), h) in setup.gpus.iter().zip(&setup.bufs).zip(host.iter()) {
            g.ctx.bind()?;
            // SAFETY: `h` is a live pinned buffer of `bytes`; the source is a live device
            // buffer of `bytes`; the stream is live and its context current.
            unsafe { g.stream.copy_dtoh(h.host_ptr(), b.src(), bytes) }?;
        }
        wait_idle(&streams, deadline)?;
        if let Some((acc, rest)) = host.split_first_mut() {
            let others: Vec<&[u8]> = rest.iter().map(PinnedBuffer::as_slice).collect();
            values::parallel_sum(setup.dtype, acc.as_mut_slice(), &others);
        }
        let Some(sum) = host.first() else {
            return Ok(());
        };
        for (g, b) in setup.gpus.iter().zip(&setup.bufs) {
            g.ctx.bind()?;
            // SAFETY: as above, host to device; the host buffer is not touched until the
            // streams are idle again.
            unsafe { g.stream.copy_htod(b.recv.ptr(), sum.host_ptr(), bytes) }?;
        }
        wait_idle(&streams, deadline)
    };
    prepare(setup, false)?;
    wait_idle(&streams, deadline)?;
    for _ in 0..case.warmup {
        once(host)?;
    }
    let mut samples = Vec::new();
    for _ in 0..SAMPLES {
        let t = Instant::now();
        for _ in 0..case.iters {
            once(host)?;
        }
        samples.push(t.elapsed().as_secs_f64() * 1e6 / f64::from(case.iters.max(1)));
    }
    prepare(setup, true)?;
    wait_idle(&streams, deadline)?;
    once(host)?;
    let wrong = check_results(setup, deadline_for(case.bytes, 4))?;
    Ok((samples, wrong))
}
