//! NVRTC, loaded by us from a resolved path (cudarc's loader panics when the library is missing,
//! and NVRTC is often installed off the loader's path: /usr/local/cuda/targets/…, or a Python
//! wheel's `nvidia/cu13/lib`). Only the handful of functions needed to turn CUDA C into PTX.

use std::ffi::{CStr, CString, OsString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_LAZY, RTLD_LOCAL, RTLD_NOW};

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

/// Where to look, as read from the environment; [`candidates`] turns it into paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchEnv {
    /// `$SCALESCOPE_NVRTC_LIB`.
    pub env_lib: Option<OsString>,
    /// `$CUDA_HOME` (or `$CUDA_PATH`).
    pub cuda_home: Option<OsString>,
    /// Versioned toolkits such as /usr/local/cuda-13.0, newest first.
    pub versioned_toolkits: Vec<PathBuf>,
    /// Python site-packages folders (searched for NVIDIA's wheels).
    pub site_packages: Vec<PathBuf>,
}

impl SearchEnv {
    /// Reads the environment and /usr/local; site-packages are left empty (see
    /// [`python_site_packages`], which runs Python and is only worth it when all else fails).
    pub fn from_env() -> SearchEnv {
        let mut versioned: Vec<PathBuf> = std::fs::read_dir("/usr/local")
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("cuda-"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        versioned.sort();
        versioned.reverse();
        SearchEnv {
            env_lib: std::env::var_os(ENV_LIB).filter(|v| !v.is_empty()),
            cuda_home: std::env::var_os("CUDA_HOME")
                .or_else(|| std::env::var_os("CUDA_PATH"))
                .filter(|v| !v.is_empty()),
            versioned_toolkits: versioned,
            site_packages: Vec::new(),
        }
    }
}

/// Every path to try, in order: `$SCALESCOPE_NVRTC_LIB`; the bare names (the loader's own
/// search: LD_LIBRARY_PATH, ld.so.cache); the CUDA toolkit's folders; `$CUDA_HOME`; versioned
/// toolkits; NVIDIA's Python wheels (`nvidia/cu13/lib`, `nvidia/cuda_nvrtc/lib`).
pub fn candidates(env: &SearchEnv) -> Vec<PathBuf> {
    library_candidates(
        &LIB_NAMES,
        env.env_lib.as_deref(),
        env,
        &["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"],
    )
}

/// Paths to try for a CUDA library called one of `names`, in order: `explicit` (a file, or a
/// folder holding one of them); the bare names (the loader's own search: LD_LIBRARY_PATH,
/// ld.so.cache); the CUDA toolkit's folders; `$CUDA_HOME`; versioned toolkits; the given
/// folders of Python's site-packages (NVIDIA's wheels). No duplicates.
pub fn library_candidates(
    names: &[&str],
    explicit: Option<&std::ffi::OsStr>,
    env: &SearchEnv,
    wheel_dirs: &[&str],
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let in_dir = |dir: &Path, out: &mut Vec<PathBuf>| {
        for n in names {
            out.push(dir.join(n));
        }
    };
    if let Some(v) = explicit {
        let p = PathBuf::from(v);
        if p.is_dir() {
            in_dir(&p, &mut out);
        } else {
            out.push(p);
        }
    }
    out.extend(names.iter().map(PathBuf::from));
    let mut dirs = vec![
        PathBuf::from("/usr/local/cuda/lib64"),
        PathBuf::from("/usr/local/cuda/targets/x86_64-linux/lib"),
    ];
    if let Some(home) = &env.cuda_home {
        let home = PathBuf::from(home);
        dirs.push(home.join("lib64"));
        dirs.push(home.join("targets/x86_64-linux/lib"));
    }
    for t in &env.versioned_toolkits {
        dirs.push(t.join("lib64"));
        dirs.push(t.join("targets/x86_64-linux/lib"));
    }
    for sp in &env.site_packages {
        for w in wheel_dirs {
            dirs.push(sp.join(w));
        }
    }
    for d in &dirs {
        in_dir(d, &mut out);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// Python's site-packages folders (`python3 -c 'import site; …'`, given 5 s), plus
/// `$VIRTUAL_ENV`'s. Empty when there is no Python.
pub fn python_site_packages() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV")
        && let Ok(rd) = std::fs::read_dir(PathBuf::from(venv).join("lib"))
    {
        out.extend(
            rd.filter_map(Result::ok)
                .map(|e| e.path().join("site-packages"))
                .filter(|p| p.is_dir()),
        );
    }
    let script =
        "import site\nfor p in site.getsitepackages() + [site.getusersitepackages()]: print(p)";
    if let Some(text) = run_with_timeout("python3", &["-c", script], Duration::from_secs(5)) {
        out.extend(parse_site_packages(&text));
    }
    out
}

/// One folder per non-empty line.
pub fn parse_site_packages(text: &str) -> Vec<PathBuf> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Runs a command, returning its standard output when it exits 0 within `limit`; kills it
/// otherwise.
fn run_with_timeout(program: &str, args: &[&str], limit: Duration) -> Option<String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    return None;
                }
                let mut s = String::new();
                use std::io::Read;
                child.stdout.take()?.read_to_string(&mut s).ok()?;
                return Some(s);
            }
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
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

