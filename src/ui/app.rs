//! The App: the shell around the views. It keeps the window's frame — the top bar with the
//! File and View menus and the view tabs, the collapsible Sources panel, one notice area for the
//! warning banner and error lines — the shortcuts, and the routing of [`Action`]s to the parts
//! that own the state: the sources and what they hold ([`super::sources`], [`super::servers`],
//! [`super::shown`]), files in and out ([`super::files`]) and what a Save writes
//! ([`super::saving`]). The views it does not name: it loops over their tabs
//! ([`super::views::tabs`]) for the tab bar, and draws the selected one.
//!
//! NVML, ssh and file dialogs never run inside `ui()`: the parts' worker threads send their
//! results over channels and request a repaint; `ui()` takes them at the start of each frame.
//! Buttons, menu items and shortcuts push an [`Action`] that is handled after layout.

use std::path::PathBuf;

use eframe::egui::{self, RichText, Ui};
use serde::{Deserialize, Serialize};

use super::action::{Action, SaveKind, SourceKey, View};
use super::command::Command;
use super::files::{FileDialogs, FileRequest, Files, Opened};
use super::notices::{self, Notices};
use super::servers::{RECENT_HOSTS, ServerEntry, ServerEvent};
use super::sources::{ReportEntry, Sources};
use super::views::Views;
use super::views::fleet::FleetView;
use super::views::tabs::{Tabs, ViewCtx};
use super::{menus, report_view, saving};
use crate::model::Topology;
use crate::model::traffic::TrafficRecording;
use crate::report::Report;

/// Storage key for [`Settings`].
const SETTINGS_KEY: &str = "scalescope.settings";

/// What the app was started with.
#[derive(Clone, Debug, Default)]
pub struct Startup {
    /// `nvidia-smi` captures given on the command line (one machine), imported at startup.
    pub open_paths: Vec<String>,
    /// Reports (`report.json`) given on the command line, opened at startup; a folder among
    /// them is a fleet (node reports, `fleet run`'s folder), opened in the Fleet view.
    pub report_paths: Vec<PathBuf>,
    /// A server to connect to at startup (`scalescope --remote HOST`); its ssh command and
    /// remote command are also those of every server connected from the app.
    pub remote: Option<crate::remote::RemoteOptions>,
}

/// Small settings kept between runs (when eframe has storage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The open tab.
    pub view: View,
    /// Dark theme (the default) or light.
    pub dark_mode: bool,
    /// Servers connected to recently, newest first.
    pub recent_hosts: Vec<String>,
    /// The Sources side panel is shown (View → Sources panel, Ctrl+B).
    pub sidebar_open: bool,
    /// Names given to machines of opened reports (right-click → Rename in Sources), by
    /// `sources::rename_key`: applied whenever that report is opened again.
    pub machine_names: std::collections::BTreeMap<String, String>,
    /// The Compare view's Cost panel: prices per machine and the ranking's mode.
    pub cost: super::views::compare::CostSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            view: View::Topology,
            dark_mode: true,
            recent_hosts: Vec::new(),
            sidebar_open: true,
            machine_names: std::collections::BTreeMap::new(),
            cost: Default::default(),
        }
    }
}

/// How one panel's content fits the panel, recorded every frame (for layout tests: content
/// wider or taller than its panel is cut off unless it sits in a scroll area).
#[derive(Clone, Debug)]
pub struct PanelFit {
    /// Which panel: "top bar", "notices", "sources", "central".
    pub panel: &'static str,
    /// The panel's inner area.
    pub available: egui::Rect,
    /// What its content used.
    pub used: egui::Rect,
}

impl PanelFit {
    /// Whether the content reaches past the panel (half a point of rounding allowed).
    pub fn overflows(&self) -> bool {
        self.used.max.x > self.available.max.x + 0.5 || self.used.max.y > self.available.max.y + 0.5
    }
}

/// The scalescope window: sources on the left, the selected view in the middle.
pub struct App {
    settings: Settings,
    sources: Sources,
    files: Files,
    notices: Notices,
    /// One tab per view, the open fleet among them.
    tabs: Tabs,
    theme_applied: Option<bool>,
    /// How each panel's content fit last frame.
    fits: Vec<PanelFit>,
    /// First start (no window geometry stored yet): fit the window to the screen once its
    /// size is known.
    fit_window: bool,
}

