//! Each test shape: which buffers, which contexts and streams, what is timed, what is checked.

use std::ffi::c_void;
use std::sync::Arc;

use super::kernels::Kernels;
use super::measure::{self, Lane, Op};
use super::pattern::{self, POISON};
use super::{CaseError, CudaBackend, GpuState};
use crate::bench::{Case, Warning};
use crate::cuda::context::Context;
use crate::cuda::memory::{DeviceBuffer, PageableBuffer, PinnedBuffer, host_memory_available};
use crate::cuda::stream::{Event, Stream};
use crate::model::{BandwidthResult, Endpoint, Method, Shape, Source, Stats, Status};

/// Pointer-chase slot spacing: one link per 128-byte cache line, as nvbandwidth lays out its
/// latency tests (common.h `strideLen` = 16 eight-byte words).
pub const CHASE_STRIDE: usize = 128;
/// The chase's buffer, whatever size the test was asked for: nvbandwidth's fixed 2 MiB
/// ("use fixed-size buffer for latency tests", nvbandwidth.cpp). Its lines are linked in order
/// (testcase.cpp `latencyHelper`: node i → i + 16 words), so the walk stays within one large
/// page and open DRAM rows: the latency of one access, not of page walks. An earlier layout
/// (a random cycle with one slot per 4 KiB page over 64 MiB) added TLB misses: 1.06× nvbandwidth's
/// host latency and 0.97–1.03× its peer latency on 2× H200 (2026-11-23).
pub const CHASE_BYTES: usize = 2 << 20;
/// Dependent loads per chase launch. A latency sample launches the chase once from each of the
/// GPU's SMs in turn, so that the figure is the mean over every SM's distance to the memory, not
/// one SM's (a single block lands on the same SM every time, and which SM that is differs from
/// chip to chip: 796 vs 847 ns between the two directions of one H200 pair, 2026-11-27, where
/// nvbandwidth read 827/829); nvbandwidth's `latencyPtrChaseKernel` (kernels.cu, v0.8) walks
/// 1,000,000 / SMs links from each SM the same way. Fewer than the chain's lines, so a launch never
/// loads a line twice; each launch goes on where the last one stopped.
pub const CHASE_STEPS: u64 = 4096;
/// Chunk for host-staged fills and checks (when no kernels could be loaded).
const STAGE_CHUNK: usize = 16 << 20;

pub(super) fn run(
    be: &mut CudaBackend,
    case: &Case,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<BandwidthResult>, CaseError> {
    let bytes =
        usize::try_from(case.bytes).map_err(|_| CaseError::Skipped("size too large".into()))?;
    match case.test.shape() {
        Shape::HostDevice {
            to_device,
            pinned,
            bidir,
        } => host_device(be, case, bytes, to_device, pinned, bidir),
        Shape::Pair { read, bidir, peer } => {
            let shape = PairShape { read, bidir, peer };
            pair(be, case, bytes, shape, warnings)
        }
        Shape::Local => local(be, case, bytes),
        Shape::Fan { to_one } => fan(be, case, bytes, to_one, warnings),
        Shape::HostAll { to_device } => host_all(be, case, bytes, to_device),
        Shape::AllPairs => all_pairs(be, case, bytes, warnings),
        Shape::Latency { d2d } => latency(be, case, d2d, warnings),
    }
}

fn gpu_of(e: Endpoint, what: &str) -> Result<usize, CaseError> {
    e.gpu()
        .ok_or_else(|| CaseError::Failed(format!("{what} must be one GPU, not {e}")))
}

/// Refuses host buffers that would push the machine into swap or the OOM killer.
fn check_host_memory(needed: usize) -> Result<(), CaseError> {
    if let Some(avail) = host_memory_available()
        && needed as u64 > avail / 10 * 8
    {
        return Err(CaseError::Skipped(format!(
            "needs {} of host memory, {} available",
            crate::model::quantities::format_bytes(needed as u64),
            crate::model::quantities::format_bytes(avail)
        )));
    }
    Ok(())
}

/// Pinned or pageable host memory.
enum HostBuf {
    Pinned(PinnedBuffer),
    Pageable(PageableBuffer),
}

impl HostBuf {
    fn alloc(
        ctx: &Arc<Context>,
        bytes: usize,
        pinned: bool,
        cpus: Option<&[usize]>,
    ) -> Result<HostBuf, CaseError> {
        check_host_memory(bytes)?;
        Ok(if pinned {
            HostBuf::Pinned(PinnedBuffer::alloc(ctx, bytes, cpus)?)
        } else {
            HostBuf::Pageable(
                PageableBuffer::alloc(bytes, cpus, POISON)
                    .ok_or_else(|| CaseError::Skipped("host memory allocation refused".into()))?,
            )
        })
    }

    fn slice(&self) -> &[u8] {
        match self {
            HostBuf::Pinned(b) => b.as_slice(),
            HostBuf::Pageable(b) => b.as_slice(),
        }
    }

    fn slice_mut(&mut self) -> &mut [u8] {
        match self {
            HostBuf::Pinned(b) => b.as_mut_slice(),
            HostBuf::Pageable(b) => b.as_mut_slice(),
        }
    }

    fn ptr(&self) -> *const c_void {
        self.slice().as_ptr().cast::<c_void>()
    }

    fn ptr_mut(&mut self) -> *mut c_void {
        self.slice_mut().as_mut_ptr().cast::<c_void>()
    }

    /// Runs `f` with this buffer's CPUs (fills are multi-threaded; threads inherit the mask).
    fn fill(&mut self, seed: u32, cpus: Option<&[usize]>) {
        crate::cuda::memory::with_cpu_affinity(cpus, || pattern::fill(self.slice_mut(), 0, seed));
    }

    fn poison(&mut self) {
        self.slice_mut().fill(POISON);
    }

    fn wrong(&self, seed: u32) -> u64 {
        pattern::count_wrong(self.slice(), 0, seed)
    }
}

/// Readies a copy between `dev` and `host` on `g`: the source holds the pattern of `seed` (a
/// host buffer filled on the GPU's CPUs), the destination poison.
fn prepare_host_copy(
    g: &GpuState,
    dev: &DeviceBuffer,
    host: &mut HostBuf,
    to_device: bool,
    seed: u32,
) -> Result<(), CaseError> {
    if to_device {
        host.fill(seed, g.cpus.as_deref());
        poison_device(g, dev)
    } else {
        host.poison();
        fill_device(g, dev, seed)
    }
}

/// The copy from `host` to `dev` (`to_device`) or back, of `bytes`.
fn host_copy(dev: &DeviceBuffer, host: &mut HostBuf, to_device: bool, bytes: usize) -> Op<'static> {
    if to_device {
        Op::HtoD {
            dst: dev.ptr(),
            src: host.ptr(),
            bytes,
        }
    } else {
        Op::DtoH {
            dst: host.ptr_mut(),
            src: dev.ptr(),
            bytes,
        }
    }
}

