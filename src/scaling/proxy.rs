//! Measured proxy runs on real GPUs: the cuBLAS GEMM rates the model uses (the first GPU alone,
//! and every GPU while all run at once), and synthetic steps of each workload on 1, 2, 4, … and
//! N GPUs ([`proxy_counts`]) — GEMMs sized to the workload's FLOPs, the gradient all-reduced
//! in buckets by NCCL on a second stream overlapping the tail of compute (training patterns), or
//! host→GPU input copies beside compute (inference replicas). Nothing here panics: a missing
//! driver, cuBLAS or NCCL becomes an error (or a waived row) naming what was searched.
//!
//! The proxy runs `flops × batch ÷ utilization` FLOPs of square GEMMs, so its compute lasts as
//! long as the workload's would at the catalog's utilization; what it checks is the model's
//! communication, overlap and contention terms.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::rates::{GemmRate, GpuRates, PerGpuRates};
use super::table::{Mode, RowSource, ScalingPoint, fill_speedup};
use super::workload::{ComputeDtype, Pattern, Workload};
use crate::cuda::CudaError;
use crate::cuda::context::Context;
use crate::cuda::cublas::{Cublas, Handle};
use crate::cuda::memory::{DeviceBuffer, PinnedBuffer};
use crate::cuda::nccl::{Buffers, CommStream, Nccl, nccl_dtype};
use crate::cuda::stream::{Event, Stream};
use crate::model::median;
use crate::model::quantities::gpu_list;
use crate::model::{Source, Topology, TopologySource};
use crate::telemetry::energy_meter::EnergyMeter;
use std::time::Instant;

/// Size of the GEMM-rate measurement (8192³, as cuBLAS benchmarks commonly use).
pub const RATE_DIM: i32 = 8192;
/// Timed repetitions of the rate measurement (the median is kept) and of each proxy step.
pub const REPS: usize = 5;
/// Warm-up and sample lengths of the GEMM-rate measurement (and the proxies' warm-up), ms.
/// Under continuous matrix load an H200 keeps slowing for seconds (power and temperature
/// settle): on 2× H200 a 1.75 s measurement gave 1.338 ms per 8192³ bf16 product while proxy
/// steps lasting 1.7 s ran at 1.59 ms, so both are measured only after 3 s of the same work.
const WARMUP_MS: f64 = 3000.0;
const SAMPLE_MS: f64 = 500.0;
/// The GEMM-rate warm-up goes on, in windows of this length, until the slowest GPU's time per
/// product is within [`SETTLE_TOLERANCE`] of two windows before (the clocks have stopped
/// falling), or [`SETTLE_MAX_MS`] has passed. On 8× H200 (2026-11-22) GPUs 3 s into their load
/// sustained 719–808 TFLOP/s bf16, while proxy steps minutes later ran at 640–690.
const SETTLE_WINDOW_MS: f64 = 1000.0;
const SETTLE_TOLERANCE: f64 = 0.005;
const SETTLE_MAX_MS: f64 = 30_000.0;