impl App {
    /// The app as eframe creates it: reads settings, starts the NVML worker and reads the
    /// files given on the command line on worker threads.
    pub fn new(cc: &eframe::CreationContext<'_>, startup: Startup) -> Self {
        let settings = cc
            .storage
            .and_then(|s| s.get_string(SETTINGS_KEY))
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let mut app = Self::empty(settings);
        // eframe keeps the window's geometry under "window" once the app has run.
        app.fit_window = cc.storage.is_none_or(|s| s.get_string("window").is_none());
        let ctx = &cc.egui_ctx;
        app.sources.read_live(ctx);
        if !startup.open_paths.is_empty() {
            let paths = startup.open_paths.iter().map(PathBuf::from).collect();
            app.notices.note(app.files.read_captures(ctx, paths));
        }
        let (fleets, reports) = split_fleets(startup.report_paths);
        if !fleets.is_empty() {
            app.notices.note(app.files.read_fleet(ctx, fleets));
        }
        if !reports.is_empty() {
            app.notices.note(app.files.read_reports(ctx, reports));
        }
        app.sources.servers.remote_at_start(startup.remote);
        app
    }

    /// An app whose live result is already known, for tests and reports: nothing touches NVML,
    /// and the files of `startup` are read on the calling thread.
    pub fn new_with(live: Result<Topology, String>, startup: Startup) -> Self {
        Self::new_with_settings(live, startup, Settings::default())
    }

    /// [`App::new_with`] with settings as a previous run left them (what eframe's storage
    /// restores in [`App::new`]).
    pub fn new_with_settings(
        live: Result<Topology, String>,
        startup: Startup,
        settings: Settings,
    ) -> Self {
        let mut app = Self::empty(settings);
        app.sources.set_live(live);
        if !startup.open_paths.is_empty() {
            let paths: Vec<PathBuf> = startup.open_paths.iter().map(PathBuf::from).collect();
            let read = super::files::read_captures(&paths).map(Box::new);
            app.on_opened(Opened::Machine(read));
        }
        let (fleets, reports) = split_fleets(startup.report_paths);
        if !reports.is_empty() {
            let results = super::files::read_reports_or_soaks(&reports);
            app.on_opened(Opened::Reports(results));
        }
        if !fleets.is_empty() {
            let fleet = super::files::read_fleet(&fleets).map(Box::new);
            app.on_opened(Opened::Fleet(fleet));
        }
        app.sources.servers.remote_at_start(startup.remote);
        app
    }

    fn empty(settings: Settings) -> Self {
        Self {
            sources: Sources::new(&settings.machine_names),
            settings,
            files: Files::default(),
            notices: Notices::default(),
            tabs: Tabs::default(),
            theme_applied: None,
            fits: Vec::new(),
            fit_window: false,
        }
    }

    /// Opens a traffic recording already in memory (for tests and scripted use) as a source
    /// named `name`, shows it and starts its replay at the next frame.
    pub fn open_recording(&mut self, recording: TrafficRecording, name: &str) {
        self.on_opened(Opened::Recordings(vec![Ok((recording, name.to_string()))]));
    }

    /// Opens reports already in memory (for tests and scripted use) and shows the last one.
    pub fn open_reports(&mut self, reports: Vec<Report>) {
        self.on_opened(Opened::Reports(reports.into_iter().map(Ok).collect()));
    }

    /// The opened reports (the bundled examples first, when the build has any).
    pub fn reports(&self) -> &[ReportEntry] {
        self.sources.reports()
    }

    /// The report on screen, if a report is selected.
    pub fn current_report(&self) -> Option<&Report> {
        self.sources.current_report().map(|(r, _)| r)
    }

    /// The report the selected source holds, whatever it is: an opened report, or this
    /// machine's, a server's, a catalog or an imported machine's with what ran on it.
    pub fn shown_report(&self) -> Option<&Report> {
        self.sources.shown()
    }

    /// The measurement views' state on the selected source.
    pub fn views(&self) -> Option<&Views> {
        self.views_of(self.sources.selected())
    }

    /// The measurement views' state on the selected source, to change it.
    pub fn views_mut(&mut self) -> Option<&mut Views> {
        self.sources.shown_mut().map(|(_, v)| v)
    }

    /// The measurement views' state on source `key`.
    pub fn views_of(&self, key: &SourceKey) -> Option<&Views> {
        self.sources.get(key).map(|(_, v)| v)
    }

    /// Chooses file dialogs or the in-app path field (tests force the path field).
    pub fn set_file_dialogs(&mut self, dialogs: FileDialogs) {
        self.files.set_dialogs(dialogs);
    }

