//! The CUDA backend: real copies on real GPUs, over the platform layer [`crate::cuda`] (contexts,
//! buffers, streams, NVRTC, NCCL): [`kernels`] (the benchmark kernels, compiled at run time),
//! [`measure`] (nvbandwidth's timing method) and [`pattern`] (the data every copy is verified
//! with); [`collectives`] is the collectives backend.
//!
//! Every case allocates its buffers, runs, verifies and frees them; contexts, streams and the
//! compiled module live as long as the backend. Nothing here panics on a GPU problem: each
//! becomes a result with status `waived`, `skipped` or `failed` and a reason.

mod case_error;
pub mod collectives;
pub(crate) mod energy;
pub mod kernels;
pub mod measure;
pub mod pattern;
pub mod soak;

mod cases;

pub(crate) use self::case_error::CaseError;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cudarc::driver::sys;

use self::kernels::Kernels;
use self::measure::{Flag, Gate};
use super::{Backend, BenchError, Case, CopyKernelOptions, Warning};
use crate::cuda::CudaError;
use crate::cuda::context::{self, Context};
use crate::cuda::memory;
use crate::cuda::stream::Stream;
use crate::model::{BandwidthResult, Endpoint, Source, Status, TestId, Topology};

const MODELED_HINT: &str = "run with --modeled and --catalog/--import to model a machine";

/// The backend that measures on this machine's GPUs.
pub struct CudaBackend {
    driver_version: i32,
    /// By topology index.
    gpus: BTreeMap<usize, GpuState>,
    /// Topology GPUs CUDA cannot use, and why.
    missing: BTreeMap<usize, String>,
    /// GPUs that hit an unrecoverable error, and which.
    poisoned: BTreeMap<usize, String>,
    kernels_summary: String,
    /// How the SM copy tests run the copy kernel.
    copy_kernel: CopyKernelOptions,
    flag: Flag,
    seed: u32,
    peer_warned: BTreeSet<(usize, usize)>,
    oom_warned: BTreeSet<(TestId, u64)>,
    energy: energy::BackendEnergy,
    /// The topology it opened: to ask NVML who holds a GPU's memory when buffers do not fit.
    topo: Topology,
}

/// One GPU's long-lived state. `ctx` is declared last so it is released last.
struct GpuState {
    /// CPUs near the GPU (its NUMA node), for placing host buffers.
    cpus: Option<Vec<usize>>,
    streams: Vec<Stream>,
    kernels: Result<Kernels, String>,
    /// The flag's (release, timed-out) addresses in this context.
    gate_ptrs: Option<(sys::CUdeviceptr, sys::CUdeviceptr)>,
    ctx: Arc<Context>,
}

impl GpuState {
    fn gate(&self) -> Option<Gate<'_>> {
        let k = self.kernels.as_ref().ok()?;
        let (flag, timed_out) = self.gate_ptrs?;
        Some(Gate {
            kernels: k,
            flag,
            timed_out,
        })
    }
}

/// The CUDA driver for a measurement, or why there is none (the message names `--modeled`).
pub(crate) fn open_driver() -> Result<crate::cuda::Driver, BenchError> {
    let driver = crate::cuda::driver().map_err(|e| match e {
        CudaError::NoDriver => BenchError::Unavailable(format!(
            "no CUDA driver (libcuda.so.1 not found): {MODELED_HINT}"
        )),
        other => BenchError::Unavailable(format!(
            "the CUDA driver cannot be used ({other}): {MODELED_HINT}"
        )),
    })?;
    if driver.device_count == 0 {
        return Err(BenchError::Unavailable(format!(
            "CUDA sees no GPUs (check nvidia-smi and CUDA_VISIBLE_DEVICES): {MODELED_HINT}"
        )));
    }
    Ok(driver)
}

/// The PCI bus id of every CUDA ordinal (`None` where the driver does not say).
pub(crate) fn bus_ids(device_count: usize) -> Vec<Option<crate::model::BusKey>> {
    (0..device_count)
        .map(|o| {
            crate::cuda::pci_bus_id(o)
                .ok()
                .and_then(|s| crate::model::pci_bus_key(&s))
        })
        .collect()
}