/// Why a proxy run could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error(transparent)]
    Cuda(#[from] CudaError),
    #[error(transparent)]
    Cublas(#[from] crate::cuda::cublas::CublasError),
    #[error(transparent)]
    CublasMissing(#[from] crate::cuda::cublas::NotFound),
    #[error(transparent)]
    Nccl(#[from] crate::cuda::nccl::NcclError),
    #[error("{0}")]
    Other(String),
}

/// Opened GPUs: context, two streams (compute, communication) each.
struct Gpu {
    compute: Stream,
    comm: Stream,
    ctx: Arc<Context>,
}

fn open(ordinals: &[usize]) -> Result<Vec<Gpu>, ProxyError> {
    let driver = crate::cuda::driver()?;
    ordinals
        .iter()
        .map(|&o| {
            if o >= driver.device_count {
                return Err(ProxyError::Other(format!(
                    "GPU {o} is not visible to CUDA ({} devices)",
                    driver.device_count
                )));
            }
            let ctx = Context::retain(o)?;
            Ok(Gpu {
                compute: Stream::new(&ctx)?,
                comm: Stream::new(&ctx)?,
                ctx,
            })
        })
        .collect()
}

fn fill_random(buf: &DeviceBuffer, bf16: bool, seed: u64) -> Result<(), ProxyError> {
    Ok(crate::cuda::memory::fill_random_operand(buf, bf16, seed)?)
}

/// An energy meter of CUDA ordinals `ordinals` (found in NVML by their PCI bus ids), or `None`
/// where NVML cannot read them.
fn ordinal_meter(ordinals: &[usize]) -> Option<EnergyMeter> {
    let mut topo = Topology::new(TopologySource::Imported { paths: Vec::new() });
    for &o in ordinals {
        topo.gpus.push(crate::model::Gpu {
            index: o,
            pci_bus_id: Some(crate::cuda::pci_bus_id(o).ok()?),
            ..Default::default()
        });
    }
    EnergyMeter::start(&topo, ordinals).ok()
}

/// Measures the sustained dense GEMM rate of every GPU in `ordinals` with cuBLAS
/// (d = [`RATE_DIM`], median of [`REPS`]), bf16 (fp32 accumulate) and fp32, all of them at once:
/// each GPU's products are enqueued in the same loop, so with one ordinal this is that GPU
/// alone, and with several it is each GPU while all of them run (sharing the chassis' power and
/// cooling, as in a data-parallel step). One entry per ordinal, in order.
pub fn measure_gemm(cublas: &Cublas, ordinals: &[usize]) -> Result<Vec<PerGpuRates>, ProxyError> {
    if ordinals.is_empty() {
        return Err(ProxyError::Other(
            "no GPU to measure the GEMM rate on".into(),
        ));
    }
    let gpus = open(ordinals)?;
    // Each GPU's power over the timed samples, from its energy counter (none without NVML).
    let meter = ordinal_meter(ordinals);
    let mut out: Vec<PerGpuRates> = ordinals
        .iter()
        .map(|&gpu| PerGpuRates {
            gpu,
            rates: GpuRates::default(),
        })
        .collect();
    let company = if ordinals.len() > 1 {
        format!(" while GPUs {} ran the same at once", gpu_list(ordinals))
    } else {
        " alone".to_string()
    };
    let d = RATE_DIM;
    for dtype in [ComputeDtype::Bf16, ComputeDtype::Fp32] {
        let bench = GemmBench::new(cublas, &gpus, dtype == ComputeDtype::Bf16)?;
        let (per_product, warm_up) = bench.settle()?;
        let mut samples = vec![Vec::with_capacity(REPS); gpus.len()];
        let window_start = Instant::now();
        for _ in 0..REPS {
            for (s, ms) in samples
                .iter_mut()
                .zip(bench.batch(products(SAMPLE_MS, per_product))?)
            {
                s.push(ms);
            }
        }
        let window_end = Instant::now();
        for ((o, g), s) in out.iter_mut().zip(&gpus).zip(samples) {
            let ms = median(&s).ok_or(ProxyError::Other("no timed GEMM samples".into()))?;
            let tflops = 2.0 * (d as f64).powi(3) / (ms * 1e-3) / 1e12;
            let energy = meter
                .as_ref()
                .map(|m| m.window(&[o.gpu], window_start, window_end));
            let (watts, power) = match energy {
                Some(Ok(e)) => (
                    Some(e.mean_power_w),
                    format!(
                        "; {:.0} W mean over the samples ({:.3} TFLOP/J, {})",
                        e.mean_power_w,
                        tflops / e.mean_power_w,
                        e.basis.words()
                    ),
                ),
                Some(Err(why)) => (None, format!("; power not measured ({why})")),
                None => (None, String::new()),
            };
            let rate = GemmRate {
                tflops,
                source: Source::Measured,
                basis: format!(
                    "cuBLAS GemmEx {dtype} {d}³ on random data, sustained ({warm_up}, median of {REPS} samples of ~{SAMPLE_MS:.0} ms) on GPU {} ({}){company}: {ms:.3} ms each{power}; {}",
                    o.gpu,
                    g.ctx.name(),
                    cublas.path
                ),
                watts,
            };
            match dtype {
                ComputeDtype::Bf16 => o.rates.bf16 = Some(rate),
                ComputeDtype::Fp32 => o.rates.fp32 = Some(rate),
            }
        }
    }
    Ok(out)
}

/// Products of `per` ms each that last about `ms`.
fn products(ms: f64, per: f64) -> usize {
    ((ms / per).ceil() as usize).clamp(1, 10_000)
}

/// The GEMM-rate measurement of one type on every GPU at once: each GPU's operands (random,
/// [`RATE_DIM`]² each) and a cuBLAS handle on its compute stream.
struct GemmBench<'a> {
    gpus: &'a [Gpu],
    operands: Vec<([DeviceBuffer; 3], Handle<'a>)>,
    bf16: bool,
}

impl<'a> GemmBench<'a> {
    /// Allocates and fills every GPU's operands (bf16, else fp32) and makes its handle.
    fn new(cublas: &'a Cublas, gpus: &'a [Gpu], bf16: bool) -> Result<GemmBench<'a>, ProxyError> {
        let d = RATE_DIM as usize;
        let bytes = d * d * if bf16 { 2 } else { 4 };
        let mut operands = Vec::with_capacity(gpus.len());
        for g in gpus {
            g.ctx.bind()?;
            let bufs = [
                DeviceBuffer::alloc(&g.ctx, bytes)?,
                DeviceBuffer::alloc(&g.ctx, bytes)?,
                DeviceBuffer::alloc(&g.ctx, bytes)?,
            ];
            // Random operands: a GPU multiplying constant or zero data draws less power and
            // runs faster than it will on real data (see METHOD.md's note on zeros).
            for (i, b) in bufs.iter().enumerate() {
                fill_random(b, bf16, 0x5eed + i as u64)?;
            }
            g.ctx.bind()?;
            let h = Handle::new(cublas)?;
            h.set_stream(g.compute.raw())?;
            operands.push((bufs, h));
        }
        Ok(GemmBench {
            gpus,
            operands,
            bf16,
        })
    }

    /// `count` products on every GPU, interleaved so that all GPUs work at once, between a
    /// pair of events per GPU: each GPU's ms per product. Should a slower GPU's launch queue
    /// fill, the host waits on it and the faster GPUs' rates are pulled toward the slowest
    /// one's, which is the rate the model uses anyway.
    fn batch(&self, count: usize) -> Result<Vec<f64>, ProxyError> {
        let gpus = self.gpus;
        let mut marks = Vec::with_capacity(gpus.len());
        for g in gpus {
            let (start, end) = (Event::new(&g.ctx)?, Event::new(&g.ctx)?);
            start.record(&g.compute)?;
            marks.push((start, end));
        }
        for _ in 0..count {
            for (g, (b, h)) in gpus.iter().zip(&self.operands) {
                g.ctx.bind()?;
                h.gemm_square(RATE_DIM, self.bf16, b[0].ptr(), b[1].ptr(), b[2].ptr())?;
            }
        }
        for (g, (_, end)) in gpus.iter().zip(&marks) {
            end.record(&g.compute)?;
        }
        for g in gpus {
            g.compute.synchronize()?;
        }
        marks
            .iter()
            .map(|(start, end)| Ok(end.elapsed_ms_since(start)? / count as f64))
            .collect()
    }

    /// Runs the products until the rate settles: the latest ms per product on the slowest GPU,
    /// and the warm-up in words.
    ///
    /// Sustained, as a training step runs: a GPU under continuous matrix load settles at
    /// lower clocks than a burst of a few products shows, so each sample is a batch of
    /// products lasting about SAMPLE_MS on the slowest GPU, after the same work has run
    /// until the rate settled.
    /// Products per window and per sample follow the latest time per product: the first one
    /// (cold clocks, cuBLAS loading its kernels) can take a hundred times a settled one,
    /// which made the samples last milliseconds instead of SAMPLE_MS (seen on H100 when the
    /// energy counter could not cover them, 2026-11-26).
    fn settle(&self) -> Result<(f64, String), ProxyError> {
        let mut per_product = self.batch(1)?.into_iter().fold(1e-3, f64::max);
        let (mut warmed_ms, mut windows) = (0.0, Vec::<f64>::new());
        let settled = loop {
            let per_window = products(SETTLE_WINDOW_MS, per_product);
            let slowest = self.batch(per_window)?.into_iter().fold(0.0, f64::max);
            per_product = slowest.max(1e-3);
            warmed_ms += slowest * per_window as f64;
            windows.push(slowest);
            let k = windows.len();
            if warmed_ms >= WARMUP_MS
                && k >= 3
                && windows[k - 1] <= windows[k - 3] * (1.0 + SETTLE_TOLERANCE)
            {
                break true;
            }
            if warmed_ms >= SETTLE_MAX_MS {
                break false;
            }
        };
        let warm_up = format!(
            "{:.0} s warm-up{}",
            warmed_ms / 1e3,
            if settled {
                " until the rate settled"
            } else {
                ", rate still falling"
            }
        );
        Ok((per_product, warm_up))
    }
}

/// The GPU counts proxies run at out of `gpus` selected: 1, 2, 4, … (powers of two below
/// `gpus`) and `gpus` itself. Every count would take too long on 8 GPUs; the model still gives
/// every count, and these are the ones data-parallel jobs usually use.
pub fn proxy_counts(gpus: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|&n| n < gpus)
        .collect();
    if gpus > 0 {
        v.push(gpus);
    }
    v
}

/// What to run.
#[derive(Clone, Debug)]
pub struct ProxyOptions {
    /// CUDA ordinals, in order; runs use the first n of them for each n of [`proxy_counts`].
    pub gpus: Vec<usize>,
    pub modes: Vec<Mode>,
    pub nccl_lib: Option<std::path::PathBuf>,
}

/// NCCL communicators over a GPU set, destroyed on drop.
struct Comms<'a> {
    nccl: &'a Nccl,
    raw: Vec<cudarc::nccl::sys::ncclComm_t>,
}