fn stream0(g: &GpuState) -> Result<&Stream, CaseError> {
    g.streams
        .first()
        .ok_or_else(|| CaseError::Failed("no stream".into()))
}

/// Fills a device buffer with the pattern: by kernel, or staged from the host.
fn fill_device(g: &GpuState, buf: &DeviceBuffer, seed: u32) -> Result<(), CaseError> {
    let s = stream0(g)?;
    match &g.kernels {
        Ok(k) => {
            k.fill(s, buf.ptr(), buf.len() as u64, seed)?;
            s.synchronize()?;
        }
        Err(_) => {
            let mut host = vec![0u8; STAGE_CHUNK.min(buf.len()).max(1)];
            let mut off = 0;
            while off < buf.len() {
                let len = STAGE_CHUNK.min(buf.len() - off);
                pattern::fill(&mut host[..len], (off / 4) as u64, seed);
                s.ctx().bind()?;
                // SAFETY: `host` holds `len` bytes; the destination range lies in `buf`; the
                // copy finishes (synchronize) before `host` is touched again.
                unsafe { s.copy_htod(buf.ptr() + off as u64, host.as_ptr().cast(), len) }?;
                s.synchronize()?;
                off += len;
            }
        }
    }
    Ok(())
}

/// Sets every byte of a device buffer to the poison value.
fn poison_device(g: &GpuState, buf: &DeviceBuffer) -> Result<(), CaseError> {
    let s = stream0(g)?;
    buf.memset_async(POISON, s)?;
    s.synchronize()?;
    Ok(())
}

/// Counts wrong words of a device buffer: by kernel (every word), or staged to the host.
fn check_device(g: &GpuState, buf: &DeviceBuffer, seed: u32) -> Result<u64, CaseError> {
    let s = stream0(g)?;
    match &g.kernels {
        Ok(k) => {
            let counter = DeviceBuffer::alloc(&g.ctx, 8)?;
            counter.memset_async(0, s)?;
            k.check(s, buf.ptr(), buf.len() as u64, seed, counter.ptr())?;
            let mut wrong = 0u64;
            s.ctx().bind()?;
            // SAFETY: 8 bytes from the 8-byte counter into a local u64 that outlives the
            // synchronize below.
            unsafe { s.copy_dtoh((&mut wrong as *mut u64).cast(), counter.ptr(), 8) }?;
            s.synchronize()?;
            Ok(wrong)
        }
        Err(_) => {
            let mut host = vec![0u8; STAGE_CHUNK.min(buf.len()).max(1)];
            let mut off = 0;
            let mut wrong = 0;
            while off < buf.len() {
                let len = STAGE_CHUNK.min(buf.len() - off);
                s.ctx().bind()?;
                // SAFETY: `host` holds `len` bytes; the source range lies in `buf`; read only
                // after synchronize.
                unsafe { s.copy_dtoh(host.as_mut_ptr().cast(), buf.ptr() + off as u64, len) }?;
                s.synchronize()?;
                wrong += pattern::count_wrong(&host[..len], (off / 4) as u64, seed);
                off += len;
            }
            Ok(wrong)
        }
    }
}

/// A finished row: samples in GB/s (or ns), verification outcome, a note on the method.
fn row(
    case: &Case,
    src: Endpoint,
    dst: Endpoint,
    samples: Vec<f64>,
    wrong: u64,
    checked: u64,
    note: String,
) -> BandwidthResult {
    let mut r = BandwidthResult::empty(
        case.test,
        src,
        dst,
        case.bytes,
        Source::Measured,
        Status::Ok,
        note,
    );
    r.set_samples(samples);
    r.wrong = Some(wrong);
    if wrong > 0 {
        r.status = Status::Failed;
        r.reason = Some(format!(
            "verification failed: {wrong} of {checked} words differ from what was copied"
        ));
    } else if r.median_gbps.is_none() && r.latency_ns.is_none() {
        r.status = Status::Failed;
        r.reason = Some("no valid samples (zero elapsed time)".into());
    }
    r
}

/// The aggregate rate of copies released together, per sample: every lane's bytes ÷ the
/// slowest lane's time (all start at the gate's release, so that is the time from the first
/// start to the last end) — nvbandwidth's TOTAL_BW for all_to_one and one_to_all
/// (memcpy.cpp, doMemcpyCore). A sum of per-copy rates would count a copy that finished early
/// as if it had kept going.
fn total_rates(lane_ms: &[&[f64]], bytes: usize, iters: u32, samples: u32) -> Vec<f64> {
    let moved = bytes as f64 * f64::from(iters) * lane_ms.len() as f64;
    (0..samples as usize)
        .map(|s| {
            let times: Vec<f64> = lane_ms
                .iter()
                .map(|l| l.get(s).copied().unwrap_or(f64::NAN))
                .collect();
            if times.is_empty() || times.iter().any(|t| t.is_nan()) {
                return f64::NAN;
            }
            measure::gbps(moved, times.iter().copied().fold(0.0, f64::max))
        })
        .collect()
}

/// What an aggregate figure's note adds when its copies were not released together.
fn unreleased(gated: bool) -> &'static str {
    if gated {
        ""
    } else {
        " (copies not released together: they may not all have overlapped, so the figure may overstate the total)"
    }
}