/// The CUDA ordinal of a topology GPU: the one with its PCI bus id, else its index (topology
/// indices are CUDA ordinals on a live machine); `None` when CUDA does not see it.
pub(crate) fn ordinal_of(
    g: &crate::model::Gpu,
    bus_ids: &[Option<crate::model::BusKey>],
) -> Option<usize> {
    let by_bus = g
        .pci_bus_id
        .as_deref()
        .and_then(crate::model::pci_bus_key)
        .and_then(|id| bus_ids.iter().position(|b| *b == Some(id)));
    by_bus.or((g.index < bus_ids.len()).then_some(g.index))
}

/// The error when none of the topology's GPUs could be opened (`missing`: why not, by index).
pub(crate) fn no_usable_gpu(missing: &BTreeMap<usize, String>) -> BenchError {
    let why: Vec<&str> = missing.values().map(String::as_str).collect();
    BenchError::Unavailable(format!(
        "no usable GPU ({}): {MODELED_HINT}",
        if why.is_empty() {
            "the topology lists none".to_string()
        } else {
            why.join("; ")
        }
    ))
}

/// `CUDA 13.0` from `cuDriverGetVersion`'s 13000.
pub(crate) fn cuda_version(v: i32) -> String {
    format!("CUDA {}.{}", v / 1000, (v % 1000) / 10)
}

/// The GPUs of a backend for `describe()`: `2× NVIDIA H200`, kinds in order of appearance
/// joined by ` + `.
pub(crate) fn gpu_summary<'a>(ctxs: impl Iterator<Item = &'a Context>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for c in ctxs {
        match counts.iter_mut().find(|(n, _)| *n == c.name()) {
            Some((_, k)) => *k += 1,
            None => counts.push((c.name(), 1)),
        }
    }
    let gpus: Vec<String> = counts.iter().map(|(n, k)| format!("{k}× {n}")).collect();
    gpus.join(" + ")
}

/// What a caught panic says (its `&str` or `String` payload), for the row of the case it ended.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown".into())
}

impl CudaBackend {
    /// Opens every GPU of `topo` through CUDA: retains its primary context, builds and loads
    /// the kernels, creates streams. Fails with [`BenchError::Unavailable`] (naming `--modeled`)
    /// when there is no driver or no usable GPU.
    pub fn new(topo: &Topology) -> Result<CudaBackend, BenchError> {
        Self::with_copy_kernel(topo, &CopyKernelOptions::default())
    }

    /// [`CudaBackend::new`], with the SM copy tests' kernel built and run as `copy` says.
    pub fn with_copy_kernel(
        topo: &Topology,
        copy: &CopyKernelOptions,
    ) -> Result<CudaBackend, BenchError> {
        let driver = open_driver()?;
        let bus_ids = bus_ids(driver.device_count);
        let mut gpus = BTreeMap::new();
        let mut missing = BTreeMap::new();
        for g in &topo.gpus {
            // Topology indices are CUDA ordinals on a live machine; the bus id settles it where
            // both are known.
            let Some(ordinal) = ordinal_of(g, &bus_ids) else {
                missing.insert(
                    g.index,
                    format!(
                        "GPU {} is not visible to CUDA ({} devices)",
                        g.index, driver.device_count
                    ),
                );
                continue;
            };
            match Context::retain(ordinal) {
                Ok(ctx) => {
                    let cpus = g.cpu_affinity.as_deref().and_then(memory::parse_cpu_list);
                    gpus.insert(
                        g.index,
                        GpuState {
                            cpus,
                            streams: Vec::new(),
                            kernels: Err("not loaded".into()),
                            gate_ptrs: None,
                            ctx,
                        },
                    );
                }
                Err(e) => {
                    missing.insert(g.index, format!("GPU {} cannot be opened: {e}", g.index));
                }
            }
        }
        let Some(first) = gpus.values().next().map(|g| g.ctx.clone()) else {
            return Err(no_usable_gpu(&missing));
        };
        let opened: Vec<usize> = gpus.keys().copied().collect();
        let flag = Flag::new(&first).map_err(|e| {
            BenchError::Unavailable(format!(
                "cannot allocate pinned host memory ({e}): {MODELED_HINT}"
            ))
        })?;
        let ccs: BTreeSet<(i32, i32)> = gpus.values().map(|g| g.ctx.compute_capability()).collect();
        let images = kernels::build(&ccs.into_iter().collect::<Vec<_>>(), copy);
        for g in gpus.values_mut() {
            g.kernels = match images.by_cc.get(&g.ctx.compute_capability()) {
                Some(Ok(image)) => Kernels::load(&g.ctx, image, copy)
                    .map_err(|e| format!("kernels failed to load ({}): {e}", image.origin)),
                Some(Err(why)) => Err(why.clone()),
                None => Err("no kernels built".into()),
            };
            g.gate_ptrs = flag.device_ptrs(&g.ctx).ok();
            // Two streams cover every shape but one_to_all, which adds its own on demand.
            for _ in 0..2 {
                match Stream::new(&g.ctx) {
                    Ok(s) => g.streams.push(s),
                    Err(e) => {
                        return Err(BenchError::Unavailable(format!(
                            "cannot create a CUDA stream on GPU {} ({e})",
                            g.ctx.ordinal()
                        )));
                    }
                }
            }
        }
        Ok(CudaBackend {
            driver_version: driver.version,
            gpus,
            missing,
            poisoned: BTreeMap::new(),
            kernels_summary: if copy.is_default() {
                images.summary
            } else {
                format!("{} · copy kernel: {copy}", images.summary)
            },
            copy_kernel: *copy,
            flag,
            seed: 0x5CA1_E5C0,
            peer_warned: BTreeSet::new(),
            oom_warned: BTreeSet::new(),
            topo: topo.clone(),
            energy: energy::BackendEnergy::open(topo, &opened),
        })
    }