/// Finds a run-time library: every path of `candidates`, first without and then with Python's
/// site-packages (python3 is asked only when nothing else loads), until `open` accepts one.
/// `Err((searched, errors))`: every path tried, and why those that exist failed to load.
pub fn search_library<T>(
    candidates: impl Fn(&SearchEnv) -> Vec<PathBuf>,
    open: impl Fn(&Path) -> Result<T, String>,
) -> Result<T, (Vec<String>, Vec<String>)> {
    let mut env = SearchEnv::from_env();
    let mut searched: Vec<String> = Vec::new();
    let mut errors = Vec::new();
    for pass in 0..2 {
        if pass == 1 {
            env.site_packages = python_site_packages();
        }
        for path in candidates(&env) {
            let shown = path.display().to_string();
            if searched.contains(&shown) {
                continue;
            }
            searched.push(shown.clone());
            // An absolute path that is not there is not worth a dlopen (and its error text).
            if path.is_absolute() && !path.exists() {
                continue;
            }
            match open(&path) {
                Ok(lib) => return Ok(lib),
                // A bare name the loader does not know is just "not found", not an error.
                Err(e) if path.is_absolute() => errors.push(format!("{shown}: {e}")),
                Err(_) => {}
            }
        }
    }
    Err((searched, errors))
}

/// NVRTC could not be loaded from any candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct NotFound {
    /// Every path tried.
    pub searched: Vec<String>,
    /// Candidates that exist but failed to load, with why.
    pub errors: Vec<String>,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "NVRTC not found (searched: {}); set {ENV_LIB} to libnvrtc.so's path",
            self.searched.join(", ")
        )?;
        if !self.errors.is_empty() {
            write!(f, "; failed to load: {}", self.errors.join("; "))?;
        }
        Ok(())
    }
}

impl Nvrtc {
    /// Searches [`candidates`] (then, if none loads, Python's site-packages) and loads the first
    /// NVRTC that has every function needed.
    pub fn load() -> Result<Nvrtc, NotFound> {
        search_library(candidates, Self::open)
            .map_err(|(searched, errors)| NotFound { searched, errors })
    }