impl<'a> Comms<'a> {
    fn new(nccl: &'a Nccl, ordinals: &[usize]) -> Result<Comms<'a>, ProxyError> {
        let devs: Vec<i32> = ordinals.iter().map(|&o| o as i32).collect();
        let raw = nccl.comm_init_all(&devs)?;
        Ok(Comms { nccl, raw })
    }
}

impl Drop for Comms<'_> {
    fn drop(&mut self) {
        for &c in &self.raw {
            // SAFETY: each communicator came from ncclCommInitAll and is destroyed once.
            unsafe {
                self.nccl.comm_destroy(c);
            }
        }
    }
}

/// Per-GPU buffers of one proxy run.
struct Bufs {
    a: DeviceBuffer,
    b: DeviceBuffer,
    c: DeviceBuffer,
    grad: Option<DeviceBuffer>,
    input: Option<(PinnedBuffer, DeviceBuffer)>,
}

/// Runs the proxy of every workload on the GPU counts of [`proxy_counts`]; `on_row` after each
/// row. Patterns with no
/// GPU proxy (primary/secondary, remote offload) give waived rows.
pub fn run(
    workloads: &[Workload],
    opts: &ProxyOptions,
    cancel: &AtomicBool,
    on_row: &mut dyn FnMut(&[ScalingPoint]),
) -> Result<Vec<ScalingPoint>, ProxyError> {
    let cublas = Cublas::load()?;
    let nccl = if opts.gpus.len() > 1 {
        Some(Nccl::load(opts.nccl_lib.as_deref()))
    } else {
        None
    };
    let gpus = open(&opts.gpus)?;
    let mut rows = Vec::new();
    for w in workloads {
        for &mode in &opts.modes {
            for n in proxy_counts(gpus.len()) {
                if cancel.load(Ordering::Relaxed) {
                    return Ok(rows);
                }
                let mut row = ScalingPoint::empty(w, mode, RowSource::Proxy, n);
                let (global, per) = (row.global_batch, row.per_gpu_batch);
                let nccl_ref = match (&nccl, n) {
                    (_, 1) => Ok(None),
                    (Some(Ok(l)), _) => Ok(Some(l)),
                    (Some(Err(e)), _) => Err(format!("waived: {e}")),
                    (None, _) => Err("waived: NCCL not loaded".to_string()),
                };
                let result = match (w.pattern, nccl_ref) {
                    (Pattern::PrimarySecondary | Pattern::RemoteOffload, _) => Err(format!(
                        "waived: the {} pattern needs its clients and network; modeled only",
                        w.pattern
                    )),
                    (_, Err(e)) if w.pattern.is_training() => Err(e),
                    (_, nccl_ref) => step(w, &gpus[..n], &cublas, nccl_ref.ok().flatten(), per)
                        .map_err(|e| format!("failed: {e}")),
                };
                match result {
                    Ok((ms, compute_ms, basis)) => {
                        row.step_time_ms = Some(ms);
                        row.throughput = Some(global / (ms * 1e-3));
                        row.compute_ms = Some(compute_ms);
                        row.basis = basis;
                    }
                    Err(e) => row.basis = e,
                }
                rows.push(row);
                fill_speedup(&mut rows);
                on_row(&rows);
            }
        }
    }
    Ok(rows)
}

