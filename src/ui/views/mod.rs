//! The views, one place each: a tab's file, or its folder where it has parts.
//!
//! - `topology/` — how a machine's GPUs and NICs are connected: header, machine drawing, GPU
//!   cards, the matrices, notes; given a [`live::LiveFrame`] it draws that traffic on them.
//! - `live/` — the Topology view's Live overlay: its feed and window on one source, the bar of
//!   controls (`mod.rs`), and the drawing of one sample — hover cards, sparklines, the per-GPU
//!   table (`draw.rs`). It does not draw the topology: the Topology view asks it for a frame.
//! - `health.rs` — a health check as a panel (on the Topology view, and the Soak view's checks).
//! - `bandwidth.rs`, `collectives.rs`, `scaling.rs` — the measurement views: a report's section
//!   drawn, and runs on the source's machine through the shared `job_panel`.
//! - `soak/` — a burn-in: header, checks, events and the Check button (`mod.rs`), the samples
//!   as per-GPU columns (`series.rs`), the linked time plots (`plots.rs`).
//! - `compare.rs` — opened reports side by side, and the purchase ranking.
//! - `fleet/` — a fleet's nodes as a heat table: the table as data (`table.rs`) and its
//!   painting, the header and the selected node (`mod.rs`).
//!
//! Views draw from what they are handed (a report, the views' state on it); they use the shared
//! widgets, palette and plots of `ui/`, never the shell, and push an `Action` for what another
//! part does.

pub mod bandwidth;
pub mod collectives;
pub mod compare;
pub mod fleet;
pub mod health;
pub mod live;
pub mod scaling;
pub mod soak;
pub mod topology;