    /// Runs each test on (untimed) until the energy counter has stepped across `seconds` of
    /// it, so that every test gets its energy; 0 (the default): only what the timed samples
    /// cover.
    pub fn set_energy_window(&mut self, seconds: f64) {
        self.energy.set_window(seconds);
    }

    fn next_seed(&mut self) -> u32 {
        self.seed = self.seed.wrapping_add(0x9E37_79B9);
        self.seed
    }

    fn gpu(&self, index: usize) -> Result<&GpuState, CaseError> {
        self.gpus.get(&index).ok_or_else(|| {
            CaseError::Failed(
                self.missing
                    .get(&index)
                    .cloned()
                    .unwrap_or_else(|| format!("GPU {index} is not part of this run")),
            )
        })
    }

    fn ensure_streams(&mut self, index: usize, n: usize) -> Result<(), CaseError> {
        let g = self
            .gpus
            .get_mut(&index)
            .ok_or_else(|| CaseError::Failed(format!("GPU {index} is not open")))?;
        while g.streams.len() < n {
            g.streams.push(Stream::new(&g.ctx)?);
        }
        Ok(())
    }

    /// Peer access both ways between `a` and `b`, or `PeerUnsupported` (warned once per pair).
    fn require_peer(
        &mut self,
        a: usize,
        b: usize,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), CaseError> {
        let (ca, cb) = (self.gpu(a)?.ctx.clone(), self.gpu(b)?.ctx.clone());
        if context::enable_peer_access_both(&ca, &cb)? {
            return Ok(());
        }
        if self.peer_warned.insert((a.min(b), a.max(b))) {
            warnings.push(Warning::PeerAccessUnsupported { src: a, dst: b });
        }
        Err(CaseError::PeerUnsupported(a, b))
    }

    /// Peer access off both ways, so that copies between `a` and `b` are staged by the driver.
    fn forbid_peer(&mut self, a: usize, b: usize) -> Result<(), CaseError> {
        let (ca, cb) = (self.gpu(a)?.ctx.clone(), self.gpu(b)?.ctx.clone());
        context::disable_peer_access(&ca, &cb)?;
        context::disable_peer_access(&cb, &ca)?;
        Ok(())
    }

