//! The workload catalog: one TOML file per workload in `assets/workloads/`, embedded in the
//! binary, plus the user's own files. Every number carries its source in the file's comments and
//! its `sources` list; [`parse`] rejects files with unknown or missing fields, naming the file,
//! line and field.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::Dtype;

/// The catalog files, by file name. Add new workloads here.
const FILES: &[(&str, &str)] = &[
    (
        "resnet50.toml",
        include_str!("../../assets/workloads/resnet50.toml"),
    ),
    (
        "vgg16.toml",
        include_str!("../../assets/workloads/vgg16.toml"),
    ),
    (
        "alexnet.toml",
        include_str!("../../assets/workloads/alexnet.toml"),
    ),
    (
        "bert-large.toml",
        include_str!("../../assets/workloads/bert-large.toml"),
    ),
    (
        "gpt2-xl.toml",
        include_str!("../../assets/workloads/gpt2-xl.toml"),
    ),
    (
        "llama2-7b.toml",
        include_str!("../../assets/workloads/llama2-7b.toml"),
    ),
    (
        "genesis-go2.toml",
        include_str!("../../assets/workloads/genesis-go2.toml"),
    ),
    (
        "carla-multisensor.toml",
        include_str!("../../assets/workloads/carla-multisensor.toml"),
    ),
    (
        "resnet50-trt-fp16.toml",
        include_str!("../../assets/workloads/resnet50-trt-fp16.toml"),
    ),
    (
        "remote-offload-llm.toml",
        include_str!("../../assets/workloads/remote-offload-llm.toml"),
    ),
];

/// How a workload uses several GPUs; each pattern has its own model terms (docs/SCALING.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Data-parallel training, gradients all-reduced by ring in buckets overlapping backward
    /// (PyTorch DDP; also Genesis under torchrun).
    DdpRing,
    /// Data-parallel training with Caffe's tree: pairwise exchange up a tree, update at the
    /// root, broadcast down.
    TreeReduce,
    /// Independent inference replicas, one engine per GPU, inputs copied from the host.
    InferenceReplicas,
    /// Batched simulation (thousands of environments per GPU) with a policy-gradient sync.
    SimPolicy,
    /// A primary steps physics and sends the scene to every secondary each frame; each
    /// secondary renders sensors on its GPU and sends them to the client (CARLA).
    PrimarySecondary,
    /// Clients send work over the network to one GPU server and get results back.
    RemoteOffload,
}

impl Pattern {
    /// Every pattern, in display order.
    pub const ALL: [Pattern; 6] = [
        Self::DdpRing,
        Self::TreeReduce,
        Self::InferenceReplicas,
        Self::SimPolicy,
        Self::PrimarySecondary,
        Self::RemoteOffload,
    ];

    /// The id used in TOML, CSV and JSON.
    pub fn id(&self) -> &'static str {
        match self {
            Self::DdpRing => "ddp_ring",
            Self::TreeReduce => "tree_reduce",
            Self::InferenceReplicas => "inference_replicas",
            Self::SimPolicy => "sim_policy",
            Self::PrimarySecondary => "primary_secondary",
            Self::RemoteOffload => "remote_offload",
        }
    }

    /// A short description for the GUI.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::DdpRing => "data-parallel training, ring all-reduce in buckets (DDP)",
            Self::TreeReduce => "data-parallel training, tree reduction (Caffe)",
            Self::InferenceReplicas => "inference replicas, one engine per GPU (TensorRT)",
            Self::SimPolicy => "batched simulation + policy sync (Genesis)",
            Self::PrimarySecondary => "primary/secondary rendering (CARLA)",
            Self::RemoteOffload => "remote offload to one GPU server",
        }
    }

    /// The value with this id.
    pub fn from_id(id: &str) -> Option<Pattern> {
        Self::ALL.into_iter().find(|p| p.id() == id)
    }

    /// True for the training patterns (a gradient all-reduce each step).
    pub fn is_training(&self) -> bool {
        matches!(self, Self::DdpRing | Self::TreeReduce | Self::SimPolicy)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// Which matrix-multiply rate the compute runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputeDtype {
    /// bf16 (or fp16) inputs on tensor cores, fp32 accumulate.
    Bf16,
    /// Plain fp32 (no TF32).
    Fp32,
}