/// One workload's proxy step on `gpus`: (median step ms, compute-only ms on GPU 0, basis).
fn step(
    w: &Workload,
    gpus: &[Gpu],
    cublas: &Cublas,
    nccl: Option<&Nccl>,
    per_gpu_batch: f64,
) -> Result<(f64, f64, String), ProxyError> {
    let shape = StepShape::new(w, gpus.len(), per_gpu_batch);
    let proxy = ProxyStep::new(w, gpus, cublas, nccl, &shape)?;
    let mut steps = Vec::new();
    let mut compute_only = Vec::new();
    // Untimed steps first, about WARMUP_MS worth (the first one sizes the rest), so the timed
    // steps run at the clocks sustained work settles at, as the GEMM rate was measured.
    let mut warm = 1usize;
    let mut it = 0usize;
    while steps.len() < REPS {
        let marks = proxy.run_once()?;
        let worst = marks.worst_ms()?;
        if it == 0 {
            warm = ((WARMUP_MS / worst.max(1e-3)).ceil() as usize).clamp(1, 1000);
        }
        if it >= warm {
            steps.push(worst);
            compute_only.push(marks.compute_ms()?);
        }
        it += 1;
    }
    let per = if w.pattern == Pattern::SimPolicy {
        w.steps_per_sync.unwrap_or(1.0)
    } else {
        1.0
    };
    let ms = median(&steps).ok_or(ProxyError::Other("no timed steps".into()))?;
    let compute = median(&compute_only).unwrap_or(ms);
    // Sim + policy: the proxy's compute stands for `steps_per_sync` steps' worth only when
    // scaled; we run one step's compute and one sync, then spread the sync.
    let step_ms = compute + (ms - compute) / per;
    Ok((step_ms, compute, shape.basis(w)))
}

