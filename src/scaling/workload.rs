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
        "llama2-7b-ddp.toml",
        include_str!("../../assets/workloads/llama2-7b-ddp.toml"),
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
    /// Sharded data parallelism (PyTorch FSDP, ZeRO-3): parameters, gradients and optimizer
    /// states split over the GPUs; parameters all-gathered before each layer runs (forward and
    /// backward), gradients reduce-scattered.
    Fsdp,
}

impl Pattern {
    /// Every pattern, in display order.
    pub const ALL: [Pattern; 7] = [
        Self::DdpRing,
        Self::Fsdp,
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
            Self::Fsdp => "fsdp",
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
            Self::Fsdp => "sharded data parallel, ZeRO-3 (FSDP)",
        }
    }

    /// The value with this id.
    pub fn from_id(id: &str) -> Option<Pattern> {
        Self::ALL.into_iter().find(|p| p.id() == id)
    }

    /// True for the training patterns (a gradient all-reduce each step).
    pub fn is_training(&self) -> bool {
        matches!(
            self,
            Self::DdpRing | Self::TreeReduce | Self::SimPolicy | Self::Fsdp
        )
    }

    /// True for the patterns PyTorch runs for real (`scaling::framework`): DDP and FSDP.
    pub fn has_framework_step(&self) -> bool {
        matches!(self, Self::DdpRing | Self::Fsdp)
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

/// The optimizer, for the memory it keeps per parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Optimizer {
    /// Plain SGD: no state.
    Sgd,
    /// SGD with momentum: one fp32 buffer per parameter.
    SgdMomentum,
    /// Adam/AdamW: two fp32 moments per parameter.
    Adamw,
}

impl Optimizer {
    /// The TOML/CSV id.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Sgd => "sgd",
            Self::SgdMomentum => "sgd_momentum",
            Self::Adamw => "adamw",
        }
    }

    /// Bytes of state per parameter (fp32 moments; Rajbhandari et al., "ZeRO", SC 2020, §3.1).
    pub fn state_bytes(&self) -> f64 {
        match self {
            Self::Sgd => 0.0,
            Self::SgdMomentum => 4.0,
            Self::Adamw => 8.0,
        }
    }

    /// The optimizer the framework run builds (`sgd` with momentum, or `adamw`).
    pub fn framework_id(&self) -> &'static str {
        match self {
            Self::Sgd | Self::SgdMomentum => "sgd",
            Self::Adamw => "adamw",
        }
    }
}

/// The reference model a workload stands for: what the real framework run builds
/// (assets/frameworks/ddp_step.py) and what the activation-memory formula reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// `torchvision:<model>` (e.g. `torchvision:resnet50`), or `transformers:gpt2`,
    /// `transformers:bert`, `transformers:llama` (built from the sizes below).
    pub id: String,
    /// Transformer layers (blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<u32>,
    /// Transformer hidden size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<u32>,
    /// Attention heads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heads: Option<u32>,
    /// Sequence length in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq_len: Option<u32>,
    /// Vocabulary size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<u32>,
    /// MLP inner size (default 4 × hidden).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intermediate: Option<u32>,
    /// CNN input side in pixels (default 224).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_size: Option<u32>,
}

impl ModelSpec {
    /// True for the transformer reference models.
    pub fn is_transformer(&self) -> bool {
        self.id.starts_with("transformers:")
    }
}

/// A 1-GPU step of the real framework run measured on one GPU family, kept in the catalog so
/// that machines scalescope cannot run on are modeled from a measurement (docs/SCALING.md,
/// "Calibration").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The GPU family it was measured on, e.g. `H200`: matches GPU names that contain it.
    pub gpu: String,
    /// The 1-GPU step at `per_gpu_batch` samples (one micro-batch), ms.
    pub step_ms: f64,
    /// Of which the optimizer step, ms.
    pub optimizer_ms: f64,
    /// Kernel time per step in matrix kernels (GEMM, convolution, attention), ms, from the
    /// PyTorch profiler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix_ms: Option<f64>,
    /// Kernel time per step in every other kernel (element-wise, normalisation, optimizer), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_ms: Option<f64>,
    /// bf16 matrix-multiply rate of that GPU measured by the framework probe then, TFLOP/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gemm_tflops: Option<f64>,
    /// Device-memory copy rate measured by the framework probe then (bytes read + written), GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_gbps: Option<f64>,
    /// Peak memory PyTorch allocated in that step, GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_mem_gib: Option<f64>,
    /// The host floor: the same 1-GPU step at a micro-batch 16 times smaller, ms. Its kernels
    /// take almost no GPU time, so this is what the host (Python, PyTorch's dispatch, kernel
    /// launches) needs per step; a step can be no shorter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_ms: Option<f64>,
    /// The host probe measured in the same process, µs per iteration: moves `host_ms` to another
    /// machine's CPU by the ratio of the two probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_probe_us: Option<f64>,
    /// What DDP's wrapper cost the step at one rank, ms (the step under DDP on a group of one
    /// − the plain step, timed in alternating blocks), where the record measured it: the model
    /// adds it on two or more GPUs. `step_ms` is the plain step (no wrapper) where this is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper_ms: Option<f64>,
    /// When, on what, with which framework versions.
    pub measured: String,
}

