//! The collective kernels (`assets/kernels/collectives.cu`): compiled by NVRTC once per compute
//! capability, loaded into each GPU's context, launched with checked calls.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::sync::Arc;

use cudarc::driver::sys;

use crate::cuda::CudaError;
use crate::cuda::context::Context;
use crate::cuda::module::{Module, arg, launch_kernel, max_blocks_per_sm};
use crate::cuda::nvrtc::Nvrtc;
use crate::cuda::stream::Stream;
use crate::model::Dtype;

/// The kernels' CUDA C source.
pub const SOURCE: &str = include_str!("../../../../assets/kernels/collectives.cu");

/// Threads per block of the reduce kernel (its `__launch_bounds__`).
const REDUCE_BLOCK: u32 = 512;
/// Threads per block of fill and check.
const UTIL_BLOCK: u32 = 256;

/// The kernel name suffix of a dtype.
fn suffix(d: Dtype) -> &'static str {
    d.id()
}

/// Every kernel the module must provide.
#[cfg(test)]
pub fn names() -> Vec<String> {
    Dtype::ALL
        .iter()
        .flat_map(|d| {
            ["coll_fill", "coll_check", "coll_reduce"]
                .into_iter()
                .map(move |k| format!("{k}_{}", suffix(*d)))
        })
        .collect()
}

/// PTX per compute capability, or why not.
pub type Ptx = BTreeMap<(i32, i32), Result<CString, String>>;