    /// How each panel's content fit its panel on the last frame.
    pub fn panel_fits(&self) -> &[PanelFit] {
        &self.fits
    }

    /// Whether the path field (the stand-in for a file dialog) is open.
    pub fn path_field_open(&self) -> bool {
        self.files.prompt_open()
    }

    /// The topology on screen, if one is loaded.
    pub fn current_topology(&self) -> Option<&Topology> {
        self.sources.shown().map(|r| &r.topology)
    }

    /// The servers connected to (or tried).
    pub fn servers(&self) -> &[ServerEntry] {
        self.sources.servers.list()
    }

    /// Adds a connected server as a source and shows it (for tests and scripted use; the app
    /// itself connects on a worker thread).
    pub fn add_server(&mut self, host: &str, client: crate::remote::Client, topology: Topology) {
        let i = self
            .sources
            .servers
            .add(host.to_string(), Box::new(client), Box::new(topology));
        self.on_server(ServerEvent::Ready(i));
    }

    /// What the top bar says is shown: on the Fleet view the fleet, else the selected source
    /// (a replay as the replay of its file, a report as a report).
    pub fn shown_label(&self) -> Option<String> {
        let fleet = (self.settings.view == View::Fleet)
            .then(|| self.tabs.fleet.source_label())
            .flatten();
        fleet.or_else(|| self.sources.shown_label())
    }

    /// The open fleet (the Fleet view's state), to read.
    pub fn fleet(&self) -> &FleetView {
        &self.tabs.fleet
    }

    /// The open fleet, to change what it shows (for tests and scripted use).
    pub fn fleet_mut(&mut self) -> &mut FleetView {
        &mut self.tabs.fleet
    }

    /// The view tabs the selected source shows, in tab order: each tab that says it is
    /// available (every view; Soak only where its report holds a soak or its GPUs can run one
    /// from here, Fleet only while a fleet is open).
    pub fn tabs(&self) -> Vec<View> {
        (self.tabs.iter().into_iter())
            .filter(|t| t.available(&self.sources))
            .map(|t| t.view())
            .collect()
    }

    /// The selected source.
    pub fn selected(&self) -> &SourceKey {
        self.sources.selected()
    }

    /// Why live data is unavailable, once the live read failed.
    pub fn live_error(&self) -> Option<&str> {
        self.sources.live_error()
    }

    /// The error line's text, if one is shown.
    pub fn error(&self) -> Option<&str> {
        self.notices.error.as_deref()
    }

    /// The status line's text ("Saved PATH"), if one is shown.
    pub fn status(&self) -> Option<&str> {
        self.notices.status.as_deref()
    }

    /// The settings (persisted when eframe has storage).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Names the n-th report's machine (an empty name restores the name from its GPUs) and
    /// remembers it for the next time that report is opened.
    pub fn rename_report(&mut self, i: usize, name: &str) {
        let names = &mut self.settings.machine_names;
        self.sources.rename_report(i, name, names);
    }

    /// Carries out one action, as the UI does after layout; what could not be done goes to
    /// the error line.
    pub fn apply(&mut self, ctx: &egui::Context, action: Action) {
        let (notices, files) = (&mut self.notices, &mut self.files);
        match action {
            Action::Select(key) => notices.note(self.sources.user_select(key)),
            Action::OpenDialog => notices.note(files.open(ctx, FileRequest::OpenSmi)),
            Action::OpenReportDialog => notices.note(files.open(ctx, FileRequest::OpenReport)),
            Action::OpenRecordingDialog => {
                notices.note(files.open(ctx, FileRequest::OpenRecording))
            }
            Action::OpenFleetDialog => notices.note(files.open(ctx, FileRequest::OpenFleet)),
            Action::OpenFleetNode(path) => {
                // Read as File → Open report reads; shown on its Topology view, the fleet kept.
                notices.note(files.read_reports(ctx, vec![path]));
                self.settings.view = View::Topology;
            }
            Action::CloseFleet => self.tabs.fleet.close(),
            Action::SaveRecording => notices.note(
                saving::recording_work(self.sources.shown())
                    .and_then(|work| files.save_recording(ctx, work)),
            ),
            Action::Save(kind) => self.save(ctx, kind),
            Action::PromptOk => {
                let (sources, reports) = (&self.sources, self.sources.reports());
                let (cost, fleet) = (&self.settings.cost, self.tabs.fleet.outcome());
                notices.note(files.prompt_ok(ctx, |view, kind| {
                    let all: Vec<&Report> = reports.iter().map(|e| &e.report).collect();
                    saving::work(view, kind, sources.shown(), &all, cost, fleet)
                }));
            }
            Action::PromptCancel => files.close_prompt(),
            Action::Connect(host) => notices.note(self.sources.servers.connect(ctx, &host, false)),
            Action::InstallOn(i) => notices.note(self.sources.servers.install_on(ctx, i)),
            Action::RunSuiteOn(i) => notices.note(self.sources.servers.run_suite_on(ctx, i)),
            Action::RenameReport(i, name) => self.rename_report(i, &name),
            Action::ToggleSidebar => self.settings.sidebar_open = !self.settings.sidebar_open,
            Action::SetView(v) => self.settings.view = v,
            Action::ToggleTheme => self.settings.dark_mode = !self.settings.dark_mode,
            Action::DismissError => notices.error = None,
            Action::DismissBanner => notices.banner_dismissed = true,
            Action::Quit => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
        }
    }

