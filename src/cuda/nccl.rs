//! NCCL, loaded at run time from a path scalescope resolves itself.
//!
//! cudarc's NCCL loader tries libnccl.so, .so.13, .so.12 … .so.9 and .so.1 — never libnccl.so.2,
//! the only name NCCL's packages and PyTorch's wheel ship — and panics when none loads. So
//! scalescope finds the library itself ([`candidates`], through the one run-time library search
//! of [`super::library`]), opens it with libloading, and calls it through typed function pointers
//! over cudarc's NCCL types (`cudarc::nccl::sys`). [`Nccl`]'s methods are the only NCCL calls
//! scalescope makes: the function pointers stay private to this file.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use libloading::os::unix::Library;

use cudarc::nccl::sys::{
    cudaStream_t, ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclResult_t, ncclUniqueId,
};

use cudarc::driver::sys::CUdeviceptr;

use super::library::{env_path, open_local, search_library, symbol};
use super::stream::Stream;
use crate::model::Dtype;

/// Environment variable naming the NCCL library to load.
pub const ENV_LIB: &str = "SCALESCOPE_NCCL_LIB";

/// Where NCCL was looked for and why it was not loaded.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NcclError {
    /// No candidate loaded.
    #[error("NCCL not found (searched: {searched})")]
    NotFound { searched: String },
    /// A library loaded but lacks a function scalescope needs.
    #[error("{path}: not a usable NCCL ({reason})")]
    Unusable { path: String, reason: String },
    /// The library named by `--nccl-lib` or `SCALESCOPE_NCCL_LIB` did not load: no other is
    /// tried in its place, so that a mistyped path is never a run on another NCCL.
    #[error("{by} {path}: NCCL could not be loaded from it ({reason})")]
    Named {
        by: &'static str,
        path: String,
        reason: String,
    },
    /// An NCCL call failed.
    #[error("NCCL {call}: {message}")]
    Call { call: &'static str, message: String },
}

/// The library the user named, and how: `explicit` (`--nccl-lib`), else `SCALESCOPE_NCCL_LIB`.
fn named(explicit: Option<&Path>) -> Option<(PathBuf, &'static str)> {
    explicit
        .map(|p| (p.to_path_buf(), "--nccl-lib"))
        .or_else(|| env_path(ENV_LIB).map(|p| (PathBuf::from(p), ENV_LIB)))
}

/// The candidates searched when no library is named, in order: the dynamic loader's search path
/// (`libnccl.so.2`, `libnccl.so`), then the `nvidia/nccl/lib` folder of each of Python's
/// site-packages directories (where PyTorch installs NCCL).
pub fn candidates(python_site_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    out.push(PathBuf::from("libnccl.so.2"));
    out.push(PathBuf::from("libnccl.so"));
    for dir in python_site_dirs {
        out.push(dir.join("nvidia/nccl/lib/libnccl.so.2"));
    }
    out
}

type GetVersion = unsafe extern "C" fn(*mut c_int) -> ncclResult_t;
type GetUniqueId = unsafe extern "C" fn(*mut ncclUniqueId) -> ncclResult_t;
type CommInitAll = unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> ncclResult_t;
type CommInitRank =
    unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int) -> ncclResult_t;
type CommDestroy = unsafe extern "C" fn(ncclComm_t) -> ncclResult_t;
type GetErrorString = unsafe extern "C" fn(ncclResult_t) -> *const c_char;
type Group = unsafe extern "C" fn() -> ncclResult_t;
type AllReduce = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    ncclRedOp_t,
    ncclComm_t,
    cudaStream_t,
) -> ncclResult_t;
type AllGather = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    ncclComm_t,
    cudaStream_t,
) -> ncclResult_t;
type ReduceScatter = AllReduce;
type Broadcast = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    c_int,
    ncclComm_t,
    cudaStream_t,
) -> ncclResult_t;
type Send = unsafe extern "C" fn(
    *const c_void,
    usize,
    ncclDataType_t,
    c_int,
    ncclComm_t,
    cudaStream_t,
) -> ncclResult_t;
type Recv = unsafe extern "C" fn(
    *mut c_void,
    usize,
    ncclDataType_t,
    c_int,
    ncclComm_t,
    cudaStream_t,
) -> ncclResult_t;

