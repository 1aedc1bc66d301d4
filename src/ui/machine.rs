//! A machine as a source: its [`Report`] and the views' state on it ([`Views`]).
//!
//! Every source holds a report: an opened (or bundled) report as it is; this machine, a server,
//! a catalog or an imported machine a report of its topology, grown by the jobs run on it as
//! their events arrive. The views draw its sections; saving and exporting write it.

use super::jobs::SharedRunner;
use super::views::Views;
use super::views::live::LiveView;
use crate::model::Topology;
use crate::report::Report;

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
