//! The GPU platform layer: run-time access to the CUDA driver (libcuda.so.1, through cudarc's
//! raw `sys` bindings) and to the libraries scalescope loads itself, wrapped in small RAII types
//! that every measurement reuses.
//!
//! - this file: the driver ([`driver`]), CUresult → [`CudaError`], devices and PCI bus ids;
//! - [`context`]: primary contexts, peer access; [`memory`]: device, pinned and pageable
//!   buffers, CPU affinity; [`stream`]: streams and events; [`module`]: loaded PTX and launches;
//! - [`library`]: the one search for run-time libraries (CUDA toolkit folders, `$CUDA_HOME`,
//!   Python wheels); [`nvrtc`] (CUDA C → PTX), [`cublas`] (GEMMs) and [`nccl`] (collectives),
//!   each loaded through it.
//!
//! cudarc 0.19 loads libraries lazily and **panics** when one is missing (its
//! `panic_no_lib_found`). Everything in scalescope that touches the driver goes through
//! [`driver`] first, which probes for the library and turns its absence into an error value;
//! NVRTC, cuBLAS and NCCL are opened by [`library`], which returns an error instead.
//!
//! Only `bench/`, `scaling/` and `topology/` use this layer; it depends on nothing of
//! scalescope's but `model/` (NCCL's dtype names).

pub mod context;
pub mod cublas;
pub mod library;
pub mod memory;
pub mod module;
pub mod nccl;
pub mod nvrtc;
pub mod stream;

use std::ffi::CStr;
use std::sync::OnceLock;

use cudarc::driver::sys;

/// Why the CUDA driver cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CudaError {
    /// libcuda.so.1 is not installed or not on the loader's path.
    #[error("no CUDA driver (libcuda.so.1 not found): install the NVIDIA driver, or use --modeled")]
    NoDriver,
    /// A driver call failed.
    #[error("CUDA {call}: {name} ({code})")]
    Call {
        /// The driver API function.
        call: &'static str,
        /// CUDA's name for the error, e.g. CUDA_ERROR_OUT_OF_MEMORY.
        name: String,
        /// The numeric CUresult.
        code: i32,
    },
}

impl CudaError {
    /// True for CUDA_ERROR_OUT_OF_MEMORY.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Self::Call { code, .. } if *code == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY as i32)
    }

    /// True when peer access is unsupported between two devices.
    pub fn is_peer_unsupported(&self) -> bool {
        matches!(self, Self::Call { code, .. } if *code == sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED as i32)
    }
}

/// Turns a CUresult into `Ok(())` or a [`CudaError::Call`] naming `call`.
pub fn check(call: &'static str, result: sys::CUresult) -> Result<(), CudaError> {
    if result == sys::cudaError_enum::CUDA_SUCCESS {
        return Ok(());
    }
    let mut ptr: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string (or leaves it null) and reads
    // nothing else; the driver library is loaded because `result` came from it.
    unsafe { sys::cuGetErrorName(result, &mut ptr) };
    let name = if ptr.is_null() {
        format!("{result:?}")
    } else {
        // SAFETY: non-null pointers from cuGetErrorName point to NUL-terminated static strings.
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned()
    };
    Err(CudaError::Call {
        call,
        name,
        code: result as i32,
    })
}

/// Facts about the loaded driver.
#[derive(Clone, Debug, PartialEq)]
pub struct Driver {
    /// `cuDriverGetVersion`, e.g. 13000 for CUDA 13.0.
    pub version: i32,
    /// Number of devices CUDA sees (after `CUDA_VISIBLE_DEVICES`).
    pub device_count: usize,
}

/// Loads and initialises the CUDA driver once; later calls return the same answer.
pub fn driver() -> Result<Driver, CudaError> {
    static DRIVER: OnceLock<Result<Driver, CudaError>> = OnceLock::new();
    DRIVER
        .get_or_init(|| {
            // SAFETY: probing only tries to dlopen the library; it calls nothing in it.
            if !unsafe { sys::is_culib_present() } {
                return Err(CudaError::NoDriver);
            }
            // SAFETY: the library is present, so cudarc's lazy loader will not panic; cuInit(0)
            // is the documented first call and may be repeated.
            check("cuInit", unsafe { sys::cuInit(0) })?;
            let mut version = 0;
            // SAFETY: plain out-parameter.
            check("cuDriverGetVersion", unsafe {
                sys::cuDriverGetVersion(&mut version)
            })?;
            let mut count = 0;
            // SAFETY: plain out-parameter, after cuInit.
            check("cuDeviceGetCount", unsafe {
                sys::cuDeviceGetCount(&mut count)
            })?;
            Ok(Driver {
                version,
                device_count: usize::try_from(count).unwrap_or(0),
            })
        })
        .clone()
}

/// The CUdevice handle for a CUDA ordinal.
pub fn device(ordinal: usize) -> Result<sys::CUdevice, CudaError> {
    driver()?;
    let mut dev = 0;
    let ordinal = i32::try_from(ordinal).unwrap_or(i32::MAX);
    // SAFETY: plain out-parameter; the driver is initialised.
    check("cuDeviceGet", unsafe {
        sys::cuDeviceGet(&mut dev, ordinal)
    })?;
    Ok(dev)
}

/// The PCI bus id of a CUDA device, e.g. `0000:00:06.0`.
pub fn pci_bus_id(ordinal: usize) -> Result<String, CudaError> {
    let dev = device(ordinal)?;
    let mut buf = [0 as std::ffi::c_char; 32];
    // SAFETY: the buffer is 32 bytes and we pass its length; the driver NUL-terminates.
    check("cuDeviceGetPCIBusId", unsafe {
        sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as i32, dev)
    })?;
    // SAFETY: NUL-terminated by the driver within the buffer.
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// `cuDeviceCanAccessPeer(a, b)`.
pub fn can_access_peer(a: usize, b: usize) -> Result<bool, CudaError> {
    let (da, db) = (device(a)?, device(b)?);
    let mut ok = 0;
    // SAFETY: plain out-parameter; both handles come from cuDeviceGet.
    check("cuDeviceCanAccessPeer", unsafe {
        sys::cuDeviceCanAccessPeer(&mut ok, da, db)
    })?;
    Ok(ok != 0)
}

/// CUDA's P2P performance rank from `a` to `b` (lower is better).
pub fn p2p_performance_rank(a: usize, b: usize) -> Result<i32, CudaError> {
    let (da, db) = (device(a)?, device(b)?);
    let mut rank = 0;
    // SAFETY: plain out-parameter; both handles come from cuDeviceGet.
    check("cuDeviceGetP2PAttribute", unsafe {
        sys::cuDeviceGetP2PAttribute(
            &mut rank,
            sys::CUdevice_P2PAttribute::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK,
            da,
            db,
        )
    })?;
    Ok(rank)
}
