//! How a copy is timed: nvbandwidth's method, as its README describes it
//! (<https://github.com/NVIDIA/nvbandwidth#measurement-details>).
//!
//! For each sample, on every stream involved: a one-thread kernel spins on a flag in pinned host
//! memory; behind it, [`WARMUP_COPIES`] untimed copies, then a start event, `iters` copies and a
//! stop event are enqueued; then the host sets the flag, so every stream starts at once and none
//! of the enqueuing cost is timed. The other streams' start events wait for the first stream's,
//! so the first stream's timed copies begin while the others are already moving data (its
//! warm-up done, theirs still running): a bidirectional test times one direction with the other
//! in full flow from its first byte, as nvbandwidth's `doMemcpyCore` (memcpy.cpp, v0.8) does.
//! The figure of a stream is bytes × iters ÷ (stop − start). The spin is bounded (10 s, by
//! `%globaltimer`): if the host never gets to release it (too many copies queued behind a
//! blocked stream make the enqueue itself block), the kernel gives up, the sample runs ungated
//! and is reported as failed instead of hanging.
//!
//! Copies that block the host while enqueuing (pageable memory, peer copies staged through the
//! host) must not sit behind a spinning kernel — the host would wait on the GPU, the GPU on the
//! host — so those lanes run ungated: events around the copies only.

use std::ffi::c_void;
use std::sync::atomic::{Ordering, fence};

use cudarc::driver::sys;

use super::kernels::Kernels;
use crate::cuda::CudaError;
use crate::cuda::context::Context;
use crate::cuda::memory::PinnedBuffer;
use crate::cuda::stream::{Event, Stream};

/// Untimed copies on every stream at the start of each sample, behind the spin kernel:
/// nvbandwidth's `WARMUP_COUNT` (memcpy.cpp, v0.8).
pub const WARMUP_COPIES: u32 = 4;

/// How long a spin kernel waits for the host before giving up.
pub const SPIN_TIMEOUT_NS: u64 = 10_000_000_000;

/// Why a measurement did not produce samples.
#[derive(Debug)]
pub enum MeasureError {
    /// A driver call failed.
    Cuda(CudaError),
    /// A spin kernel gave up waiting: the start was not simultaneous.
    SpinTimeout,
}

impl From<CudaError> for MeasureError {
    fn from(e: CudaError) -> Self {
        Self::Cuda(e)
    }
}

/// The release flag and the spin kernels' time-out report, in one pinned, mapped allocation.
#[derive(Debug)]
pub struct Flag {
    buf: PinnedBuffer,
}

impl Flag {
    /// Allocates the flag (portable: every context can map it).
    pub fn new(ctx: &std::sync::Arc<Context>) -> Result<Flag, CudaError> {
        let mut buf = PinnedBuffer::alloc(ctx, 64, None)?;
        buf.as_mut_slice().fill(0);
        Ok(Flag { buf })
    }

    fn word(&self, i: usize) -> *mut i32 {
        // `i` is 0 or 1, inside the 64-byte allocation, which is page-aligned.
        self.buf.host_ptr().cast::<i32>().wrapping_add(i)
    }

    /// (flag, timed_out) as `ctx`'s kernels address them.
    pub fn device_ptrs(
        &self,
        ctx: &Context,
    ) -> Result<(sys::CUdeviceptr, sys::CUdeviceptr), CudaError> {
        let base = self.buf.device_ptr(ctx)?;
        Ok((base, base + 4))
    }

    fn arm(&self) {
        // SAFETY: both words lie in our live pinned allocation; no kernel is reading them now
        // (every stream was synchronised after the previous sample).
        unsafe {
            std::ptr::write_volatile(self.word(0), 0);
            std::ptr::write_volatile(self.word(1), 0);
        }
        fence(Ordering::SeqCst);
    }

    fn release(&self) {
        fence(Ordering::SeqCst);
        // SAFETY: as in `arm`; spinning kernels read the word through their mapping, and a
        // volatile store is what they wait for.
        unsafe { std::ptr::write_volatile(self.word(0), 1) };
        fence(Ordering::SeqCst);
    }

