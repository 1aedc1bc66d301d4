//! NCCL, loaded at run time from a path scalescope resolves itself.
//!
//! cudarc's NCCL loader tries libnccl.so, .so.13, .so.12 … .so.9 and .so.1 — never libnccl.so.2,
//! the only name NCCL's packages and PyTorch's wheel ship — and panics when none loads. So
//! scalescope finds the library itself ([`resolve`]), opens it with libloading, and calls it
//! through typed function pointers over cudarc's NCCL types (`cudarc::nccl::sys`).

use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use cudarc::nccl::sys::{
    cudaStream_t, ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclResult_t, ncclUniqueId,
};

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
    /// An NCCL call failed.
    #[error("NCCL {call}: {message}")]
    Call { call: &'static str, message: String },
}

/// The candidates, in the order they are tried: `explicit` (--nccl-lib), `SCALESCOPE_NCCL_LIB`,
/// the dynamic loader's search path (`libnccl.so.2`, `libnccl.so`), then the `nvidia/nccl/lib`
/// folder of each site-packages directory of `python3` on PATH (where PyTorch installs NCCL).
pub fn candidates(explicit: Option<&Path>, python_site_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = explicit {
        out.push(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(ENV_LIB).filter(|p| !p.is_empty()) {
        out.push(PathBuf::from(p));
    }
    out.push(PathBuf::from("libnccl.so.2"));
    out.push(PathBuf::from("libnccl.so"));
    for dir in python_site_dirs {
        out.push(dir.join("nvidia/nccl/lib/libnccl.so.2"));
    }
    out
}

/// site-packages directories of `python3` on PATH (empty when there is no python3).
pub fn python_site_dirs() -> Vec<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import site,sys; print('\\n'.join(site.getsitepackages()+[site.getusersitepackages()]))",
        ])
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    }
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
    pub get_unique_id: GetUniqueId,
    pub comm_init_all: CommInitAll,
    pub comm_init_rank: CommInitRank,
    pub comm_destroy: CommDestroy,
    pub get_error_string: GetErrorString,
    pub group_start: Group,
    pub group_end: Group,
    pub all_reduce: AllReduce,
    pub all_gather: AllGather,
    pub reduce_scatter: ReduceScatter,
    pub broadcast: Broadcast,
    pub send: Send,
    pub recv: Recv,
    // Keeps the function pointers above valid; dropped last.
    _lib: libloading::Library,
}

impl Nccl {
    /// Loads the first candidate that opens and has every function; the error lists what was
    /// searched.
    pub fn load(explicit: Option<&Path>) -> Result<Nccl, NcclError> {
        let candidates = candidates(explicit, &python_site_dirs());
        let mut tried = Vec::new();
        for c in &candidates {
            // A relative name is looked up on the loader's path; a path must exist.
            if c.components().count() > 1 && !c.exists() {
                tried.push(c.display().to_string());
                continue;
            }
            // SAFETY: loading NCCL runs its (trusted, vendor) initialisers; nothing else.
            match unsafe { libloading::Library::new(c) } {
                Ok(lib) => return Self::from_library(lib, c.display().to_string()),
                Err(_) => tried.push(c.display().to_string()),
            }
        }
        Err(NcclError::NotFound {
            searched: tried.join(", "),
        })
    }

    fn from_library(lib: libloading::Library, path: String) -> Result<Nccl, NcclError> {
        macro_rules! sym {
            ($name:literal) => {{
                // SAFETY: the symbol is NCCL's public C API function of this name, and the
                // pointer's type is its documented signature (nccl.h, NCCL 2.x).
                let s = unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| {
                    NcclError::Unusable {
                        path: path.clone(),
                        reason: format!("{}: {e}", $name),
                    }
                })?;
                *s
            }};
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
        let c = candidates(
            Some(Path::new("/x/libnccl.so.2")),
            &[PathBuf::from("/site")],
        );
        let names: Vec<String> = c.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(names.first().map(String::as_str), Some("/x/libnccl.so.2"));
        let loader = names.iter().position(|n| n == "libnccl.so.2").unwrap();
        let py = names
            .iter()
            .position(|n| n == "/site/nvidia/nccl/lib/libnccl.so.2")
            .unwrap();
        assert!(loader < py);
    }

    #[test]
    fn missing_nccl_is_an_error_listing_the_search() {
        if std::path::Path::new("/usr/lib/x86_64-linux-gnu/libnccl.so.2").exists() {
            return;
        }
        match Nccl::load(Some(Path::new("/nonexistent/libnccl.so.2"))) {
            Err(NcclError::NotFound { searched }) => {
                assert!(searched.contains("/nonexistent/libnccl.so.2"), "{searched}");
                assert!(searched.contains("libnccl.so.2"));
            }
            Err(e) => panic!("unexpected {e}"),
            Ok(n) => assert!(!n.path.is_empty()),
        }
    }
}
