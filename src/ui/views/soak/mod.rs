//! The Soak view: a burn-in's header (how long of how long, which loads and GPUs, running or
//! stopped), its verdict (the health report's `soak_*` checks), the series over time
//! ([`plots`]) and the events worth reading. On this machine or a server it also
//! starts a health check with a soak after it (`scalescope check --soak D`), whose samples
//! arrive while it runs.

mod plots;
mod series;

use std::collections::BTreeSet;

use eframe::egui::{self, RichText, Ui};

use crate::health::Check;
use crate::health::run::CheckOptions;
use crate::job::{Event, Job};
use crate::model::soak::{duration_words, parse_duration};
use crate::model::{SoakEventKind, SoakLoad, SoakOptions, SoakSection};
use crate::report::{Report, StageInFlight};
use crate::ui::job_panel::{JobPanel, Progress};
use crate::ui::jobs::WorkerMsg;
use crate::ui::palette;
use crate::ui::widgets::badge;
use plots::{SoakPlots, clock};

/// Events listed under the plots, at most.
const MAX_EVENTS: usize = 60;

/// How long the next check's soak runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SoakLength {
    Off,
    Min5,
    Min30,
    H2,
    Custom,
}

impl SoakLength {
    const ALL: [SoakLength; 5] = [Self::Off, Self::Min5, Self::Min30, Self::H2, Self::Custom];

    fn label(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Min5 => "5 min",
            Self::Min30 => "30 min",
            Self::H2 => "2 h",
            Self::Custom => "custom",
        }
    }

    fn seconds(self) -> Option<f64> {
        match self {
            Self::Min5 => Some(300.0),
            Self::Min30 => Some(1800.0),
            Self::H2 => Some(7200.0),
            Self::Off | Self::Custom => None,
        }
    }
}

/// State of the Soak view on one source: the next check's choices, the check in flight and
/// the plots' state. The soak shown is the source report's.
pub struct SoakView {
    panel: JobPanel<SoakSection>,
    duration: SoakLength,
    /// The custom duration as typed (`1h30m`).
    custom: String,
    loads: BTreeSet<SoakLoad>,
    plots: SoakPlots,
    /// A check started: the source's old soak goes at the next poll (its verdict with it, when
    /// the new check's arrives).
    clear: bool,
    /// The check in flight has begun its soak (from then on its progress is time).
    soak_began: bool,
}

impl Default for SoakView {
    fn default() -> Self {
        Self {
            panel: JobPanel::default(),
            duration: SoakLength::Min30,
            custom: "1h".into(),
            loads: SoakLoad::ALL.into_iter().collect(),
            plots: SoakPlots::default(),
            clear: false,
            soak_began: false,
        }
    }
}

impl SoakView {
    /// The run state: where checks go, the check in flight and its error.
    pub fn panel(&self) -> &JobPanel<SoakSection> {
        &self.panel
    }

    /// The run state, to change it.
    pub fn panel_mut(&mut self) -> &mut JobPanel<SoakSection> {
        &mut self.panel
    }

    /// True where this view can start a soak on `report`'s machine (this machine, a server).
    pub fn can_run(&self, report: &Report) -> bool {
        self.panel.measures(&report.topology)
    }

    /// Takes what the check in flight sent into `report`: the soak's samples as they come,
    /// the health check (with the soak's verdict) when it arrives.
    pub fn poll(&mut self, report: &mut Report) {
        if std::mem::take(&mut self.clear) {
            report.soak = None;
        }
        for msg in self.panel.poll_messages() {
            match msg {
                WorkerMsg::Progress { partial, .. } => {
                    if partial.health.is_some() {
                        report.health = partial.health;
                    }
                }
                WorkerMsg::Events { events, .. } => {
                    for e in &events {
                        self.soak_began |= matches!(e, Event::SoakStarted { .. });
                        crate::job::apply(report, e);
                    }
                }
                WorkerMsg::Done(r) => {
                    if r.health.is_some() {
                        report.health = r.health;
                    }
                    if r.soak.is_some() {
                        report.soak = r.soak;
                    }
                    for w in r.warnings {
                        if !report.warnings.contains(&w) {
                            report.warnings.push(w);
                        }
                    }
                }
                WorkerMsg::Failed(_) => {}
            }
        }
    }