    fn timed_out(&self) -> bool {
        fence(Ordering::SeqCst);
        // SAFETY: as in `arm`; read after the streams were synchronised.
        unsafe { std::ptr::read_volatile(self.word(1)) != 0 }
    }
}

/// One copy, enqueued `iters` times per sample.
#[derive(Clone, Copy, Debug)]
pub enum Op<'a> {
    /// `cuMemcpyHtoDAsync_v2` from pinned or pageable host memory.
    HtoD {
        dst: sys::CUdeviceptr,
        src: *const c_void,
        bytes: usize,
    },
    /// `cuMemcpyDtoHAsync_v2` into pinned or pageable host memory.
    DtoH {
        dst: *mut c_void,
        src: sys::CUdeviceptr,
        bytes: usize,
    },
    /// `cuMemcpyAsync` between device addresses (same GPU, or a peer's through UVA).
    DtoD {
        dst: sys::CUdeviceptr,
        src: sys::CUdeviceptr,
        bytes: usize,
    },
    /// `cuMemcpyPeerAsync` naming both contexts (staged by the driver without peer access).
    Peer {
        dst: sys::CUdeviceptr,
        dst_ctx: sys::CUcontext,
        src: sys::CUdeviceptr,
        src_ctx: sys::CUcontext,
        bytes: usize,
    },
    /// scalescope's copy kernel on the stream's GPU.
    Kernel {
        kernels: &'a Kernels,
        src: sys::CUdeviceptr,
        dst: sys::CUdeviceptr,
        bytes: u64,
    },
}

impl Op<'_> {
    /// Enqueues `n` copies: the copy kernel's as passes of one launch, the others one by one.
    fn enqueue_n(&self, stream: &Stream, n: u32) -> Result<(), CudaError> {
        match *self {
            Op::Kernel {
                kernels,
                src,
                dst,
                bytes,
            } => {
                stream.ctx().bind()?;
                kernels.copy(stream, src, dst, bytes, n)
            }
            _ => (0..n).try_for_each(|_| self.enqueue(stream)),
        }
    }

    fn enqueue(&self, stream: &Stream) -> Result<(), CudaError> {
        stream.ctx().bind()?;
        // SAFETY (all arms): every address lies within a live allocation of at least `bytes`
        // owned by the caller for the whole measurement (the caller synchronises before
        // freeing); host pointers are pinned or ordinary host memory; the stream is live and its
        // context current.
        match *self {
            Op::HtoD { dst, src, bytes } => unsafe { stream.copy_htod(dst, src, bytes) },
            Op::DtoH { dst, src, bytes } => unsafe { stream.copy_dtoh(dst, src, bytes) },
            Op::DtoD { dst, src, bytes } => unsafe { stream.copy_dtod(dst, src, bytes) },
            Op::Peer {
                dst,
                dst_ctx,
                src,
                src_ctx,
                bytes,
            } => unsafe { stream.copy_peer(dst, dst_ctx, src, src_ctx, bytes) },
            Op::Kernel {
                kernels,
                src,
                dst,
                bytes,
            } => kernels.copy(stream, src, dst, bytes, 1),
        }
    }
}

/// The spin kernel and flag addresses of a lane's GPU.
#[derive(Clone, Copy, Debug)]
pub struct Gate<'a> {
    /// The GPU's kernels (for `spin_wait`).
    pub kernels: &'a Kernels,
    /// The release flag as this GPU addresses it.
    pub flag: sys::CUdeviceptr,
    /// The time-out report as this GPU addresses it.
    pub timed_out: sys::CUdeviceptr,
}

/// One stream's share of a measurement.
#[derive(Clone, Copy, Debug)]
pub struct Lane<'a> {
    /// The stream the copies run on (its context issues them).
    pub stream: &'a Stream,
    /// The copy, enqueued `iters` times per sample.
    pub op: Op<'a>,
    /// `None` runs the whole measurement ungated (see the module docs).
    pub gate: Option<Gate<'a>>,
}