/// A loaded NCCL: the library and the functions scalescope calls.
pub struct Nccl {
    /// The path (or loader name) it was loaded from.
    pub path: String,
    /// `ncclGetVersion`, e.g. 22809.
    pub version_code: i32,
    get_unique_id: GetUniqueId,
    comm_init_all: CommInitAll,
    comm_init_rank: CommInitRank,
    comm_destroy: CommDestroy,
    get_error_string: GetErrorString,
    group_start: Group,
    group_end: Group,
    all_reduce: AllReduce,
    all_gather: AllGather,
    reduce_scatter: ReduceScatter,
    broadcast: Broadcast,
    send: Send,
    recv: Recv,
    // Keeps the function pointers above valid; dropped last.
    _lib: Library,
}

impl Nccl {
    /// Loads the library named by `explicit` (`--nccl-lib`) or `SCALESCOPE_NCCL_LIB`, and only
    /// that one ([`NcclError::Named`] when it does not load); else the first candidate that
    /// opens (Python is asked for its site-packages only when no other does). A library that
    /// opens but lacks a function is [`NcclError::Unusable`], and none opening is
    /// [`NcclError::NotFound`], listing what was searched.
    pub fn load(explicit: Option<&Path>) -> Result<Nccl, NcclError> {
        if let Some((path, by)) = named(explicit) {
            return match open_local(&path) {
                Ok(lib) => Self::from_library(lib, path.display().to_string()),
                Err(reason) => Err(NcclError::Named {
                    by,
                    path: path.display().to_string(),
                    reason,
                }),
            };
        }
        let found = search_library(
            |env| candidates(&env.site_packages),
            |path| {
                Ok(Self::from_library(
                    open_local(path)?,
                    path.display().to_string(),
                ))
            },
        );
        match found {
            Ok(loaded) => loaded,
            Err((searched, _)) => Err(NcclError::NotFound {
                searched: searched.join(", "),
            }),
        }
    }

