//! The soak's loads on real GPUs: one thread per GPU running the phase the caller sets — bf16
//! GEMMs with every result checked, device-memory copies, host↔GPU copies both ways, copies to
//! the next GPU — and, for the NCCL phase, one thread driving an all-reduce over every GPU.
//! Each thread reports batches of work (~200 ms each: what was done and how long the GPU took,
//! from CUDA events) that the caller turns into per-second rates, and findings (a wrong GEMM
//! result, an error that ended a load).
//!
//! GEMM results are checked the way gpu-burn does it, our way: the inputs are seeded random
//! bf16 matrices, the first product on each GPU is the reference, and every later product is
//! compared with it word for word on the GPU (`assets/kernels/soak.cu`, built with NVRTC) —
//! cuBLAS gives bitwise-identical results for the same call on GPUs of the same architecture
//! and SM count (cuBLAS documentation, "Results reproducibility"). Each GPU's reference is also
//! compared with GPU 0's on the host: bitwise where the GPUs are the same model, else within two
//! bf16 units in the last place.

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cudarc::driver::sys;

use crate::cuda::CudaError;
use crate::cuda::context::{Context, enable_peer_access_both};
use crate::cuda::cublas::{Cublas, Handle};
use crate::cuda::memory::{DeviceBuffer, PinnedBuffer, fill_random_operand};
use crate::cuda::module::{Module, arg, launch_kernel};
use crate::cuda::nccl::{Buffers, CommStream, Nccl};
use crate::cuda::nvrtc::Nvrtc;
use crate::cuda::stream::{Event, Stream};
use crate::model::SoakLoad;

/// The soak kernels' CUDA C source.
pub const SOURCE: &str = include_str!("../../../assets/kernels/soak.cu");

/// PTX of [`SOURCE`] built with nvcc (`nvcc -ptx -arch=compute_90`, CUDA 13.0, on the GPU
/// machine of docs/VERIFIED.md), used when NVRTC cannot be had: loads on sm_90 and later.
pub const BUNDLED_PTX: &str = include_str!("../../../assets/kernels/soak.ptx");

/// GEMM size: 8192³ bf16, as cuBLAS benchmarks commonly use (and our GEMM-rate probe).
pub const GEMM_DIM: i32 = 8192;
/// Output buffers the products rotate through (each checked before it is written again).
const SLOTS: usize = 4;
/// Bytes of each copy buffer (memory phase: two of twice this; host, peer and NCCL: this).
const COPY_BYTES: usize = 256 << 20;
/// Target length of one batch of work.
const BATCH_MS: f64 = 200.0;

/// The test hook that alters one GEMM result on purpose (never a user option: the command
/// line's hidden `--test-corrupt-gemm`), to show that a wrong result is caught and named.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CorruptAt {
    /// Position of the GPU in the soak's list.
    pub gpu: usize,
    /// Seconds after the load began (the first GEMM product after it is altered).
    pub after_s: f64,
}

/// What to load.
#[derive(Clone, Debug, Default)]
pub struct SoakSetup {
    /// CUDA ordinals, in the order the caller numbers GPUs (`Batch::gpu` is a position here).
    pub ordinals: Vec<usize>,
    pub loads: Vec<SoakLoad>,
    pub nccl_lib: Option<PathBuf>,
    pub corrupt: Option<CorruptAt>,
}

/// One batch of work of one GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// Position of the GPU in [`SoakSetup::ordinals`].
    pub gpu: usize,
    pub load: SoakLoad,
    /// When the batch finished (host clock).
    pub end: Instant,
    /// FLOPs (gemm) or bytes (copies; busbw bytes for nccl) done.
    pub work: f64,
    /// GPU time the work took, ms (CUDA events; for gemm the products alone, not their checks).
    pub ms: f64,
    /// GEMM results checked, and how many were wrong.
    pub checked: u64,
    pub wrong: u64,
}

/// Something a load found.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// A wrong GEMM result: the first wrong element found (column-major row, column), the bits
    /// found and expected, how many 32-bit words of the product differed, and the reference.
    Mismatch {
        gpu: usize,
        at: Instant,
        row: u64,
        col: u64,
        got: u16,
        expected: u16,
        words: u64,
        against: String,
    },
    /// A load could not run, or stopped on an error; the others go on.
    Stopped {
        gpu: Option<usize>,
        at: Instant,
        load: SoakLoad,
        why: String,
    },
}

struct Shared {
    /// The load running now: an index into [`SoakLoad::ALL`], or [`IDLE`].
    phase: AtomicU8,
    stop: AtomicBool,
    batches: Mutex<Vec<Batch>>,
    findings: Mutex<Vec<Finding>>,
    start: Instant,
}

const IDLE: u8 = u8::MAX;