/// Releases the flag and waits for every stream when a sample ends early, so that no kernel
/// keeps spinning and no buffer is freed under a running copy.
struct Drain<'a> {
    flag: &'a Flag,
    streams: Vec<&'a Stream>,
    active: bool,
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        if self.active {
            self.flag.release();
            for s in &self.streams {
                let _ = s.synchronize();
            }
        }
    }
}

/// Whether every lane can be gated.
pub fn gated(lanes: &[Lane]) -> bool {
    lanes.iter().all(|l| l.gate.is_some())
}

/// Runs one warm-up sample (discarded) and `samples` timed ones (then untimed ones while the
/// case's energy wants a longer window: [`super::energy::wants_more`]); returns, per lane, each
/// timed sample's milliseconds between its start and stop events.
pub fn run(
    lanes: &[Lane],
    iters: u32,
    samples: u32,
    flag: &Flag,
) -> Result<Vec<Vec<f64>>, MeasureError> {
    let gate = gated(lanes);
    let events: Vec<(Event, Event)> = lanes
        .iter()
        .map(|l| Ok((Event::new(l.stream.ctx())?, Event::new(l.stream.ctx())?)))
        .collect::<Result<_, CudaError>>()?;
    let mut out = vec![Vec::with_capacity(samples as usize); lanes.len()];
    // The timed samples' window, for their energy (see `super::energy`): from the first timed
    // sample's start to the last sample's end, untimed ones run for the energy included.
    let mut window_start = None;
    let mut sample = 0;
    loop {
        if sample == 1 {
            window_start = Some(std::time::Instant::now());
        }
        let mut drain = Drain {
            flag,
            streams: lanes.iter().map(|l| l.stream).collect(),
            active: true,
        };
        if gate {
            flag.arm();
            for l in lanes {
                if let Some(g) = l.gate {
                    g.kernels
                        .spin_wait(l.stream, g.flag, SPIN_TIMEOUT_NS, g.timed_out)?;
                }
            }
        }
        for l in lanes {
            l.op.enqueue_n(l.stream, WARMUP_COPIES)?;
        }
        if let (Some(first), Some((start0, _))) = (lanes.first(), events.first()) {
            start0.record(first.stream)?;
            for (l, (start, _)) in lanes.iter().zip(&events).skip(1) {
                l.stream.wait_event(start0)?;
                start.record(l.stream)?;
            }
        }
        for (l, (_, stop)) in lanes.iter().zip(&events) {
            l.op.enqueue_n(l.stream, iters)?;
            stop.record(l.stream)?;
        }
        if gate {
            flag.release();
        }
        for l in lanes {
            l.stream.synchronize()?;
        }
        drain.active = false;
        if gate && flag.timed_out() {
            return Err(MeasureError::SpinTimeout);
        }
        if (1..=samples).contains(&sample) {
            for (i, (start, stop)) in events.iter().enumerate() {
                out[i].push(stop.elapsed_ms_since(start)?);
            }
        }
        if sample >= samples.max(1) {
            match window_start {
                Some(t0) if super::energy::wants_more(t0) => {}
                _ => break,
            }
        }
        sample += 1;
    }
    if let Some(t0) = window_start {
        super::energy::timed(t0, std::time::Instant::now());
    }
    Ok(out)
}

/// GB/s (10⁹ B/s) from bytes moved and milliseconds; NaN for a non-positive time.
pub fn gbps(bytes: f64, ms: f64) -> f64 {
    if ms > 0.0 {
        bytes / (ms * 1e6)
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::gbps;

    #[test]
    fn rates() {
        assert_eq!(gbps(1e9, 1000.0), 1.0);
        assert!((gbps(512.0 * 1048576.0 * 16.0, 21.5) - 399.6).abs() < 0.1);
        assert!(gbps(1.0, 0.0).is_nan());
    }
}