impl Calibration {
    /// True when this record was measured on the GPU named `gpu_name`.
    pub fn matches(&self, gpu_name: &str) -> bool {
        family_matches(&self.gpu, gpu_name)
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
    /// The optimizer, for the memory fit (default: AdamW for transformers, SGD with momentum
    /// otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<Optimizer>,
    /// Bytes per parameter of the weights the optimizer updates (default: the gradient's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_bytes: Option<f64>,
    /// Samples per forward/backward pass (micro-batch); a larger per-GPU batch accumulates
    /// gradients over several (default: `per_gpu_batch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batch: Option<f64>,
    /// Activation memory per sample of a micro-batch, bytes (measured; else the formula of
    /// docs/SCALING.md from `model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_bytes_per_sample: Option<f64>,
    /// The user's own 1-GPU step at `per_gpu_batch`, ms: calibrates the model's compute term.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_ms_1gpu: Option<f64>,
    /// The step runs under CUDA graphs (captured once, replayed): the host does not issue its
    /// kernels one by one, so its host floor does not bound the modeled step.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cuda_graphs: bool,
    /// The reference model (the framework run builds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSpec>,
    /// Where every number comes from (assumptions say "assumed").
    pub sources: Vec<String>,
    /// 1-GPU framework steps measured per GPU family.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibration: Vec<Calibration>,
    /// Power of the 1-GPU training step measured per GPU family: the model's power for this
    /// workload on that GPU starts from it (`crate::scaling::power`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub power: Vec<PowerRecord>,
}

/// True when `gpu_name` (e.g. `NVIDIA H100 80GB HBM3`) names a GPU of `family` (e.g. `H100`),
/// ignoring case, and both or neither name a card variant (PCIe, NVL); an empty family matches
/// nothing.
fn family_matches(family: &str, gpu_name: &str) -> bool {
    let family = family.trim().to_lowercase();
    let name = gpu_name.to_lowercase();
    // A card variant (PCIe, NVL) is not the SXM part its family name also matches: it runs at a
    // lower power and clock (an H200 NVL at 600 W, not the H200 SXM's 700 W).
    let variant = |s: &str| s.contains("pcie") || s.contains(" nvl");
    !family.is_empty() && name.contains(&family) && variant(&name) == variant(&family)
}

/// The mean power one GPU drew over the timed window of the workload's 1-GPU framework step
/// (weak scaling's per-GPU batch), from NVML's energy counter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerRecord {
    /// The GPU family, e.g. `H100`: matches GPU names that contain it.
    pub gpu: String,
    /// Mean power per GPU over the window, W.
    pub watts: f64,
    /// The GPU's power before the run (driver loaded, CUDA context up), W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_watts: Option<f64>,
    /// When, on what.
    pub measured: String,
}

impl PowerRecord {
    /// True when this record was measured on the GPU named `gpu_name`.
    pub fn matches(&self, gpu_name: &str) -> bool {
        family_matches(&self.gpu, gpu_name)
    }
}

impl Workload {
    /// The optimizer (see [`Workload::optimizer`]).
    pub fn optimizer(&self) -> Optimizer {
        self.optimizer.unwrap_or(match &self.model {
            Some(m) if m.is_transformer() => Optimizer::Adamw,
            _ => Optimizer::SgdMomentum,
        })
    }

    /// Bytes per parameter of the weights.
    pub fn weight_bytes(&self) -> f64 {
        self.weight_bytes.unwrap_or(self.grad_dtype.size() as f64)
    }

    /// Bytes of gradient per parameter.
    pub fn grad_bytes(&self) -> f64 {
        self.grad_dtype.size() as f64
    }

    /// The largest micro-batch (samples per forward/backward).
    pub fn micro_batch(&self) -> f64 {
        self.micro_batch.unwrap_or(self.per_gpu_batch)
    }

