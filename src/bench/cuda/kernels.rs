//! The benchmark kernels (`assets/kernels/bench.cu`): built to PTX once per compute capability
//! (NVRTC, or the bundled `bench.ptx`), loaded into each GPU's context, launched with checked
//! calls.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::bench::{CopyKernel, CopyKernelOptions};
use crate::cuda::CudaError;
use crate::cuda::context::Context;
use crate::cuda::module::{Module, arg, launch_kernel, max_blocks_per_sm};
use crate::cuda::nvrtc::Nvrtc;
use crate::cuda::stream::Stream;

/// The kernels' CUDA C source.
pub const SOURCE: &str = include_str!("../../../assets/kernels/bench.cu");

/// PTX built from [`SOURCE`] with nvcc (`nvcc -ptx -arch=compute_90`), used when NVRTC cannot be
/// had. An empty file means none is bundled.
pub const BUNDLED_PTX: &str = include_str!("../../../assets/kernels/bench.ptx");

/// Every kernel the module must provide.
pub const NAMES: [&str; 7] = [
    "spin_wait",
    "fill_pattern",
    "check_pattern",
    "copy_kernel",
    "copy_bulk",
    "pointer_chase",
    "scatter_chain",
];

/// Threads per block of the copy kernel (its `__launch_bounds__`).
pub const COPY_BLOCK: u32 = 512;
/// Threads per block of the fill/check/scatter kernels.
const UTIL_BLOCK: u32 = 256;

/// PTX ready to load, and where it came from.
#[derive(Clone, Debug)]
pub struct Image {
    ptx: CString,
    /// e.g. `NVRTC 13.0` or `bundled PTX`.
    pub origin: String,
}

/// How kernels were obtained for a run: one image per compute capability, or why not.
#[derive(Debug)]
pub struct Images {
    /// Per compute capability.
    pub by_cc: BTreeMap<(i32, i32), Result<Image, String>>,
    /// For `describe()`: `NVRTC 13.0 (/path)`, `bundled PTX`, or why there are none.
    pub summary: String,
}

/// Builds kernels for each compute capability with the copy kernel's compile-time settings from
/// `copy`: NVRTC first, the bundled PTX (built with the defaults) when NVRTC is missing or
/// fails. Never panics.
pub fn build(ccs: &[(i32, i32)], copy: &CopyKernelOptions) -> Images {
    let bundled = (!BUNDLED_PTX.trim().is_empty())
        .then(|| CString::new(BUNDLED_PTX).ok())
        .flatten();
    let nvrtc = Nvrtc::load();
    let mut by_cc = BTreeMap::new();
    for &cc in ccs {
        let built = match &nvrtc {
            Ok(n) => match n.compile_ptx(SOURCE, "bench.cu", cc, &defines(copy)) {
                Ok(ptx) => Ok(Image {
                    ptx,
                    origin: format!("NVRTC {}.{}", n.version().0, n.version().1),
                }),
                Err(e) => Err(format!("kernel compile failed: {e}")),
            },
            Err(nf) => Err(nf.to_string()),
        };
        let image = match (built, &bundled) {
            (Ok(i), _) => Ok(i),
            (Err(why), Some(ptx)) => Ok(Image {
                ptx: ptx.clone(),
                origin: format!("bundled PTX ({why})"),
            }),
            (Err(why), None) => Err(why),
        };
        by_cc.insert(cc, image);
    }
    let summary = match &nvrtc {
        Ok(n)
            if by_cc
                .values()
                .all(|i| i.as_ref().is_ok_and(|i| i.origin.starts_with("NVRTC"))) =>
        {
            format!(
                "kernels via NVRTC {}.{} ({})",
                n.version().0,
                n.version().1,
                n.path()
            )
        }
        _ if by_cc.values().all(Result::is_ok) && bundled.is_some() => {
            "kernels from bundled PTX".to_string()
        }
        _ => {
            let why: Vec<&str> = by_cc
                .values()
                .filter_map(|r| r.as_ref().err().map(String::as_str))
                .collect();
            format!(
                "no kernels for some GPUs: SM and latency tests waived ({})",
                why.first().copied().unwrap_or("unknown reason")
            )
        }
    };
    Images { by_cc, summary }
}

/// The kernels loaded on one GPU.
#[derive(Debug)]
pub struct Kernels {
    spin_wait: sys::CUfunction,
    fill: sys::CUfunction,
    check: sys::CUfunction,
    copy: sys::CUfunction,
    /// The bulk-copy-engine (TMA) variant and its grid, when asked for and on sm_90+ only.
    copy_bulk: Option<(sys::CUfunction, u32)>,
    chase: sys::CUfunction,
    scatter: sys::CUfunction,
    copy_grid: u32,
    /// A sample's copies as passes of one launch (`copy_kernel`'s `passes`), or one launch each.
    one_launch: bool,
    util_grid: u32,
    /// The GPU's SMs: the chase's grid, one block each.
    sms: u32,
    origin: String,
    // Declared last: the function handles above die with it.
    _module: Module,
}

