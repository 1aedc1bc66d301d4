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
//! - [`worker`]: the named thread with a stop flag, joined when dropped, that the probe and the
//!   traffic sampler run on.
//!
//! Every reader here returns a `topology::TopologyError` when NVML is missing or fails, as
//! `topology::live` does; nothing here prints or writes files.

pub mod energy_meter;
pub mod host_cpu;
pub mod sampler;
pub mod soak_probe;
pub mod traffic;
pub mod worker;
