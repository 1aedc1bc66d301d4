//! NVRTC, loaded by us from a resolved path (cudarc's loader panics when the library is missing,
//! and NVRTC is often installed off the loader's path: /usr/local/cuda/targets/…, or a Python
//! wheel's `nvidia/cu13/lib`). Only the handful of functions needed to turn CUDA C into PTX.

use std::ffi::{CStr, CString, OsStr, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use libloading::os::unix::Library;

use super::library::{
    NotFound, SearchEnv, env_path, library_candidates, loaded_path, open_global, open_local,
    search_library, symbol,
};

/// Environment variable naming the NVRTC library (a file, or a folder holding it).
pub const ENV_LIB: &str = "SCALESCOPE_NVRTC_LIB";

/// Library names tried in each place, newest first.
pub const LIB_NAMES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

type Program = *mut c_void;
type FnVersion = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
type FnCreate = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type FnCompile = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int;
type FnSize = unsafe extern "C" fn(Program, *mut usize) -> c_int;
type FnGet = unsafe extern "C" fn(Program, *mut c_char) -> c_int;
type FnDestroy = unsafe extern "C" fn(*mut Program) -> c_int;
type FnErrorString = unsafe extern "C" fn(c_int) -> *const c_char;

/// Every path to try: `explicit` (`$SCALESCOPE_NVRTC_LIB`) alone where set; else, in order, the
/// bare names (the loader's own search: LD_LIBRARY_PATH, ld.so.cache); the CUDA toolkit's
/// folders; `$CUDA_HOME`; versioned toolkits; NVIDIA's Python wheels (`nvidia/cu13/lib`,
/// `nvidia/cuda_nvrtc/lib`).
pub fn candidates(env: &SearchEnv, explicit: Option<&OsStr>) -> Vec<PathBuf> {
    library_candidates(
        &LIB_NAMES,
        explicit,
        env,
        &["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"],
    )
}

/// A loaded NVRTC.
pub struct Nvrtc {
    path: String,
    version: (i32, i32),
    create: FnCreate,
    compile: FnCompile,
    log_size: FnSize,
    log: FnGet,
    ptx_size: FnSize,
    ptx: FnGet,
    destroy: FnDestroy,
    error_string: Option<FnErrorString>,
    // Kept loaded for as long as the function pointers above are used.
    _builtins: Vec<Library>,
    _lib: Library,
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Nvrtc {
    /// Searches [`candidates`] (then, if none loads, Python's site-packages) and loads the first
    /// NVRTC that has every function needed.
    pub fn load() -> Result<Nvrtc, NotFound> {
        let explicit = env_path(ENV_LIB);
        search_library(|env| candidates(env, explicit.as_deref()), Self::open).map_err(
            |(searched, errors)| NotFound {
                library: "NVRTC",
                env_var: ENV_LIB,
                file: "libnvrtc.so",
                searched,
                errors,
            },
        )
    }

    /// Loads NVRTC from `path` (a file, or a bare name for the loader's search).
    pub fn open(path: &Path) -> Result<Nvrtc, String> {
        let lib = open_local(path)?;
        // SAFETY (every `symbol` call): each is NVRTC's C function of this exact signature
        // (nvrtc.h); the pointers stay valid while `lib` is loaded, which `Nvrtc` guarantees by
        // owning it.
        let version_fn: FnVersion = unsafe { symbol(&lib, "nvrtcVersion") }?;
        let create: FnCreate = unsafe { symbol(&lib, "nvrtcCreateProgram") }?;
        let compile: FnCompile = unsafe { symbol(&lib, "nvrtcCompileProgram") }?;
        let log_size: FnSize = unsafe { symbol(&lib, "nvrtcGetProgramLogSize") }?;
        let log: FnGet = unsafe { symbol(&lib, "nvrtcGetProgramLog") }?;
        let ptx_size: FnSize = unsafe { symbol(&lib, "nvrtcGetPTXSize") }?;
        let ptx: FnGet = unsafe { symbol(&lib, "nvrtcGetPTX") }?;
        let destroy: FnDestroy = unsafe { symbol(&lib, "nvrtcDestroyProgram") }?;
        // Optional, only used for messages.
        let error_string: Option<FnErrorString> =
            unsafe { symbol(&lib, "nvrtcGetErrorString") }.ok();
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two out-parameters.
        let r = unsafe { version_fn(&mut major, &mut minor) };
        if r != 0 {
            return Err(format!("nvrtcVersion failed ({r})"));
        }
        let real = loaded_path(version_fn as *const c_void).unwrap_or_else(|| path.to_path_buf());
        // NVRTC dlopens libnvrtc-builtins.so.MAJOR.MINOR by bare name at compile time, which fails
        // when its folder is not on the loader's path. Loading it first, globally, from the same
        // folder lets that dlopen find the already-loaded copy by its soname.
        let mut builtins = Vec::new();
        if let Some(dir) = real.parent() {
            let exact = dir.join(format!("libnvrtc-builtins.so.{major}.{minor}"));
            if exact.exists()
                && let Ok(b) = open_global(&exact)
            {
                builtins.push(b);
            }
        }
        Ok(Nvrtc {
            path: real.display().to_string(),
            version: (major, minor),
            create,
            compile,
            log_size,
            log,
            ptx_size,
            ptx,
            destroy,
            error_string,
            _builtins: builtins,
            _lib: lib,
        })
    }

    /// The file loaded.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// (major, minor), e.g. (13, 0).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    fn error(&self, call: &str, code: c_int) -> String {
        let name = self.error_string.and_then(|f| {
            // SAFETY: nvrtcGetErrorString returns a static string for any code (or null).
            let p = unsafe { f(code) };
            // SAFETY: non-null results are NUL-terminated static strings.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
        format!(
            "{call}: {} ({code})",
            name.unwrap_or_else(|| "NVRTC error".into())
        )
    }

    /// Compiles `source` to PTX for `compute_{major}{minor}` with C++17 and the preprocessor
    /// `defines` (`NAME=VALUE` each, passed as `-DNAME=VALUE`). `Err` carries NVRTC's log.
    pub fn compile_ptx(
        &self,
        source: &str,
        name: &str,
        cc: (i32, i32),
        defines: &[String],
    ) -> Result<CString, String> {
        let src = CString::new(source).map_err(|_| "kernel source contains NUL".to_string())?;
        let cname = CString::new(name).map_err(|_| "kernel name contains NUL".to_string())?;
        let mut prog: Program = std::ptr::null_mut();
        // SAFETY: out-parameter; both strings are NUL-terminated; no headers.
        let r = unsafe {
            (self.create)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(self.error("nvrtcCreateProgram", r));
        }
        struct Guard<'a>(&'a Nvrtc, Program);
        impl Drop for Guard<'_> {
            fn drop(&mut self) {
                // SAFETY: the program was created above and is destroyed once.
                unsafe { (self.0.destroy)(&mut self.1) };
            }
        }
        let guard = Guard(self, prog);
        let opts = [
            format!("--gpu-architecture=compute_{}{}", cc.0, cc.1),
            "-std=c++17".to_string(),
        ]
        .into_iter()
        .chain(defines.iter().map(|d| format!("-D{d}")))
        .map(|o| CString::new(o).map_err(|e| e.to_string()))
        .collect::<Result<Vec<CString>, String>>()?;
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: the program is live; `ptrs` holds `opts.len()` NUL-terminated strings.
        let r = unsafe { (self.compile)(guard.1, ptrs.len() as c_int, ptrs.as_ptr()) };
        if r != 0 {
            let log = self
                .read(guard.1, self.log_size, self.log)
                .unwrap_or_default();
            let log = String::from_utf8_lossy(&log)
                .trim_end_matches('\0')
                .trim()
                .to_string();
            return Err(format!(
                "{} compiling for compute_{}{}: {log}",
                self.error("nvrtcCompileProgram", r),
                cc.0,
                cc.1
            ));
        }
        let mut ptx = self.read(guard.1, self.ptx_size, self.ptx)?;
        if let Some(nul) = ptx.iter().position(|&b| b == 0) {
            ptx.truncate(nul);
        }
        CString::new(ptx).map_err(|_| "PTX contains NUL".to_string())
    }

    fn read(&self, prog: Program, size: FnSize, get: FnGet) -> Result<Vec<u8>, String> {
        let mut n = 0usize;
        // SAFETY: the program is live; out-parameter.
        let r = unsafe { size(prog, &mut n) };
        if r != 0 {
            return Err(self.error("nvrtcGet…Size", r));
        }
        let mut buf = vec![0u8; n.max(1)];
        // SAFETY: the buffer holds the `n` bytes NVRTC said it will write.
        let r = unsafe { get(prog, buf.as_mut_ptr().cast::<c_char>()) };
        if r != 0 {
            return Err(self.error("nvrtcGet…", r));
        }
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_order_is_the_named_one_alone_else_loader_then_toolkit_then_wheels() {
        let env = SearchEnv {
            cuda_home: Some("/opt/cuda".into()),
            versioned_toolkits: vec!["/usr/local/cuda-13.0".into()],
            site_packages: vec!["/venv/lib/python3.12/site-packages".into()],
        };
        // A named library is the only candidate: a mistyped path is the error.
        let named = candidates(&env, Some(OsStr::new("/opt/my/libnvrtc.so.13.0")));
        assert_eq!(named, vec![PathBuf::from("/opt/my/libnvrtc.so.13.0")]);
        let c: Vec<String> = candidates(&env, None)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let pos = |s: &str| {
            c.iter()
                .position(|x| x == s)
                .unwrap_or_else(|| panic!("{s} missing from {c:?}"))
        };
        assert_eq!(c[0], "libnvrtc.so.13");
        assert_eq!(c[1], "libnvrtc.so.12");
        assert_eq!(c[2], "libnvrtc.so");
        assert!(
            pos("/usr/local/cuda/lib64/libnvrtc.so.13")
                < pos("/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13")
        );
        assert!(
            pos("/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13")
                < pos("/opt/cuda/lib64/libnvrtc.so.13")
        );
        assert!(
            pos("/opt/cuda/lib64/libnvrtc.so.13")
                < pos("/usr/local/cuda-13.0/lib64/libnvrtc.so.13")
        );
        assert!(
            pos("/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13")
                < pos("/venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
        );
        let unique: std::collections::HashSet<_> = c.iter().collect();
        assert_eq!(unique.len(), c.len(), "no duplicates");
    }

    #[test]
    fn env_folder_expands_to_names() {
        let dir = std::env::temp_dir();
        let c = candidates(&SearchEnv::default(), Some(dir.as_os_str()));
        assert_eq!(c[0], dir.join("libnvrtc.so.13"));
        assert_eq!(c[2], dir.join("libnvrtc.so"));
        assert_eq!(c.len(), LIB_NAMES.len(), "the folder's names only");
    }

    #[test]
    fn missing_library_is_an_error_not_a_panic() {
        let err = Nvrtc::open(Path::new("/nonexistent/libnvrtc.so.13")).unwrap_err();
        assert!(!err.is_empty());
    }

    /// Where an NVRTC is present (e.g. SCALESCOPE_NVRTC_LIB pointing at a pip wheel's copy),
    /// source that is not C fails with NVRTC's log instead of panicking. NVRTC needs no GPU.
    #[test]
    fn bad_source_is_an_error_when_nvrtc_is_present() {
        let Ok(nvrtc) = Nvrtc::load() else {
            return;
        };
        assert!(
            nvrtc
                .compile_ptx("this is not C", "bad.cu", (9, 0), &[])
                .is_err()
        );
    }
}
