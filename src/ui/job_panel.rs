//! The run state and run controls every measurement view shares: which machine a run goes to
//! (this machine's GPUs, a server's, or the model), which GPUs, the job in flight with its
//! progress row and error line, and where its results land.
//!
//! Results land in the source's report, as the section the view draws — except that a model run
//! over a section holding measured figures is kept beside it as the overlay, never in its place.

use std::collections::BTreeSet;

use eframe::egui::{self, RichText, Ui};

use super::jobs::{SharedRunner, Worker, WorkerMsg, spawn_job};
use super::palette::SourceBadge;
use crate::bench::Warning;
use crate::job::{Job, Target};
use crate::model::{SoakSection, Source, Topology, TopologySource};
use crate::report::{BandwidthSection, CollectivesSection, Report, ScalingSection};
use crate::scaling::RowSource;

/// A section of a report that a view draws and a job fills.
pub trait Section: Clone + Send + 'static {
    /// The section's place in a report.
    fn slot(report: &mut Report) -> &mut Option<Self>;
    /// True when any of its figures was measured (not modeled).
    fn has_measured(&self) -> bool;
}

impl Section for BandwidthSection {
    fn slot(report: &mut Report) -> &mut Option<Self> {
        &mut report.bandwidth
    }
    fn has_measured(&self) -> bool {
        self.results.iter().any(|r| r.source == Source::Measured)
    }
}

impl Section for CollectivesSection {
    fn slot(report: &mut Report) -> &mut Option<Self> {
        &mut report.collectives
    }
    fn has_measured(&self) -> bool {
        self.results.iter().any(|r| r.source != Source::Modeled)
    }
}

impl Section for ScalingSection {
    fn slot(report: &mut Report) -> &mut Option<Self> {
        &mut report.scaling
    }
    fn has_measured(&self) -> bool {
        self.run.rows.iter().any(|r| r.source != RowSource::Modeled)
    }
}

impl Section for SoakSection {
    fn slot(report: &mut Report) -> &mut Option<Self> {
        &mut report.soak
    }
    fn has_measured(&self) -> bool {
        // A load cannot be modeled: a soak (or its replay) is always what GPUs did.
        true
    }
}

/// How a running job shows how far it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Progress {
    /// A bar with `done/total` and the step's label.
    Bar,
    /// A spinner and the step's label (jobs whose steps differ too much in length for a bar).
    Spinner,
    /// A bar of time: `elapsed_s` of `total_s` seconds, and the time left (a soak).
    Timed { elapsed_s: f64, total_s: f64 },
}

/// The run state of one view on one source.
pub struct JobPanel<S> {
    /// False when the source is not this machine or a server (an opened report): runs are then
    /// modeled, never measured on whatever GPUs this machine has.
    this_machine: bool,
    /// The server the source belongs to, and its name: runs go there (`None`: this machine).
    runner: Option<(SharedRunner, String)>,
    /// Which topology the GPU selection belongs to (its source label).
    gpus_of: String,
    /// The GPUs the next run uses.
    pub gpus: BTreeSet<usize>,
    job: Option<Worker<Report>>,
    error: Option<String>,
    /// The job in flight delivers beside the source's section (into `overlay`).
    beside: bool,
    /// A model run's section drawn beside measured results, until cleared.
    overlay: Option<S>,
    /// What the last run that delivered warned, and whether it was cancelled.
    warnings: Vec<Warning>,
    cancelled: bool,
}

impl<S> Default for JobPanel<S> {
    fn default() -> Self {
        Self {
            this_machine: true,
            runner: None,
            gpus_of: String::new(),
            gpus: BTreeSet::new(),
            job: None,
            error: None,
            beside: false,
            overlay: None,
            warnings: Vec::new(),
            cancelled: false,
        }
    }
}

impl<S: Section> JobPanel<S> {
    /// Says where runs go: this machine or a server (`this_machine`, with the server's
    /// connection and name), or nowhere but the model (an opened report).
    pub fn set_machine(&mut self, this_machine: bool, runner: Option<(SharedRunner, String)>) {
        self.this_machine = this_machine;
        self.runner = runner;
    }