    /// Draws the view of `report`: the run settings where a soak can run here, then the soak.
    pub fn ui(&mut self, ui: &mut Ui, report: &Report) {
        self.panel.sync_gpus(&report.topology);
        let can_run = self.can_run(report);
        // Its own id: every tab keeps its own scroll offset.
        egui::ScrollArea::both()
            .id_salt("soak-view")
            .auto_shrink([false; 2])
            .show(ui, |ui| {
                if can_run {
                    crate::ui::layout::run_settings(ui, |ui| self.controls(ui, report));
                    if let Some(e) = self.panel.error() {
                        ui.colored_label(palette::P2P_REFUSED, e);
                    }
                    ui.add_space(6.0);
                }
                let Some(soak) = &report.soak else {
                    let text = if can_run {
                        "No soak yet: choose a duration and loads, then run the check."
                    } else {
                        "No soak in this report. A soak loads real GPUs: run \
                         `scalescope check --soak 30m` there, or open this machine or a server \
                         (Sources) to run one from here."
                    };
                    ui.label(RichText::new(text).weak());
                    return;
                };
                let running = self.panel.running() && self.soak_began;
                show(ui, report, soak, running, &mut self.plots);
            });
    }

    /// GPUs, the soak's duration and loads, and Check (or Cancel and the time left).
    fn controls(&mut self, ui: &mut Ui, report: &Report) {
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("GPUs").strong());
            for g in report.topology.gpu_indices() {
                toggle(ui, &mut self.panel.gpus, g, &format!("GPU{g}"), true);
            }
        });
        let mut custom_error = None;
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("Soak").strong()).on_hover_text(
                "After the health check, load the GPUs for this long and judge how steady they \
                 were (scalescope check --soak)",
            );
            for d in SoakLength::ALL {
                ui.radio_value(&mut self.duration, d, d.label());
            }
            if self.duration == SoakLength::Custom {
                let field = ui.add(
                    egui::TextEdit::singleline(&mut self.custom)
                        .hint_text("1h30m")
                        .desired_width(70.0),
                );
                field.on_hover_text("90s, 30m, 2h, 1h30m: at least 1 minute, at most 7 days");
                if let Err(e) = parse_duration(&self.custom) {
                    ui.colored_label(palette::P2P_REFUSED, &e);
                    custom_error = Some(e);
                }
            }
        });
        let soak_on = self.duration != SoakLength::Off;
        let peers = self.panel.gpus.len() >= 2;
        ui.add_enabled_ui(soak_on, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new("Loads").strong());
                for l in SoakLoad::ALL {
                    let ok = peers || !l.needs_peers();
                    toggle(ui, &mut self.loads, l, l.id(), ok)
                        .on_hover_text(l.figure_words())
                        .on_disabled_hover_text(format!(
                            "{l} needs two GPUs or more: select another GPU"
                        ));
                }
            });
        });
        let loads = self.loads_to_run();
        let soak = self.soak_options();
        let ok = !self.panel.gpus.is_empty()
            && custom_error.is_none()
            && (soak.is_none() || !loads.is_empty());
        let verb = match &soak {
            Some(s) => format!("Check + soak {}", short_duration(s.duration_s)),
            None => "Check".to_string(),
        };
        let label = self.panel.run_label(true, &verb);
        let progress = match (&report.soak, self.soak_began) {
            (Some(s), true) => Progress::Timed {
                elapsed_s: s.elapsed_s,
                total_s: s.duration_s,
            },
            _ => Progress::Bar,
        };
        ui.horizontal(|ui| {
            let run = self.panel.controls(ui, Some(&label), ok, progress);
            if run.is_some_and(|r| r.clicked()) {
                self.start(ui.ctx(), report, soak);
            }
            if soak_on && !self.panel.running() {
                ui.label(
                    RichText::new(
                        "The GPUs run at full load for the whole soak; Cancel keeps what ran.",
                    )
                    .weak(),
                );
            }
        });
    }

    /// The loads checked that the selected GPUs can run, in cycle order.
    fn loads_to_run(&self) -> Vec<SoakLoad> {
        let peers = self.panel.gpus.len() >= 2;
        SoakLoad::ALL
            .into_iter()
            .filter(|l| self.loads.contains(l) && (peers || !l.needs_peers()))
            .collect()
    }

    /// The soak the next check runs after it; `None` when off (or the custom duration does
    /// not parse, which the field says).
    fn soak_options(&self) -> Option<SoakOptions> {
        let duration_s = match self.duration {
            SoakLength::Custom => parse_duration(&self.custom).ok()?,
            d => d.seconds()?,
        };
        Some(SoakOptions {
            duration_s,
            loads: self.loads_to_run(),
            ..Default::default()
        })
    }

    fn start(&mut self, ctx: &egui::Context, report: &Report, soak: Option<SoakOptions>) {
        let Some(gpus) = self.panel.gpu_selection() else {
            return;
        };
        let job = Job::Check {
            target: self.panel.target(&report.topology, true),
            options: CheckOptions {
                gpus,
                soak,
                ..Default::default()
            },
        };
        self.start_job(ctx, job);
    }

    /// Starts `job` (a check, with or without a soak) as the Check button does: the source's
    /// soak gives way to the job's, which [`SoakView::poll`] takes in as it comes. Tests and
    /// scripted use start a recording's replay with it.
    pub fn start_job(&mut self, ctx: &egui::Context, job: Job) {
        self.clear = true;
        self.soak_began = false;
        self.panel.start(ctx, "scalescope-check", job, None);
    }
}

