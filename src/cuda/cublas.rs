//! cuBLAS, loaded by us from a resolved path: cudarc's cuBLAS loader panics when the library is
//! not on the loader's path, and cuBLAS is usually off it (/usr/local/cuda/lib64, or a Python
//! wheel's `nvidia/cublas/lib`). Same search as NVRTC ([`super::library`]); only the handful of
//! functions a GEMM needs, over cudarc's cuBLAS types.

use std::ffi::{OsStr, c_int, c_void};
use std::path::{Path, PathBuf};

use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t, cublasHandle_t, cublasOperation_t, cublasStatus_t,
    cudaDataType_t, cudaStream_t,
};
use libloading::os::unix::Library;

pub use super::library::NotFound;
use super::library::{
    SearchEnv, env_path, library_candidates, open_global, open_local, search_library, symbol,
};

/// Environment variable naming the cuBLAS library (a file, or a folder holding it).
pub const ENV_LIB: &str = "SCALESCOPE_CUBLAS_LIB";

/// Library names tried in each place, newest first.
pub const LIB_NAMES: [&str; 3] = ["libcublas.so.13", "libcublas.so.12", "libcublas.so"];

type FnCreate = unsafe extern "C" fn(*mut cublasHandle_t) -> cublasStatus_t;
type FnDestroy = unsafe extern "C" fn(cublasHandle_t) -> cublasStatus_t;
type FnSetStream = unsafe extern "C" fn(cublasHandle_t, cudaStream_t) -> cublasStatus_t;
type FnGetVersion = unsafe extern "C" fn(cublasHandle_t, *mut c_int) -> cublasStatus_t;
type FnGemmEx = unsafe extern "C" fn(
    cublasHandle_t,
    cublasOperation_t,
    cublasOperation_t,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    cudaDataType_t,
    c_int,
    *const c_void,
    cudaDataType_t,
    c_int,
    *const c_void,
    *mut c_void,
    cudaDataType_t,
    c_int,
    cublasComputeType_t,
    cublasGemmAlgo_t,
) -> cublasStatus_t;

/// Every path to try: `$SCALESCOPE_CUBLAS_LIB` alone where set; else, in order, the bare names
/// (the loader's search); the CUDA toolkit's folders; `$CUDA_HOME`; versioned toolkits;
/// NVIDIA's Python wheels (`nvidia/cublas/lib`, `nvidia/cu13/lib`).
pub fn candidates(env: &SearchEnv, env_lib: Option<&OsStr>) -> Vec<PathBuf> {
    library_candidates(
        &LIB_NAMES,
        env_lib,
        env,
        &["nvidia/cublas/lib", "nvidia/cu13/lib"],
    )
}

/// A loaded cuBLAS.
pub struct Cublas {
    /// The file (or loader name) it was loaded from.
    pub path: String,
    create: FnCreate,
    destroy: FnDestroy,
    set_stream: FnSetStream,
    get_version: Option<FnGetVersion>,
    gemm_ex: FnGemmEx,
    // Kept loaded while the pointers above are used; cublasLt first so it is unloaded last.
    _lib: Library,
    _lt: Option<Library>,
}

impl std::fmt::Debug for Cublas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cublas")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A cuBLAS call failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("cuBLAS {call}: status {status}")]
pub struct CublasError {
    pub call: &'static str,
    pub status: i32,
}

fn check(call: &'static str, s: cublasStatus_t) -> Result<(), CublasError> {
    if s == cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(CublasError {
            call,
            status: s as i32,
        })
    }
}

impl Cublas {
    /// Searches [`candidates`] (then, if none loads, Python's site-packages) and loads the
    /// first cuBLAS that has every function needed. Never panics.
    pub fn load() -> Result<Cublas, NotFound> {
        let env_lib = env_path(ENV_LIB);
        search_library(|env| candidates(env, env_lib.as_deref()), Self::open).map_err(
            |(searched, errors)| NotFound {
                library: "cuBLAS",
                env_var: ENV_LIB,
                file: "libcublas.so",
                searched,
                errors,
            },
        )
    }