    /// Saves what the current view shows (or the report, as HTML).
    fn save(&mut self, ctx: &egui::Context, kind: SaveKind) {
        let view = self.settings.view;
        let reports: Vec<&Report> = self.sources.reports().iter().map(|e| &e.report).collect();
        let saved = saving::work(
            view,
            kind,
            self.sources.shown(),
            &reports,
            &self.settings.cost,
            self.tabs.fleet.outcome(),
        )
        .and_then(|work| self.files.save(ctx, view, kind, work));
        self.notices.note(saved);
    }

    /// Shows what a file worker read (or where a Save went).
    fn on_opened(&mut self, opened: Opened) {
        match opened {
            Opened::Reports(results) => {
                // A burn-in opened on its own (soak.csv, check --json) shows in the Soak view.
                let soak_only = results.iter().flatten().any(|r| {
                    r.soak.is_some()
                        && r.bandwidth.is_none()
                        && r.collectives.is_none()
                        && r.scaling.is_none()
                });
                if soak_only {
                    self.settings.view = View::Soak;
                }
                let names = &self.settings.machine_names;
                let errors = self.sources.open_reports(results, names);
                self.notices.error = (!errors.is_empty())
                    .then(|| format!("Cannot open report: {}", errors.join("; ")));
            }
            Opened::Machine(Ok(report)) => {
                self.sources.add_imported(*report);
                self.notices.error = None;
            }
            Opened::Machine(Err(e)) => self.notices.error = Some(format!("Import failed: {e}")),
            Opened::Recordings(results) => {
                let opened = self.sources.add_recordings(results);
                // A recording draws on its machine.
                self.settings.view = View::Topology;
                self.notices.error = opened.err();
            }
            Opened::Fleet(Ok(read)) => {
                self.tabs.fleet.open(read.outcome, read.inputs);
                self.settings.view = View::Fleet;
                self.notices.error = None;
            }
            Opened::Fleet(Err(e)) => self.notices.error = Some(e),
            Opened::Saved(Ok(path)) => self.notices.status = Some(format!("Saved {path}")),
            Opened::Saved(Err(e)) => self.notices.error = Some(format!("Save failed: {e}")),
        }
    }

    /// Shows what a server's worker reported.
    fn on_server(&mut self, event: ServerEvent) {
        match event {
            ServerEvent::Ready(i) => {
                let host = self.sources.servers.list()[i].host.clone();
                let recent = &mut self.settings.recent_hosts;
                recent.retain(|h| *h != host);
                recent.insert(0, host);
                recent.truncate(RECENT_HOSTS);
                let selected = self.sources.user_select(SourceKey::Server(i));
                self.notices.note(selected);
            }
            ServerEvent::SuiteReport(r) => self.on_opened(Opened::Reports(vec![Ok(*r)])),
            ServerEvent::Failed(e) => self.notices.error = Some(e),
        }
    }

    /// Takes what every worker sent since the last frame, and files dropped on the window.
    fn poll(&mut self, ctx: &egui::Context) {
        if let Some(host) = self.sources.servers.take_start() {
            let connected = self.sources.servers.connect(ctx, &host, false);
            self.notices.note(connected);
        }
        self.notices.note(self.sources.poll(ctx));
        for event in self.sources.servers.poll() {
            self.on_server(event);
        }
        for opened in self.files.poll() {
            self.on_opened(opened);
        }
        let dropped = self.files.dropped(ctx);
        self.notices.note(dropped);
    }