fn rates(ms: &[f64], bytes: usize, iters: u32) -> Vec<f64> {
    ms.iter()
        .map(|&t| measure::gbps(bytes as f64 * f64::from(iters), t))
        .collect()
}

fn kernel_of(g: &GpuState) -> Result<&Kernels, CaseError> {
    g.kernels.as_ref().map_err(|w| CaseError::Waived(w.clone()))
}

fn words(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

fn note(how: &str, case: &Case, gated: bool) -> String {
    format!(
        "{how}; {} copies per sample, median of {} samples{}",
        case.iters,
        case.samples,
        if gated {
            ""
        } else {
            " (not gated by a spin kernel: events only)"
        }
    )
}

fn host_device(
    be: &mut CudaBackend,
    case: &Case,
    bytes: usize,
    to_device: bool,
    pinned: bool,
    bidir: bool,
) -> Result<Vec<BandwidthResult>, CaseError> {
    let gi = gpu_of(
        if to_device { case.dst } else { case.src },
        "the device end",
    )?;
    let (seed, seed2) = (be.next_seed(), be.next_seed());
    let g = be.gpu(gi)?;
    let cpus = g.cpus.as_deref();
    let dev = DeviceBuffer::alloc(&g.ctx, bytes)?;
    let mut host = HostBuf::alloc(&g.ctx, bytes, pinned, cpus)?;
    // The opposite direction, for the bidirectional variants: twice as large, as nvbandwidth's
    // host_to_device/device_to_host_bidirectional_memcpy_ce make it ("to ensure it interferes
    // correctly"), so that it still runs when the timed copy ends. An interfering copy of the
    // same size can finish first and leave the timed copy's tail alone on the link (read 7–9 %
    // above nvbandwidth on H100 and H200).
    let other_bytes = if bidir {
        bytes
            .checked_mul(2)
            .ok_or_else(|| CaseError::Failed(format!("{bytes} B twice overflows")))?
    } else {
        0
    };
    let mut other = if bidir {
        Some((
            DeviceBuffer::alloc(&g.ctx, other_bytes)?,
            HostBuf::alloc(&g.ctx, other_bytes, pinned, cpus)?,
        ))
    } else {
        None
    };
    prepare_host_copy(g, &dev, &mut host, to_device, seed)?;
    if let Some((d, h)) = &mut other {
        prepare_host_copy(g, d, h, !to_device, seed2)?;
    }
    // Pageable copies block the host while enqueuing: never behind a spin kernel.
    let gate = if pinned { g.gate() } else { None };
    let mut lanes = vec![Lane {
        stream: stream0(g)?,
        op: host_copy(&dev, &mut host, to_device, bytes),
        gate,
    }];
    if let Some((d, h)) = &mut other {
        let s1 = g
            .streams
            .get(1)
            .ok_or_else(|| CaseError::Failed("no second stream".into()))?;
        lanes.push(Lane {
            stream: s1,
            op: host_copy(d, h, !to_device, other_bytes),
            gate,
        });
    }
    let gated = measure::gated(&lanes);
    // The thread that enqueues, releases and waits stays on the GPU's CPUs for the whole
    // measurement, as nvbandwidth's does (it pins itself with nvmlDeviceSetCpuAffinity before it
    // allocates host memory and never unpins, inline_common.h, v0.8); `SCALESCOPE_HOST_AFFINITY=
    // alloc` pins it for the allocation only (the method before), for comparing the two.
    let hold = std::env::var("SCALESCOPE_HOST_AFFINITY").as_deref() != Ok("alloc");
    let ms = crate::cuda::memory::with_cpu_affinity(cpus.filter(|_| hold), || {
        measure::run(&lanes, case.iters, case.samples, &be.flag)
    })?;
    drop(lanes);
    let mut wrong = if to_device {
        check_device(g, &dev, seed)?
    } else {
        host.wrong(seed)
    };
    let mut checked = words(bytes);
    if let Some((d, h)) = &other {
        wrong += if to_device {
            h.wrong(seed2)
        } else {
            check_device(g, d, seed2)?
        };
        checked += words(other_bytes);
    }
    Ok(vec![row(
        case,
        case.src,
        case.dst,
        rates(&ms[0], bytes, case.iters),
        wrong,
        checked,
        note(&host_copy_how(gi, to_device, pinned, bidir), case, gated),
    )])
}

/// What a host↔device copy ran, for its note.
fn host_copy_how(gi: usize, to_device: bool, pinned: bool, bidir: bool) -> String {
    format!(
        "{} on GPU {gi}'s stream, {} host memory on the GPU's NUMA node{}",
        if to_device {
            "cuMemcpyHtoDAsync"
        } else {
            "cuMemcpyDtoHAsync"
        },
        if pinned { "pinned" } else { "pageable" },
        if bidir {
            ", the opposite direction (twice the size, as nvbandwidth) running on a second stream"
        } else {
            ""
        }
    )
}

/// A pair test's flags, as [`Shape::Pair`] names them.
#[derive(Debug, Clone, Copy)]
struct PairShape {
    /// The destination's context runs the copy (else the source's).
    read: bool,
    /// Both directions at once.
    bidir: bool,
    /// Peer access on (else the driver stages the copy through host memory).
    peer: bool,
}

/// A pair test's geometry: the two GPUs, the engine, and which GPU issues each direction.
struct PairPlan {
    shape: PairShape,
    /// The source GPU.
    a: usize,
    /// The destination GPU.
    b: usize,
    /// Copy kernels rather than copy engines.
    sm: bool,
    /// Issues the forward copy: read = the destination pulls, write = the source pushes;
    /// bidirectional copies are issued by each direction's source.
    fwd_exec: usize,
    /// Issues the reverse copy (bidirectional only).
    rev_exec: usize,
}

impl PairPlan {
    /// The plan for `case`, once its two GPUs are distinct and peer access is as the test
    /// needs it (on, or off for the staged variants).
    fn new(
        be: &mut CudaBackend,
        case: &Case,
        shape: PairShape,
        warnings: &mut Vec<Warning>,
    ) -> Result<PairPlan, CaseError> {
        let (a, b) = (
            gpu_of(case.src, "the source")?,
            gpu_of(case.dst, "the destination")?,
        );
        if a == b {
            return Err(CaseError::Waived(
                "source and destination are the same GPU".into(),
            ));
        }
        if shape.peer {
            be.require_peer(a, b, warnings)?;
        } else {
            be.forbid_peer(a, b)?;
        }
        Ok(PairPlan {
            shape,
            a,
            b,
            sm: case.test.method() == Method::Sm,
            fwd_exec: if shape.read && !shape.bidir { b } else { a },
            rev_exec: b,
        })
    }

    /// Waives a copy-kernel test when a GPU that issues a direction has no kernels.
    fn require_kernels(&self, be: &CudaBackend) -> Result<(), CaseError> {
        if !self.sm {
            return Ok(());
        }
        for (x, gx) in [
            (self.fwd_exec, be.gpu(self.fwd_exec)?),
            (self.rev_exec, be.gpu(self.rev_exec)?),
        ]
        .iter()
        .take(if self.shape.bidir { 2 } else { 1 })
        {
            if let Err(why) = &gx.kernels {
                return Err(CaseError::Waived(format!(
                    "no copy kernel on GPU {x}: {why}"
                )));
            }
        }
        Ok(())
    }

    /// Tuning experiment (`sm_split` = f): the other GPU's SMs copy the last fraction f of the
    /// buffer at the same time (the reader pulls the head, the writer pushes the tail); the
    /// figure is the whole buffer over the slower lane's time.
    fn split(&self, be: &CudaBackend) -> Option<f64> {
        if self.sm && !self.shape.bidir {
            be.copy_kernel.sm_split.filter(|f| *f > 0.0 && *f < 1.0)
        } else {
            None
        }
    }

    /// The lane of one direction: `exec` copies `src` into `dst` with the plan's engine.
    fn lane<'a>(
        &self,
        be: &'a CudaBackend,
        exec: usize,
        src: &DeviceBuffer,
        dst: &DeviceBuffer,
        bytes: usize,
    ) -> Result<Lane<'a>, CaseError> {
        let ge = be.gpu(exec)?;
        let op = if self.sm {
            Op::Kernel {
                kernels: kernel_of(ge)?,
                src: src.ptr(),
                dst: dst.ptr(),
                bytes: bytes as u64,
            }
        } else if self.shape.peer {
            Op::DtoD {
                dst: dst.ptr(),
                src: src.ptr(),
                bytes,
            }
        } else {
            Op::Peer {
                dst: dst.ptr(),
                dst_ctx: dst.ctx().raw(),
                src: src.ptr(),
                src_ctx: src.ctx().raw(),
                bytes,
            }
        };
        // Staged peer copies may block the host: ungated.
        let gate = if self.shape.peer { ge.gate() } else { None };
        Ok(Lane {
            stream: stream0(ge)?,
            op,
            gate,
        })
    }

    /// Every lane released together: the forward copy, the reverse one (bidirectional), and
    /// with `split` the forward copy's head on its issuer and its tail on the other GPU.
    fn lanes<'a>(
        &self,
        be: &'a CudaBackend,
        bufs: &PairBuffers,
        bytes: usize,
        split: Option<f64>,
    ) -> Result<Vec<Lane<'a>>, CaseError> {
        let mut lanes = vec![self.lane(be, self.fwd_exec, &bufs.src_a, &bufs.dst_b, bytes)?];
        if let Some((src_b, dst_a)) = &bufs.rev {
            lanes.push(self.lane(be, self.rev_exec, src_b, dst_a, bytes)?);
        }
        if let Some(f) = split {
            let other = if self.fwd_exec == self.a {
                self.b
            } else {
                self.a
            };
            let head = ((bytes as f64 * (1.0 - f)) as usize) / 65536 * 65536;
            let (go, gf) = (be.gpu(other)?, be.gpu(self.fwd_exec)?);
            lanes[0].op = Op::Kernel {
                kernels: kernel_of(gf)?,
                src: bufs.src_a.ptr(),
                dst: bufs.dst_b.ptr(),
                bytes: head as u64,
            };
            lanes.push(Lane {
                stream: stream0(go)?,
                op: Op::Kernel {
                    kernels: kernel_of(go)?,
                    src: bufs.src_a.ptr() + head as u64,
                    dst: bufs.dst_b.ptr() + head as u64,
                    bytes: (bytes - head) as u64,
                },
                gate: go.gate(),
            });
        }
        Ok(lanes)
    }

    /// How the figure was measured, for the row's note.
    fn how(&self, be: &CudaBackend, split: Option<f64>) -> String {
        let (a, b, fwd_exec) = (self.a, self.b, self.fwd_exec);
        let engine = match (self.sm, self.shape.peer) {
            (true, _) if be.copy_kernel.is_default() => "copy kernel".to_string(),
            (true, _) => format!("copy kernel ({})", be.copy_kernel),
            (false, true) => "cuMemcpyAsync (peer access on)".to_string(),
            (false, false) => "cuMemcpyPeerAsync with peer access off (driver-staged)".to_string(),
        };
        if let Some(f) = split {
            format!(
                "{engine}s on both GPUs at once: GPU {fwd_exec} copies the first {:.0} %, the other GPU the rest",
                (1.0 - f) * 100.0
            )
        } else if self.shape.bidir {
            format!(
                "{engine}, {a}→{b} issued by GPU {a} and {b}→{a} by GPU {b} at once; figure = sum of both"
            )
        } else {
            format!(
                "{engine} issued by GPU {fwd_exec} ({})",
                if self.shape.read {
                    "reads from the peer"
                } else {
                    "writes to the peer"
                }
            )
        }
    }
}

