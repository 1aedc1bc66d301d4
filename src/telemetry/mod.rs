//! The machine sampled over time: threads that read the GPUs (and the host) through NVML again
//! and again while something runs, and what they keep. `topology/` says what the machine *is*
//! (its links, its inventory read once — `topology::nvml_state`, whose NVML readers these
//! threads share); this folder says what it *did* from one moment to the next.
//!
//! - [`sampler`]: the [`Sampler`](sampler::Sampler) beside `scalescope check`'s load tests —
//!   PCIe link state, clock limits, utilization, other processes (`health::run` starts it).
//! - [`energy_meter`]: the [`EnergyMeter`](energy_meter::EnergyMeter), each GPU's energy-counter
//!   steps kept so that any window of a run gets its mean power (`bench::cuda::energy`,
//!   `scaling::proxy`; the arithmetic is `model::energy`).
//! - [`soak_probe`]: the burn-in's probe, every soaked GPU once a second and Xid events between
//!   (`job::soak` runs it beside the loads; the verdict is `health::soak`).
//! - [`traffic`]: live traffic feeds for `watch` and the app's Live overlay — the NVML sampler,
//!   a recording played back, the recording reader (`job::watch` streams them; the samples are
//!   `model::traffic`).
//! - [`host_cpu`]: the host's CPU load and steal from /proc/stat, for the probe and the sampler.
//! - [`stoppable`]: the [`StoppableThread`](stoppable::StoppableThread), a named thread with a
//!   stop flag, joined when dropped, that the probe and the traffic sampler run on.
//!
//! Every reader here returns a `topology::TopologyError` when NVML is missing or fails, as
//! `topology::live` does; nothing here prints or writes files.
//!
//! Open this folder first for the three features that read the machine over time; each spans
//! folders, and this is where the rest of it lives:
//!
//! - **soak** (burn-in): the stage in `src/job/soak.rs` (its own map); the probe here in
//!   `src/telemetry/soak_probe.rs`; the loads in `src/bench/cuda/soak.rs`; the samples and
//!   events as data in `src/model/soak.rs`; the verdict in `src/health/soak.rs` and each dip's
//!   cause in `src/health/attribution.rs`; soak.csv and its replay in `src/health/soak_csv.rs`;
//!   `check --soak` in `src/cli/check.rs`; the app's Soak view in `src/ui/views/soak/`.
//! - **watch** (live traffic): the job in `src/job/watch.rs` (its own map); the feeds here in
//!   `src/telemetry/traffic.rs`; a sample and a recording as data in `src/model/traffic.rs`;
//!   `scalescope watch` in `src/cli/watch.rs` and its `/metrics` in `src/cli/metrics_server.rs`
//!   (`src/export/prometheus.rs`); the app's Live overlay in `src/ui/views/live/`.
//! - **energy and cost**: the meter here in `src/telemetry/energy_meter.rs`; the arithmetic in
//!   `src/model/energy.rs` (its own map); each test's window in `src/bench/cuda/energy.rs`;
//!   modeled power in `src/scaling/power.rs`; cost in `src/scaling/cost.rs`, ranked in
//!   `src/report/ranking.rs`, priced from the flags in `src/cli/price.rs`.

pub mod energy_meter;
pub mod host_cpu;
pub mod sampler;
pub mod soak_probe;
pub mod stoppable;
pub mod traffic;
