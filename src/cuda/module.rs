//! Loaded PTX modules and kernel launches: the part of running a run-time compiled kernel that
//! does not depend on which kernel it is.

use std::ffi::{CString, c_void};
use std::sync::Arc;

use cudarc::driver::sys;

use super::context::Context;
use super::stream::Stream;
use super::{CudaError, check};

/// A loaded module, unloaded on drop.
#[derive(Debug)]
pub(crate) struct Module {
    ctx: Arc<Context>,
    raw: sys::CUmodule,
}

impl Module {
    /// Loads a NUL-terminated PTX image into `ctx` (the driver compiles it for the GPU).
    pub(crate) fn load(ctx: &Arc<Context>, ptx: &CString) -> Result<Module, CudaError> {
        ctx.bind()?;
        let mut raw: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: out-parameter; `ptx` is a NUL-terminated PTX image; the context is current.
        check("cuModuleLoadData", unsafe {
            sys::cuModuleLoadData(&mut raw, ptx.as_ptr().cast::<c_void>())
        })?;
        Ok(Module {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// The kernel called `name` (valid while the module lives).
    pub(crate) fn function(&self, name: &str) -> Result<sys::CUfunction, CudaError> {
        let cname = CString::new(name).unwrap_or_default();
        let mut f: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: out-parameter; the module is live; the name is NUL-terminated.
        check("cuModuleGetFunction", unsafe {
            sys::cuModuleGetFunction(&mut f, self.raw, cname.as_ptr())
        })?;
        Ok(f)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded once by cuModuleLoadData, unloaded once; errors cannot be acted on.
        unsafe {
            if self.ctx.bind().is_ok() {
                sys::cuModuleUnload(self.raw);
            }
        }
    }
}

/// How many blocks of `block` threads of kernel `f` fit on one SM at once (no dynamic shared
/// memory), as the driver's occupancy calculator says. `f` must belong to the current context.
pub(crate) fn max_blocks_per_sm(f: sys::CUfunction, block: u32) -> Result<i32, CudaError> {
    let mut per_sm = 0;
    // SAFETY: out-parameter; callers pass a live function of the current context.
    check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
        sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, f, block as i32, 0)
    })?;
    Ok(per_sm)
}

/// One kernel argument: a pointer to its value, as cuLaunchKernel takes them.
pub(crate) fn arg<T>(v: &mut T) -> *mut c_void {
    (v as *mut T).cast::<c_void>()
}

/// Launches `f` on `stream` with a 1-D grid (`grid` ≥ 1 blocks of `block` threads), binding the
/// stream's context first. `name` labels the error (`cuLaunchKernel(copy_kernel)`).
pub(crate) fn launch_kernel(
    f: sys::CUfunction,
    name: &'static str,
    grid: u32,
    block: u32,
    stream: &Stream,
    params: &mut [*mut c_void],
) -> Result<(), CudaError> {
    stream.ctx().bind()?;
    // SAFETY: callers pass a live kernel of a module loaded in the stream's context, and
    // `params` points to one value per kernel parameter, of the kernel's types, alive for the
    // call (the driver copies them before returning).
    let r = unsafe {
        sys::cuLaunchKernel(
            f,
            grid.max(1),
            1,
            1,
            block,
            1,
            1,
            0,
            stream.raw(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    check(name, r)
}