/// A pair test's buffers: the forward copy's source on GPU a and destination on GPU b, and
/// for bidirectional tests the reverse copy's (source on b, destination on a).
struct PairBuffers {
    src_a: DeviceBuffer,
    dst_b: DeviceBuffer,
    rev: Option<(DeviceBuffer, DeviceBuffer)>,
    /// The pattern the forward copy's source holds.
    seed_f: u32,
    /// The pattern the reverse copy's source holds.
    seed_r: u32,
}

impl PairBuffers {
    /// Allocates the buffers, fills the sources with the patterns of `seed_f` (forward) and
    /// `seed_r` (reverse) and poisons the destinations.
    fn new(
        ga: &GpuState,
        gb: &GpuState,
        bytes: usize,
        bidir: bool,
        seed_f: u32,
        seed_r: u32,
    ) -> Result<PairBuffers, CaseError> {
        let src_a = DeviceBuffer::alloc(&ga.ctx, bytes)?;
        let dst_b = DeviceBuffer::alloc(&gb.ctx, bytes)?;
        let rev = if bidir {
            Some((
                DeviceBuffer::alloc(&gb.ctx, bytes)?,
                DeviceBuffer::alloc(&ga.ctx, bytes)?,
            ))
        } else {
            None
        };
        fill_device(ga, &src_a, seed_f)?;
        poison_device(gb, &dst_b)?;
        if let Some((src_b, dst_a)) = &rev {
            fill_device(gb, src_b, seed_r)?;
            poison_device(ga, dst_a)?;
        }
        Ok(PairBuffers {
            src_a,
            dst_b,
            rev,
            seed_f,
            seed_r,
        })
    }