// SAFETY: CUfunction and CUmodule are driver handles usable from any thread with their context
// current; every launch binds the stream's context (the module's) first.
unsafe impl Send for Kernels {}
// SAFETY: as above; no interior mutability.
unsafe impl Sync for Kernels {}

impl Kernels {
    /// Loads `image` into `ctx` and looks up every kernel; sizes the copy grid from occupancy
    /// and `opts`.
    pub fn load(
        ctx: &Arc<Context>,
        image: &Image,
        opts: &CopyKernelOptions,
    ) -> Result<Kernels, CudaError> {
        let module = Module::load(ctx, &image.ptx)?;
        let get = |name: &str| module.function(name);
        let copy = get("copy_kernel")?;
        let per_sm = max_blocks_per_sm(copy, COPY_BLOCK)?;
        let mut per_sm = u32::try_from(per_sm).unwrap_or(1).clamp(1, 32);
        // Fewer resident copy blocks per SM when asked (never more than fit).
        if let Some(v) = opts.blocks_per_sm.filter(|v| *v >= 1) {
            per_sm = per_sm.min(v);
        }
        let util_grid = ctx.sm_count() * 4;
        let bulk_per_sm = opts.bulk_blocks_per_sm.clamp(1, 32);
        Ok(Kernels {
            spin_wait: get("spin_wait")?,
            fill: get("fill_pattern")?,
            check: get("check_pattern")?,
            copy,
            copy_bulk: (opts.kernel == CopyKernel::Bulk && ctx.compute_capability().0 >= 9)
                .then(|| get("copy_bulk").ok())
                .flatten()
                .map(|f| (f, util_grid / 4 * bulk_per_sm)),
            chase: get("pointer_chase")?,
            scatter: get("scatter_chain")?,
            // A grid of exactly this many blocks when asked (e.g. fewer than one per SM).
            copy_grid: opts
                .grid
                .filter(|v| *v >= 1)
                .unwrap_or(ctx.sm_count() * per_sm),
            one_launch: !opts.launch_per_copy,
            util_grid,
            sms: ctx.sm_count(),
            origin: image.origin.clone(),
            _module: module,
        })
    }

    /// Where the PTX came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Blocks of the copy kernel (SMs × resident blocks per SM).
    pub fn copy_grid(&self) -> u32 {
        self.copy_grid
    }

    /// `spin_wait(flag, timeout_ns, timed_out)`: one thread holding `stream` until `*flag != 0`.
    pub fn spin_wait(
        &self,
        stream: &Stream,
        flag: sys::CUdeviceptr,
        timeout_ns: u64,
        timed_out: sys::CUdeviceptr,
    ) -> Result<(), CudaError> {
        let (mut a, mut b, mut c) = (flag, timeout_ns, timed_out);
        launch_kernel(
            self.spin_wait,
            "cuLaunchKernel(spin_wait)",
            1,
            1,
            stream,
            &mut [arg(&mut a), arg(&mut b), arg(&mut c)],
        )
    }

    /// `fill_pattern(p, bytes, seed)` over a buffer on this GPU.
    pub fn fill(
        &self,
        stream: &Stream,
        p: sys::CUdeviceptr,
        bytes: u64,
        seed: u32,
    ) -> Result<(), CudaError> {
        let (mut a, mut b, mut c) = (p, bytes, seed);
        launch_kernel(
            self.fill,
            "cuLaunchKernel(fill_pattern)",
            self.util_grid,
            UTIL_BLOCK,
            stream,
            &mut [arg(&mut a), arg(&mut b), arg(&mut c)],
        )
    }

    /// `check_pattern(p, bytes, seed, wrong)`: adds the mismatches to `*wrong`.
    pub fn check(
        &self,
        stream: &Stream,
        p: sys::CUdeviceptr,
        bytes: u64,
        seed: u32,
        wrong: sys::CUdeviceptr,
    ) -> Result<(), CudaError> {
        let (mut a, mut b, mut c, mut d) = (p, bytes, seed, wrong);
        launch_kernel(
            self.check,
            "cuLaunchKernel(check_pattern)",
            self.util_grid,
            UTIL_BLOCK,
            stream,
            &mut [arg(&mut a), arg(&mut b), arg(&mut c), arg(&mut d)],
        )
    }

    /// `copies` copies `src` → `dst`: `copy_kernel(src, dst, bytes, copies)` once on the full
    /// copy grid (or once per copy when the options asked for that), or the bulk-copy (TMA)
    /// variant once per copy when the options asked for it and the GPU has it (sm_90+, 16-byte
    /// aligned pointers).
    pub fn copy(
        &self,
        stream: &Stream,
        src: sys::CUdeviceptr,
        dst: sys::CUdeviceptr,
        bytes: u64,
        copies: u32,
    ) -> Result<(), CudaError> {
        let (mut a, mut b, mut c) = (src, dst, bytes);
        if let Some((bulk, grid)) = self.copy_bulk
            && src.is_multiple_of(16)
            && dst.is_multiple_of(16)
        {
            for _ in 0..copies {
                launch_kernel(
                    bulk,
                    "cuLaunchKernel(copy_bulk)",
                    grid,
                    32,
                    stream,
                    &mut [arg(&mut a), arg(&mut b), arg(&mut c)],
                )?;
            }
            return Ok(());
        }
        let (launches, mut passes) = if self.one_launch {
            (u32::from(copies > 0), u64::from(copies))
        } else {
            (copies, 1)
        };
        for _ in 0..launches {
            launch_kernel(
                self.copy,
                "cuLaunchKernel(copy_kernel)",
                self.copy_grid,
                COPY_BLOCK,
                stream,
                &mut [arg(&mut a), arg(&mut b), arg(&mut c), arg(&mut passes)],
            )?;
        }
        Ok(())
    }