    /// True when a run would measure GPUs (this machine's or the server's) rather than model
    /// `topology`.
    pub fn measures(&self, topology: &Topology) -> bool {
        self.this_machine && matches!(topology.source, TopologySource::Live { .. })
    }

    /// On a topology not seen before, selects all its GPUs.
    pub fn sync_gpus(&mut self, topology: &Topology) {
        let label = topology.source.label();
        if self.gpus_of != label {
            self.gpus_of = label;
            self.gpus = topology.gpu_indices().into_iter().collect();
        }
    }

    /// True while a run is in flight.
    pub fn running(&self) -> bool {
        self.job.as_ref().is_some_and(|j| !j.finished)
    }

    /// Why the last run could not start or finish.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The model run drawn beside measured results, if any.
    pub fn overlay(&self) -> Option<&S> {
        self.overlay.as_ref()
    }

    /// Drops the overlay (the measured results stay).
    pub fn clear_overlay(&mut self) {
        self.overlay = None;
    }

    /// What the last run that delivered warned.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// True when the last run that delivered was cancelled (its section holds what finished).
    pub fn cancelled(&self) -> bool {
        self.cancelled
    }

    /// The sizes typed in a view's Sizes field, or `None` with the error line saying why.
    pub fn sizes(&mut self, field: &str) -> Option<Vec<u64>> {
        match crate::model::quantities::parse_sizes(field) {
            Ok(sizes) => Some(sizes),
            Err(e) => {
                self.error = Some(format!("Sizes: {e}"));
                None
            }
        }
    }

    /// The GPUs ticked (none: every GPU), `None` with the error shown when no machine has them.
    pub fn gpu_selection(&mut self) -> Option<crate::model::GpuSelection> {
        match crate::model::GpuSelection::new(self.gpus.iter().copied().collect()) {
            Ok(gpus) => Some(gpus),
            Err(e) => {
                self.error = Some(format!("GPUs: {}", e.why));
                None
            }
        }
    }

    /// The job's target: the server's (or this machine's) live GPUs when measuring, else the
    /// topology shown, modeled.
    pub fn target(&self, topology: &Topology, measured: bool) -> Target {
        if measured && self.runner.is_some() {
            Target::Live
        } else {
            Target::Topology {
                topology: Box::new(topology.clone()),
            }
        }
    }

    /// Starts `job` on a worker thread named `name`, here or on the server. A model run over
    /// a `shown` section that holds measured figures delivers beside it.
    pub fn start(&mut self, ctx: &egui::Context, name: &str, job: Job, shown: Option<&S>) {
        self.beside = !job.measures() && shown.is_some_and(S::has_measured);
        self.overlay = None;
        self.error = None;
        let runner = self.runner.as_ref().map(|(r, _)| r.clone());
        self.job = Some(spawn_job(ctx, name, runner, job));
    }

    /// What the job in flight sent since the last call, in order, for a view that takes more
    /// than one section or applies events as they come (the Soak view); a failure is also kept
    /// for the error line.
    pub(super) fn poll_messages(&mut self) -> Vec<WorkerMsg<Report>> {
        let Some(job) = self.job.as_mut() else {
            return Vec::new();
        };
        let msgs = job.poll();
        for msg in &msgs {
            match msg {
                WorkerMsg::Done(_) => self.error = None,
                WorkerMsg::Failed(e) => self.error = Some(e.clone()),
                WorkerMsg::Progress { .. } | WorkerMsg::Events { .. } => {}
            }
        }
        msgs
    }

    /// The newest report of the job in flight, if one arrived since the last call (and its
    /// error, kept for the error line). Only a soak sends bare events, and its view reads them
    /// through [`JobPanel::poll_messages`].
    pub fn poll_report(&mut self) -> Option<Report> {
        let mut newest = None;
        for msg in self.poll_messages() {
            match msg {
                WorkerMsg::Progress { partial, .. } => newest = Some(partial),
                WorkerMsg::Done(r) => newest = Some(r),
                WorkerMsg::Failed(_) | WorkerMsg::Events { .. } => {}
            }
        }
        newest
    }