    /// Wrong and checked words over every destination.
    fn check(&self, ga: &GpuState, gb: &GpuState, bytes: usize) -> Result<(u64, u64), CaseError> {
        let mut wrong = check_device(gb, &self.dst_b, self.seed_f)?;
        let mut checked = words(bytes);
        if let Some((_, dst_a)) = &self.rev {
            wrong += check_device(ga, dst_a, self.seed_r)?;
            checked *= 2;
        }
        Ok((wrong, checked))
    }
}

/// One GPU pair: a copy one way or both ways at once, by copy engine (peer access on or off)
/// or copy kernel; one row, with each direction's median beside the total when bidirectional.
fn pair(
    be: &mut CudaBackend,
    case: &Case,
    bytes: usize,
    shape: PairShape,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<BandwidthResult>, CaseError> {
    let plan = PairPlan::new(be, case, shape, warnings)?;
    let (seed_f, seed_r) = (be.next_seed(), be.next_seed());
    let (ga, gb) = (be.gpu(plan.a)?, be.gpu(plan.b)?);
    plan.require_kernels(be)?;
    let bufs = PairBuffers::new(ga, gb, bytes, shape.bidir, seed_f, seed_r)?;
    let split = plan.split(be);
    let lanes = plan.lanes(be, &bufs, bytes, split)?;
    let gated = measure::gated(&lanes);
    let mut ms = measure::run(&lanes, case.iters, case.samples, &be.flag)?;
    if split.is_some() {
        let slower: Vec<f64> = ms[0].iter().zip(&ms[1]).map(|(x, y)| x.max(*y)).collect();
        ms = vec![slower];
    }
    drop(lanes);
    let (wrong, checked) = bufs.check(ga, gb, bytes)?;
    let how = plan.how(be, split);
    let fwd = rates(&ms[0], bytes, case.iters);
    let mut r = if shape.bidir {
        let revr = rates(&ms[1], bytes, case.iters);
        let total: Vec<f64> = fwd.iter().zip(&revr).map(|(x, y)| x + y).collect();
        let mut r = row(
            case,
            case.src,
            case.dst,
            total,
            wrong,
            checked,
            note(&how, case, gated),
        );
        r.fwd_gbps = Stats::of(&fwd).map(|s| s.median);
        r.rev_gbps = Stats::of(&revr).map(|s| s.median);
        r
    } else {
        row(
            case,
            case.src,
            case.dst,
            fwd,
            wrong,
            checked,
            note(&how, case, gated),
        )
    };
    r.method = case.test.method();
    Ok(vec![r])
}

fn local(
    be: &mut CudaBackend,
    case: &Case,
    bytes: usize,
) -> Result<Vec<BandwidthResult>, CaseError> {
    let gi = gpu_of(case.src, "the GPU")?;
    let seed = be.next_seed();
    let g = be.gpu(gi)?;
    let src = DeviceBuffer::alloc(&g.ctx, bytes)?;
    let dst = DeviceBuffer::alloc(&g.ctx, bytes)?;
    fill_device(g, &src, seed)?;
    poison_device(g, &dst)?;
    let lanes = [Lane {
        stream: stream0(g)?,
        op: Op::DtoD {
            dst: dst.ptr(),
            src: src.ptr(),
            bytes,
        },
        gate: g.gate(),
    }];
    let gated = measure::gated(&lanes);
    let ms = measure::run(&lanes, case.iters, case.samples, &be.flag)?;
    let wrong = check_device(g, &dst, seed)?;
    let how = format!(
        "cuMemcpyAsync within GPU {gi}; bytes copied ÷ time (memory traffic is twice that)"
    );
    Ok(vec![row(
        case,
        case.src,
        case.dst,
        rates(&ms[0], bytes, case.iters),
        wrong,
        words(bytes),
        note(&how, case, gated),
    )])
}

/// A fan: every other selected GPU copies into one (`to_one`), or one into every other, all at
/// once; one row, all bytes ÷ the slowest copy's time.
fn fan(
    be: &mut CudaBackend,
    case: &Case,
    bytes: usize,
    to_one: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<BandwidthResult>, CaseError> {
    let t = gpu_of(if to_one { case.dst } else { case.src }, "the fan's centre")?;
    let others: Vec<usize> = case.gpus.iter().copied().filter(|&g| g != t).collect();
    if others.is_empty() {
        return Err(CaseError::Waived("needs at least two GPUs".into()));
    }
    for &o in &others {
        be.require_peer(t, o, warnings)?;
    }
    if !to_one {
        be.ensure_streams(t, others.len())?;
    }
    let seeds: Vec<u32> = others.iter().map(|_| be.next_seed()).collect();
    let gt = be.gpu(t)?;
    // Out of t, every copy reads one shared source.
    let shared_src = if to_one {
        None
    } else {
        Some(DeviceBuffer::alloc(&gt.ctx, bytes)?)
    };
    if let Some(s) = &shared_src {
        fill_device(gt, s, seeds[0])?;
    }
    let copies = fan_copies(be, gt, &others, bytes, to_one, &seeds)?;
    let lanes = fan_lanes(be, gt, &copies, shared_src.as_ref(), bytes, to_one)?;
    let gated = measure::gated(&lanes);
    let ms = measure::run(&lanes, case.iters, case.samples, &be.flag)?;
    drop(lanes);
    let mut wrong = 0;
    for c in &copies {
        let owner = if to_one { gt } else { be.gpu(c.peer)? };
        wrong += check_device(owner, &c.dst, c.seed)?;
    }
    let lane_ms: Vec<&[f64]> = ms.iter().map(Vec::as_slice).collect();
    let total = total_rates(&lane_ms, bytes, case.iters, case.samples);
    let how = if to_one {
        format!(
            "cuMemcpyAsync from each of GPUs {others:?} into GPU {t}, each in the writer's context, all at once; figure = all bytes ÷ the slowest copy's time{}",
            unreleased(gated)
        )
    } else {
        format!(
            "cuMemcpyAsync from GPU {t} into each of GPUs {others:?}, one stream per peer, all at once; figure = all bytes ÷ the slowest copy's time{}",
            unreleased(gated)
        )
    };
    let checked = words(bytes) * copies.len() as u64;
    Ok(vec![row(
        case,
        case.src,
        case.dst,
        total,
        wrong,
        checked,
        note(&how, case, gated),
    )])
}

/// One copy of a fan test, between the centre and one peer.
struct FanCopy {
    /// The peer GPU.
    peer: usize,
    /// The peer's own source (into the centre); `None` out of the centre, which copies its
    /// one shared source.
    src: Option<DeviceBuffer>,
    /// The destination, on the centre (into it) or on the peer (out of it).
    dst: DeviceBuffer,
    /// The pattern the destination must end up holding.
    seed: u32,
}

/// One copy per peer in `others`, its buffers filled and poisoned: into the centre `gt` from
/// each peer (`to_one`, the peer's own pattern), or out of it (the shared source's pattern,
/// `seeds[0]`).
fn fan_copies(
    be: &CudaBackend,
    gt: &GpuState,
    others: &[usize],
    bytes: usize,
    to_one: bool,
    seeds: &[u32],
) -> Result<Vec<FanCopy>, CaseError> {
    let mut copies = Vec::with_capacity(others.len());
    for (k, &o) in others.iter().enumerate() {
        let go = be.gpu(o)?;
        if to_one {
            let src = DeviceBuffer::alloc(&go.ctx, bytes)?;
            let dst = DeviceBuffer::alloc(&gt.ctx, bytes)?;
            fill_device(go, &src, seeds[k])?;
            poison_device(gt, &dst)?;
            copies.push(FanCopy {
                peer: o,
                src: Some(src),
                dst,
                seed: seeds[k],
            });
        } else {
            let dst = DeviceBuffer::alloc(&go.ctx, bytes)?;
            poison_device(go, &dst)?;
            copies.push(FanCopy {
                peer: o,
                src: None,
                dst,
                seed: seeds[0],
            });
        }
    }
    Ok(copies)
}

/// A lane per copy: issued by the writing peer into the centre (`to_one`), or by the centre on
/// a stream of its own per peer.
fn fan_lanes<'a>(
    be: &'a CudaBackend,
    gt: &'a GpuState,
    copies: &[FanCopy],
    shared_src: Option<&DeviceBuffer>,
    bytes: usize,
    to_one: bool,
) -> Result<Vec<Lane<'a>>, CaseError> {
    let mut lanes = Vec::new();
    for (k, c) in copies.iter().enumerate() {
        let (exec, stream) = if to_one {
            let go = be.gpu(c.peer)?;
            (go, stream0(go)?)
        } else {
            (
                gt,
                gt.streams
                    .get(k)
                    .ok_or_else(|| CaseError::Failed("missing stream".into()))?,
            )
        };
        let src_ptr = match (&c.src, shared_src) {
            (Some(s), _) | (None, Some(s)) => s.ptr(),
            (None, None) => return Err(CaseError::Failed("no source buffer".into())),
        };
        lanes.push(Lane {
            stream,
            op: Op::DtoD {
                dst: c.dst.ptr(),
                src: src_ptr,
                bytes,
            },
            gate: exec.gate(),
        });
    }
    Ok(lanes)
}

