//! What one source shows: its [`Report`] and the measurement views' state on it.
//!
//! Every source holds a report: an opened (or bundled) report as it is; this machine, a server,
//! a catalog or an imported machine a report of its topology, grown by the jobs run on it as
//! their events arrive. The views draw its sections; saving and exporting write it.

use super::jobs::SharedRunner;
use super::views::bandwidth::BandwidthView;
use super::views::collectives::CollectivesView;
use super::views::live::LiveView;
use super::views::scaling::ScalingView;
use super::views::soak::SoakView;
use crate::model::Topology;
use crate::report::Report;

/// Workloads a report's Scaling view selects when it opens.
const REPORT_WORKLOADS_SHOWN: usize = 2;

/// The measurement views' state on one source (choices, runs in flight, overlays).
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

/// A machine as a source: the report of its topology (grown by the jobs run on it) and the
/// views on it. A recording opened from a file is one too: its header's machine, its samples as
/// the report's traffic, replayed (never watched, never measured here).
pub struct Machine {
    /// Its topology and every section run on it.
    pub report: Report,
    /// The measurement views' state.
    pub views: Views,
}

impl Machine {
    /// `topology` with nothing run on it yet; jobs go to the server `runner` reaches, or here.
    pub fn new(topology: Topology, runner: Option<(SharedRunner, String)>) -> Self {
        let machine = crate::job::machine_info(&topology, "app");
        Self::with_report(Report::new(machine, topology), runner)
    }

    /// A machine whose report already holds what was read with it (an import's health).
    pub fn with_report(report: Report, runner: Option<(SharedRunner, String)>) -> Self {
        Self {
            report,
            views: Views::machine(runner),
        }
    }

    /// A recording (`name`: its file name) as a source: its machine, modeled runs only, and
    /// its replay starting at the next poll.
    pub fn recording(recording: crate::model::traffic::TrafficRecording, name: String) -> Self {
        let topology = recording.header.topology.clone();
        let machine = crate::job::machine_info(&topology, "recording");
        let mut report = Report::new(machine, topology);
        report.traffic = Some(recording);
        let mut views = Views::report(&report);
        views.live = LiveView::recording(name);
        Self { report, views }
    }
}
