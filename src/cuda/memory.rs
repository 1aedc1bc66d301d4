//! Buffers: device memory, pinned (page-locked, mapped) host memory placed on a GPU's NUMA node,
//! and ordinary pageable host memory. Each frees itself on drop.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys;

use super::context::Context;
use super::stream::Stream;
use super::{CudaError, check};

/// `cuMemAlloc_v2` memory on one GPU. Out of memory is a [`CudaError`] whose
/// `is_out_of_memory()` is true.
#[derive(Debug)]
pub struct DeviceBuffer {
    ctx: Arc<Context>,
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl DeviceBuffer {
    /// Allocates `bytes` (at least 1) on `ctx`'s GPU. The contents are undefined.
    pub fn alloc(ctx: &Arc<Context>, bytes: usize) -> Result<DeviceBuffer, CudaError> {
        ctx.bind()?;
        let mut ptr: sys::CUdeviceptr = 0;
        // SAFETY: out-parameter; the context is current.
        check("cuMemAlloc_v2", unsafe {
            sys::cuMemAlloc_v2(&mut ptr, bytes.max(1))
        })?;
        Ok(DeviceBuffer {
            ctx: ctx.clone(),
            ptr,
            bytes,
        })
    }

    /// The device address (valid in every context that has peer access to this GPU).
    pub fn ptr(&self) -> sys::CUdeviceptr {
        self.ptr
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// True when zero-sized.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The GPU that owns the memory.
    pub fn ctx(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Copies `host` into the start of the buffer and waits for the copy (`cuMemcpyHtoD_v2`).
    /// A `host` longer than the buffer is refused with CUDA_ERROR_INVALID_VALUE, as the driver
    /// would refuse it.
    pub fn copy_from_host(&self, host: &[u8]) -> Result<(), CudaError> {
        if host.len() > self.bytes {
            return Err(CudaError::Call {
                call: "cuMemcpyHtoD_v2",
                name: "CUDA_ERROR_INVALID_VALUE".into(),
                code: sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE as i32,
            });
        }
        self.ctx.bind()?;
        // SAFETY: `host` holds `host.len()` bytes and outlives this synchronous copy; the
        // destination range lies within this allocation, in the bound context.
        check("cuMemcpyHtoD_v2", unsafe {
            sys::cuMemcpyHtoD_v2(self.ptr, host.as_ptr().cast(), host.len())
        })
    }

    /// Copies the start of the buffer into `host` and waits for the copy (`cuMemcpyDtoH_v2`;
    /// the streams that wrote it must be idle). A `host` longer than the buffer is refused with
    /// CUDA_ERROR_INVALID_VALUE, as the driver would refuse it.
    pub fn copy_to_host(&self, host: &mut [u8]) -> Result<(), CudaError> {
        if host.len() > self.bytes {
            return Err(CudaError::Call {
                call: "cuMemcpyDtoH_v2",
                name: "CUDA_ERROR_INVALID_VALUE".into(),
                code: sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE as i32,
            });
        }
        self.ctx.bind()?;
        // SAFETY: `host` has room for `host.len()` bytes and is borrowed for this synchronous
        // copy; the source range lies within this allocation, in the bound context.
        check("cuMemcpyDtoH_v2", unsafe {
            sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), self.ptr, host.len())
        })
    }

    /// Enqueues setting every byte to `value` on `stream`.
    pub fn memset_async(&self, value: u8, stream: &Stream) -> Result<(), CudaError> {
        stream.ctx().bind()?;
        // SAFETY: the range lies within this allocation; the stream is live.
        check("cuMemsetD8Async", unsafe {
            sys::cuMemsetD8Async(self.ptr, value, self.bytes, stream.raw())
        })
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemAlloc_v2 and is freed once. Callers synchronise the streams
        // that used it before dropping (see measure.rs); errors cannot be acted on here.
        unsafe {
            if self.ctx.bind().is_ok() {
                sys::cuMemFree_v2(self.ptr);
            }
        }
    }
}

/// Page-locked host memory from `cuMemHostAlloc(PORTABLE | DEVICEMAP)`: usable by every context
/// and mapped into the GPUs' address space.
#[derive(Debug)]
pub struct PinnedBuffer {
    ctx: Arc<Context>,
    ptr: *mut c_void,
    bytes: usize,
}

// SAFETY: the memory is owned by this value alone; raw host memory can move between threads.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    /// Allocates `bytes` (at least 1) of pinned memory. When `cpus` is given, the allocating
    /// thread runs on those CPUs meanwhile (its mask is restored after), so that the pages land
    /// on their NUMA node; when pinning the thread fails the memory is allocated anyway.
    pub fn alloc(
        ctx: &Arc<Context>,
        bytes: usize,
        cpus: Option<&[usize]>,
    ) -> Result<PinnedBuffer, CudaError> {
        ctx.bind()?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP;
        let r = with_cpu_affinity(cpus, || {
            // SAFETY: out-parameter; a context is current on this thread (affinity changes do
            // not affect it).
            unsafe { sys::cuMemHostAlloc(&mut ptr, bytes.max(1), flags) }
        });
        check("cuMemHostAlloc", r)?;
        Ok(PinnedBuffer {
            ctx: ctx.clone(),
            ptr,
            bytes,
        })
    }