    /// The catalog's calibration for a GPU name, if one was measured on that family.
    pub fn calibration_for(&self, gpu_name: &str) -> Option<&Calibration> {
        self.calibration.iter().find(|c| c.matches(gpu_name))
    }
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

impl crate::model::Blame for WorkloadError {
    /// Always the user's: a bad file or an unknown name.
    fn fault(&self) -> crate::model::Fault {
        crate::model::Fault::Input
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

/// The accepted ranges of a workload's numbers, with their units.
mod limits {
    use crate::model::validate::Bounds;

    pub const PARAMS: Bounds = Bounds::closed(0.0, 1e14, "parameters");
    pub const FLOPS: Bounds = Bounds::closed(1.0, 1e20, "FLOPs");
    pub const PER_GPU_BATCH: Bounds = Bounds::closed(1.0, 1e9, "samples");
    pub const GLOBAL_BATCH: Bounds = Bounds::closed(1.0, 1e12, "samples");
    pub const BUCKET: Bounds = Bounds::closed(0.0, 1e13, "bytes");
    pub const BUCKET_NEEDED: Bounds = Bounds::closed(1.0, 1e13, "bytes");
    pub const UTILIZATION: Bounds = Bounds::closed(0.001, 1.0, "");
    pub const OVERLAP: Bounds = Bounds::closed(0.0, 1.0, "");
    pub const SAMPLE_BYTES: Bounds = Bounds::closed(0.0, 1e12, "bytes");
    pub const SAMPLE_BYTES_NEEDED: Bounds = Bounds::above(0.0, 1e12, "bytes");
    pub const PRIMARY_MS: Bounds = Bounds::closed(0.0, 3.6e6, "ms");
    pub const FRAME_HZ: Bounds = Bounds::above(0.0, 1e6, "Hz");
    pub const LINK_GBPS: Bounds = Bounds::closed(0.001, 1e5, "GB/s");
    pub const OFFERED_LOAD: Bounds = Bounds::closed(0.0, 0.99, "");
    pub const RTT_MS: Bounds = Bounds::closed(0.0, 1e5, "ms");
    pub const STEPS_PER_SYNC: Bounds = Bounds::closed(1.0, 1e9, "steps");
    pub const WEIGHT_BYTES: Bounds = Bounds::closed(1.0, 8.0, "bytes per parameter");
    pub const ACTIVATION_BYTES: Bounds = Bounds::above(0.0, 1e13, "bytes");
    pub const STEP_MS: Bounds = Bounds::above(0.0, 1e8, "ms");
    pub const KERNEL_MS: Bounds = Bounds::closed(0.0, 1e8, "ms");
    pub const TFLOPS: Bounds = Bounds::above(0.0, 1e5, "TFLOP/s");
    pub const COPY_GBPS: Bounds = Bounds::above(0.0, 1e6, "GB/s");
    pub const MEMORY_GIB: Bounds = Bounds::above(0.0, 1e5, "GiB");
    pub const HOST_PROBE_US: Bounds = Bounds::above(0.0, 1e7, "µs");
    pub const WATTS: Bounds = Bounds::closed(
        crate::model::energy::MIN_PLAUSIBLE_WATTS,
        crate::model::energy::MAX_PLAUSIBLE_WATTS,
        "W",
    );
}

/// A field's complaint: its name and why.
type FieldError = (&'static str, String);

/// `v` within `b`, or why not, naming `field`.
fn check(field: &'static str, v: f64, b: crate::model::validate::Bounds) -> Result<(), FieldError> {
    b.check(v).map(|_| ()).map_err(|m| (field, m))
}

/// As [`check`] for a value that may be absent (absent passes).
fn optional(
    field: &'static str,
    v: Option<f64>,
    b: crate::model::validate::Bounds,
) -> Result<(), FieldError> {
    match v {
        Some(v) => check(field, v, b),
        None => Ok(()),
    }
}

/// Checks ranges and the fields each pattern needs; `Err((field, why))`. Every number has a
/// unit and an accepted range ([`crate::model::validate::Bounds`]), chosen so that the model's
/// figures stay finite and positive for any accepted input.
pub fn validate(w: &Workload) -> Result<(), (&'static str, String)> {
    validate_text(w)?;
    validate_numbers(w)?;
    if let Some(m) = &w.model
        && !(m.id.starts_with("torchvision:") || m.id.starts_with("transformers:"))
    {
        return Err((
            "model",
            format!(
                "id {}: expected torchvision:<name> or transformers:gpt2|bert|llama",
                crate::model::validate::quoted(&m.id)
            ),
        ));
    }
    for c in &w.calibration {
        validate_calibration(c)?;
    }
    for p in &w.power {
        check("watts", p.watts, limits::WATTS)?;
        optional("idle_watts", p.idle_watts, limits::WATTS)?;
        if p.gpu.trim().is_empty() {
            return Err(("gpu", "name the GPU family, e.g. \"H100\"".into()));
        }
    }
    if w.sources.is_empty() {
        return Err((
            "sources",
            "list where every number comes from (write \"assumed: …\" for guesses)".into(),
        ));
    }
    validate_pattern(w)
}

/// The name is an id, and nothing printed as it is (name, title, sources) can rewrite the
/// terminal or split a line.
fn validate_text(w: &Workload) -> Result<(), FieldError> {
    use crate::model::validate::unsafe_on_terminal;
    if w.name.trim().is_empty()
        || w.name.contains([',', '"'])
        || w.name.chars().any(unsafe_on_terminal)
    {
        return Err((
            "name",
            "must be a non-empty id without commas, quotes, control characters, line separators or bidirectional controls"
                .into(),
        ));
    }
    // The title and sources are printed as they are (tables, reports): a control character or
    // line separator in one would rewrite the terminal or split a line.
    if w.title.chars().any(unsafe_on_terminal) {
        return Err((
            "title",
            "holds a control character, line separator or bidirectional control".into(),
        ));
    }
    if w.sources.iter().any(|s| s.chars().any(unsafe_on_terminal)) {
        return Err((
            "sources",
            "holds a control character, line separator or bidirectional control".into(),
        ));
    }
    Ok(())
}

/// Every number of the workload itself within its range, the parameters a count and the
/// batches whole samples.
fn validate_numbers(w: &Workload) -> Result<(), FieldError> {
    use limits::*;
    check("params", w.params, PARAMS)?;
    if w.params > 0.0 && w.params < 1.0 {
        // A count: a fraction of one parameter is no model, and a gradient of `5e-324` of
        // one divided through the bucket arithmetic into an infinite step.
        return Err((
            "params",
            format!(
                "{} is not a count of parameters: expected 0 (no gradient) or at least 1",
                crate::model::validate::number(w.params)
            ),
        ));
    }
    check("flops_per_sample", w.flops_per_sample, FLOPS)?;
    check("per_gpu_batch", w.per_gpu_batch, PER_GPU_BATCH)?;
    check("strong_global_batch", w.strong_global_batch, GLOBAL_BATCH)?;
    check("bucket_bytes", w.bucket_bytes, BUCKET)?;
    check("utilization", w.utilization, UTILIZATION)?;
    check("overlap", w.overlap, OVERLAP)?;
    for (field, v, b) in [
        ("sample_input_bytes", w.sample_input_bytes, SAMPLE_BYTES),
        ("sample_output_bytes", w.sample_output_bytes, SAMPLE_BYTES),
        ("sync_bytes", w.sync_bytes, SAMPLE_BYTES),
        ("primary_ms", w.primary_ms, PRIMARY_MS),
        ("frame_hz", w.frame_hz, FRAME_HZ),
        ("link_gbps", w.link_gbps, LINK_GBPS),
        ("offered_load", w.offered_load, OFFERED_LOAD),
        ("rtt_ms", w.rtt_ms, RTT_MS),
        ("steps_per_sync", w.steps_per_sync, STEPS_PER_SYNC),
        ("weight_bytes", w.weight_bytes, WEIGHT_BYTES),
        ("micro_batch", w.micro_batch, PER_GPU_BATCH),
    ] {
        optional(field, v, b)?;
    }
    // Samples are whole: a strong global batch is split over the GPUs in whole samples
    // (`batch::BatchSplit`) and a per-GPU batch into whole micro-batches.
    for (field, v) in [
        ("per_gpu_batch", Some(w.per_gpu_batch)),
        ("strong_global_batch", Some(w.strong_global_batch)),
        ("micro_batch", w.micro_batch),
    ] {
        if let Some(v) = v.filter(|v| v.fract() != 0.0) {
            return Err((
                field,
                format!(
                    "{} is not a whole number of samples",
                    crate::model::validate::number(v)
                ),
            ));
        }
    }
    optional(
        "activation_bytes_per_sample",
        w.activation_bytes_per_sample,
        ACTIVATION_BYTES,
    )?;
    optional("step_ms_1gpu", w.step_ms_1gpu, STEP_MS)
}

/// One measured step: its times within range, the optimizer's below the step's, the GPU named.
fn validate_calibration(c: &Calibration) -> Result<(), FieldError> {
    use limits::*;
    check("step_ms", c.step_ms, STEP_MS)?;
    check("optimizer_ms", c.optimizer_ms, KERNEL_MS)?;
    if c.optimizer_ms >= c.step_ms {
        return Err((
            "optimizer_ms",
            format!(
                "must be below step_ms ({} ≥ {} ms)",
                c.optimizer_ms, c.step_ms
            ),
        ));
    }
    for (field, v, b) in [
        ("matrix_ms", c.matrix_ms, KERNEL_MS),
        ("other_ms", c.other_ms, KERNEL_MS),
        ("gemm_tflops", c.gemm_tflops, TFLOPS),
        ("copy_gbps", c.copy_gbps, COPY_GBPS),
        ("peak_mem_gib", c.peak_mem_gib, MEMORY_GIB),
        ("host_ms", c.host_ms, KERNEL_MS),
        ("host_probe_us", c.host_probe_us, HOST_PROBE_US),
    ] {
        optional(field, v, b)?;
    }
    if c.gpu.trim().is_empty() {
        return Err(("gpu", "name the GPU family, e.g. \"H200\"".into()));
    }
    Ok(())
}

/// The fields the workload's pattern needs: a gradient and a bucket for the all-reduce
/// patterns, the bytes each inference or offload pattern moves.
fn validate_pattern(w: &Workload) -> Result<(), FieldError> {
    use limits::*;
    let need = |field: &'static str, v: Option<f64>, b| match v {
        Some(v) => check(field, v, b),
        None => Err((field, format!("the {} pattern needs it", w.pattern))),
    };
    match w.pattern {
        Pattern::DdpRing | Pattern::TreeReduce | Pattern::SimPolicy | Pattern::Fsdp => {
            if w.params > 0.0 {
                check("bucket_bytes", w.bucket_bytes, BUCKET_NEEDED)?;
            } else {
                return Err((
                    "params",
                    format!(
                        "the {} pattern needs a gradient: above 0, found {}",
                        w.pattern, w.params
                    ),
                ));
            }
        }
        Pattern::InferenceReplicas | Pattern::RemoteOffload => {
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

/// The largest workload file read, bytes (a workload file is a few hundred bytes).
pub const MAX_WORKLOAD_FILE_BYTES: u64 = 1 << 20;

/// A catalog workload by name, or a TOML file when `name_or_path` ends in `.toml` or names an
/// existing file.
pub fn resolve(name_or_path: &str) -> Result<Workload, WorkloadError> {
    let path = std::path::Path::new(name_or_path);
    if name_or_path.ends_with(".toml") || path.is_file() {
        let text = crate::input::read_text(path, MAX_WORKLOAD_FILE_BYTES).map_err(|e| {
            WorkloadError::Io {
                file: name_or_path.to_string(),
                message: e.to_string(),
            }
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

#[cfg(test)]
mod tests {

    #[test]
    fn a_family_does_not_take_in_its_card_variants() {
        assert!(family_matches("H200", "NVIDIA H200"));
        assert!(family_matches("H100 80GB HBM3", "NVIDIA H100 80GB HBM3"));
        assert!(!family_matches("H200", "NVIDIA H200 NVL"));
        assert!(!family_matches("H100", "NVIDIA H100 PCIe"));
        assert!(family_matches("H100 PCIe", "NVIDIA H100 PCIe"));
        assert!(!family_matches("", "NVIDIA H200"));
    }
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
    fn text_that_breaks_a_printed_line_is_refused() {
        let good = include_str!("../../assets/workloads/alexnet.toml");
        for (from, to, field) in [
            ("name = \"", "name = \"a\u{2028}", "name"),
            ("title = \"", "title = \"\\u001b[2J", "title"),
        ] {
            let text = good.replacen(from, to, 1);
            assert_ne!(text, good);
            match parse("w.toml", &text) {
                Err(WorkloadError::Bad { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn batches_are_whole_samples() {
        let good = include_str!("../../assets/workloads/gpt2-xl.toml");
        for (from, to, field) in [
            ("per_gpu_batch = 8", "per_gpu_batch = 8.5", "per_gpu_batch"),
            (
                "strong_global_batch = 64",
                "strong_global_batch = 64.25",
                "strong_global_batch",
            ),
            ("micro_batch = 8", "micro_batch = 2.5", "micro_batch"),
        ] {
            let text = good.replacen(from, to, 1);
            assert_ne!(text, good);
            match parse("w.toml", &text) {
                Err(WorkloadError::Bad {
                    field: f, message, ..
                }) => {
                    assert_eq!(f, field);
                    assert!(message.contains("whole number of samples"), "{message}");
                }
                other => panic!("{field}: {other:?}"),
            }
        }
    }
}