    /// `pointer_chase(start, steps, sink, target)` on a grid of one one-thread block per SM, of
    /// which only block `target` chases.
    pub fn chase(
        &self,
        stream: &Stream,
        start: sys::CUdeviceptr,
        steps: u64,
        sink: sys::CUdeviceptr,
        target: u32,
    ) -> Result<(), CudaError> {
        let (mut a, mut b, mut c, mut d) = (start, steps, sink, target);
        launch_kernel(
            self.chase,
            "cuLaunchKernel(pointer_chase)",
            self.sms,
            1,
            stream,
            &mut [arg(&mut a), arg(&mut b), arg(&mut c), arg(&mut d)],
        )
    }

    /// Blocks of the chase's grid: one per SM.
    pub fn chase_grid(&self) -> u32 {
        self.sms
    }

    /// `scatter_chain(next, slots, buf, stride_words)`.
    pub fn scatter(
        &self,
        stream: &Stream,
        next: sys::CUdeviceptr,
        slots: u64,
        buf: sys::CUdeviceptr,
        stride_words: u64,
    ) -> Result<(), CudaError> {
        let (mut a, mut b, mut c, mut d) = (next, slots, buf, stride_words);
        launch_kernel(
            self.scatter,
            "cuLaunchKernel(scatter_chain)",
            self.util_grid,
            UTIL_BLOCK,
            stream,
            &mut [arg(&mut a), arg(&mut b), arg(&mut c), arg(&mut d)],
        )
    }
}

/// The preprocessor definitions [`SOURCE`] is compiled with: the copy kernel's loads in flight
/// (1–16), load/store variant (0–6) and layout, and the chase's loads (bench.cu's
/// `SCALESCOPE_UNROLL`, `SCALESCOPE_COPY_VARIANT`, `SCALESCOPE_COPY_LAYOUT`,
/// `SCALESCOPE_CHASE_LOAD`).
fn defines(copy: &CopyKernelOptions) -> Vec<String> {
    let d = CopyKernelOptions::default();
    let unroll = Some(copy.unroll)
        .filter(|v| (1..=16).contains(v))
        .unwrap_or(d.unroll);
    let variant = Some(copy.variant).filter(|v| *v <= 6).unwrap_or(d.variant);
    vec![
        format!("SCALESCOPE_UNROLL={unroll}"),
        format!("SCALESCOPE_COPY_VARIANT={variant}"),
        format!("SCALESCOPE_COPY_LAYOUT={}", u32::from(copy.contiguous)),
        format!("SCALESCOPE_CHASE_LOAD={}", copy.chase_load.define()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles the real kernels where an NVRTC is present (e.g. SCALESCOPE_NVRTC_LIB pointing
    /// at a pip wheel's copy); passes trivially where none is. NVRTC needs no GPU.
    #[test]
    fn kernels_compile_when_nvrtc_is_present() {
        let Ok(nvrtc) = Nvrtc::load() else {
            return;
        };
        let ptx = nvrtc
            .compile_ptx(
                SOURCE,
                "bench.cu",
                (9, 0),
                &defines(&CopyKernelOptions::default()),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let text = ptx.to_string_lossy();
        for k in NAMES {
            assert!(text.contains(&format!(".entry {k}(")), "{k} missing");
        }
        let from = text.find(".entry pointer_chase(").expect("pointer_chase") + 1;
        let rest = &text[from..];
        let chase = &rest[..rest.find(".entry ").unwrap_or(rest.len())];
        assert!(
            chase.contains(".u64") && !chase.contains(".cv") && !chase.contains(".cg"),
            "the chase loads plainly by default, as nvbandwidth's"
        );
    }

    #[test]
    fn defaults_compile_as_bench_cu_defaults_them() {
        assert_eq!(
            defines(&CopyKernelOptions::default()),
            [
                "SCALESCOPE_UNROLL=8",
                "SCALESCOPE_COPY_VARIANT=1",
                "SCALESCOPE_COPY_LAYOUT=0",
                "SCALESCOPE_CHASE_LOAD=0"
            ]
        );
        let tuned = CopyKernelOptions {
            unroll: 4,
            variant: 3,
            contiguous: true,
            chase_load: crate::bench::plan::ChaseLoad::Volatile,
            ..Default::default()
        };
        assert_eq!(
            defines(&tuned),
            [
                "SCALESCOPE_UNROLL=4",
                "SCALESCOPE_COPY_VARIANT=3",
                "SCALESCOPE_COPY_LAYOUT=1",
                "SCALESCOPE_CHASE_LOAD=1"
            ]
        );
    }
}