/// Every selected GPU reads from every other at once, with copy engines: each reader's context
/// issues one `cuMemcpyAsync` per peer (from the peer's memory into its own, peer access on),
/// each on a stream of its own, and every stream is released together. One row per reader: all
/// bytes it read ÷ its slowest copy's time (as `all_to_one`), every destination checked against
/// the pattern of the peer it was read from.
fn all_pairs(
    be: &mut CudaBackend,
    case: &Case,
    bytes: usize,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<BandwidthResult>, CaseError> {
    let gpus = case.gpus.to_vec();
    if gpus.len() < 2 {
        return Err(CaseError::Waived("needs at least two GPUs".into()));
    }
    for (i, &a) in gpus.iter().enumerate() {
        for &b in &gpus[i + 1..] {
            be.require_peer(a, b, warnings)?;
        }
    }
    for &d in &gpus {
        be.ensure_streams(d, gpus.len() - 1)?;
    }
    let seeds: Vec<u32> = gpus.iter().map(|_| be.next_seed()).collect();
    // One source per GPU (read by every other), one destination per ordered pair.
    let mut srcs = Vec::with_capacity(gpus.len());
    for (&g, &seed) in gpus.iter().zip(&seeds) {
        let gs = be.gpu(g)?;
        let buf = DeviceBuffer::alloc(&gs.ctx, bytes)?;
        fill_device(gs, &buf, seed)?;
        srcs.push(buf);
    }
    // (reader, position of the peer in `gpus`, destination buffer on the reader)
    let mut dsts: Vec<(usize, usize, DeviceBuffer)> = Vec::new();
    for &d in &gpus {
        let gd = be.gpu(d)?;
        for (pi, &p) in gpus.iter().enumerate() {
            if p == d {
                continue;
            }
            let buf = DeviceBuffer::alloc(&gd.ctx, bytes)?;
            poison_device(gd, &buf)?;
            dsts.push((d, pi, buf));
        }
    }
    let mut lanes = Vec::with_capacity(dsts.len());
    let mut next_stream: std::collections::BTreeMap<usize, usize> = Default::default();
    for (d, pi, dst) in &dsts {
        let gd = be.gpu(*d)?;
        let k = next_stream.entry(*d).or_insert(0);
        let stream = gd
            .streams
            .get(*k)
            .ok_or_else(|| CaseError::Failed("missing stream".into()))?;
        *k += 1;
        lanes.push(Lane {
            stream,
            op: Op::DtoD {
                dst: dst.ptr(),
                src: srcs[*pi].ptr(),
                bytes,
            },
            gate: gd.gate(),
        });
    }
    let gated = measure::gated(&lanes);
    let ms = measure::run(&lanes, case.iters, case.samples, &be.flag)?;
    drop(lanes);
    let how = format!(
        "cuMemcpyAsync into each GPU from each of the others {gpus:?} at once, issued by the reader (one stream per peer); figure = all bytes into this GPU ÷ its slowest copy's time{}",
        unreleased(gated)
    );
    let mut rows = Vec::with_capacity(gpus.len());
    for &d in &gpus {
        let mut per_lane: Vec<&[f64]> = Vec::new();
        let mut wrong = 0;
        let mut checked = 0;
        for ((reader, pi, dst), lane_ms) in dsts.iter().zip(&ms) {
            if *reader != d {
                continue;
            }
            per_lane.push(lane_ms);
            wrong += check_device(be.gpu(d)?, dst, seeds[*pi])?;
            checked += words(bytes);
        }
        let total = total_rates(&per_lane, bytes, case.iters, case.samples);
        rows.push(row(
            case,
            Endpoint::All,
            Endpoint::Gpu(d),
            total,
            wrong,
            checked,
            note(&how, case, gated),
        ));
    }
    Ok(rows)
}

fn host_all(
    be: &mut CudaBackend,
    case: &Case,
    bytes: usize,
    to_device: bool,
) -> Result<Vec<BandwidthResult>, CaseError> {
    check_host_memory(bytes.saturating_mul(case.gpus.len()))?;
    let seeds: Vec<u32> = case.gpus.iter().map(|_| be.next_seed()).collect();
    let mut bufs = Vec::new();
    for (&gi, &seed) in case.gpus.iter().zip(&seeds) {
        let g = be.gpu(gi)?;
        let dev = DeviceBuffer::alloc(&g.ctx, bytes)?;
        let mut host = HostBuf::alloc(&g.ctx, bytes, true, g.cpus.as_deref())?;
        prepare_host_copy(g, &dev, &mut host, to_device, seed)?;
        bufs.push((gi, dev, host, seed));
    }
    let mut lanes = Vec::new();
    for (gi, dev, host, _) in &mut bufs {
        let g = be.gpu(*gi)?;
        lanes.push(Lane {
            stream: stream0(g)?,
            op: host_copy(dev, host, to_device, bytes),
            gate: g.gate(),
        });
    }
    let gated = measure::gated(&lanes);
    let ms = measure::run(&lanes, case.iters, case.samples, &be.flag)?;
    drop(lanes);
    let how = format!(
        "{} on every selected GPU at once ({:?}), pinned host memory on each GPU's NUMA node; this GPU's own rate",
        if to_device {
            "cuMemcpyHtoDAsync"
        } else {
            "cuMemcpyDtoHAsync"
        },
        case.gpus
    );
    let mut rows = Vec::new();
    for ((gi, dev, host, seed), ms) in bufs.iter().zip(&ms) {
        let wrong = if to_device {
            check_device(be.gpu(*gi)?, dev, *seed)?
        } else {
            host.wrong(*seed)
        };
        let (src, dst) = if to_device {
            (Endpoint::Host, Endpoint::Gpu(*gi))
        } else {
            (Endpoint::Gpu(*gi), Endpoint::Host)
        };
        rows.push(row(
            case,
            src,
            dst,
            rates(ms, bytes, case.iters),
            wrong,
            words(bytes),
            note(&how, case, gated),
        ));
    }
    Ok(rows)
}

/// Latency: src owns the memory (a peer GPU, or the host), dst's single thread chases through it.
/// The chase spans [`CHASE_BYTES`] whatever the case's size (as nvbandwidth's does); the row
/// keeps the case's size so that it sits beside the other tests of that size.
fn latency(
    be: &mut CudaBackend,
    case: &Case,
    d2d: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<BandwidthResult>, CaseError> {
    let reader = gpu_of(case.dst, "the reading GPU")?;
    let owner = if d2d {
        Some(gpu_of(case.src, "the GPU whose memory is read")?)
    } else {
        None
    };
    if let Some(o) = owner {
        if o == reader {
            return Err(CaseError::Waived(
                "source and destination are the same GPU".into(),
            ));
        }
        be.require_peer(o, reader, warnings)?;
    }
    let gr = be.gpu(reader)?;
    let k = gr.kernels.as_ref().map_err(|why| {
        CaseError::Waived(format!("no pointer-chase kernel on GPU {reader}: {why}"))
    })?;
    let span = CHASE_BYTES;
    let slots = span / CHASE_STRIDE;
    let next: Vec<usize> = (0..slots).map(|i| (i + 1) % slots).collect();
    let s = stream0(gr)?;
    let chain = match owner {
        Some(o) => Chain::on_peer(be.gpu(o)?, gr, k, &next)?,
        None => Chain::on_host(gr, &next)?,
    };
    let sms = k.chase_grid();
    let (ns, wrong) = chase_samples(k, s, &gr.ctx, chain.base, &next, case.samples)?;
    drop(chain);
    let how = format!(
        "one thread on GPU {reader}, {CHASE_STEPS} dependent {} 8-byte loads from each of its {sms} SMs in turn per sample, through {slots} cache lines linked in order (nvbandwidth's layout: one link per 128 B) over {} of {}",
        be.copy_kernel.chase_load.label(),
        crate::model::quantities::format_bytes(span as u64),
        match owner {
            Some(o) => format!("GPU {o}'s memory"),
            None => "pinned host memory on the GPU's NUMA node".into(),
        }
    );
    let mut r = row(
        case,
        case.src,
        case.dst,
        ns,
        0,
        case.samples as u64 + 1,
        format!("{how}; median of {} samples", case.samples),
    );
    r.wrong = Some(wrong);
    if wrong > 0 {
        r.status = Status::Failed;
        r.reason = Some(format!(
            "the chase ended at the wrong address in {wrong} of {} runs",
            case.samples + 1
        ));
    }
    Ok(vec![r])
}

/// A pointer chase's chain: its base address as the reader sees it, and its memory (a peer
/// GPU's or pinned host memory), held until the chase is done.
struct Chain {
    base: u64,
    _device: Option<DeviceBuffer>,
    _host: Option<PinnedBuffer>,
}

impl Chain {
    /// [`CHASE_BYTES`] of `go`'s memory linked by `next` (each slot's successor), written by
    /// the reader `gr` over the peer mapping (peer access is on both ways).
    fn on_peer(
        go: &GpuState,
        gr: &GpuState,
        k: &Kernels,
        next: &[usize],
    ) -> Result<Chain, CaseError> {
        let s = stream0(gr)?;
        let slots = next.len();
        let buf = DeviceBuffer::alloc(&go.ctx, CHASE_BYTES)?;
        let base = buf.ptr();
        let values: Vec<u64> = next
            .iter()
            .map(|&n| base + (n * CHASE_STRIDE) as u64)
            .collect();
        let staging = DeviceBuffer::alloc(&gr.ctx, values.len() * 8)?;
        s.ctx().bind()?;
        // SAFETY: `values` holds exactly the staging buffer's bytes and outlives the
        // synchronize below.
        unsafe { s.copy_htod(staging.ptr(), values.as_ptr().cast(), values.len() * 8) }?;
        k.scatter(
            s,
            staging.ptr(),
            slots as u64,
            base,
            (CHASE_STRIDE / 8) as u64,
        )?;
        s.synchronize()?;
        Ok(Chain {
            base,
            _device: Some(buf),
            _host: None,
        })
    }

    /// [`CHASE_BYTES`] of pinned host memory on the reader `gr`'s NUMA node, linked by `next`.
    fn on_host(gr: &GpuState, next: &[usize]) -> Result<Chain, CaseError> {
        check_host_memory(CHASE_BYTES)?;
        let mut buf = PinnedBuffer::alloc(&gr.ctx, CHASE_BYTES, gr.cpus.as_deref())?;
        let base = buf.device_ptr(&gr.ctx)?;
        let mem = buf.as_mut_slice();
        for (i, &n) in next.iter().enumerate() {
            let v = base + (n * CHASE_STRIDE) as u64;
            mem[i * CHASE_STRIDE..i * CHASE_STRIDE + 8].copy_from_slice(&v.to_ne_bytes());
        }
        Ok(Chain {
            base,
            _device: None,
            _host: Some(buf),
        })
    }
}

/// `samples` + 1 latency samples (the first discarded) of the chain at `base` (`next`: each
/// slot's successor): each launches the chase once from every SM in turn, going on where the
/// last launch stopped. Returns each timed sample's ns per load and how many samples ended at an
/// address other than the host's walk of the chain.
fn chase_samples(
    k: &Kernels,
    s: &Stream,
    ctx: &Arc<Context>,
    base: u64,
    next: &[usize],
    samples: u32,
) -> Result<(Vec<f64>, u64), CaseError> {
    let sms = k.chase_grid();
    let sink = DeviceBuffer::alloc(ctx, sms as usize * 8)?;
    let (start, stop) = (Event::new(ctx)?, Event::new(ctx)?);
    let mut slot = 0usize;
    let mut ns = Vec::new();
    let mut wrong = 0u64;
    let loads = CHASE_STEPS * u64::from(sms);
    for sample in 0..=samples {
        // Where each SM's launch starts and must end: the chain is walked on the host alike.
        let mut ends = Vec::with_capacity(sms as usize);
        start.record(s)?;
        for target in 0..sms {
            let from = base + (slot * CHASE_STRIDE) as u64;
            k.chase(
                s,
                from,
                CHASE_STEPS,
                sink.ptr() + u64::from(target) * 8,
                target,
            )?;
            slot = pattern::chain_walk(next, slot, CHASE_STEPS);
            ends.push(base + (slot * CHASE_STRIDE) as u64);
        }
        stop.record(s)?;
        let mut reached = vec![0u64; sms as usize];
        s.ctx().bind()?;
        // SAFETY: the sink's `sms` 8-byte slots into a vector of as many that outlives the
        // synchronize.
        unsafe { s.copy_dtoh(reached.as_mut_ptr().cast(), sink.ptr(), reached.len() * 8) }?;
        s.synchronize()?;
        if reached != ends {
            wrong += 1;
        }
        if sample > 0 {
            let ms = stop.elapsed_ms_since(&start)?;
            ns.push(if ms > 0.0 {
                ms * 1e6 / loads as f64
            } else {
                f64::NAN
            });
        }
    }
    Ok((ns, wrong))
}

#[cfg(test)]
mod tests {
    use super::total_rates;

    #[test]
    fn copies_released_together_count_all_bytes_over_the_slowest_time() {
        // Two 1 GB copies: 1 ms and 2 ms. Summing per-copy rates would say 1,500 GB/s; 2 GB
        // moved in 2 ms is 1,000.
        let (a, b) = ([1.0, 2.0], [2.0, 2.0]);
        let r = total_rates(&[&a, &b], 1_000_000_000, 1, 2);
        assert!((r[0] - 1000.0).abs() < 1e-9, "{r:?}");
        assert!((r[1] - 1000.0).abs() < 1e-9, "{r:?}");
        // One lane: its own rate. A missing or unusable sample stays NaN, never a number.
        let one = total_rates(&[&a], 1_000_000_000, 2, 2);
        assert!((one[0] - 2000.0).abs() < 1e-9 && (one[1] - 1000.0).abs() < 1e-9);
        let short = [1.0];
        assert!(total_rates(&[&a, &short], 1_000_000_000, 1, 2)[1].is_nan());
        assert!(total_rates(&[], 1, 1, 1)[0].is_nan());
    }
}