    fn from_library(lib: Library, path: String) -> Result<Nccl, NcclError> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol is NCCL's public C API function of this name, and the
                // pointer's type is its documented signature (nccl.h, NCCL 2.x).
                unsafe { symbol(&lib, $name) }.map_err(|reason| NcclError::Unusable {
                    path: path.clone(),
                    reason,
                })?
            };
        }
        let get_version: GetVersion = sym!("ncclGetVersion");
        let mut version_code = 0;
        // SAFETY: plain out-parameter.
        unsafe { get_version(&mut version_code) };
        Ok(Nccl {
            version_code,
            get_unique_id: sym!("ncclGetUniqueId"),
            comm_init_all: sym!("ncclCommInitAll"),
            comm_init_rank: sym!("ncclCommInitRank"),
            comm_destroy: sym!("ncclCommDestroy"),
            get_error_string: sym!("ncclGetErrorString"),
            group_start: sym!("ncclGroupStart"),
            group_end: sym!("ncclGroupEnd"),
            all_reduce: sym!("ncclAllReduce"),
            all_gather: sym!("ncclAllGather"),
            reduce_scatter: sym!("ncclReduceScatter"),
            broadcast: sym!("ncclBroadcast"),
            send: sym!("ncclSend"),
            recv: sym!("ncclRecv"),
            path,
            _lib: lib,
        })
    }

    /// `NCCL 2.28.9`.
    pub fn version(&self) -> String {
        format_version(self.version_code)
    }

    /// Turns an ncclResult_t into a result naming `call`.
    pub fn check(&self, call: &'static str, r: ncclResult_t) -> Result<(), NcclError> {
        if r == ncclResult_t::ncclSuccess {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString returns a static NUL-terminated string for any code.
        let msg = unsafe {
            let p = (self.get_error_string)(r);
            if p.is_null() {
                format!("{r:?}")
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(NcclError::Call { call, message: msg })
    }

    /// `ncclGetUniqueId`: the id every rank of a communicator passes to
    /// [`Nccl::comm_init_rank`] (with `NCCL_COMM_ID` set, every rank derives the same one).
    pub fn unique_id(&self) -> Result<ncclUniqueId, NcclError> {
        let mut id = ncclUniqueId { internal: [0; 128] };
        // SAFETY: out-parameter.
        let r = unsafe { (self.get_unique_id)(&mut id) };
        self.check("ncclGetUniqueId", r).map(|()| id)
    }

    /// `ncclCommInitAll`: one communicator per CUDA ordinal, in order, in this process. Destroy
    /// each with [`Nccl::comm_destroy`] (or abort it).
    pub fn comm_init_all(&self, ordinals: &[i32]) -> Result<Vec<ncclComm_t>, NcclError> {
        let mut comms: Vec<ncclComm_t> = vec![std::ptr::null_mut(); ordinals.len()];
        // SAFETY: `comms` has room for one communicator per device in `ordinals`.
        let r = unsafe {
            (self.comm_init_all)(comms.as_mut_ptr(), ordinals.len() as i32, ordinals.as_ptr())
        };
        self.check("ncclCommInitAll", r).map(|()| comms)
    }

    /// `ncclCommInitRank`: this process's rank `rank` of `world`, on the GPU of the thread's
    /// current context. Blocks until every rank has arrived.
    pub fn comm_init_rank(
        &self,
        world: usize,
        id: ncclUniqueId,
        rank: usize,
    ) -> Result<ncclComm_t, NcclError> {
        let mut comm: ncclComm_t = std::ptr::null_mut();
        // SAFETY: out-parameter; the id and rank are plain values NCCL checks itself.
        let r = unsafe { (self.comm_init_rank)(&mut comm, world as i32, id, rank as i32) };
        self.check("ncclCommInitRank", r).map(|()| comm)
    }

    /// `ncclCommDestroy` (its result is not acted on: it runs on drop paths).
    ///
    /// # Safety
    ///
    /// `comm` must come from this NCCL, not be destroyed or aborted before, and not be used
    /// again.
    pub unsafe fn comm_destroy(&self, comm: ncclComm_t) {
        // SAFETY: the caller's contract above.
        unsafe { (self.comm_destroy)(comm) };
    }

    /// `ncclGroupStart`; balance it with [`Nccl::group_end`] on every path.
    pub fn group_start(&self) -> Result<(), NcclError> {
        // SAFETY: no arguments.
        self.check("ncclGroupStart", unsafe { (self.group_start)() })
    }

    /// `ncclGroupEnd`: closes the group [`Nccl::group_start`] opened.
    pub fn group_end(&self) -> Result<(), NcclError> {
        // SAFETY: no arguments.
        self.check("ncclGroupEnd", unsafe { (self.group_end)() })
    }

    /// Enqueues `ncclAllReduce` of `b.count` elements from `b.send` into `b.recv` (the same
    /// address for in place) on `on.stream`.
    ///
    /// # Safety
    ///
    /// `b.send` and `b.recv` must address `b.count` elements of `b.dtype` in device memory of
    /// `on.comm`'s GPU, allocated until the stream has run the operation; `on.comm` is live and
    /// `on.stream` belongs to its GPU.
    pub unsafe fn all_reduce(
        &self,
        b: Buffers,
        op: ncclRedOp_t,
        on: CommStream<'_>,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's contract above.
        self.check("ncclAllReduce", unsafe {
            (self.all_reduce)(
                dptr(b.send),
                dptr(b.recv),
                b.count,
                b.dtype,
                op,
                on.comm,
                nccl_stream(on.stream),
            )
        })
    }

    /// Enqueues `ncclAllGather`: `b.count` elements from `b.send`, `b.count` × ranks into
    /// `b.recv`.
    ///
    /// # Safety
    ///
    /// As [`Nccl::all_reduce`], with `b.recv` addressing `b.count` × ranks elements.
    pub unsafe fn all_gather(&self, b: Buffers, on: CommStream<'_>) -> Result<(), NcclError> {
        // SAFETY: the caller's contract above.
        self.check("ncclAllGather", unsafe {
            (self.all_gather)(
                dptr(b.send),
                dptr(b.recv),
                b.count,
                b.dtype,
                on.comm,
                nccl_stream(on.stream),
            )
        })
    }

    /// Enqueues `ncclReduceScatter`: `b.count` × ranks elements from `b.send`, `b.count` into
    /// `b.recv`.
    ///
    /// # Safety
    ///
    /// As [`Nccl::all_reduce`], with `b.send` addressing `b.count` × ranks elements.
    pub unsafe fn reduce_scatter(
        &self,
        b: Buffers,
        op: ncclRedOp_t,
        on: CommStream<'_>,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's contract above.
        self.check("ncclReduceScatter", unsafe {
            (self.reduce_scatter)(
                dptr(b.send),
                dptr(b.recv),
                b.count,
                b.dtype,
                op,
                on.comm,
                nccl_stream(on.stream),
            )
        })
    }

    /// Enqueues `ncclBroadcast` of `b.count` elements from rank `root`'s `b.send` into every
    /// `b.recv`.
    ///
    /// # Safety
    ///
    /// As [`Nccl::all_reduce`].
    pub unsafe fn broadcast(
        &self,
        b: Buffers,
        root: i32,
        on: CommStream<'_>,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's contract above.
        self.check("ncclBroadcast", unsafe {
            (self.broadcast)(
                dptr(b.send),
                dptr(b.recv),
                b.count,
                b.dtype,
                root,
                on.comm,
                nccl_stream(on.stream),
            )
        })
    }

    /// Enqueues `ncclSend` of `count` elements at `send` to rank `peer`.
    ///
    /// # Safety
    ///
    /// As [`Nccl::all_reduce`], for `send` alone.
    pub unsafe fn send(
        &self,
        send: CUdeviceptr,
        count: usize,
        dtype: ncclDataType_t,
        peer: i32,
        on: CommStream<'_>,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's contract above.
        self.check("ncclSend", unsafe {
            (self.send)(
                dptr(send),
                count,
                dtype,
                peer,
                on.comm,
                nccl_stream(on.stream),
            )
        })
    }

    /// Enqueues `ncclRecv` of `count` elements into `recv` from rank `peer`.
    ///
    /// # Safety
    ///
    /// As [`Nccl::all_reduce`], for `recv` alone.
    pub unsafe fn recv(
        &self,
        recv: CUdeviceptr,
        count: usize,
        dtype: ncclDataType_t,
        peer: i32,
        on: CommStream<'_>,
    ) -> Result<(), NcclError> {
        // SAFETY: the caller's contract above.
        self.check("ncclRecv", unsafe {
            (self.recv)(
                dptr(recv),
                count,
                dtype,
                peer,
                on.comm,
                nccl_stream(on.stream),
            )
        })
    }
}

/// The device buffers of one collective: `count` elements of `dtype` read from `send` and
/// written to `recv` (for the operations whose sides differ in size, `count` is the smaller).
#[derive(Debug, Clone, Copy)]
pub struct Buffers {
    /// Device address read from.
    pub send: CUdeviceptr,
    /// Device address written to (the same as `send` for in place).
    pub recv: CUdeviceptr,
    /// Elements per rank.
    pub count: usize,
    /// Element type.
    pub dtype: ncclDataType_t,
}

impl Buffers {
    /// `count` elements of `dtype` at `ptr`, read and written in place.
    pub fn in_place(ptr: CUdeviceptr, count: usize, dtype: ncclDataType_t) -> Buffers {
        Buffers {
            send: ptr,
            recv: ptr,
            count,
            dtype,
        }
    }
}

/// Where an NCCL call is enqueued: a rank's communicator and a stream of the same GPU.
#[derive(Clone, Copy)]
pub struct CommStream<'a> {
    /// The rank's communicator.
    pub comm: ncclComm_t,
    /// The stream the operation runs on.
    pub stream: &'a Stream,
}

/// A device address as the pointer NCCL takes.
fn dptr(p: CUdeviceptr) -> *mut c_void {
    p as usize as *mut c_void
}

/// A stream as NCCL takes it (the driver's CUstream is the runtime's cudaStream_t).
fn nccl_stream(s: &Stream) -> cudaStream_t {
    s.raw().cast()
}

/// The NCCL functions [`Nccl`] does not load: abort and asynchronous errors, for deadlines.
pub(crate) struct NcclExtra {
    abort: unsafe extern "C" fn(ncclComm_t) -> ncclResult_t,
    async_error: unsafe extern "C" fn(ncclComm_t, *mut ncclResult_t) -> ncclResult_t,
    _lib: Library,
}

impl NcclExtra {
    /// Opens the library `nccl` was loaded from again (the loader returns the same copy) and
    /// looks up ncclCommAbort and ncclCommGetAsyncError.
    pub(crate) fn load(nccl: &Nccl) -> Result<NcclExtra, NcclError> {
        let unusable = |reason: String| NcclError::Unusable {
            path: nccl.path.clone(),
            reason,
        };
        // The library is already loaded (by `Nccl::load`); this only takes a reference.
        let lib = open_local(Path::new(&nccl.path)).map_err(unusable)?;
        // SAFETY: NCCL's public C functions with these signatures (nccl.h, NCCL ≥ 2.4); the
        // pointers live as long as `lib`, which this value owns.
        let abort = unsafe { symbol(&lib, "ncclCommAbort") }.map_err(unusable)?;
        // SAFETY: as above.
        let async_error = unsafe { symbol(&lib, "ncclCommGetAsyncError") }.map_err(unusable)?;
        Ok(NcclExtra {
            abort,
            async_error,
            _lib: lib,
        })
    }

    /// The communicator's asynchronous error, if any.
    pub(crate) fn async_error(&self, nccl: &Nccl, comm: ncclComm_t) -> Result<(), NcclError> {
        let mut r = ncclResult_t::ncclSuccess;
        // SAFETY: `comm` is a live communicator; out-parameter.
        let called = unsafe { (self.async_error)(comm, &mut r) };
        nccl.check("ncclCommGetAsyncError", called)?;
        nccl.check("ncclCommGetAsyncError", r)
    }

    /// Aborts a communicator (it is freed; never use it again).
    pub(crate) fn abort(&self, comm: ncclComm_t) {
        // SAFETY: `comm` is a live communicator, aborted once by the caller's bookkeeping.
        unsafe { (self.abort)(comm) };
    }
}

/// NCCL's version code → `NCCL 2.28.9` (codes since 2.9 are major×10000 + minor×100 + patch).
pub fn format_version(code: i32) -> String {
    if code >= 10000 {
        format!(
            "NCCL {}.{}.{}",
            code / 10000,
            (code % 10000) / 100,
            code % 100
        )
    } else {
        format!(
            "NCCL {}.{}.{}",
            code / 1000,
            (code % 1000) / 100,
            code % 100
        )
    }
}

/// NCCL's type for a dtype.
pub fn nccl_dtype(d: Dtype) -> ncclDataType_t {
    match d {
        Dtype::F32 => ncclDataType_t::ncclFloat32,
        Dtype::Bf16 => ncclDataType_t::ncclBfloat16,
        Dtype::F16 => ncclDataType_t::ncclFloat16,
        Dtype::F64 => ncclDataType_t::ncclFloat64,
        Dtype::I32 => ncclDataType_t::ncclInt32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(format_version(22809), "NCCL 2.28.9");
        assert_eq!(format_version(2708), "NCCL 2.7.8");
    }

    #[test]
    fn search_order() {
        let c = candidates(&[PathBuf::from("/site")]);
        let names: Vec<String> = c.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(names.first().map(String::as_str), Some("libnccl.so.2"));
        let loader = names.iter().position(|n| n == "libnccl.so.2").unwrap();
        let py = names
            .iter()
            .position(|n| n == "/site/nvidia/nccl/lib/libnccl.so.2")
            .unwrap();
        assert!(loader < py);
    }

    /// A named library that is not there is an error naming it and the flag, whatever NCCL
    /// the machine has elsewhere (it loaded that one instead, without a word).
    #[test]
    fn a_named_nccl_that_does_not_load_is_an_error_naming_it() {
        match Nccl::load(Some(Path::new("/nonexistent/libnccl.so.2"))) {
            Err(e @ NcclError::Named { .. }) => {
                let text = e.to_string();
                assert!(
                    text.starts_with("--nccl-lib /nonexistent/libnccl.so.2: "),
                    "{text}"
                );
            }
            Err(e) => panic!("unexpected {e}"),
            Ok(n) => panic!("loaded {} in place of the named one", n.path),
        }
    }

    #[test]
    fn missing_nccl_is_an_error_listing_the_search() {
        if std::path::Path::new("/usr/lib/x86_64-linux-gnu/libnccl.so.2").exists()
            || env_path(ENV_LIB).is_some()
        {
            return;
        }
        match Nccl::load(None) {
            Err(NcclError::NotFound { searched }) => {
                assert!(searched.contains("libnccl.so.2"), "{searched}");
            }
            Err(e) => panic!("unexpected {e}"),
            Ok(n) => assert!(!n.path.is_empty()),
        }
    }
}