    /// Loads NVRTC from `path` (a file, or a bare name for the loader's search).
    pub fn open(path: &Path) -> Result<Nvrtc, String> {
        // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
        let lib = unsafe { Library::open(Some(path), RTLD_LAZY | RTLD_LOCAL) }
            .map_err(|e| e.to_string())?;
        macro_rules! sym {
            ($t:ty, $name:literal) => {{
                // SAFETY: the symbol is NVRTC's C function of this exact signature (nvrtc.h); the
                // pointer stays valid while `lib` is loaded, which `Nvrtc` guarantees.
                let s = unsafe { lib.get::<$t>(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{}: {e}", $name))?;
                *s
            }};
        }
        let version_fn: FnVersion = sym!(FnVersion, "nvrtcVersion");
        let create: FnCreate = sym!(FnCreate, "nvrtcCreateProgram");
        let compile: FnCompile = sym!(FnCompile, "nvrtcCompileProgram");
        let log_size: FnSize = sym!(FnSize, "nvrtcGetProgramLogSize");
        let log: FnGet = sym!(FnGet, "nvrtcGetProgramLog");
        let ptx_size: FnSize = sym!(FnSize, "nvrtcGetPTXSize");
        let ptx: FnGet = sym!(FnGet, "nvrtcGetPTX");
        let destroy: FnDestroy = sym!(FnDestroy, "nvrtcDestroyProgram");
        // SAFETY: as in `sym!`; optional, only used for messages.
        let error_string = unsafe { lib.get::<FnErrorString>(b"nvrtcGetErrorString\0") }
            .ok()
            .map(|s| *s);
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
            if exact.exists() {
                // SAFETY: loading a library runs its initialisers, which have no preconditions.
                if let Ok(b) = unsafe { Library::open(Some(&exact), RTLD_NOW | RTLD_GLOBAL) } {
                    builtins.push(b);
                }
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

    /// Compiles `source` to PTX for `compute_{major}{minor}` with C++17. `Err` carries NVRTC's
    /// log.
    pub fn compile_ptx(&self, source: &str, name: &str, cc: (i32, i32)) -> Result<CString, String> {
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
            CString::new(format!("--gpu-architecture=compute_{}{}", cc.0, cc.1))
                .map_err(|e| e.to_string())?,
            CString::new("-std=c++17").map_err(|e| e.to_string())?,
            CString::new(format!("-DSCALESCOPE_UNROLL={}", copy_unroll()))
                .map_err(|e| e.to_string())?,
            CString::new(format!(
                "-DSCALESCOPE_COPY_VARIANT={}",
                tuning_knob("SCALESCOPE_COPY_VARIANT", 5)
            ))
            .map_err(|e| e.to_string())?,
            CString::new(format!(
                "-DSCALESCOPE_COPY_LAYOUT={}",
                tuning_knob("SCALESCOPE_COPY_LAYOUT", 1)
            ))
            .map_err(|e| e.to_string())?,
        ];
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

/// The file a loaded symbol lives in (dladdr), to report it and find its neighbours.
fn loaded_path(sym: *const c_void) -> Option<PathBuf> {
    // SAFETY: Dl_info is plain data; all-zero is a valid initial value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`.
    if unsafe { libc::dladdr(sym, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader, valid while loaded.
    let name = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    let p = PathBuf::from(name);
    std::fs::canonicalize(&p).ok().or(Some(p))
}

/// Loads in flight per thread in the copy kernel: `SCALESCOPE_COPY_UNROLL` (1–16) or 8.
pub fn copy_unroll() -> u32 {
    std::env::var("SCALESCOPE_COPY_UNROLL")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|v| (1..=16).contains(v))
        .unwrap_or(8)
}

/// A copy-kernel tuning experiment chosen by environment variable `name` (0..=max), else 0:
/// see SCALESCOPE_COPY_VARIANT and SCALESCOPE_COPY_LAYOUT in bench.cu.
fn tuning_knob(name: &str, max: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|v| *v <= max)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_order_is_env_then_loader_then_toolkit_then_wheels() {
        let env = SearchEnv {
            env_lib: Some("/opt/my/libnvrtc.so.13.0".into()),
            cuda_home: Some("/opt/cuda".into()),
            versioned_toolkits: vec!["/usr/local/cuda-13.0".into()],
            site_packages: vec!["/venv/lib/python3.12/site-packages".into()],
        };
        let c: Vec<String> = candidates(&env)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let pos = |s: &str| {
            c.iter()
                .position(|x| x == s)
                .unwrap_or_else(|| panic!("{s} missing from {c:?}"))
        };
        assert_eq!(c[0], "/opt/my/libnvrtc.so.13.0");
        assert_eq!(c[1], "libnvrtc.so.13");
        assert_eq!(c[2], "libnvrtc.so.12");
        assert_eq!(c[3], "libnvrtc.so");
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
        let env = SearchEnv {
            env_lib: Some(dir.clone().into_os_string()),
            ..Default::default()
        };
        let c = candidates(&env);
        assert_eq!(c[0], dir.join("libnvrtc.so.13"));
        assert_eq!(c[2], dir.join("libnvrtc.so"));
    }

    #[test]
    fn site_packages_lines() {
        assert_eq!(
            parse_site_packages("/a/site-packages\n\n /b \n"),
            vec![PathBuf::from("/a/site-packages"), PathBuf::from("/b")]
        );
    }

    #[test]
    fn missing_library_is_an_error_not_a_panic() {
        let err = Nvrtc::open(Path::new("/nonexistent/libnvrtc.so.13")).unwrap_err();
        assert!(!err.is_empty());
        let nf = NotFound {
            searched: vec!["a".into(), "b".into()],
            errors: vec![],
        };
        assert!(nf.to_string().contains("searched: a, b"));
    }

    /// Compiles the real kernels where an NVRTC is present (e.g. SCALESCOPE_NVRTC_LIB pointing
    /// at a pip wheel's copy); passes trivially where none is. NVRTC needs no GPU.
    #[test]
    fn kernels_compile_when_nvrtc_is_present() {
        let Ok(nvrtc) = Nvrtc::load() else {
            return;
        };
        let ptx = nvrtc
            .compile_ptx(super::super::kernels::SOURCE, "bench.cu", (9, 0))
            .unwrap_or_else(|e| panic!("{e}"));
        let text = ptx.to_string_lossy();
        for k in super::super::kernels::NAMES {
            assert!(text.contains(&format!(".entry {k}(")), "{k} missing");
        }
        assert!(
            text.contains("ld.global.cv.u64"),
            "the chase must load volatile"
        );
        assert!(
            nvrtc
                .compile_ptx("this is not C", "bad.cu", (9, 0))
                .is_err()
        );
    }
}