/// Why a load stopped on one GPU.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    #[error(transparent)]
    Cuda(#[from] CudaError),
    #[error(transparent)]
    Cublas(#[from] crate::cuda::cublas::CublasError),
}

impl Shared {
    fn phase(&self) -> Option<SoakLoad> {
        SoakLoad::ALL
            .get(self.phase.load(Ordering::SeqCst) as usize)
            .copied()
    }
    fn push(&self, b: Batch) {
        if let Ok(mut v) = self.batches.lock() {
            v.push(b);
        }
    }
    fn find(&self, f: Finding) {
        if let Ok(mut v) = self.findings.lock() {
            v.push(f);
        }
    }
}

/// The running loads. Dropping it stops them.
pub struct SoakLoads {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    /// How the GEMMs run and are checked, in words.
    pub gemm: Option<String>,
    /// Loads that cannot run here, with the reason.
    pub skipped: Vec<(SoakLoad, String)>,
}

/// Why the loads could not start at all.
#[derive(Debug, thiserror::Error)]
pub enum SoakError {
    #[error(transparent)]
    Cuda(#[from] CudaError),
    #[error("{0}")]
    Other(String),
}

impl crate::model::Blame for SoakError {
    fn fault(&self) -> crate::model::Fault {
        crate::model::Fault::Machine
    }
}

/// What a GPU thread reports once set up.
struct Ready {
    gpu: usize,
    /// The reference product, on the host (`None` without the GEMM load).
    reference: Option<Vec<u8>>,
    /// Its receive buffer for the peer phase (the previous GPU writes into it).
    p2p_recv: Option<sys::CUdeviceptr>,
    /// Why a load cannot run on this GPU.
    skipped: Vec<(SoakLoad, String)>,
}

/// What a GPU thread is told before the loads begin.
struct Go {
    /// The next GPU's receive buffer and context, when the peer phase can run.
    p2p_dst: Option<(sys::CUdeviceptr, sys::CUcontext)>,
}

// SAFETY: raw device addresses and a context handle, used only by the receiving thread with its
// own context bound; the memory stays allocated until every thread passed the final barrier.
unsafe impl Send for Go {}

impl SoakLoads {
    /// Sets up every GPU (buffers, cuBLAS, the check kernel, the reference products, compared
    /// between GPUs) and starts the threads idle; [`SoakLoads::set_phase`] starts a load.
    /// `Err` when CUDA is missing or no GPU could be set up.
    pub fn start(setup: &SoakSetup) -> Result<SoakLoads, SoakError> {
        let ctxs = open_contexts(&setup.ordinals)?;
        let wants = |l: SoakLoad| setup.loads.contains(&l);
        let mut skipped: Vec<(SoakLoad, String)> = Vec::new();
        let n = ctxs.len();
        for l in [SoakLoad::P2p, SoakLoad::Nccl] {
            if wants(l) && n < 2 {
                skipped.push((l, "needs two GPUs or more".into()));
            }
        }
        let p2p = wants(SoakLoad::P2p) && n >= 2 && peer_ring(setup, &ctxs, &mut skipped);
        let cublas = if wants(SoakLoad::Gemm) {
            match Cublas::load() {
                Ok(c) => Some(Arc::new(c)),
                Err(e) => {
                    skipped.push((SoakLoad::Gemm, e.to_string()));
                    None
                }
            }
        } else {
            None
        };
        let ptx = cublas.as_ref().map(|_| check_kernel_ptx(&ctxs[0]));
        let shared = Arc::new(Shared {
            phase: AtomicU8::new(IDLE),
            stop: AtomicBool::new(false),
            batches: Mutex::new(Vec::new()),
            findings: Mutex::new(Vec::new()),
            start: Instant::now(),
        });
        let threads_total = n + usize::from(wants(SoakLoad::Nccl) && n >= 2);
        let end = Arc::new(Barrier::new(threads_total));
        let (ready_tx, ready_rx) = channel::<Result<Ready, String>>();
        let mut go_txs: Vec<Sender<Go>> = Vec::new();
        let mut threads = Vec::new();
        for (i, ctx) in ctxs.iter().enumerate() {
            let (go_tx, go_rx) = channel::<Go>();
            go_txs.push(go_tx);
            let w = GpuLoadThread {
                gpu: i,
                ctx: ctx.clone(),
                cublas: cublas.clone(),
                ptx: ptx.clone(),
                loads: setup.loads.clone(),
                p2p,
                corrupt: setup.corrupt.filter(|c| c.gpu == i),
                shared: shared.clone(),
                end: end.clone(),
            };
            let tx = ready_tx.clone();
            let h = std::thread::Builder::new()
                .name(format!("scalescope-soak-gpu{}", setup.ordinals[i]))
                .spawn(move || w.run(&tx, &go_rx))
                .map_err(|e| SoakError::Other(e.to_string()))?;
            threads.push(h);
        }
        drop(ready_tx);
        let ready = match await_ready(&ready_rx, n) {
            Ok(r) => r,
            Err(why) => {
                shared.stop.store(true, Ordering::SeqCst);
                drop(go_txs);
                for t in threads {
                    let _ = t.join();
                }
                return Err(SoakError::Other(why));
            }
        };
        for r in &ready {
            for (l, why) in &r.skipped {
                if !skipped.iter().any(|(x, _)| x == l) {
                    skipped.push((*l, format!("GPU {}: {why}", setup.ordinals[r.gpu])));
                }
            }
        }
        compare_references(&ready, &ctxs, &setup.ordinals, &shared);
        send_go(&go_txs, &ready, &ctxs, p2p);
        if wants(SoakLoad::Nccl) && n >= 2 {
            let shared2 = shared.clone();
            let ctxs2 = ctxs.clone();
            let lib = setup.nccl_lib.clone();
            let end2 = end.clone();
            let h = std::thread::Builder::new()
                .name("scalescope-soak-nccl".into())
                .spawn(move || nccl_thread(&ctxs2, lib.as_deref(), &shared2, &end2))
                .map_err(|e| SoakError::Other(e.to_string()))?;
            threads.push(h);
        }
        let gemm = cublas.as_ref().map(|c| gemm_method(c, ptx.as_ref(), n));
        Ok(SoakLoads {
            shared,
            threads,
            gemm,
            skipped,
        })
    }

    /// Switches every GPU to `load` (`None`: idle) at its next batch boundary.
    pub fn set_phase(&self, load: Option<SoakLoad>) {
        let v = load
            .and_then(|l| SoakLoad::ALL.iter().position(|x| *x == l))
            .map(|i| i as u8)
            .unwrap_or(IDLE);
        self.shared.phase.store(v, Ordering::SeqCst);
    }

    /// The batches finished and the findings made since the last call.
    pub fn drain(&self) -> (Vec<Batch>, Vec<Finding>) {
        let b = self
            .shared
            .batches
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        let f = self
            .shared
            .findings
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        (b, f)
    }

    /// Stops every thread after its batch in flight and waits for them.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for SoakLoads {
    fn drop(&mut self) {
        self.halt();
    }
}

/// A context on each CUDA ordinal; `Err` when one is not visible to CUDA.
fn open_contexts(ordinals: &[usize]) -> Result<Vec<Arc<Context>>, SoakError> {
    let driver = crate::cuda::driver()?;
    for &o in ordinals {
        if o >= driver.device_count {
            return Err(SoakError::Other(format!(
                "GPU {o} is not visible to CUDA ({} devices)",
                driver.device_count
            )));
        }
    }
    Ok(ordinals
        .iter()
        .map(|&o| Context::retain(o))
        .collect::<Result<_, _>>()?)
}

/// Turns on peer access from each GPU to the next (the peer phase's ring, two GPUs or more);
/// whether every link of the ring has it, the first that has not noted in `skipped`.
fn peer_ring(
    setup: &SoakSetup,
    ctxs: &[Arc<Context>],
    skipped: &mut Vec<(SoakLoad, String)>,
) -> bool {
    let n = ctxs.len();
    let mut peer_ok = vec![false; n];
    for i in 0..n {
        let j = (i + 1) % n;
        peer_ok[i] = enable_peer_access_both(&ctxs[i], &ctxs[j]).unwrap_or(false);
    }
    if let Some(i) = peer_ok.iter().position(|ok| !ok) {
        skipped.push((
            SoakLoad::P2p,
            format!(
                "peer access from GPU {} to GPU {} is not supported here",
                setup.ordinals[i],
                setup.ordinals[(i + 1) % n]
            ),
        ));
    }
    peer_ok.iter().all(|x| *x)
}

/// The check kernel's PTX for `ctx`'s GPU: built by NVRTC, else the bundled PTX where the GPU
/// can run it, else why neither.
fn check_kernel_ptx(ctx: &Context) -> Result<CString, String> {
    let cc = ctx.compute_capability();
    Nvrtc::load()
        .map_err(|e| e.to_string())
        .and_then(|n| n.compile_ptx(SOURCE, "soak.cu", cc, &[]))
        .or_else(|why| {
            // The bundled PTX, where the GPU can run it.
            (cc.0 >= 9)
                .then(|| CString::new(BUNDLED_PTX).ok())
                .flatten()
                .ok_or(why)
        })
}

/// Each of the `n` GPU threads' report once set up, by position; the first thread's error
/// that could not set up.
fn await_ready(rx: &Receiver<Result<Ready, String>>, n: usize) -> Result<Vec<Ready>, String> {
    let mut ready: Vec<Option<Ready>> = (0..n).map(|_| None).collect();
    for r in rx.iter().take(n) {
        let r = r?;
        let g = r.gpu;
        ready[g] = Some(r);
    }
    Ok(ready.into_iter().flatten().collect())
}

/// Compares each GPU's reference product with GPU 0's on the host (bitwise on the same model,
/// else within two bf16 ulps) and reports the first difference of each as a finding.
fn compare_references(ready: &[Ready], ctxs: &[Arc<Context>], ordinals: &[usize], shared: &Shared) {
    let Some(first) = ready.first().and_then(|r| r.reference.as_ref()) else {
        return;
    };
    for r in ready.iter().skip(1) {
        let Some(mine) = &r.reference else { continue };
        let same_model = ctxs[r.gpu].name() == ctxs[0].name();
        if let Some(Finding::Mismatch {
            row,
            col,
            got,
            expected,
            words,
            ..
        }) = compare_host(mine, first, same_model, GEMM_DIM as u64)
        {
            shared.find(Finding::Mismatch {
                gpu: r.gpu,
                at: Instant::now(),
                row,
                col,
                got,
                expected,
                words,
                against: format!(
                    "GPU {}'s product{}",
                    ordinals[0],
                    if same_model {
                        ""
                    } else {
                        " (within 2 bf16 ulps: another GPU model)"
                    }
                ),
            });
        }
    }
}

/// Lets every GPU thread begin, telling each where the peer phase writes: into the next GPU's
/// receive buffer, when the peer phase can run.
fn send_go(go_txs: &[Sender<Go>], ready: &[Ready], ctxs: &[Arc<Context>], p2p: bool) {
    let n = ctxs.len();
    for (i, tx) in go_txs.iter().enumerate() {
        let j = (i + 1) % n;
        let dst = (p2p && n >= 2)
            .then(|| ready.get(j).and_then(|r| r.p2p_recv))
            .flatten()
            .map(|p| (p, ctxs[j].raw()));
        let _ = tx.send(Go { p2p_dst: dst });
    }
}

/// How the GEMMs of `n` GPUs run and are checked, in words.
fn gemm_method(c: &Cublas, ptx: Option<&Result<CString, String>>, n: usize) -> String {
    format!(
        "cuBLAS GemmEx bf16 {GEMM_DIM}³ (fp32 accumulate) on seeded random data, {SLOTS} result buffers in turn; every product compared word for word with the first one on its GPU ({}){}; {}",
        match ptx {
            Some(Ok(_)) => "check kernel built by NVRTC, or nvcc's bundled PTX",
            _ => "not checked: the check kernel could not be built",
        },
        if n > 1 {
            ", and each GPU's first product with GPU 0's"
        } else {
            ""
        },
        c.path
    )
}

/// The CUDA ordinal of each of `gpus` of the live `topo` (matched by PCI bus id).
pub fn ordinals(topo: &crate::model::Topology, gpus: &[usize]) -> Result<Vec<usize>, SoakError> {
    let driver = crate::cuda::driver()?;
    let bus = super::bus_ids(driver.device_count);
    gpus.iter()
        .map(|&g| {
            topo.gpu(g)
                .and_then(|gpu| super::ordinal_of(gpu, &bus))
                .ok_or_else(|| SoakError::Other(format!("GPU {g} is not visible to CUDA")))
        })
        .collect()
}

/// The first difference between two d×d bf16 products on the host: bitwise, or beyond two
/// units in the last place when `exact` is false.
fn compare_host(a: &[u8], b: &[u8], exact: bool, d: u64) -> Option<Finding> {
    let mut words = 0u64;
    let mut first: Option<(u64, u16, u16)> = None;
    for (i, (x, y)) in a.chunks_exact(2).zip(b.chunks_exact(2)).enumerate() {
        let (x, y) = (
            u16::from_le_bytes([x[0], x[1]]),
            u16::from_le_bytes([y[0], y[1]]),
        );
        let differs = if exact {
            x != y
        } else {
            // Same sign: distance in representable steps; else compare the values.
            let fx = f32::from_bits(u32::from(x) << 16);
            let fy = f32::from_bits(u32::from(y) << 16);
            (fx - fy).abs() > 2.0 * ulp_bf16(fy.abs().max(fx.abs()))
        };
        if differs {
            words += 1;
            first.get_or_insert((i as u64, x, y));
        }
    }
    let (e, got, expected) = first?;
    Some(Finding::Mismatch {
        gpu: 0,
        at: Instant::now(),
        row: e % d,
        col: e / d,
        got,
        expected,
        words,
        against: String::new(),
    })
}

/// One bf16 unit in the last place at magnitude `v`.
fn ulp_bf16(v: f32) -> f32 {
    if v == 0.0 || !v.is_finite() {
        return f32::MIN_POSITIVE;
    }
    let exp = v.log2().floor();
    2f32.powf(exp - 7.0)
}

/// A GPU's thread: its context, what it loads, where it reports.
struct GpuLoadThread {
    gpu: usize,
    ctx: Arc<Context>,
    cublas: Option<Arc<Cublas>>,
    ptx: Option<Result<CString, String>>,
    loads: Vec<SoakLoad>,
    p2p: bool,
    corrupt: Option<CorruptAt>,
    shared: Arc<Shared>,
    end: Arc<Barrier>,
}

/// The GEMM load's state on one GPU.
struct Gemm<'a> {
    handle: Handle<'a>,
    a: DeviceBuffer,
    b: DeviceBuffer,
    reference: DeviceBuffer,
    out: Vec<DeviceBuffer>,
    /// The check kernel (compare, flip) and its module, when it could be built.
    check: Option<(Module, sys::CUfunction, sys::CUfunction)>,
    /// Per slot: wrong words, first wrong word, found, expected (u64 each).
    report: DeviceBuffer,
    per_product_ms: f64,
    corrupted: bool,
}

impl Gemm<'_> {
    /// Resets the per-slot reports: 0 wrong, no first index.
    fn reset_reports(&self) -> Result<(), CudaError> {
        let mut init = Vec::with_capacity(SLOTS * 32);
        for _ in 0..SLOTS {
            init.extend_from_slice(&0u64.to_le_bytes());
            init.extend_from_slice(&u64::MAX.to_le_bytes());
            init.extend_from_slice(&0u64.to_le_bytes());
            init.extend_from_slice(&0u64.to_le_bytes());
        }
        self.report.copy_from_host(&init)
    }

    /// Enqueues the check of output `slot` against the reference on `stream` (nothing without
    /// the check kernel), after altering one word of it first when `corrupt` (the hidden test
    /// hook).
    fn enqueue_check(
        &mut self,
        ctx: &Context,
        stream: &Stream,
        slot: usize,
        corrupt: bool,
    ) -> Result<(), CudaError> {
        let Some((_, cmp, flip)) = &self.check else {
            return Ok(());
        };
        let c = self.out[slot].ptr();
        let words = (self.reference.len() / 4) as u64;
        if corrupt {
            // The hidden test hook: one word of this result altered on purpose.
            let (mut p, mut w) = (c, words / 3 + 4097);
            launch_kernel(
                *flip,
                "cuLaunchKernel(flip_word)",
                1,
                1,
                stream,
                &mut [arg(&mut p), arg(&mut w)],
            )?;
            self.corrupted = true;
        }
        let (mut x, mut y, mut n, mut r) = (
            c,
            self.reference.ptr(),
            words,
            self.report.ptr() + (slot * 32) as u64,
        );
        launch_kernel(
            *cmp,
            "cuLaunchKernel(compare_words)",
            ctx.sm_count() * 4,
            256,
            stream,
            &mut [arg(&mut x), arg(&mut y), arg(&mut n), arg(&mut r)],
        )
    }

    /// A [`Finding::Mismatch`] of `gpu` per slot the check kernel found wrong (the stream is
    /// idle): the first wrong element (column-major row, column), its bits found and expected,
    /// and how many words differed.
    fn read_reports(&self, gpu: usize) -> Result<Vec<Finding>, CudaError> {
        let mut rep = vec![0u8; SLOTS * 32];
        self.report.copy_to_host(&mut rep)?;
        let d = GEMM_DIM as u64;
        let mut found_wrong = Vec::new();
        for slot in 0..SLOTS {
            let word = |k: usize| {
                let o = slot * 32 + k * 8;
                u64::from_le_bytes(rep[o..o + 8].try_into().unwrap_or([0; 8]))
            };
            let bad_words = word(0);
            if bad_words == 0 {
                continue;
            }
            let (index, found, expected) = (word(1), word(2) as u32, word(3) as u32);
            // The word holds two bf16 elements: the low half is the lower index.
            let (element, got, exp) = if (found & 0xFFFF) != (expected & 0xFFFF) {
                (index * 2, found as u16, expected as u16)
            } else {
                (index * 2 + 1, (found >> 16) as u16, (expected >> 16) as u16)
            };
            found_wrong.push(Finding::Mismatch {
                gpu,
                at: Instant::now(),
                row: element % d,
                col: element / d,
                got,
                expected: exp,
                words: bad_words,
                against: "this GPU's first product".into(),
            });
        }
        Ok(found_wrong)
    }
}