/// What one workload's proxy step does on each GPU: square GEMMs standing for its FLOPs (at
/// the catalog utilization), its gradient all-reduced in buckets (training on two GPUs or
/// more), its input copied beside compute (inference replicas).
struct StepShape {
    bf16: bool,
    /// The GEMMs' side.
    d: i32,
    /// GEMMs per step.
    reps: usize,
    /// GEMMs before backward begins (the rest overlap the buckets' all-reduces, for DDP).
    fwd: usize,
    grad_bytes: usize,
    training: bool,
    bucket: usize,
    buckets: usize,
    /// The buckets' all-reduces overlap backward (DDP), else follow compute.
    overlap: bool,
    input_bytes: usize,
}

impl StepShape {
    /// The step of `w` at `per_gpu_batch` samples per GPU on `n` GPUs.
    fn new(w: &Workload, n: usize, per_gpu_batch: f64) -> StepShape {
        let bf16 = w.compute_dtype == ComputeDtype::Bf16;
        let flops = w.flops_per_sample * per_gpu_batch / w.utilization;
        let d: i32 = if flops >= 8.0 * 2.0 * 8192f64.powi(3) {
            8192
        } else {
            4096
        };
        let reps = (flops / (2.0 * (d as f64).powi(3))).round().max(1.0) as usize;
        let grad_bytes = (w.params * w.grad_dtype.size() as f64) as usize;
        let training = w.pattern.is_training() && n > 1;
        let bucket = if w.bucket_bytes > 0.0 {
            w.bucket_bytes as usize
        } else {
            grad_bytes.max(1)
        };
        let buckets = if training {
            grad_bytes.div_ceil(bucket).max(1)
        } else {
            0
        };
        let overlap = w.pattern == Pattern::DdpRing;
        let input_bytes = match w.pattern {
            Pattern::InferenceReplicas => {
                (per_gpu_batch * w.sample_input_bytes.unwrap_or(0.0)).ceil() as usize
            }
            _ => 0,
        };
        StepShape {
            bf16,
            d,
            reps,
            fwd: if overlap { reps / 3 } else { reps },
            grad_bytes,
            training,
            bucket,
            buckets,
            overlap,
            input_bytes,
        }
    }