    /// Draws the whole window into `ui` (eframe's root ui, or a test harness's).
    pub fn show(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        self.apply_theme(&ctx);
        self.poll(&ctx);
        // A source without the open tab (Soak, where there is no soak) shows its Topology.
        if !self.tabs().contains(&self.settings.view) {
            self.settings.view = View::Topology;
        }

        let mut actions = Vec::new();
        self.shortcuts(&ctx, &mut actions);
        self.fits.clear();
        self.top_bar(ui, &mut actions);
        self.notices(ui, &mut actions);
        self.sources_panel(ui, &mut actions);
        egui::CentralPanel::default().show(ui, |ui| {
            let available = ui.max_rect();
            self.central(ui, &mut actions);
            self.fits.push(PanelFit {
                panel: "central",
                available,
                used: ui.min_rect(),
            });
        });
        self.files.prompt_ui(&ctx, &mut actions);
        super::files::drop_overlay(&ctx);

        for c in actions {
            self.apply(&ctx, c);
        }
    }

    /// Fonts and scroll bars on the first frame; the theme whenever the setting changed.
    fn apply_theme(&mut self, ctx: &egui::Context) {
        if self.theme_applied.is_none() {
            super::fonts::install(ctx);
            // Solid scroll bars, always shown where content scrolls: thin bars that appear
            // only on hover hide that a view is wider or taller than the window.
            ctx.all_styles_mut(|s| s.spacing.scroll = egui::style::ScrollStyle::solid());
        }
        if self.theme_applied != Some(self.settings.dark_mode) {
            ctx.set_theme(if self.settings.dark_mode {
                egui::Theme::Dark
            } else {
                egui::Theme::Light
            });
            self.theme_applied = Some(self.settings.dark_mode);
        }
    }

    /// The commands' keyboard shortcuts (Ctrl+O, Ctrl+S, Ctrl+B, Ctrl+Q; Cmd on macOS). Those
    /// that open or save a file wait while the path field is open.
    fn shortcuts(&self, ctx: &egui::Context, actions: &mut Vec<Action>) {
        for command in Command::WITH_SHORTCUTS {
            if command.uses_a_file() && self.files.prompt_open() {
                continue;
            }
            let Some(shortcut) = command.kb_shortcut() else {
                continue;
            };
            if ctx.input_mut(|i| i.consume_shortcut(&shortcut)) {
                actions.push(command.action());
            }
        }
    }

    /// The top bar: the File and View menus, the view tabs, and on the right where the data
    /// comes from and the theme switch.
    fn top_bar(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        let fit = egui::Panel::top("top-bar")
            .show(ui, |ui| {
                let available = ui.max_rect();
                ui.add_space(2.0);
                // One row: the menus, then the tabs (the menu bar takes the full width).
                egui::MenuBar::new().ui(ui, |ui| self.menu_row(ui, actions));
                ui.add_space(2.0);
                PanelFit {
                    panel: "top bar",
                    available,
                    used: ui.min_rect(),
                }
            })
            .inner;
        self.fits.push(fit);
    }