impl GpuLoadThread {
    fn run(self, ready: &Sender<Result<Ready, String>>, go: &Receiver<Go>) {
        // Everything the thread allocates lives in this frame and is freed after the barrier,
        // once no other GPU can still be writing into it.
        let mut state = match self.set_up() {
            Ok(s) => s,
            Err(e) => {
                let _ = ready.send(Err(format!(
                    "soak set-up on GPU {}: {e}",
                    self.ctx.ordinal()
                )));
                self.end.wait();
                return;
            }
        };
        let reference = match &state.gemm {
            Some(g) => {
                let mut host = vec![0u8; g.reference.len()];
                match g.reference.copy_to_host(&mut host) {
                    Ok(()) => Some(host),
                    Err(_) => None,
                }
            }
            None => None,
        };
        let _ = ready.send(Ok(Ready {
            gpu: self.gpu,
            reference,
            p2p_recv: state.p2p_recv.as_ref().map(DeviceBuffer::ptr),
            skipped: std::mem::take(&mut state.skipped),
        }));
        let Ok(Go { p2p_dst }) = go.recv() else {
            self.end.wait();
            return;
        };
        let mut broken: Vec<SoakLoad> = Vec::new();
        while !self.shared.stop.load(Ordering::SeqCst) {
            let phase = self.shared.phase();
            let result = match phase {
                Some(l) if broken.contains(&l) => {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                Some(SoakLoad::Gemm) if state.gemm.is_some() => self.gemm_batch(&mut state),
                Some(SoakLoad::Memory) => self.memory_batch(&mut state),
                Some(SoakLoad::Pcie) => self.pcie_batch(&mut state),
                Some(SoakLoad::P2p) if p2p_dst.is_some() => {
                    self.p2p_batch(&mut state, p2p_dst.unwrap_or((0, std::ptr::null_mut())))
                }
                _ => {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
            };
            if let (Err(e), Some(l)) = (result, phase) {
                broken.push(l);
                self.shared.find(Finding::Stopped {
                    gpu: Some(self.gpu),
                    at: Instant::now(),
                    load: l,
                    why: e.to_string(),
                });
            }
        }
        let _ = state.stream.synchronize();
        let _ = state.side.synchronize();
        self.end.wait();
    }

    fn set_up(&self) -> Result<State<'_>, LoadError> {
        let ctx = &self.ctx;
        ctx.bind()?;
        let stream = Stream::new(ctx)?;
        let side = Stream::new(ctx)?;
        let mut skipped = Vec::new();
        let wants = |l: SoakLoad| self.loads.contains(&l);
        let gemm = match (&self.cublas, wants(SoakLoad::Gemm)) {
            (Some(lib), true) => Some(self.set_up_gemm(lib, &stream, &mut skipped)?),
            _ => None,
        };
        let memory = if wants(SoakLoad::Memory) {
            Some((
                DeviceBuffer::alloc(ctx, 2 * COPY_BYTES)?,
                DeviceBuffer::alloc(ctx, 2 * COPY_BYTES)?,
            ))
        } else {
            None
        };
        let host = if wants(SoakLoad::Pcie) {
            Some((
                DeviceBuffer::alloc(ctx, COPY_BYTES)?,
                DeviceBuffer::alloc(ctx, COPY_BYTES)?,
                PinnedBuffer::alloc(ctx, COPY_BYTES, None)?,
                PinnedBuffer::alloc(ctx, COPY_BYTES, None)?,
            ))
        } else {
            None
        };
        let (p2p_send, p2p_recv) = if self.p2p {
            (
                Some(DeviceBuffer::alloc(ctx, COPY_BYTES)?),
                Some(DeviceBuffer::alloc(ctx, COPY_BYTES)?),
            )
        } else {
            (None, None)
        };
        Ok(State {
            stream,
            side,
            gemm,
            memory,
            host,
            p2p_send,
            p2p_recv,
            skipped,
            per_copy_ms: 10.0,
        })
    }

    fn set_up_gemm<'a>(
        &self,
        lib: &'a Cublas,
        stream: &Stream,
        skipped: &mut Vec<(SoakLoad, String)>,
    ) -> Result<Gemm<'a>, LoadError> {
        let ctx = &self.ctx;
        let d = GEMM_DIM as usize;
        let bytes = d * d * 2;
        let a = DeviceBuffer::alloc(ctx, bytes)?;
        let b = DeviceBuffer::alloc(ctx, bytes)?;
        fill_random_operand(&a, true, 0x50a4)?;
        fill_random_operand(&b, true, 0x50a5)?;
        let reference = DeviceBuffer::alloc(ctx, bytes)?;
        let out = (0..SLOTS)
            .map(|_| DeviceBuffer::alloc(ctx, bytes))
            .collect::<Result<Vec<_>, _>>()?;
        ctx.bind()?;
        let handle = Handle::new(lib)?;
        handle.set_stream(stream.raw())?;
        // The reference: the first product after a few to load cuBLAS's kernels.
        for _ in 0..3 {
            handle.gemm_square(GEMM_DIM, true, a.ptr(), b.ptr(), reference.ptr())?;
        }
        stream.synchronize()?;
        let check = match &self.ptx {
            Some(Ok(ptx)) => {
                let module = Module::load(ctx, ptx)?;
                let cmp = module.function("compare_words")?;
                let flip = module.function("flip_word")?;
                Some((module, cmp, flip))
            }
            Some(Err(why)) => {
                skipped.push((
                    SoakLoad::Gemm,
                    format!("results not checked: the check kernel could not be built ({why})"),
                ));
                None
            }
            None => None,
        };
        let report = DeviceBuffer::alloc(ctx, SLOTS * 32)?;
        Ok(Gemm {
            handle,
            a,
            b,
            reference,
            out,
            check,
            report,
            per_product_ms: 2.0,
            corrupted: false,
        })
    }

    /// Products for ~[`BATCH_MS`], each timed alone and checked against the reference.
    fn gemm_batch(&self, st: &mut State<'_>) -> Result<(), LoadError> {
        let Some(g) = st.gemm.as_mut() else {
            return Ok(());
        };
        let ctx = &self.ctx;
        let count = ((BATCH_MS / g.per_product_ms).ceil() as usize).clamp(1, 2000);
        ctx.bind()?;
        g.reset_reports()?;
        let events: Vec<(Event, Event)> = (0..count)
            .map(|_| Ok((Event::new(ctx)?, Event::new(ctx)?)))
            .collect::<Result<_, CudaError>>()?;
        let corrupt_now = self.corrupt.is_some_and(|c| {
            !g.corrupted && self.shared.start.elapsed().as_secs_f64() >= c.after_s
        });
        for (i, (e0, e1)) in events.iter().enumerate() {
            let slot = i % SLOTS;
            e0.record(&st.stream)?;
            g.handle
                .gemm_square(GEMM_DIM, true, g.a.ptr(), g.b.ptr(), g.out[slot].ptr())?;
            e1.record(&st.stream)?;
            g.enqueue_check(ctx, &st.stream, slot, corrupt_now && i == 0)?;
        }
        st.stream.synchronize()?;
        let mut ms = 0.0;
        for (e0, e1) in &events {
            ms += e1.elapsed_ms_since(e0)?;
        }
        g.per_product_ms = (ms / count as f64).max(0.05);
        let mut checked = 0;
        let mut wrong = 0;
        if g.check.is_some() {
            checked = count as u64;
            for f in g.read_reports(self.gpu)? {
                wrong += 1;
                self.shared.find(f);
            }
        }
        self.shared.push(Batch {
            gpu: self.gpu,
            load: SoakLoad::Gemm,
            end: Instant::now(),
            work: count as f64 * 2.0 * (GEMM_DIM as f64).powi(3),
            ms,
            checked,
            wrong,
        });
        Ok(())
    }

    /// Timed copies on `stream` (and, when given, the same number on `side` at once), for
    /// ~[`BATCH_MS`]; `enqueue(stream_index)` enqueues one copy of `bytes` bytes.
    fn copy_batch(
        &self,
        st: &mut State<'_>,
        load: SoakLoad,
        bytes: usize,
        both: bool,
        enqueue: &dyn Fn(&Stream, usize) -> Result<(), CudaError>,
    ) -> Result<(), LoadError> {
        let ctx = &self.ctx;
        ctx.bind()?;
        let count = ((BATCH_MS / st.per_copy_ms).ceil() as usize).clamp(1, 1000);
        let streams: Vec<&Stream> = if both {
            vec![&st.stream, &st.side]
        } else {
            vec![&st.stream]
        };
        let marks: Vec<(Event, Event)> = streams
            .iter()
            .map(|_| Ok((Event::new(ctx)?, Event::new(ctx)?)))
            .collect::<Result<_, CudaError>>()?;
        for (s, (e0, _)) in streams.iter().zip(&marks) {
            e0.record(s)?;
        }
        for _ in 0..count {
            for (k, s) in streams.iter().enumerate() {
                enqueue(s, k)?;
            }
        }
        for (s, (_, e1)) in streams.iter().zip(&marks) {
            e1.record(s)?;
        }
        let mut ms: f64 = 0.0;
        for (s, (e0, e1)) in streams.iter().zip(&marks) {
            s.synchronize()?;
            ms = ms.max(e1.elapsed_ms_since(e0)?);
        }
        st.per_copy_ms = (ms / count as f64).max(0.01);
        self.shared.push(Batch {
            gpu: self.gpu,
            load,
            end: Instant::now(),
            work: (count * bytes * streams.len()) as f64,
            ms,
            checked: 0,
            wrong: 0,
        });
        Ok(())
    }

    fn memory_batch(&self, st: &mut State<'_>) -> Result<(), LoadError> {
        let Some((src, dst)) = st.memory.as_ref() else {
            return Ok(());
        };
        let (s, d, n) = (src.ptr(), dst.ptr(), src.len());
        self.copy_batch(st, SoakLoad::Memory, n, false, &|stream, _| {
            // SAFETY: both buffers hold `n` bytes of this GPU's memory and live in the thread's
            // state until after the stream is synchronized.
            unsafe { stream.copy_dtod(d, s, n) }
        })
    }

    fn pcie_batch(&self, st: &mut State<'_>) -> Result<(), LoadError> {
        let Some((dev_in, dev_out, up, down)) = st.host.as_ref() else {
            return Ok(());
        };
        let (di, dout, n) = (dev_in.ptr(), dev_out.ptr(), COPY_BYTES);
        let (hu, hd) = (up.host_ptr() as usize, down.host_ptr() as usize);
        self.copy_batch(st, SoakLoad::Pcie, n, true, &|stream, k| {
            // SAFETY: pinned host buffers and device buffers of `n` bytes each, alive in the
            // thread's state until both streams are synchronized; one direction per stream.
            unsafe {
                if k == 0 {
                    stream.copy_htod(di, hu as *const std::ffi::c_void, n)
                } else {
                    stream.copy_dtoh(hd as *mut std::ffi::c_void, dout, n)
                }
            }
        })
    }

    fn p2p_batch(
        &self,
        st: &mut State<'_>,
        (dst, _dst_ctx): (sys::CUdeviceptr, sys::CUcontext),
    ) -> Result<(), LoadError> {
        let Some(src) = st.p2p_send.as_ref() else {
            return Ok(());
        };
        let (s, n) = (src.ptr(), COPY_BYTES);
        self.copy_batch(st, SoakLoad::P2p, n, false, &|stream, _| {
            // SAFETY: `dst` is the next GPU's receive buffer of `n` bytes, reachable by peer
            // access enabled before the threads began; it stays allocated until every thread has
            // synchronized its streams and passed the final barrier.
            unsafe { stream.copy_dtod(dst, s, n) }
        })
    }
}