    /// What the proxy ran, in words.
    fn basis(&self, w: &Workload) -> String {
        let (reps, d, buckets, bucket, input_bytes) = (
            self.reps,
            self.d,
            self.buckets,
            self.bucket,
            self.input_bytes,
        );
        format!(
            "{reps} × cuBLAS {d}³ {} per GPU{}{}",
            w.compute_dtype,
            if buckets > 0 {
                format!(
                    ", {buckets} NCCL all-reduce bucket(s) of ≤ {bucket} B{}",
                    if self.overlap {
                        " overlapping backward"
                    } else {
                        " after compute"
                    }
                )
            } else {
                String::new()
            },
            if input_bytes > 0 {
                format!(", {input_bytes} B host→GPU input per GPU beside compute")
            } else {
                String::new()
            }
        )
    }
}

/// A proxy step set up on every GPU: cuBLAS handles on the compute streams, the buffers, and
/// the communicators when the gradient is all-reduced. Dropped in the order the fields are
/// declared: the communicators, then the buffers, then the handles.
struct ProxyStep<'a> {
    w: &'a Workload,
    gpus: &'a [Gpu],
    nccl: Option<&'a Nccl>,
    shape: &'a StepShape,
    comms: Option<Comms<'a>>,
    bufs: Vec<Bufs>,
    handles: Vec<Handle<'a>>,
}

/// One step's events: where each GPU's compute ended, and each GPU's start and end.
struct StepMarks {
    compute_end: Vec<Event>,
    marks: Vec<(Event, Event)>,
}

impl StepMarks {
    /// The slowest GPU's step, ms.
    fn worst_ms(&self) -> Result<f64, ProxyError> {
        let mut worst: f64 = 0.0;
        for (s, e) in &self.marks {
            worst = worst.max(e.elapsed_ms_since(s)?);
        }
        Ok(worst)
    }

