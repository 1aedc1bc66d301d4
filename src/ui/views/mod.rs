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
//! - `tabs.rs` — the views as the shell loops over them: the [`tabs::Tab`] trait (which view,
//!   whether the selected source has it, its `ui`), one tab per view in tab order
//!   ([`tabs::Tabs`]), and what a tab draws from ([`tabs::ViewCtx`], the sources through the
//!   [`tabs::ViewSources`] seam).
//!
//! [`Views`], here, is the views' state on one source: each opened report and each machine
//! keeps one. Views draw from what they are handed (a report, the views' state on it); they use
//! the shared widgets, palette and plots of `ui/`, never the shell, and push an `Action` for
//! what another part does.

pub mod bandwidth;
pub mod collectives;
pub mod compare;
pub mod fleet;
pub mod health;
pub mod live;
pub mod scaling;
pub mod soak;
pub mod tabs;
pub mod topology;

use super::jobs::SharedRunner;
use crate::report::Report;
use bandwidth::BandwidthView;
use collectives::CollectivesView;
use live::LiveView;
use scaling::ScalingView;
use soak::SoakView;

/// Workloads a report's Scaling view selects when it opens.
const REPORT_WORKLOADS_SHOWN: usize = 2;

/// The views' state on one source (choices, runs in flight, the Live overlay): what an opened
/// report or a machine keeps for its views (`ui::shown`, `ui::sources`).
pub struct Views {
    /// The Bandwidth view.
    pub bandwidth: BandwidthView,
    /// The Collectives view.
    pub collectives: CollectivesView,
    /// The Scaling view.
    pub scaling: ScalingView,
    /// The Soak view (and the health check it starts).
    pub soak: SoakView,
    /// The Topology view's Live overlay (its window is the report's `traffic`).
    pub live: LiveView,
}

impl Views {
    /// The views of a machine: runs measure it when it is this machine or, through `runner`,
    /// a server's; a catalog or imported machine is modeled (its topology says so).
    pub fn machine(runner: Option<(SharedRunner, String)>) -> Self {
        let mut v = Self {
            bandwidth: BandwidthView::default(),
            collectives: CollectivesView::default(),
            scaling: ScalingView::default(),
            soak: SoakView::default(),
            live: LiveView::machine(runner.clone()),
        };
        v.bandwidth.panel_mut().set_machine(true, runner.clone());
        v.collectives.panel_mut().set_machine(true, runner.clone());
        v.soak.panel_mut().set_machine(true, runner.clone());
        v.scaling.set_machine(true, runner);
        v
    }

    /// The views of an opened report: its sections as they are; runs on it are modeled.
    pub fn report(report: &Report) -> Self {
        let mut v = Self {
            bandwidth: BandwidthView::default(),
            collectives: CollectivesView::default(),
            scaling: ScalingView::for_report(report, REPORT_WORKLOADS_SHOWN),
            soak: SoakView::default(),
            live: LiveView::report(),
        };
        v.bandwidth.panel_mut().set_machine(false, None);
        v.collectives.panel_mut().set_machine(false, None);
        v.scaling.set_machine(false, None);
        v.soak.panel_mut().set_machine(false, None);
        v
    }

    /// Takes what the views' runs and the Live feed delivered into `report` (every frame,
    /// shown or not: a run goes on while another source or view is on screen); the Live feed's
    /// error for the notice area, if it failed.
    pub fn poll(&mut self, ctx: &eframe::egui::Context, report: &mut Report) -> Option<String> {
        self.bandwidth.panel_mut().poll(report);
        self.collectives.panel_mut().poll(report);
        self.scaling.poll(report);
        self.soak.poll(report);
        self.live.poll(ctx, report)
    }

    /// Whether the Soak tab shows: where `report` holds a soak, or a soak can run on its
    /// machine from here.
    pub fn has_soak_tab(&self, report: &Report) -> bool {
        report.soak.is_some() || self.soak.can_run(report)
    }
}
