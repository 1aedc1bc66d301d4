//! One GPU's primary context, its facts, and the calls that act on a context as a whole.
//!
//! The driver's "current context" is per thread, so every type here binds its context
//! ([`Context::bind`]) before each driver call: they can be used from any thread, in any order.

use std::ffi::{CStr, c_char};
use std::sync::Arc;

use cudarc::driver::sys;

use super::{CudaError, check};

/// A retained primary context of one GPU (released on drop, after everything that holds an
/// `Arc` of it is gone).
#[derive(Debug)]
pub struct Context {
    ordinal: usize,
    dev: sys::CUdevice,
    raw: sys::CUcontext,
    name: String,
    sm_count: u32,
    compute_capability: (i32, i32),
}

// SAFETY: a CUcontext is a driver handle usable from any thread once made current there; every
// use goes through `bind`, which makes it current on the calling thread first.
unsafe impl Send for Context {}
// SAFETY: as above; the struct has no interior mutability, and the driver serialises calls on
// one context internally.
unsafe impl Sync for Context {}

impl Context {
    /// Retains the primary context of CUDA device `ordinal` and reads its name, SM count and
    /// compute capability.
    pub fn retain(ordinal: usize) -> Result<Arc<Context>, CudaError> {
        let dev = super::device(ordinal)?;
        let mut raw: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: out-parameter; `dev` is a valid device handle from cuDeviceGet.
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut raw, dev)
        })?;
        // From here on, dropping `ctx` releases the retain.
        let mut ctx = Context {
            ordinal,
            dev,
            raw,
            name: String::new(),
            sm_count: 0,
            compute_capability: (0, 0),
        };
        ctx.bind()?;
        let mut buf = [0 as c_char; 256];
        // SAFETY: the buffer is 256 bytes and we pass that length; the driver NUL-terminates.
        check("cuDeviceGetName", unsafe {
            sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as i32, dev)
        })?;
        // SAFETY: NUL-terminated by the driver within the buffer.
        ctx.name = unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let attr = |a: sys::CUdevice_attribute| -> Result<i32, CudaError> {
            let mut v = 0;
            // SAFETY: plain out-parameter; `dev` is valid.
            check("cuDeviceGetAttribute", unsafe {
                sys::cuDeviceGetAttribute(&mut v, a, dev)
            })?;
            Ok(v)
        };
        use sys::CUdevice_attribute as A;
        ctx.sm_count = u32::try_from(attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?)
            .unwrap_or(1)
            .max(1);
        ctx.compute_capability = (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        Ok(Arc::new(ctx))
    }

    /// Makes this context current on the calling thread.
    pub fn bind(&self) -> Result<(), CudaError> {
        // SAFETY: `raw` is a retained primary context, valid until drop.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.raw) })
    }

    /// The CUDA ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// (major, minor), e.g. (9, 0) for Hopper.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// The raw context handle (for cuMemcpyPeerAsync and peer-access calls).
    pub fn raw(&self) -> sys::CUcontext {
        self.raw
    }

    /// Waits for all work in this context.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.bind()?;
        // SAFETY: no arguments; the context is current.
        check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: releases the retain taken in `retain`; errors (e.g. after a sticky fault)
        // cannot be acted on here.
        unsafe {
            sys::cuDevicePrimaryCtxRelease_v2(self.dev);
        }
    }
}

/// Lets `from` read and write `to`'s memory (`cuCtxEnablePeerAccess` in `from`). Already enabled
/// is fine. Fails with CUDA_ERROR_PEER_ACCESS_UNSUPPORTED where the hardware cannot.
pub fn enable_peer_access(from: &Context, to: &Context) -> Result<(), CudaError> {
    from.bind()?;
    // SAFETY: `to.raw` is a valid context; flags must be 0.
    let r = unsafe { sys::cuCtxEnablePeerAccess(to.raw, 0) };
    if r == sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
        return Ok(());
    }
    check("cuCtxEnablePeerAccess", r)
}

/// Peer access both ways between `a` and `b` where the hardware allows it: `Ok(false)` where CUDA
/// says it cannot (`cuDeviceCanAccessPeer`, or CUDA_ERROR_PEER_ACCESS_UNSUPPORTED on enabling).
pub fn enable_peer_access_both(a: &Context, b: &Context) -> Result<bool, CudaError> {
    let ok = super::can_access_peer(a.ordinal(), b.ordinal())?
        && super::can_access_peer(b.ordinal(), a.ordinal())?;
    if !ok {
        return Ok(false);
    }
    match enable_peer_access(a, b).and_then(|_| enable_peer_access(b, a)) {
        Ok(()) => Ok(true),
        Err(e) if e.is_peer_unsupported() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Revokes `from`'s access to `to`'s memory. Not enabled is fine.
pub fn disable_peer_access(from: &Context, to: &Context) -> Result<(), CudaError> {
    from.bind()?;
    // SAFETY: `to.raw` is a valid context.
    let r = unsafe { sys::cuCtxDisablePeerAccess(to.raw) };
    if r == sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED {
        return Ok(());
    }
    check("cuCtxDisablePeerAccess", r)
}

/// True for errors after which the context is unusable until the process exits.
pub fn is_sticky(err: &CudaError) -> bool {
    use sys::cudaError_enum as E;
    let CudaError::Call { code, .. } = err else {
        return false;
    };
    [
        E::CUDA_ERROR_ECC_UNCORRECTABLE,
        E::CUDA_ERROR_NVLINK_UNCORRECTABLE,
        E::CUDA_ERROR_ILLEGAL_ADDRESS,
        E::CUDA_ERROR_LAUNCH_TIMEOUT,
        E::CUDA_ERROR_ASSERT,
        E::CUDA_ERROR_HARDWARE_STACK_ERROR,
        E::CUDA_ERROR_ILLEGAL_INSTRUCTION,
        E::CUDA_ERROR_MISALIGNED_ADDRESS,
        E::CUDA_ERROR_INVALID_ADDRESS_SPACE,
        E::CUDA_ERROR_INVALID_PC,
        E::CUDA_ERROR_LAUNCH_FAILED,
        E::CUDA_ERROR_CONTEXT_IS_DESTROYED,
    ]
    .iter()
    .any(|e| *e as i32 == *code)
}
