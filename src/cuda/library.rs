//! Finding and opening a run-time library (NVRTC, cuBLAS, NCCL) that may lie off the loader's
//! path: the CUDA toolkit's folders, `$CUDA_HOME`, versioned toolkits, NVIDIA's Python wheels.
//! One search for every library: cudarc's own loaders panic when a library is missing, and look
//! in fewer places.

use std::ffi::{CStr, OsStr, OsString, c_void};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_LAZY, RTLD_LOCAL, RTLD_NOW};

/// Where to look, as read from the environment; [`library_candidates`] turns it into paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchEnv {
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
            cuda_home: std::env::var_os("CUDA_HOME")
                .or_else(|| std::env::var_os("CUDA_PATH"))
                .filter(|v| !v.is_empty()),
            versioned_toolkits: versioned,
            site_packages: Vec::new(),
        }
    }
}

/// The value of environment variable `name` when set and not empty (a library's override, such
/// as `SCALESCOPE_NVRTC_LIB`).
pub fn env_path(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// Paths to try for a CUDA library called one of `names`: `explicit` alone where the user named
/// one (a file, or a folder holding one of them: a mistyped path is then the error, never a run
/// on another copy found elsewhere); else, in order, the bare names (the loader's own search:
/// LD_LIBRARY_PATH, ld.so.cache), the CUDA toolkit's folders, `$CUDA_HOME`, versioned
/// toolkits, and the given folders of Python's site-packages (NVIDIA's wheels). No duplicates.
pub fn library_candidates(
    names: &[&str],
    explicit: Option<&OsStr>,
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
        return out;
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
    match crate::process::wait_within(&mut child, limit) {
        Some(status) if status.success() => {
            let mut s = String::new();
            use std::io::Read;
            child.stdout.take()?.read_to_string(&mut s).ok()?;
            Some(s)
        }
        Some(_) => None,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
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

/// A library could not be loaded from any candidate.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "{library} not found (searched: {}); set {env_var} to {file}'s path{}",
    searched.join(", "),
    if errors.is_empty() { String::new() } else { format!("; failed to load: {}", errors.join("; ")) }
)]
pub struct NotFound {
    /// The library's name in messages, e.g. `NVRTC`.
    pub library: &'static str,
    /// The environment variable that names it, e.g. `SCALESCOPE_NVRTC_LIB`.
    pub env_var: &'static str,
    /// Its usual file name, e.g. `libnvrtc.so`.
    pub file: &'static str,
    /// Every path tried.
    pub searched: Vec<String>,
    /// Candidates that exist but failed to load, with why.
    pub errors: Vec<String>,
}

/// Opens a library locally (`RTLD_LAZY | RTLD_LOCAL`, as `dlopen` is usually called): a path, or
/// a bare name for the loader's search.
pub fn open_local(path: &Path) -> Result<Library, String> {
    // SAFETY: loading a library runs its initialisers, which for the vendor libraries opened
    // here (NVRTC, cuBLAS, NCCL) have no preconditions.
    unsafe { Library::open(Some(path), RTLD_LAZY | RTLD_LOCAL) }.map_err(|e| e.to_string())
}

/// Opens a library globally and at once (`RTLD_NOW | RTLD_GLOBAL`): a companion that another
/// library dlopens by bare name (libnvrtc-builtins, libcublasLt), loaded first from the folder
/// it sits in so that the later dlopen finds the loaded copy by its soname.
pub fn open_global(path: &Path) -> Result<Library, String> {
    // SAFETY: as in `open_local`.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.map_err(|e| e.to_string())
}

/// The function `name` of `lib` as a pointer of type `F`; the error names the symbol.
///
/// # Safety
/// `F` must be the C signature the library declares for `name`, and the pointer must not be
/// used after `lib` is unloaded.
pub unsafe fn symbol<F: Copy>(lib: &Library, name: &str) -> Result<F, String> {
    // SAFETY: the caller's contract above.
    unsafe { lib.get::<F>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{name}: {e}"))
}

/// The file a loaded symbol lives in (dladdr), to report it and find its neighbours.
pub(crate) fn loaded_path(sym: *const c_void) -> Option<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_packages_lines() {
        assert_eq!(
            parse_site_packages("/a/site-packages\n\n /b \n"),
            vec![PathBuf::from("/a/site-packages"), PathBuf::from("/b")]
        );
    }

    #[test]
    fn not_found_lists_the_search_and_the_override() {
        let nf = NotFound {
            library: "NVRTC",
            env_var: "SCALESCOPE_NVRTC_LIB",
            file: "libnvrtc.so",
            searched: vec!["a".into(), "b".into()],
            errors: vec![],
        };
        assert_eq!(
            nf.to_string(),
            "NVRTC not found (searched: a, b); set SCALESCOPE_NVRTC_LIB to libnvrtc.so's path"
        );
    }

    #[test]
    fn missing_library_is_an_error_not_a_panic() {
        assert!(
            !open_local(Path::new("/nonexistent/libx.so.1"))
                .unwrap_err()
                .is_empty()
        );
    }
}