/// `30 min`, `2 h`, `1 h 30 min`: a duration for a button.
fn short_duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    match (h, m, sec) {
        (0, 0, sec) => format!("{sec} s"),
        (0, m, 0) => format!("{m} min"),
        (0, m, sec) => format!("{m} min {sec} s"),
        (h, 0, _) => format!("{h} h"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

fn toggle<T: Ord + Copy>(
    ui: &mut Ui,
    set: &mut BTreeSet<T>,
    v: T,
    label: &str,
    enabled: bool,
) -> egui::Response {
    let mut on = set.contains(&v) && enabled;
    let r = ui.add_enabled(enabled, egui::Checkbox::new(&mut on, label));
    if r.changed() {
        if on {
            set.insert(v);
        } else {
            set.remove(&v);
        }
    }
    r
}

/// Where a soak stands: the badge's word and colour, and what follows its time.
fn status(
    report: &Report,
    s: &SoakSection,
    running: bool,
) -> (&'static str, egui::Color32, String) {
    if s.finished {
        return ("finished", palette::VERDICT_PASS, String::new());
    }
    if running {
        let left = duration_words((s.duration_s - s.elapsed_s).max(0.0));
        return ("running", palette::PCIE_LINE, format!(" — {left} left"));
    }
    if report.stage_in_flight == Some(StageInFlight::Running(crate::report::Stage::Soak))
        && !report.cancelled
    {
        return (
            "unfinished",
            palette::VERDICT_WARN,
            " (the report was written while it ran)".into(),
        );
    }
    ("stopped early", palette::VERDICT_WARN, String::new())
}

/// The soak of `report`: header, verdict, plots and events. Pure drawing over the report's
/// section and health checks (and the plots' state).
pub fn show(
    ui: &mut Ui,
    report: &Report,
    soak: &SoakSection,
    running: bool,
    plots: &mut SoakPlots,
) {
    header(ui, report, soak, running);
    ui.add_space(6.0);
    verdict(ui, report, running);
    ui.add_space(6.0);
    plots::show(ui, soak, plots);
    ui.add_space(6.0);
    events(ui, soak);
}

/// How long of how long, the loads and GPUs, where it came from, and where it stands.
fn header(ui: &mut Ui, report: &Report, s: &SoakSection, running: bool) {
    let (word, color, after) = status(report, s, running);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("Soak").strong().size(16.0));
        badge(ui, word, color);
        ui.label(
            RichText::new(format!(
                "{} of {}{after}",
                duration_words(s.elapsed_s),
                duration_words(s.duration_s)
            ))
            .strong(),
        );
    });
    let loads: Vec<&str> = s.loads.iter().map(|l| l.id()).collect();
    // The GPUs asked for (reading every sample for them would cost a frame on a long soak).
    let mut gpus = s.gpus.clone();
    if gpus.is_empty() {
        gpus = s.sampled_gpus();
    }
    gpus.sort_unstable();
    gpus.dedup();
    let gpus: Vec<String> = gpus.iter().map(|g| g.to_string()).collect();
    let mut facts = vec![
        format!(
            "loads {}",
            if loads.is_empty() {
                "—".to_string()
            } else {
                loads.join(", ")
            }
        ),
        format!(
            "GPU{} {}",
            if gpus.len() == 1 { "" } else { "s" },
            if gpus.is_empty() {
                "—".to_string()
            } else {
                gpus.join(", ")
            }
        ),
    ];
    if s.interval_s.is_finite() && s.interval_s > 0.0 {
        facts.push(format!("a sample every {} s", trim_number(s.interval_s)));
    }
    if let Some(file) = &s.replay_of {
        facts.push(format!("replay of {file}"));
    }
    ui.label(facts.join("  ·  "));
    if let Some(g) = &s.gemm {
        ui.label(RichText::new(g).weak());
    }
}