impl fmt::Display for ComputeDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Bf16 => "bf16",
            Self::Fp32 => "fp32",
        })
    }
}

/// One workload, as a catalog file or the GUI's form describes it. Units are in the names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Stable id, e.g. `resnet50`.
    pub name: String,
    /// Human-readable title.
    pub title: String,
    pub pattern: Pattern,
    /// Trainable parameters (count).
    pub params: f64,
    /// Gradient element type: f32, bf16 or f16.
    #[serde(with = "dtype_id")]
    pub grad_dtype: Dtype,
    /// Which GEMM rate compute runs at.
    pub compute_dtype: ComputeDtype,
    /// FLOPs per sample: forward + backward for training, forward for inference.
    pub flops_per_sample: f64,
    /// Samples per GPU per step in weak scaling.
    pub per_gpu_batch: f64,
    /// Samples per step over all GPUs in strong scaling.
    pub strong_global_batch: f64,
    /// Gradient bucket size in bytes (DDP's bucket_cap_mb); 0 when there is no gradient.
    pub bucket_bytes: f64,
    /// Fraction of the GPU's dense matrix-multiply rate the compute reaches (0 < u ≤ 1).
    pub utilization: f64,
    /// Fraction of the backward pass that gradient communication can hide under (0 … 1).
    pub overlap: f64,
    /// Host→GPU input bytes per sample (inference replicas, remote offload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_input_bytes: Option<f64>,
    /// Output bytes per sample sent on (sensor data, replies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_output_bytes: Option<f64>,
    /// Bytes the primary sends to every secondary each step (primary/secondary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_bytes: Option<f64>,
    /// The primary's own time per step, ms (physics without a GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_ms: Option<f64>,
    /// The simulation's target frame rate, Hz (CARLA: 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_hz: Option<f64>,
    /// Network (or loopback) bandwidth to clients, GB/s; the topology's NIC when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_gbps: Option<f64>,
    /// Offered load ρ (0 … 1) for the server's queueing wait (remote offload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_load: Option<f64>,
    /// Network round-trip time, ms (remote offload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<f64>,
    /// Simulation steps per policy-gradient sync (sim + policy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_sync: Option<f64>,
    /// Where every number comes from (assumptions say "assumed").
    pub sources: Vec<String>,
}

mod dtype_id {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::model::Dtype;

    pub fn serialize<S: Serializer>(d: &Dtype, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(d.id())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Dtype, D::Error> {
        let s = String::deserialize(d)?;
        match Dtype::from_id(&s) {
            Some(d @ (Dtype::F32 | Dtype::Bf16 | Dtype::F16)) => Ok(d),
            _ => Err(serde::de::Error::custom(format!(
                "unknown gradient dtype {s:?} (known: f32, bf16, f16)"
            ))),
        }
    }
}

/// A workload file that could not be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// The file is not valid TOML, lacks a field, or a value is out of range.
    #[error("{file}:{line}: {field}: {message}")]
    Bad {
        file: String,
        /// 1-based line (of the field where known, else 1).
        line: usize,
        /// The field at fault (`-` when the TOML itself is malformed).
        field: String,
        message: String,
    },
    /// No catalog workload has this name.
    #[error("unknown workload {name:?} (catalog: {known}; or give a .toml file)")]
    Unknown { name: String, known: String },
    /// A file could not be read.
    #[error("cannot read {file}: {message}")]
    Io { file: String, message: String },
}

impl WorkloadError {
    /// True for the user's mistakes (bad file or name), as opposed to the machine's.
    pub fn is_bad_input(&self) -> bool {
        true
    }
}

/// Parses and validates one workload file's text; `file` only labels errors.
pub fn parse(file: &str, text: &str) -> Result<Workload, WorkloadError> {
    let w: Workload = toml::from_str(text).map_err(|e| {
        let message = e.message().trim().to_string();
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        let field = e
            .span()
            .and_then(|s| key_at(text, s.start))
            .or_else(|| missing_field(&message))
            .unwrap_or_else(|| "-".to_string());
        WorkloadError::Bad {
            file: file.to_string(),
            line,
            field,
            message,
        }
    })?;
    validate(&w).map_err(|(field, message)| WorkloadError::Bad {
        file: file.to_string(),
        line: field_line(text, field).unwrap_or(1),
        field: field.to_string(),
        message,
    })?;
    Ok(w)
}