    /// Loads cuBLAS from `path`. libcublas needs libcublasLt of the same version; when it sits
    /// next to `path` it is loaded first, globally, so that libcublas finds it by soname even
    /// when that folder is not on the loader's path.
    pub fn open(path: &Path) -> Result<Cublas, String> {
        let lt = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .and_then(|dir| {
                let name = path
                    .file_name()?
                    .to_str()?
                    .replace("libcublas", "libcublasLt");
                let p = dir.join(name);
                p.exists().then(|| open_global(&p).ok()).flatten()
            });
        let lib = open_local(path)?;
        // SAFETY (every `symbol` call): each is cuBLAS's C function of this exact signature
        // (cublas_api.h); the pointers stay valid while `lib` is loaded, which `Cublas`
        // guarantees by owning it.
        let create: FnCreate = unsafe { symbol(&lib, "cublasCreate_v2") }?;
        let destroy: FnDestroy = unsafe { symbol(&lib, "cublasDestroy_v2") }?;
        let set_stream: FnSetStream = unsafe { symbol(&lib, "cublasSetStream_v2") }?;
        let gemm_ex: FnGemmEx = unsafe { symbol(&lib, "cublasGemmEx") }?;
        // Optional, only used for the version string.
        let get_version: Option<FnGetVersion> = unsafe { symbol(&lib, "cublasGetVersion_v2") }.ok();
        Ok(Cublas {
            path: path.display().to_string(),
            create,
            destroy,
            set_stream,
            get_version,
            gemm_ex,
            _lib: lib,
            _lt: lt,
        })
    }
}

/// One cuBLAS handle, created in the context current on the calling thread; destroyed on drop.
pub struct Handle<'a> {
    lib: &'a Cublas,
    raw: cublasHandle_t,
}

impl<'a> Handle<'a> {
    /// Creates a handle in the current context (bind the GPU's context first).
    pub fn new(lib: &'a Cublas) -> Result<Handle<'a>, CublasError> {
        let mut raw: cublasHandle_t = std::ptr::null_mut();
        // SAFETY: out-parameter; a context is current on this thread (the caller's contract).
        check("cublasCreate_v2", unsafe { (lib.create)(&mut raw) })?;
        Ok(Handle { lib, raw })
    }

    /// cuBLAS's version, e.g. 130000.
    pub fn version(&self) -> Option<i32> {
        let f = self.lib.get_version?;
        let mut v = 0;
        // SAFETY: live handle; out-parameter.
        let s = unsafe { f(self.raw, &mut v) };
        (s == cublasStatus_t::CUBLAS_STATUS_SUCCESS).then_some(v)
    }

    /// Enqueues later calls on `stream` (a driver CUstream of the handle's context).
    pub fn set_stream(&self, stream: cudarc::driver::sys::CUstream) -> Result<(), CublasError> {
        // SAFETY: live handle; the stream belongs to the handle's context. CUstream and
        // cudaStream_t are the same opaque pointer.
        check("cublasSetStream_v2", unsafe {
            (self.lib.set_stream)(self.raw, stream as cudaStream_t)
        })
    }

    /// C = A·B for d×d column-major matrices at device addresses `a`, `b`, `c`: bf16 inputs and
    /// output with fp32 accumulate, or plain fp32 (CUBLAS_COMPUTE_32F, no TF32).
    pub fn gemm_square(
        &self,
        d: i32,
        bf16: bool,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<(), CublasError> {
        let alpha = 1.0f32;
        let beta = 0.0f32;
        let t = if bf16 {
            cudaDataType_t::CUDA_R_16BF
        } else {
            cudaDataType_t::CUDA_R_32F
        };
        // SAFETY: live handle; the three buffers hold d×d elements of `t` each (the caller
        // allocates them); alpha/beta are host f32 as CUBLAS_COMPUTE_32F requires.
        check("cublasGemmEx", unsafe {
            (self.lib.gemm_ex)(
                self.raw,
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                d,
                d,
                d,
                (&alpha as *const f32).cast(),
                a as *const c_void,
                t,
                d,
                b as *const c_void,
                t,
                d,
                (&beta as *const f32).cast(),
                c as *mut c_void,
                t,
                d,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
            )
        })
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        // SAFETY: created by cublasCreate_v2 and destroyed once; errors cannot be acted on here.
        unsafe {
            (self.lib.destroy)(self.raw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_covers_the_toolkit_and_wheels() {
        let env = SearchEnv {
            site_packages: vec![PathBuf::from("/site")],
            ..Default::default()
        };
        let named = candidates(&env, Some(OsStr::new("/x/libcublas.so.13")));
        assert_eq!(
            named,
            vec![PathBuf::from("/x/libcublas.so.13")],
            "the named one alone"
        );
        let c: Vec<String> = candidates(&env, None)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(c[0], "libcublas.so.13");
        assert!(c.contains(&"/usr/local/cuda/lib64/libcublas.so.13".to_string()));
        assert!(c.contains(&"/site/nvidia/cublas/lib/libcublas.so.13".to_string()));
    }

    #[test]
    fn missing_cublas_is_an_error_not_a_panic() {
        if let Err(e) = Cublas::load() {
            let text = e.to_string();
            assert!(text.contains("libcublas.so.13"), "{text}");
            assert!(text.contains(ENV_LIB));
        }
    }
}