    /// Takes what the job delivered into `report`: its section replaces the report's (with its
    /// warnings added), or becomes the overlay when the run goes beside measured results.
    pub fn poll(&mut self, report: &mut Report) {
        let Some(mut from) = self.poll_report() else {
            return;
        };
        let section = S::slot(&mut from).take();
        self.warnings = from.warnings.clone();
        self.cancelled = from.cancelled;
        if self.beside {
            self.overlay = section;
            return;
        }
        *S::slot(report) = section;
        for w in from.warnings {
            if !report.warnings.contains(&w) {
                report.warnings.push(w);
            }
        }
        if report.machine.nccl_version.is_none() {
            report.machine.nccl_version = from.machine.nccl_version;
        }
    }

    /// What an empty view says: pick `what`, then the button [`Self::run_label`] names (Run on
    /// a machine that measures, Model this machine on a catalog entry or an import).
    pub fn nothing_yet(&self, measured: bool, what: &str) -> String {
        let button = if measured {
            "Run"
        } else {
            "Model this machine"
        };
        format!("No results yet: pick {what}, then {button}.")
    }

    /// The Run button's label: measure on this machine or the server, or model.
    pub fn run_label(&self, measured: bool, verb: &str) -> String {
        if measured {
            let host = self.runner.as_ref().map_or("this machine", |(_, h)| h);
            format!("▶ {verb} on {host}")
        } else {
            "▶ Model this machine".to_string()
        }
    }

    /// The Run (or Model) button, or Cancel and the progress bar while a job runs; true when
    /// Run was clicked.
    pub fn run_row(&mut self, ui: &mut Ui, measured: bool, can_run: bool) -> bool {
        let label = self.run_label(measured, "Run");
        let run = self.controls(ui, Some(&label), can_run, Progress::Bar);
        run.is_some_and(|r| r.clicked())
    }

    /// The run controls: while a job runs, Cancel and its progress; else the button `run`
    /// (none when `None`), enabled when `can_run`, whose response is returned.
    pub fn controls(
        &mut self,
        ui: &mut Ui,
        run: Option<&str>,
        can_run: bool,
        progress: Progress,
    ) -> Option<egui::Response> {
        let Some(job) = self.job.as_ref().filter(|j| !j.finished) else {
            return run.map(|label| ui.add_enabled(can_run, egui::Button::new(label)));
        };
        let cancelling = job.cancelling();
        if ui
            .add_enabled(!cancelling, egui::Button::new("■ Cancel"))
            .clicked()
        {
            job.cancel();
        }
        let (done, total, label) = &job.progress;
        match progress {
            Progress::Bar => {
                let frac = if *total > 0 {
                    *done as f32 / *total as f32
                } else {
                    0.0
                };
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(320.0)
                        .text(format!("{done}/{total} {label}")),
                );
            }
            Progress::Spinner => {
                ui.spinner();
                ui.label(label);
            }
            Progress::Timed { elapsed_s, total_s } => {
                use crate::model::soak::duration_words;
                let frac = if total_s > 0.0 {
                    (elapsed_s / total_s).clamp(0.0, 1.0) as f32
                } else {
                    0.0
                };
                let left = duration_words((total_s - elapsed_s).max(0.0));
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(320.0)
                        .text(format!(
                            "{} of {} · {left} left",
                            duration_words(elapsed_s),
                            duration_words(total_s)
                        )),
                );
            }
        }
        None
    }
}

/// The badge and line saying that what a view shows (or would run) is modeled.
pub fn modeled_line(ui: &mut Ui, text: &str) {
    super::widgets::source_badge(ui, SourceBadge::Modeled);
    ui.label(RichText::new(text).weak());
}