    /// GPU 0's compute alone, ms.
    fn compute_ms(&self) -> Result<f64, ProxyError> {
        Ok(self.compute_end[0].elapsed_ms_since(&self.marks[0].0)?)
    }
}

impl<'a> ProxyStep<'a> {
    /// Makes each GPU's handle and buffers (random operands, a zeroed gradient, the input's
    /// host and device copies), then the communicators.
    fn new(
        w: &'a Workload,
        gpus: &'a [Gpu],
        cublas: &'a Cublas,
        nccl: Option<&'a Nccl>,
        shape: &'a StepShape,
    ) -> Result<ProxyStep<'a>, ProxyError> {
        let elem = if shape.bf16 { 2 } else { 4 };
        let matrix = (shape.d as usize) * (shape.d as usize) * elem;
        let mut handles = Vec::new();
        let mut bufs = Vec::new();
        for g in gpus {
            g.ctx.bind()?;
            let h = Handle::new(cublas)?;
            h.set_stream(g.compute.raw())?;
            handles.push(h);
            let b = Bufs {
                a: DeviceBuffer::alloc(&g.ctx, matrix)?,
                b: DeviceBuffer::alloc(&g.ctx, matrix)?,
                c: DeviceBuffer::alloc(&g.ctx, matrix)?,
                grad: if shape.training {
                    Some(DeviceBuffer::alloc(&g.ctx, shape.grad_bytes)?)
                } else {
                    None
                },
                input: if shape.input_bytes > 0 {
                    Some((
                        PinnedBuffer::alloc(&g.ctx, shape.input_bytes, None)?,
                        DeviceBuffer::alloc(&g.ctx, shape.input_bytes)?,
                    ))
                } else {
                    None
                },
            };
            fill_random(&b.a, shape.bf16, 1)?;
            fill_random(&b.b, shape.bf16, 2)?;
            if let Some(gr) = &b.grad {
                gr.memset_async(0, &g.compute)?;
            }
            bufs.push(b);
        }
        let comms = match (nccl, shape.training) {
            (Some(l), true) => {
                let ordinals: Vec<usize> = gpus.iter().map(|g| g.ctx.ordinal()).collect();
                Some(Comms::new(l, &ordinals)?)
            }
            _ => None,
        };
        Ok(ProxyStep {
            w,
            gpus,
            nccl,
            shape,
            handles,
            bufs,
            comms,
        })
    }

    /// One GEMM on GPU `i`'s compute stream.
    fn gemm(&self, i: usize) -> Result<(), ProxyError> {
        let b = &self.bufs[i];
        self.gpus[i].ctx.bind()?;
        self.handles[i].gemm_square(
            self.shape.d,
            self.shape.bf16,
            b.a.ptr(),
            b.b.ptr(),
            b.c.ptr(),
        )?;
        Ok(())
    }

    /// One GEMM on every GPU.
    fn gemm_all(&self) -> Result<(), ProxyError> {
        for i in 0..self.gpus.len() {
            self.gemm(i)?;
        }
        Ok(())
    }

    /// Makes each GPU's communication stream wait for the work enqueued on its compute stream.
    fn comm_after_compute(&self) -> Result<(), ProxyError> {
        for g in self.gpus {
            let e = Event::new_untimed(&g.ctx)?;
            e.record(&g.compute)?;
            g.comm.wait_event(&e)?;
        }
        Ok(())
    }

    /// The all-reduce of gradient bucket `k` on every GPU, in one NCCL group (nothing without
    /// communicators).
    fn all_reduce(&self, k: usize) -> Result<(), ProxyError> {
        let (Some(c), Some(l)) = (&self.comms, self.nccl) else {
            return Ok(());
        };
        let (bucket, grad_bytes) = (self.shape.bucket, self.shape.grad_bytes);
        let off = k * bucket;
        let len = bucket.min(grad_bytes - off);
        let count = len / self.w.grad_dtype.size() as usize;
        l.group_start()?;
        for (i, g) in self.gpus.iter().enumerate() {
            let Some(gr) = &self.bufs[i].grad else {
                continue;
            };
            g.ctx.bind()?;
            let p = gr.ptr() + off as u64;
            // SAFETY: in-place all-reduce of `count` elements inside this GPU's gradient buffer;
            // the communicator is this GPU's; the stream is its live communication stream.
            unsafe {
                l.all_reduce(
                    Buffers::in_place(p, count, nccl_dtype(self.w.grad_dtype)),
                    cudarc::nccl::sys::ncclRedOp_t::ncclSum,
                    CommStream {
                        comm: c.raw[i],
                        stream: &g.comm,
                    },
                )
            }?;
        }
        l.group_end()?;
        Ok(())
    }

    /// Runs one step on every GPU and waits for it: forward GEMMs, backward GEMMs with the
    /// buckets all-reduced as they become ready (DDP) or after compute, the input copy beside.
    fn run_once(&self) -> Result<StepMarks, ProxyError> {
        let (gpus, shape) = (self.gpus, self.shape);
        let bwd = shape.reps - shape.fwd;
        let mut marks = Vec::new();
        for g in gpus {
            let (s, e) = (Event::new(&g.ctx)?, Event::new(&g.ctx)?);
            s.record(&g.compute)?;
            // The communication stream starts with the step.
            let go = Event::new_untimed(&g.ctx)?;
            go.record(&g.compute)?;
            g.comm.wait_event(&go)?;
            marks.push((s, e));
        }
        // Inference: the input copy runs on the second stream beside compute.
        for (i, g) in gpus.iter().enumerate() {
            if let Some((host, dev)) = &self.bufs[i].input {
                g.ctx.bind()?;
                // SAFETY: both buffers hold `input_bytes`; the stream is live in this context.
                unsafe {
                    g.comm
                        .copy_htod(dev.ptr(), host.host_ptr(), shape.input_bytes)
                }?;
            }
        }
        for _ in 0..shape.fwd {
            self.gemm_all()?;
        }
        let compute_end: Vec<Event> = gpus
            .iter()
            .map(|g| Event::new(&g.ctx))
            .collect::<Result<_, _>>()?;
        let mut launched = 0;
        for j in 0..bwd {
            self.gemm_all()?;
            // Buckets become ready evenly through backward (DDP's gradient hooks).
            let ready = ((j + 1) * shape.buckets).div_ceil(bwd.max(1));
            if shape.overlap && ready > launched {
                self.comm_after_compute()?;
                for k in launched..ready {
                    self.all_reduce(k)?;
                }
                launched = ready;
            }
        }
        for (g, e) in gpus.iter().zip(&compute_end) {
            e.record(&g.compute)?;
        }
        if launched < shape.buckets {
            self.comm_after_compute()?;
            for k in launched..shape.buckets {
                self.all_reduce(k)?;
            }
        }
        for (g, (_, end)) in gpus.iter().zip(&marks) {
            let done = Event::new_untimed(&g.ctx)?;
            done.record(&g.comm)?;
            g.compute.wait_event(&done)?;
            end.record(&g.compute)?;
        }
        for g in gpus {
            g.compute.synchronize()?;
            g.comm.synchronize()?;
        }
        Ok(StepMarks { compute_end, marks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_run_at_powers_of_two_and_every_gpu() {
        assert_eq!(proxy_counts(0), Vec::<usize>::new());
        assert_eq!(proxy_counts(1), vec![1]);
        assert_eq!(proxy_counts(2), vec![1, 2]);
        assert_eq!(proxy_counts(3), vec![1, 2, 3]);
        assert_eq!(proxy_counts(4), vec![1, 2, 4]);
        assert_eq!(proxy_counts(6), vec![1, 2, 4, 6]);
        assert_eq!(proxy_counts(8), vec![1, 2, 4, 8]);
        assert_eq!(proxy_counts(12), vec![1, 2, 4, 8, 12]);
    }
}