/// PTX per compute capability, or why not; and a line for `describe()`.
pub fn build(ccs: &[(i32, i32)]) -> (Ptx, String) {
    let mut out = BTreeMap::new();
    match Nvrtc::load() {
        Ok(n) => {
            for &cc in ccs {
                out.insert(
                    cc,
                    n.compile_ptx(SOURCE, "collectives.cu", cc, &[])
                        .map_err(|e| format!("collective kernels failed to compile: {e}")),
                );
            }
            let (ma, mi) = n.version();
            (out, format!("kernels via NVRTC {ma}.{mi}"))
        }
        Err(nf) => {
            let why = format!("no collective kernels: {nf}");
            for &cc in ccs {
                out.insert(cc, Err(why.clone()));
            }
            (out, why)
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct PerDtype {
    fill: sys::CUfunction,
    check: sys::CUfunction,
    reduce: sys::CUfunction,
}

/// The collective kernels loaded on one GPU.
#[derive(Debug)]
pub struct CollKernels {
    by_dtype: Vec<(Dtype, PerDtype)>,
    reduce_grid: u32,
    util_grid: u32,
    // Declared last: the function handles above die with it.
    _module: Module,
}

// SAFETY: CUfunction and CUmodule are driver handles usable from any thread with their context
// current; every launch binds the stream's context (the module's) first.
unsafe impl Send for CollKernels {}
// SAFETY: as above; no interior mutability.
unsafe impl Sync for CollKernels {}

/// What a collective must have left on one rank, as the check kernel reads it: the operation
/// (`values::op_code`), the rank, how many ranks took part and the elements per rank.
pub struct Expected {
    pub op: i32,
    pub rank: i32,
    pub nranks: i32,
    pub count: u64,
}

impl CollKernels {
    /// Loads `ptx` into `ctx` and looks up every kernel; sizes the reduce grid from occupancy.
    pub fn load(ctx: &Arc<Context>, ptx: &CString) -> Result<CollKernels, CudaError> {
        let module = Module::load(ctx, ptx)?;
        let get = |name: &str| module.function(name);
        let mut by_dtype = Vec::new();
        for &d in Dtype::ALL {
            let s = suffix(d);
            by_dtype.push((
                d,
                PerDtype {
                    fill: get(&format!("coll_fill_{s}"))?,
                    check: get(&format!("coll_check_{s}"))?,
                    reduce: get(&format!("coll_reduce_{s}"))?,
                },
            ));
        }
        let per_sm = max_blocks_per_sm(by_dtype[0].1.reduce, REDUCE_BLOCK)?;
        let per_sm = u32::try_from(per_sm).unwrap_or(1).clamp(1, 4);
        Ok(CollKernels {
            by_dtype,
            reduce_grid: ctx.sm_count() * per_sm,
            util_grid: ctx.sm_count() * 4,
            _module: module,
        })
    }

    fn of(&self, d: Dtype) -> Result<PerDtype, CudaError> {
        self.by_dtype
            .iter()
            .find(|(x, _)| *x == d)
            .map(|(_, k)| *k)
            .ok_or(CudaError::Call {
                call: "cuModuleGetFunction",
                name: format!("no kernels for {d}"),
                code: sys::cudaError_enum::CUDA_ERROR_NOT_FOUND as i32,
            })
    }

    /// `p[i] = value(rank, first + i)` for `n` elements of `d`.
    pub fn fill(
        &self,
        stream: &Stream,
        d: Dtype,
        p: sys::CUdeviceptr,
        n: u64,
        first: u64,
        rank: i32,
    ) -> Result<(), CudaError> {
        if n == 0 {
            return Ok(());
        }
        let (mut a, mut b, mut c, mut e) = (p, n, first, rank);
        launch_kernel(
            self.of(d)?.fill,
            "cuLaunchKernel(coll_fill)",
            self.util_grid,
            UTIL_BLOCK,
            stream,
            &mut [arg(&mut a), arg(&mut b), arg(&mut c), arg(&mut e)],
        )
    }

    /// Adds to `*wrong` the elements of `p[0..n)` that differ from what the collective must
    /// have left there (`expected`).
    pub fn check(
        &self,
        stream: &Stream,
        d: Dtype,
        p: sys::CUdeviceptr,
        n: u64,
        expected: Expected,
        wrong: sys::CUdeviceptr,
    ) -> Result<(), CudaError> {
        if n == 0 {
            return Ok(());
        }
        let Expected {
            op,
            rank,
            nranks,
            count,
        } = expected;
        let (mut a, mut b, mut c, mut e, mut f, mut g, mut h) =
            (p, n, op, rank, nranks, count, wrong);
        launch_kernel(
            self.of(d)?.check,
            "cuLaunchKernel(coll_check)",
            self.util_grid,
            UTIL_BLOCK,
            stream,
            &mut [
                arg(&mut a),
                arg(&mut b),
                arg(&mut c),
                arg(&mut e),
                arg(&mut f),
                arg(&mut g),
                arg(&mut h),
            ],
        )
    }

    /// `dst[i] = a[i] + b[i]` for `n` elements of `d`; any pointer may be a peer's.
    pub fn reduce(
        &self,
        stream: &Stream,
        d: Dtype,
        dst: sys::CUdeviceptr,
        a: sys::CUdeviceptr,
        b: sys::CUdeviceptr,
        n: u64,
    ) -> Result<(), CudaError> {
        if n == 0 {
            return Ok(());
        }
        let (mut x, mut y, mut z, mut w) = (dst, a, b, n);
        launch_kernel(
            self.of(d)?.reduce,
            "cuLaunchKernel(coll_reduce)",
            self.reduce_grid,
            REDUCE_BLOCK,
            stream,
            &mut [arg(&mut x), arg(&mut y), arg(&mut z), arg(&mut w)],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compiles the real kernels where an NVRTC is present (e.g. SCALESCOPE_NVRTC_LIB pointing
    /// at a pip wheel's copy); passes trivially where none is. NVRTC needs no GPU.
    #[test]
    fn collective_kernels_compile_when_nvrtc_is_present() {
        let Ok(nvrtc) = Nvrtc::load() else {
            return;
        };
        let ptx = nvrtc
            .compile_ptx(SOURCE, "collectives.cu", (9, 0), &[])
            .unwrap_or_else(|e| panic!("{e}"));
        let text = ptx.to_string_lossy();
        for k in names() {
            assert!(text.contains(&format!(".entry {k}(")), "{k} missing");
        }
        assert!(text.contains("ld.global.v4"), "16-byte loads");
        assert!(!text.contains(".local"), "no local memory");
    }
}