    /// The top bar's row: menus, the Sources button, the tabs; on the right the theme switch
    /// and what is shown.
    fn menu_row(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        let dialog_open = self.files.dialog_open();
        ui.menu_button("File", |ui| menus::file_menu(ui, dialog_open, actions));
        let s = &self.settings;
        ui.menu_button("View", |ui| {
            let tabs = self.tabs();
            menus::view_menu(ui, s.sidebar_open, s.dark_mode, &tabs, s.view, actions)
        });
        ui.separator();
        let (arrow, tip) = if self.settings.sidebar_open {
            ("◀ Sources", "Hide the Sources panel")
        } else {
            ("▶ Sources", "Show the Sources panel")
        };
        let tip = match Command::ToggleSidebar.kb_shortcut() {
            Some(s) => format!("{tip} ({})", ui.ctx().format_shortcut(&s)),
            None => tip.to_string(),
        };
        if ui.button(arrow).on_hover_text(tip).clicked() {
            actions.push(Action::ToggleSidebar);
        }
        ui.add_space(8.0);
        for view in &self.tabs() {
            let label = RichText::new(view.label()).size(14.0);
            let tab = egui::Button::selectable(self.settings.view == *view, label);
            if ui.add(tab).clicked() {
                actions.push(Action::SetView(*view));
            }
        }
        if self.files.judging_fleet() {
            ui.spinner();
            ui.label(RichText::new("judging the fleet…").weak());
        }
        let source = self.shown_label();
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let (icon, tip) = if self.settings.dark_mode {
                ("Light theme", "Switch to the light theme")
            } else {
                ("Dark theme", "Switch to the dark theme")
            };
            if ui.button(icon).on_hover_text(tip).clicked() {
                actions.push(Action::ToggleTheme);
            }
            if let Some(label) = &source {
                // Cut short (full text on hover) rather than push the bar wider.
                ui.add(egui::Label::new(RichText::new(label).weak()).truncate())
                    .on_hover_text(label);
            }
        });
    }

    /// The notice area under the top bar, when it has something to say.
    fn notices(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        let banner = self
            .sources
            .live_error()
            .filter(|_| !self.notices.banner_dismissed)
            .and_then(|reason| notices::banner(reason, |why| self.sources.stand_in(why)));
        if self.notices.error.is_none() && banner.is_none() && self.notices.status.is_none() {
            return;
        }
        let fit = egui::Panel::top("notices")
            .show(ui, |ui| {
                let available = ui.max_rect();
                self.notices.ui(ui, banner.as_ref(), actions);
                PanelFit {
                    panel: "notices",
                    available,
                    used: ui.min_rect(),
                }
            })
            .inner;
        self.fits.push(fit);
    }

    /// The Sources side panel; hidden with View → Sources panel, the top bar's button or
    /// Ctrl+B (and dragged open again from the window's left edge).
    fn sources_panel(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        let mut open = self.settings.sidebar_open;
        let (recent, dialog_open) = (&self.settings.recent_hosts, self.files.dialog_open());
        let sources = &mut self.sources;
        let fit = egui::Panel::left("sources")
            .default_size(270.0)
            .min_size(200.0)
            .show_collapsible(ui, &mut open, |ui| {
                let available = ui.max_rect();
                egui::ScrollArea::vertical()
                    .id_salt("sources-scroll")
                    .show(ui, |ui| sources.panel(ui, recent, dialog_open, actions));
                PanelFit {
                    panel: "sources",
                    available,
                    used: ui.min_rect(),
                }
            });
        self.settings.sidebar_open = open;
        if let Some(fit) = fit {
            self.fits.push(fit.inner);
        }
    }

    /// The central panel: the Save buttons and the report's provenance, then the view.
    fn central(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.horizontal(|ui| {
            saving::buttons(ui, actions);
            // The Fleet view is about the fleet, not the selected source.
            let fleet = self.settings.view == View::Fleet;
            if let Some(r) = self.current_report().filter(|_| !fleet) {
                let p = report_view::provenance(r);
                // Cut short (full text on hover) rather than push the view wider.
                ui.add(egui::Label::new(RichText::new(&p).weak()).truncate())
                    .on_hover_text(p);
            }
        });
        ui.add_space(4.0);
        let view = self.settings.view;
        let mut ctx = ViewCtx {
            sources: &mut self.sources,
            cost: &mut self.settings.cost,
            actions,
        };
        if let Some(tab) = self.tabs.iter_mut().into_iter().find(|t| t.view() == view) {
            tab.ui(ui, &mut ctx);
        }
    }
}

/// The command line's report paths: folders (fleets) apart from files (reports).
fn split_fleets(paths: Vec<PathBuf>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    paths.into_iter().partition(|p| p.is_dir())
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        if self.fit_window {
            self.fit_window = !fit_to_screen(ui.ctx());
        }
        self.show(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if let Ok(s) = serde_json::to_string(&self.settings) {
            storage.set_string(SETTINGS_KEY, s);
        }
    }
}

/// Shrinks a window larger than its screen (the 1,400 × 900 it opens at, on a 1,024 × 700
/// screen) to the screen, at its top-left corner. False while the screen's size is not known
/// yet (the first frames).
fn fit_to_screen(ctx: &egui::Context) -> bool {
    let (monitor, inner) = ctx.input(|i| (i.viewport().monitor_size, i.viewport().inner_rect));
    let (Some(monitor), Some(inner)) = (monitor, inner) else {
        return false;
    };
    let fit = inner.size().min(monitor);
    if fit != inner.size() {
        ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(fit));
        ctx.send_viewport_cmd(egui::ViewportCommand::OuterPosition(egui::Pos2::ZERO));
    }
    true
}