/// A GPU thread's buffers, streams and loads.
struct State<'a> {
    stream: Stream,
    /// The second direction of the host phase.
    side: Stream,
    gemm: Option<Gemm<'a>>,
    memory: Option<(DeviceBuffer, DeviceBuffer)>,
    host: Option<(DeviceBuffer, DeviceBuffer, PinnedBuffer, PinnedBuffer)>,
    p2p_send: Option<DeviceBuffer>,
    p2p_recv: Option<DeviceBuffer>,
    skipped: Vec<(SoakLoad, String)>,
    per_copy_ms: f64,
}

/// The NCCL phase: in-place bf16 all-reduces of [`COPY_BYTES`] over every GPU, in batches of
/// ~[`BATCH_MS`]; each GPU's batch carries the bus bandwidth's bytes (nccl-tests: 2(n−1)/n ×
/// size per operation).
fn nccl_thread(
    ctxs: &[Arc<Context>],
    lib: Option<&std::path::Path>,
    shared: &Shared,
    end: &Barrier,
) {
    let run = || -> Result<(), String> {
        let nccl = Nccl::load(lib).map_err(|e| e.to_string())?;
        let devs: Vec<i32> = ctxs.iter().map(|c| c.ordinal() as i32).collect();
        let comms = nccl.comm_init_all(&devs).map_err(|e| e.to_string())?;
        let mut streams = Vec::new();
        let mut bufs = Vec::new();
        for c in ctxs {
            c.bind().map_err(|e| e.to_string())?;
            streams.push(Stream::new(c).map_err(|e| e.to_string())?);
            bufs.push(DeviceBuffer::alloc(c, COPY_BYTES).map_err(|e| e.to_string())?);
        }
        let n = ctxs.len() as f64;
        let count = COPY_BYTES / 2;
        let mut per_op_ms = 5.0;
        let result = (|| -> Result<(), String> {
            while !shared.stop.load(Ordering::SeqCst) {
                if shared.phase() != Some(SoakLoad::Nccl) {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
                let ops = ((BATCH_MS / per_op_ms).ceil() as usize).clamp(1, 1000);
                let marks: Vec<(Event, Event)> = ctxs
                    .iter()
                    .map(|c| Ok((Event::new(c)?, Event::new(c)?)))
                    .collect::<Result<_, CudaError>>()
                    .map_err(|e| e.to_string())?;
                for (s, (e0, _)) in streams.iter().zip(&marks) {
                    e0.record(s).map_err(|e| e.to_string())?;
                }
                for _ in 0..ops {
                    nccl.group_start().map_err(|e| e.to_string())?;
                    for ((b, s), comm) in bufs.iter().zip(&streams).zip(&comms) {
                        // SAFETY: in place over `count` bf16 elements of this GPU's buffer,
                        // alive until the streams are synchronized below; the communicator and
                        // stream belong to the same GPU.
                        unsafe {
                            nccl.all_reduce(
                                Buffers::in_place(
                                    b.ptr(),
                                    count,
                                    crate::cuda::nccl::nccl_dtype(crate::model::Dtype::Bf16),
                                ),
                                cudarc::nccl::sys::ncclRedOp_t::ncclSum,
                                CommStream {
                                    comm: *comm,
                                    stream: s,
                                },
                            )
                        }
                        .map_err(|e| e.to_string())?;
                    }
                    nccl.group_end().map_err(|e| e.to_string())?;
                }
                let mut ms: f64 = 0.0;
                for (s, (e0, e1)) in streams.iter().zip(&marks) {
                    e1.record(s).map_err(|e| e.to_string())?;
                    s.synchronize().map_err(|e| e.to_string())?;
                    ms = ms.max(e1.elapsed_ms_since(e0).map_err(|e| e.to_string())?);
                }
                per_op_ms = (ms / ops as f64).max(0.01);
                let busbw_bytes = ops as f64 * COPY_BYTES as f64 * 2.0 * (n - 1.0) / n;
                for g in 0..ctxs.len() {
                    shared.push(Batch {
                        gpu: g,
                        load: SoakLoad::Nccl,
                        end: Instant::now(),
                        work: busbw_bytes,
                        ms,
                        checked: 0,
                        wrong: 0,
                    });
                }
            }
            Ok(())
        })();
        for c in comms {
            // SAFETY: each communicator was created above and is destroyed once, after its
            // streams were synchronized.
            unsafe { nccl.comm_destroy(c) };
        }
        result
    };
    if let Err(why) = run() {
        shared.find(Finding::Stopped {
            gpu: None,
            at: Instant::now(),
            load: SoakLoad::Nccl,
            why,
        });
    }
    end.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_compare_names_the_element() {
        let d = 4u64;
        let a: Vec<u8> = (0..16u16)
            .flat_map(|v| (0x3F80 + v).to_le_bytes())
            .collect();
        let mut b = a.clone();
        assert!(compare_host(&a, &b, true, d).is_none());
        // Element 6 = row 2, column 1 (column-major).
        b[12] ^= 1;
        match compare_host(&a, &b, true, d) {
            Some(Finding::Mismatch {
                row, col, words, ..
            }) => assert_eq!((row, col, words), (2, 1, 1)),
            other => panic!("{other:?}"),
        }
        // One ulp apart passes the tolerant compare of different models.
        assert!(compare_host(&a, &b, false, d).is_none());
    }

    #[test]
    fn without_a_driver_the_loads_do_not_start() {
        if crate::cuda::driver().is_err() {
            let e = SoakLoads::start(&SoakSetup {
                ordinals: vec![0],
                loads: vec![SoakLoad::Gemm],
                ..Default::default()
            });
            assert!(e.is_err());
        }
    }
}