/// Checks ranges and the fields each pattern needs; `Err((field, why))`. Every number has a
/// unit and an accepted range ([`crate::model::validate::Bounds`]), chosen so that the model's
/// figures stay finite and positive for any accepted input.
pub fn validate(w: &Workload) -> Result<(), (&'static str, String)> {
    use crate::model::validate::Bounds;
    // The accepted ranges, with their units.
    const PARAMS: Bounds = Bounds::closed(0.0, 1e14, "parameters");
    const FLOPS: Bounds = Bounds::closed(1.0, 1e20, "FLOPs");
    const PER_GPU_BATCH: Bounds = Bounds::closed(1.0, 1e9, "samples");
    const GLOBAL_BATCH: Bounds = Bounds::closed(1.0, 1e12, "samples");
    const BUCKET: Bounds = Bounds::closed(0.0, 1e13, "bytes");
    const BUCKET_NEEDED: Bounds = Bounds::closed(1.0, 1e13, "bytes");
    const UTILIZATION: Bounds = Bounds::closed(0.001, 1.0, "");
    const OVERLAP: Bounds = Bounds::closed(0.0, 1.0, "");
    const SAMPLE_BYTES: Bounds = Bounds::closed(0.0, 1e12, "bytes");
    const SAMPLE_BYTES_NEEDED: Bounds = Bounds::above(0.0, 1e12, "bytes");
    const PRIMARY_MS: Bounds = Bounds::closed(0.0, 3.6e6, "ms");
    const FRAME_HZ: Bounds = Bounds::above(0.0, 1e6, "Hz");
    const LINK_GBPS: Bounds = Bounds::closed(0.001, 1e5, "GB/s");
    const OFFERED_LOAD: Bounds = Bounds::closed(0.0, 0.99, "");
    const RTT_MS: Bounds = Bounds::closed(0.0, 1e5, "ms");
    const STEPS_PER_SYNC: Bounds = Bounds::closed(1.0, 1e9, "steps");

    let check =
        |field: &'static str, v: f64, b: Bounds| b.check(v).map(|_| ()).map_err(|m| (field, m));
    let optional = |field: &'static str, v: Option<f64>, b: Bounds| match v {
        Some(v) => check(field, v, b),
        None => Ok(()),
    };
    if w.name.trim().is_empty() || w.name.contains([',', '"', '\n']) {
        return Err((
            "name",
            "must be a non-empty id without commas or quotes".into(),
        ));
    }
    check("params", w.params, PARAMS)?;
    check("flops_per_sample", w.flops_per_sample, FLOPS)?;
    check("per_gpu_batch", w.per_gpu_batch, PER_GPU_BATCH)?;
    check("strong_global_batch", w.strong_global_batch, GLOBAL_BATCH)?;
    check("bucket_bytes", w.bucket_bytes, BUCKET)?;
    check("utilization", w.utilization, UTILIZATION)?;
    check("overlap", w.overlap, OVERLAP)?;
    optional("sample_input_bytes", w.sample_input_bytes, SAMPLE_BYTES)?;
    optional("sample_output_bytes", w.sample_output_bytes, SAMPLE_BYTES)?;
    optional("sync_bytes", w.sync_bytes, SAMPLE_BYTES)?;
    optional("primary_ms", w.primary_ms, PRIMARY_MS)?;
    optional("frame_hz", w.frame_hz, FRAME_HZ)?;
    optional("link_gbps", w.link_gbps, LINK_GBPS)?;
    optional("offered_load", w.offered_load, OFFERED_LOAD)?;
    optional("rtt_ms", w.rtt_ms, RTT_MS)?;
    optional("steps_per_sync", w.steps_per_sync, STEPS_PER_SYNC)?;
    if w.sources.is_empty() {
        return Err((
            "sources",
            "list where every number comes from (write \"assumed: …\" for guesses)".into(),
        ));
    }
    let need = |field: &'static str, v: Option<f64>, b: Bounds| match v {
        Some(v) => check(field, v, b),
        None => Err((field, format!("the {} pattern needs it", w.pattern))),
    };
    let positive_params = || {
        if w.params > 0.0 {
            Ok(())
        } else {
            Err((
                "params",
                format!(
                    "the {} pattern needs a gradient: above 0, found {}",
                    w.pattern, w.params
                ),
            ))
        }
    };
    match w.pattern {
        Pattern::DdpRing | Pattern::TreeReduce | Pattern::SimPolicy => {
            positive_params()?;
            check("bucket_bytes", w.bucket_bytes, BUCKET_NEEDED)?;
        }
        Pattern::InferenceReplicas => {
            need(
                "sample_input_bytes",
                w.sample_input_bytes,
                SAMPLE_BYTES_NEEDED,
            )?;
        }
        Pattern::PrimarySecondary => {
            need(
                "sample_output_bytes",
                w.sample_output_bytes,
                SAMPLE_BYTES_NEEDED,
            )?;
            need("sync_bytes", w.sync_bytes, SAMPLE_BYTES_NEEDED)?;
            need("link_gbps", w.link_gbps, LINK_GBPS)?;
        }
        Pattern::RemoteOffload => {
            need(
                "sample_input_bytes",
                w.sample_input_bytes,
                SAMPLE_BYTES_NEEDED,
            )?;
        }
    }
    Ok(())
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).unwrap_or(text).matches('\n').count() + 1
}