/// `1`, `0.5`: a number without trailing zeros.
fn trim_number(v: f64) -> String {
    let t = format!("{v:.3}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The health report's `soak_*` checks, worst first.
fn verdict(ui: &mut Ui, report: &Report, running: bool) {
    let mut checks: Vec<&Check> = report
        .health
        .iter()
        .flat_map(|h| &h.checks)
        .filter(|c| c.check.id().starts_with("soak_"))
        .collect();
    checks.sort_by_key(|c| std::cmp::Reverse(c.verdict));
    ui.label(RichText::new("Verdict").strong());
    if checks.is_empty() {
        let text = if running {
            "The verdict comes when the soak ends."
        } else {
            "No soak verdict in this report."
        };
        ui.label(RichText::new(text).weak());
        return;
    }
    for c in checks {
        crate::ui::views::health::check_row(ui, c);
    }
}

/// Wrong results, Xids, skipped loads and notes, in time order (phase changes are the plots'
/// grey lines).
fn events(ui: &mut Ui, s: &SoakSection) {
    let mut list: Vec<_> = s
        .events
        .iter()
        .filter(|e| !matches!(e.kind, SoakEventKind::Phase { .. }))
        .collect();
    if list.is_empty() {
        return;
    }
    list.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    egui::CollapsingHeader::new(format!("Events ({})", list.len()))
        .default_open(true)
        .show(ui, |ui| {
            for e in list.iter().take(MAX_EVENTS) {
                let (what, color) = match &e.kind {
                    SoakEventKind::Mismatch { .. } => ("wrong result", palette::VERDICT_FAIL),
                    SoakEventKind::Xid { .. } => ("Xid", palette::VERDICT_FAIL),
                    SoakEventKind::Skipped { .. } => ("skipped", palette::VERDICT_WARN),
                    _ => ("note", palette::UNKNOWN),
                };
                ui.horizontal_wrapped(|ui| {
                    ui.label(RichText::new(clock(e.t_s)).monospace());
                    badge(ui, what, color);
                    if let Some(g) = e.gpu {
                        ui.label(RichText::new(format!("GPU {g}")).strong());
                    }
                    ui.label(&e.text);
                });
            }
            if list.len() > MAX_EVENTS {
                ui.label(
                    RichText::new(format!(
                        "… and {} more (report.json holds them all)",
                        list.len() - MAX_EVENTS
                    ))
                    .weak(),
                );
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_for_buttons() {
        assert_eq!(short_duration(300.0), "5 min");
        assert_eq!(short_duration(7200.0), "2 h");
        assert_eq!(short_duration(5400.0), "1 h 30 min");
        assert_eq!(short_duration(90.0), "1 min 30 s");
        assert_eq!(trim_number(1.0), "1");
        assert_eq!(trim_number(0.25), "0.25");
    }

    #[test]
    fn loads_needing_peers_drop_with_one_gpu() {
        let mut v = SoakView::default();
        v.panel.gpus = [0].into_iter().collect();
        assert_eq!(
            v.loads_to_run(),
            vec![SoakLoad::Gemm, SoakLoad::Memory, SoakLoad::Pcie]
        );
        v.panel.gpus.insert(1);
        assert_eq!(v.loads_to_run().len(), 5);
        v.duration = SoakLength::Off;
        assert!(v.soak_options().is_none());
        v.duration = SoakLength::Custom;
        v.custom = "1h30m".into();
        assert_eq!(v.soak_options().map(|s| s.duration_s), Some(5400.0));
        v.custom = "soon".into();
        assert!(v.soak_options().is_none());
    }
}