    /// GPUs a case touches.
    fn involved(case: &Case) -> Vec<usize> {
        let mut v: Vec<usize> = [case.src, case.dst]
            .iter()
            .flat_map(|e| match e {
                Endpoint::Gpu(i) => vec![*i],
                Endpoint::All => case.gpus.to_vec(),
                Endpoint::Host => Vec::new(),
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn error_rows(
        &mut self,
        case: &Case,
        err: CaseError,
        warnings: &mut Vec<Warning>,
    ) -> Vec<BandwidthResult> {
        if let CaseError::Cuda(e) = &err {
            if e.is_out_of_memory() {
                if self.oom_warned.insert((case.test, case.bytes)) {
                    let held = Self::involved(case)
                        .into_iter()
                        .filter_map(|g| crate::topology::nvml_state::memory_holders(&self.topo, g))
                        .collect();
                    warnings.push(Warning::OutOfMemory {
                        test: case.test,
                        bytes: case.bytes,
                        held,
                    });
                }
            } else if !e.is_peer_unsupported() && context::is_sticky(e) {
                for g in Self::involved(case) {
                    self.poisoned.entry(g).or_insert_with(|| e.to_string());
                }
            }
        }
        let (status, reason) = err.status(case.bytes);
        case.cells()
            .into_iter()
            .map(|(s, d)| {
                BandwidthResult::empty(
                    case.test,
                    s,
                    d,
                    case.bytes,
                    Source::Measured,
                    status,
                    reason.clone(),
                )
            })
            .collect()
    }

    fn preflight(&self, case: &Case) -> Result<(), CaseError> {
        for g in Self::involved(case) {
            if let Some(e) = self.poisoned.get(&g) {
                return Err(CaseError::Failed(format!(
                    "GPU {g} hit an unrecoverable CUDA error earlier ({e}); restart scalescope to measure it again"
                )));
            }
            self.gpu(g)?;
        }
        if case.bytes == 0 {
            return Err(CaseError::Skipped("a size of 0 bytes moves nothing".into()));
        }
        if usize::try_from(case.bytes).is_err() {
            return Err(CaseError::Skipped(
                "size exceeds this machine's address space".into(),
            ));
        }
        Ok(())
    }
}

impl Backend for CudaBackend {
    fn source(&self) -> Source {
        Source::Measured
    }

    fn describe(&self) -> String {
        format!(
            "{} · {} · {}",
            cuda_version(self.driver_version),
            gpu_summary(self.gpus.values().map(|g| g.ctx.as_ref())),
            self.kernels_summary
        )
    }

    fn run_case(&mut self, case: &Case, warnings: &mut Vec<Warning>) -> Vec<BandwidthResult> {
        if let Err(e) = self.preflight(case) {
            return self.error_rows(case, e, warnings);
        }
        let recording = self.energy.begin();
        // A panic would be a bug of ours; it must still not end the run.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            cases::run(self, case, warnings)
        }));
        match outcome {
            Ok(Ok(mut rows)) => {
                let mut ok: Vec<&mut BandwidthResult> =
                    rows.iter_mut().filter(|r| r.status == Status::Ok).collect();
                let sets: Vec<Vec<usize>> = ok
                    .iter()
                    .map(|r| {
                        Self::involved(&Case {
                            src: r.src,
                            dst: r.dst,
                            ..case.clone()
                        })
                    })
                    .collect();
                let energies = self.energy.finish(recording, &sets, warnings);
                for (r, e) in ok.iter_mut().zip(energies) {
                    r.energy = e;
                }
                rows
            }
            Ok(Err(e)) => self.error_rows(case, e, warnings),
            Err(p) => self.error_rows(
                case,
                CaseError::Failed(format!(
                    "internal error in the CUDA backend: {}",
                    panic_message(p.as_ref())
                )),
                warnings,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TopologySource;

    #[test]
    fn without_a_driver_new_says_to_use_modeled() {
        if crate::cuda::driver().is_ok() {
            return; // a machine with a driver: covered by tests/gpu_bandwidth.rs
        }
        let topo = Topology::new(TopologySource::Imported { paths: vec![] });
        match CudaBackend::new(&topo) {
            Err(BenchError::Unavailable(msg)) => {
                assert!(msg.contains("--modeled"), "{msg}");
                assert!(msg.contains("libcuda.so.1"), "{msg}");
            }
            Err(other) => panic!("expected Unavailable, got {other:?}"),
            Ok(_) => panic!("expected an error without a driver"),
        }
    }

    #[test]
    fn backend_can_move_to_a_worker_thread() {
        fn is_send<T: Send>() {}
        is_send::<CudaBackend>();
    }

    #[test]
    fn host_all_reports_every_gpu() {
        let case = Case {
            test: TestId::HostToAll,
            src: Endpoint::Host,
            dst: Endpoint::All,
            gpus: vec![0, 1, 3].into(),
            bytes: 1 << 20,
            iters: 1,
            samples: 1,
        };
        assert_eq!(case.cells().len(), 3);
        assert_eq!(CudaBackend::involved(&case), vec![0, 1, 3]);
        let all_pairs = Case {
            test: TestId::AllPairs,
            src: Endpoint::All,
            dst: Endpoint::All,
            ..case
        };
        assert_eq!(
            all_pairs.cells(),
            vec![
                (Endpoint::All, Endpoint::Gpu(0)),
                (Endpoint::All, Endpoint::Gpu(1)),
                (Endpoint::All, Endpoint::Gpu(3))
            ]
        );
        assert_eq!(CudaBackend::involved(&all_pairs), vec![0, 1, 3]);
    }
}