/// The key on the line holding `offset` (`key = value`).
fn key_at(text: &str, offset: usize) -> Option<String> {
    let start = text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text.get(start..)?.lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with('#')).then(|| key.to_string())
}

/// serde's "missing field `x`" → `x`.
fn missing_field(message: &str) -> Option<String> {
    let rest = message.split("missing field `").nth(1)?;
    Some(rest.split('`').next()?.to_string())
}

/// The line where `field = …` is set.
fn field_line(text: &str, field: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            l.split_once('=')
                .is_some_and(|(k, _)| k.trim() == field && !l.trim_start().starts_with('#'))
        })
        .map(|i| i + 1)
}

/// Every catalog workload, in catalog order. A file that fails to parse is a bug caught by the
/// tests; it is left out here rather than panicking.
pub fn catalog() -> Vec<Workload> {
    FILES
        .iter()
        .filter_map(|(file, text)| parse(file, text).ok())
        .collect()
}

/// Parse results of every catalog file (for tests).
pub fn catalog_results() -> Vec<(&'static str, Result<Workload, WorkloadError>)> {
    FILES
        .iter()
        .map(|(file, text)| (*file, parse(file, text)))
        .collect()
}

/// A catalog workload by name, or a TOML file when `name_or_path` ends in `.toml` or names an
/// existing file.
pub fn resolve(name_or_path: &str) -> Result<Workload, WorkloadError> {
    let path = std::path::Path::new(name_or_path);
    if name_or_path.ends_with(".toml") || path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| WorkloadError::Io {
            file: name_or_path.to_string(),
            message: e.to_string(),
        })?;
        return parse(name_or_path, &text);
    }
    let all = catalog();
    let wanted = name_or_path.trim().to_lowercase();
    all.iter()
        .find(|w| w.name.to_lowercase() == wanted)
        .cloned()
        .ok_or_else(|| WorkloadError::Unknown {
            name: name_or_path.to_string(),
            known: all
                .iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Writes a workload as TOML (the GUI's "save" and the form's preview).
pub fn to_toml(w: &Workload) -> Result<String, String> {
    toml::to_string(w).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_file_parses() {
        for (file, r) in catalog_results() {
            assert!(r.is_ok(), "{file}: {r:?}");
        }
        assert_eq!(catalog().len(), FILES.len());
    }

    #[test]
    fn every_pattern_has_a_workload() {
        let all = catalog();
        for p in Pattern::ALL {
            assert!(all.iter().any(|w| w.pattern == p), "{p}");
        }
    }

    #[test]
    fn round_trips_through_toml() {
        for w in catalog() {
            let text = to_toml(&w).unwrap();
            assert_eq!(parse("x.toml", &text).unwrap(), w);
        }
    }
}