    /// The host address (also the UVA address `cuMemcpy*` accepts).
    pub fn host_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// The address a kernel on `ctx`'s GPU uses to reach this memory.
    pub fn device_ptr(&self, ctx: &Context) -> Result<sys::CUdeviceptr, CudaError> {
        ctx.bind()?;
        let mut d: sys::CUdeviceptr = 0;
        // SAFETY: `ptr` is a DEVICEMAP allocation, mapped in every context (PORTABLE); flags 0.
        check("cuMemHostGetDevicePointer_v2", unsafe {
            sys::cuMemHostGetDevicePointer_v2(&mut d, self.ptr, 0)
        })?;
        Ok(d)
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// True when zero-sized.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The bytes, for filling and checking on the CPU. No GPU work may be writing them.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `bytes` (≥ 1 allocated) initialised-or-not host bytes owned by
        // us; u8 has no invalid values. Callers synchronise GPU work first.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.bytes) }
    }

    /// The bytes, mutable. No GPU work may be using them.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as `as_slice`, and `&mut self` makes this the only view.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<u8>(), self.bytes) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemHostAlloc and is freed once; errors cannot be acted on.
        unsafe {
            if self.ctx.bind().is_ok() {
                sys::cuMemFreeHost(self.ptr);
            }
        }
    }
}

/// Ordinary (pageable) host memory, every page touched.
#[derive(Debug)]
pub struct PageableBuffer {
    data: Vec<u8>,
}

impl PageableBuffer {
    /// Allocates `bytes` bytes on `cpus` (as [`PinnedBuffer::alloc`]) and touches every page by
    /// setting each byte to `fill`; `None` when the allocator refuses.
    pub fn alloc(bytes: usize, cpus: Option<&[usize]>, fill: u8) -> Option<PageableBuffer> {
        with_cpu_affinity(cpus, || {
            let mut data = Vec::new();
            data.try_reserve_exact(bytes.max(1)).ok()?;
            data.resize(bytes, fill);
            Some(PageableBuffer { data })
        })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.data
    }

    /// The bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.data
    }
}

/// Parses a CPU list as nvidia-smi and the kernel write it (`0-31,64-95`); `None` when empty or
/// malformed.
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 65_536 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Runs `f` with the calling thread pinned to `cpus`, then restores its previous mask. With no
/// CPUs, or when the kernel refuses the mask, `f` just runs.
pub fn with_cpu_affinity<T>(cpus: Option<&[usize]>, f: impl FnOnce() -> T) -> T {
    let Some(cpus) = cpus.filter(|c| !c.is_empty()) else {
        return f();
    };
    // SAFETY: cpu_set_t is plain bits; all-zero is the empty set.
    let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is this thread; the size is the set's own.
    let got =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old) };
    if got != 0 {
        return f();
    }
    // SAFETY: as above.
    let mut new: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let limit = 8 * std::mem::size_of::<libc::cpu_set_t>();
    let mut any = false;
    for &c in cpus.iter().filter(|&&c| c < limit) {
        // SAFETY: `c` is below the set's capacity, checked above.
        unsafe { libc::CPU_SET(c, &mut new) };
        any = true;
    }
    // SAFETY: pid 0 is this thread; the set is initialised.
    if !any
        || unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &new) } != 0
    {
        return f();
    }
    let out = f();
    // SAFETY: restores the mask read above.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old) };
    out
}

/// Host memory the kernel says is available (`MemAvailable`), bytes; `None` when unknown.
pub fn host_memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Fills a GEMM operand with random values in ±[0.5, 1) (bf16 or fp32), from a seeded LCG, so
/// products neither overflow nor run on constant data (a GPU multiplying constant or zero data
/// draws less power and runs faster than on real data). The same seed gives the same bytes.
pub fn fill_random_operand(buf: &DeviceBuffer, bf16: bool, seed: u64) -> Result<(), CudaError> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let mut host = vec![0u8; buf.len()];
    if bf16 {
        for c in host.chunks_exact_mut(2) {
            let r = next();
            let v: u16 = ((r as u16) & 0x8000) | 0x3F00 | ((r >> 16) as u16 & 0x7F);
            c.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        for c in host.chunks_exact_mut(4) {
            let r = next();
            let v: u32 = (r & 0x8000_0000) | 0x3F00_0000 | (r >> 9);
            c.copy_from_slice(&v.to_le_bytes());
        }
    }
    buf.copy_from_host(&host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_cpu_list(" 2 "), Some(vec![2]));
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("N/A"), None);
        assert_eq!(parse_cpu_list("5-1"), None);
    }

    #[test]
    fn affinity_is_restored() {
        let before = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
        let mask = |s: &str| {
            s.lines()
                .find(|l| l.starts_with("Cpus_allowed_list"))
                .map(str::to_string)
        };
        let inside = with_cpu_affinity(Some(&[0]), || 7);
        assert_eq!(inside, 7);
        let after = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
        assert_eq!(mask(&before), mask(&after));
    }

    #[test]
    fn pageable_is_touched_and_refuses_absurd_sizes() {
        let b = PageableBuffer::alloc(4096, None, 0).unwrap();
        assert_eq!(b.as_slice().len(), 4096);
        assert!(PageableBuffer::alloc(usize::MAX / 2, None, 0).is_none());
    }
}
