//! Finding a Python with PyTorch: `--python`, `SCALESCOPE_PYTHON` or `python3`, each asked
//! for its versions.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::FrameworkError;
use super::launch::{last_line, wait_output};

/// Environment variable naming the Python to use.
pub const ENV_PYTHON: &str = "SCALESCOPE_PYTHON";

/// What `python -c` prints about its PyTorch.
pub(super) const PROBE: &str = r#"
import json, sys
r = {"python": sys.version.split()[0]}
try:
    import torch
    r["torch"] = torch.__version__
    r["cuda"] = torch.version.cuda
    r["gpus"] = torch.cuda.device_count()
except Exception as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
for m in ("transformers", "torchvision"):
    try:
        r[m] = __import__(m).__version__
    except Exception:
        r[m] = None
print(json.dumps(r))
"#;

/// A Python that has PyTorch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// The interpreter as it was found (a path or `python3`).
    pub path: String,
    pub python: String,
    pub torch: String,
    /// CUDA version PyTorch was built with (`None`: a CPU build).
    pub cuda: Option<String>,
    /// GPUs PyTorch sees.
    pub gpus: usize,
    pub transformers: Option<String>,
    pub torchvision: Option<String>,
}

impl PythonEnv {
    /// e.g. `PyTorch 2.11.0+cu130, transformers 5.17.0 (python3 3.12.3)`.
    pub fn describe(&self) -> String {
        let mut s = format!("PyTorch {}", self.torch);
        if let Some(t) = &self.transformers {
            s.push_str(&format!(", transformers {t}"));
        }
        if let Some(t) = &self.torchvision {
            s.push_str(&format!(", torchvision {t}"));
        }
        format!("{s} ({} {})", self.path, self.python)
    }
}

#[derive(Deserialize)]
pub(super) struct ProbeAnswer {
    python: Option<String>,
    torch: Option<String>,
    cuda: Option<String>,
    gpus: Option<usize>,
    error: Option<String>,
    transformers: Option<String>,
    torchvision: Option<String>,
}

/// Finds a Python with PyTorch: `explicit` (--python), then `SCALESCOPE_PYTHON`, then `python3`
/// on PATH. Each is asked for its versions (within 90 s: importing PyTorch is slow).
pub fn find_python(explicit: Option<&Path>) -> Result<PythonEnv, FrameworkError> {
    let mut tried = Vec::new();
    let mut candidates: Vec<String> = Vec::new();
    if let Some(p) = explicit {
        candidates.push(p.display().to_string());
    } else if let Some(p) = std::env::var_os(ENV_PYTHON).filter(|p| !p.is_empty()) {
        candidates.push(p.to_string_lossy().into_owned());
    } else {
        candidates.push("python3".to_string());
    }
    for c in candidates {
        let out = Command::new(&c)
            .args(["-c", PROBE])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn();
        let child = match out {
            Ok(child) => child,
            Err(e) => {
                tried.push(format!("{c}: {e}"));
                continue;
            }
        };
        let output = wait_output(child, Duration::from_secs(90));
        let Some((ok, stdout, stderr)) = output else {
            return Err(FrameworkError::NoTorch {
                python: c,
                message: "it did not answer within 90 s".into(),
            });
        };
        let answer = stdout
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<ProbeAnswer>(l.trim()).ok());
        let Some(a) = answer else {
            let why = last_line(&stderr).unwrap_or_else(|| {
                if ok {
                    "its answer was not understood".into()
                } else {
                    "it exited with an error".into()
                }
            });
            return Err(FrameworkError::NoTorch {
                python: c,
                message: why,
            });
        };
        return match (a.torch, a.error) {
            (Some(torch), None) => Ok(PythonEnv {
                path: c,
                python: a.python.unwrap_or_default(),
                torch,
                cuda: a.cuda,
                gpus: a.gpus.unwrap_or(0),
                transformers: a.transformers,
                torchvision: a.torchvision,
            }),
            (_, e) => Err(FrameworkError::NoTorch {
                python: c,
                message: e.unwrap_or_else(|| "torch not importable".into()),
            }),
        };
    }
    Err(FrameworkError::NoPython {
        tried: tried.join("; "),
    })
}
