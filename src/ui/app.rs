//! The App: state, the worker threads that fill it, and the shell around the views (top bar with
//! view tabs, the "Sources" side panel, banners and error lines).
//!
//! NVML and file dialogs never run inside `ui()`: worker threads send their results over a
//! channel and request a repaint; `ui()` drains the channel at the start of each frame. Buttons
//! push an [`Action`] that is handled after layout.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};

use eframe::egui::{self, Color32, CornerRadius, RichText, Ui};
use serde::{Deserialize, Serialize};

use super::bandwidth_view::BandwidthView;
use super::collectives_view::CollectivesView;
use super::scaling_view::ScalingView;
use super::{compare_view, palette, report_view, topology_view};
use crate::model::Topology;
use crate::report::Report;
use crate::topology::{catalog, import, live};

/// The catalog entry shown when live data is unavailable, if the catalog has it.
const PREFERRED_CATALOG: &str = "dgx-h100";
/// Storage key for [`Settings`].
const SETTINGS_KEY: &str = "scalescope.settings";

/// What the app was started with.
#[derive(Clone, Debug, Default)]
pub struct Startup {
    /// `nvidia-smi topo` text files given on the command line, imported at startup.
    pub open_paths: Vec<String>,
    /// Reports (`report.json`) given on the command line, opened at startup.
    pub report_paths: Vec<PathBuf>,
    /// A server to connect to at startup (`scalescope --remote HOST`); its ssh command and
    /// remote command are also those of every server connected from the app.
    pub remote: Option<crate::remote::RemoteOptions>,
}

/// The views, shown as tabs in the top bar. Each view lives in a file of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum View {
    /// How the GPUs and NICs are connected ([`topology_view`]).
    #[default]
    Topology,
    /// Copy bandwidth and latency ([`super::bandwidth_view`]).
    Bandwidth,
    /// NCCL and scalescope's own collectives ([`super::collectives_view`]).
    Collectives,
    /// Weak and strong scaling of workloads ([`super::scaling_view`]).
    Scaling,
    /// Opened reports side by side ([`super::compare_view`]).
    Compare,
}

impl View {
    /// Every view, in tab order.
    pub const ALL: &[View] = &[
        View::Topology,
        View::Bandwidth,
        View::Collectives,
        View::Scaling,
        View::Compare,
    ];

    /// The tab's label.
    pub fn label(&self) -> &'static str {
        match self {
            View::Topology => "Topology",
            View::Bandwidth => "Bandwidth",
            View::Collectives => "Collectives",
            View::Scaling => "Scaling",
            View::Compare => "Compare",
        }
    }
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
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            view: View::Topology,
            dark_mode: true,
            recent_hosts: Vec::new(),
        }
    }
}

/// How many servers "recent" remembers.
const RECENT_HOSTS: usize = 8;

/// Which topology is selected in the side panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceKey {
    /// This machine, read through NVML.
    Live,
    /// A catalog entry, by id.
    Catalog(String),
    /// The n-th imported topology.
    Imported(usize),
    /// The n-th opened (or bundled) report.
    Report(usize),
    /// The n-th server connected to (`--remote`, "Connect to server…").
    Server(usize),
}

/// A server the app connected to (or tries to).
pub struct ServerEntry {
    /// `[user@]host` as typed.
    pub host: String,
    pub state: ServerState,
}

/// Where a server's connection stands.
pub enum ServerState {
    Connecting,
    /// Connected: jobs go through `runner`; `topology` is the server's live machine.
    Ready {
        runner: super::jobs::SharedRunner,
        topology: Box<Topology>,
        /// A quick suite is running there (its report will appear under Reports).
        suite_running: bool,
    },
    /// Why not; `not_installed`: the server has no scalescope (the app offers to copy it).
    Failed {
        reason: String,
        not_installed: bool,
    },
}

/// An opened report and the views filled with its results.
pub struct ReportEntry {
    pub report: Report,
    /// The bundled example (not a file the user opened).
    pub example: bool,
    bandwidth: Option<BandwidthView>,
    collectives: Option<CollectivesView>,
    scaling: Option<ScalingView>,
}

impl ReportEntry {
    /// A report with its views built.
    pub fn new(report: Report, example: bool) -> Self {
        Self {
            bandwidth: report_view::bandwidth_view(&report),
            collectives: report_view::collectives_view(&report),
            scaling: report_view::scaling_view(&report, 2),
            report,
            example,
        }
    }
}

/// What a Save button saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveKind {
    Csv,
    Png,
}

/// The state of the live (NVML) read.
enum LiveState {
    /// The `scalescope-nvml` thread is still reading.
    Loading,
    Ready(Box<Topology>),
    /// Why live data is unavailable (the error's text).
    Failed(String),
}

/// What worker threads send back.
enum Msg {
    Live(Result<Topology, String>),
    Imported(Result<Topology, String>),
    /// Reports read from files (each with the error naming its file).
    Reports(Vec<Result<Report, String>>),
    /// A Save finished: where, or why not (`None`: the dialog was closed).
    Saved(Option<Result<String, String>>),
    /// The file dialog closed without a choice.
    DialogClosed,
    /// A connection attempt ended: the client and the server's topology, or why not (and
    /// whether scalescope is missing there).
    Server {
        host: String,
        result: Result<(Box<crate::remote::Client>, Box<Topology>), (String, bool)>,
    },
    /// A server's quick suite ended.
    ServerSuite {
        host: String,
        result: Result<Box<Report>, String>,
    },
}

/// Something the user asked for during layout, handled after it.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Show this source.
    Select(SourceKey),
    /// Open the file dialog to import `nvidia-smi topo` output.
    OpenDialog,
    /// Open the file dialog to open reports (`report.json`).
    OpenReportDialog,
    /// Save the current view as CSV or PNG (a save dialog on a worker thread).
    Save(SaveKind),
    /// Switch to this view.
    SetView(View),
    /// Toggle dark/light theme.
    ToggleTheme,
    /// Hide the error line.
    DismissError,
    /// Hide the "live data unavailable" banner.
    DismissBanner,
    /// Connect to this server (`[user@]host`).
    Connect(String),
    /// Copy this binary to the n-th server, then connect.
    InstallOn(usize),
    /// Run the quick suite on the n-th server; its report joins Reports (and Compare).
    RunSuiteOn(usize),
}

/// The scalescope window: sources on the left, the selected view in the middle.
pub struct App {
    settings: Settings,
    /// The Bandwidth view's state (selection, running job, results).
    pub bandwidth: BandwidthView,
    /// The Collectives view's state.
    pub collectives: CollectivesView,
    /// The Scaling view's state.
    pub scaling: ScalingView,

    live: LiveState,
    catalog: Vec<catalog::CatalogEntry>,
    imported: Vec<Topology>,
    reports: Vec<ReportEntry>,
    /// A line saying where the last Save went.
    status: Option<String>,
    selected: SourceKey,
    /// The loaded topology of a selected catalog entry (live and imported ones are kept above).
    catalog_topology: Option<Topology>,
    error: Option<String>,
    banner_dismissed: bool,
    /// Whether the user picked a source themselves (then a late live failure does not move them).
    user_selected: bool,
    dialog_open: bool,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    theme_applied: Option<bool>,
    /// Servers connected to (or tried).
    servers: Vec<ServerEntry>,
    /// The "Connect to server…" field.
    pub server_field: String,
    /// The ssh and remote actions every connection uses (from `--ssh`, `--remote-command`).
    remote_defaults: crate::remote::RemoteOptions,
    /// The server named by `--remote`, connected to on the first frame.
    connect_on_start: Option<String>,
}

impl App {
    /// The app as eframe creates it: reads settings, starts the NVML worker and imports the
    /// files given on the command line.
    pub fn new(cc: &eframe::CreationContext<'_>, startup: Startup) -> Self {
        let settings = cc
            .storage
            .and_then(|s| s.get_string(SETTINGS_KEY))
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let mut app = Self::empty(settings, LiveState::Loading);
        let ctx = cc.egui_ctx.clone();
        let tx = app.tx.clone();
        let spawned = std::thread::Builder::new()
            .name("scalescope-nvml".into())
            .spawn(move || {
                let result = live::read().map_err(|e| e.to_string());
                // The receiver is gone only when the window closed; nothing left to tell.
                let _ = tx.send(Msg::Live(result));
                ctx.request_repaint();
            });
        if let Err(e) = spawned {
            app.live_failed(format!("cannot start the NVML reader thread: {e}"));
        }
        if !startup.open_paths.is_empty() {
            app.spawn_import(cc.egui_ctx.clone(), startup.open_paths);
        }
        if !startup.report_paths.is_empty() {
            app.spawn_open_reports(cc.egui_ctx.clone(), startup.report_paths);
        }
        app.remote_at_start(startup.remote);
        app
    }

    /// An app whose live result is already known, for tests and reports: nothing touches NVML,
    /// and `startup.open_paths` are imported on the calling thread.
    pub fn new_with(live: Result<Topology, String>, startup: Startup) -> Self {
        let mut app = Self::empty(Settings::default(), LiveState::Loading);
        app.set_live(live);
        if !startup.open_paths.is_empty() {
            let result = import::import_paths(&startup.open_paths).map_err(|e| e.to_string());
            app.on_imported(result);
        }
        if !startup.report_paths.is_empty() {
            let results = read_reports(&startup.report_paths);
            app.on_reports(results);
        }
        app.remote_at_start(startup.remote);
        app
    }

    /// Takes the ssh settings of `--remote` for every connection, and connects to its host on
    /// the first frame.
    fn remote_at_start(&mut self, remote: Option<crate::remote::RemoteOptions>) {
        if let Some(r) = remote {
            self.connect_on_start = Some(r.host.clone());
            self.remote_defaults = r;
        }
    }

    /// Opens reports already in memory (for tests and scripted use) and shows the last one.
    pub fn open_reports(&mut self, reports: Vec<Report>) {
        self.on_reports(reports.into_iter().map(Ok).collect());
    }

    /// The opened reports (the bundled examples first, when the build has any).
    pub fn reports(&self) -> &[ReportEntry] {
        &self.reports
    }

    /// The report on screen, if a report is selected.
    pub fn current_report(&self) -> Option<&Report> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i).map(|e| &e.report),
            _ => None,
        }
    }

    fn empty(settings: Settings, live: LiveState) -> Self {
        let (tx, rx) = channel();
        Self {
            settings,
            bandwidth: BandwidthView::default(),
            collectives: CollectivesView::default(),
            scaling: ScalingView::default(),
            live,
            catalog: catalog::entries(),
            imported: Vec::new(),
            // Every bundled report that parses, as an example (a broken one is caught by
            // `bundled`'s tests rather than shown as an error here).
            reports: crate::report::bundled::reports()
                .into_iter()
                .filter_map(|(_, r)| r.ok())
                .map(|r| ReportEntry::new(r, true))
                .collect(),
            status: None,
            selected: SourceKey::Live,
            catalog_topology: None,
            error: None,
            banner_dismissed: false,
            user_selected: false,
            dialog_open: false,
            tx,
            rx,
            theme_applied: None,
            servers: Vec::new(),
            server_field: String::new(),
            remote_defaults: Default::default(),
            connect_on_start: None,
        }
    }

    /// The topology on screen, if one is loaded.
    pub fn current_topology(&self) -> Option<&Topology> {
        match &self.selected {
            SourceKey::Live => match &self.live {
                LiveState::Ready(t) => Some(t),
                _ => None,
            },
            SourceKey::Catalog(_) => self.catalog_topology.as_ref(),
            SourceKey::Imported(i) => self.imported.get(*i),
            SourceKey::Report(i) => self.reports.get(*i).map(|e| &e.report.topology),
            SourceKey::Server(i) => match self.servers.get(*i).map(|s| &s.state) {
                Some(ServerState::Ready { topology, .. }) => Some(topology),
                _ => None,
            },
        }
    }

    /// The servers connected to (or tried).
    pub fn servers(&self) -> &[ServerEntry] {
        &self.servers
    }

    /// Adds a connected server as a source and shows it (for tests and scripted use; the app
    /// itself connects on a worker thread).
    pub fn add_server(&mut self, host: &str, client: crate::remote::Client, topology: Topology) {
        self.on_server(host.to_string(), Ok((Box::new(client), Box::new(topology))));
    }

    /// Starts connecting to `host` on a worker thread (after copying this binary there when
    /// `install`); the server shows under Servers at once, connecting.
    fn connect(&mut self, ctx: egui::Context, host: String, install: bool) {
        let host = host.trim().to_string();
        if host.is_empty() {
            return;
        }
        let entry = ServerEntry {
            host: host.clone(),
            state: ServerState::Connecting,
        };
        match self.servers.iter().position(|s| s.host == host) {
            Some(i) => self.servers[i] = entry,
            None => self.servers.push(entry),
        }
        let opts = crate::remote::RemoteOptions {
            host: host.clone(),
            ..self.remote_defaults.clone()
        };
        self.spawn_worker(ctx, "scalescope-connect", move || {
            let result = (|| {
                if install {
                    crate::remote::client::install(&opts).map_err(|e| (e.to_string(), false))?;
                }
                let mut client = crate::remote::Client::connect(&opts).map_err(|e| {
                    let missing = matches!(e, crate::remote::ConnectError::NotInstalled { .. });
                    (e.to_string(), missing)
                })?;
                let topology = client.topology(None).map_err(|e| (e.message, false))?;
                Ok((Box::new(client), Box::new(topology)))
            })();
            Msg::Server { host, result }
        });
    }

    fn on_server(
        &mut self,
        host: String,
        result: Result<(Box<crate::remote::Client>, Box<Topology>), (String, bool)>,
    ) {
        let state = match result {
            Ok((client, topology)) => ServerState::Ready {
                runner: std::sync::Arc::new(std::sync::Mutex::new(crate::remote::Runner::Remote(
                    client,
                ))),
                topology,
                suite_running: false,
            },
            Err((reason, not_installed)) => ServerState::Failed {
                reason,
                not_installed,
            },
        };
        let ready = matches!(state, ServerState::Ready { .. });
        let i = match self.servers.iter().position(|s| s.host == host) {
            Some(i) => {
                self.servers[i].state = state;
                i
            }
            None => {
                self.servers.push(ServerEntry {
                    host: host.clone(),
                    state,
                });
                self.servers.len() - 1
            }
        };
        if ready {
            let recent = &mut self.settings.recent_hosts;
            recent.retain(|h| *h != host);
            recent.insert(0, host);
            recent.truncate(RECENT_HOSTS);
            self.user_selected = true;
            self.select(SourceKey::Server(i));
        }
    }

    /// Runs the quick suite on a connected server; its report joins Reports when it ends.
    fn run_suite_on(&mut self, ctx: egui::Context, i: usize) {
        let Some(ServerEntry {
            host,
            state:
                ServerState::Ready {
                    runner,
                    suite_running,
                    ..
                },
        }) = self.servers.get_mut(i)
        else {
            return;
        };
        if *suite_running {
            return;
        }
        *suite_running = true;
        let (runner, host) = (runner.clone(), host.clone());
        let job = crate::job::Job::Suite {
            target: crate::job::Target::Live,
            options: crate::job::SuiteOptions {
                stages: crate::job::Stage::ALL.to_vec(),
                ..Default::default()
            },
        };
        self.spawn_worker(ctx, "scalescope-server-suite", move || {
            let cancel = std::sync::atomic::AtomicBool::new(false);
            let result = match runner.lock() {
                Ok(mut r) => r
                    .run(&job, &cancel, &mut |_| {})
                    .map(Box::new)
                    .map_err(|e| e.message),
                Err(_) => Err("the server connection is broken".to_string()),
            };
            Msg::ServerSuite { host, result }
        });
    }

    /// The server the selected source belongs to: its connection and name.
    fn current_runner(&self) -> Option<(super::jobs::SharedRunner, String)> {
        match self.selected {
            SourceKey::Server(i) => match self.servers.get(i) {
                Some(ServerEntry {
                    host,
                    state: ServerState::Ready { runner, .. },
                }) => Some((runner.clone(), host.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// The selected source.
    pub fn selected(&self) -> &SourceKey {
        &self.selected
    }

    /// Why live data is unavailable, once the live read failed.
    pub fn live_error(&self) -> Option<&str> {
        match &self.live {
            LiveState::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// The error line's text, if one is shown.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The settings (persisted when eframe has storage).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Carries out one action, as the UI does after layout.
    pub fn apply(&mut self, ctx: &egui::Context, action: Action) {
        match action {
            Action::Select(key) => {
                self.user_selected = true;
                self.select(key);
            }
            Action::OpenDialog => self.open_dialog(ctx.clone()),
            Action::OpenReportDialog => self.open_report_dialog(ctx.clone()),
            Action::Save(kind) => self.save(ctx.clone(), kind),
            Action::SetView(v) => self.settings.view = v,
            Action::ToggleTheme => self.settings.dark_mode = !self.settings.dark_mode,
            Action::DismissError => self.error = None,
            Action::DismissBanner => self.banner_dismissed = true,
            Action::Connect(host) => self.connect(ctx.clone(), host, false),
            Action::InstallOn(i) => {
                if let Some(host) = self.servers.get(i).map(|s| s.host.clone()) {
                    self.connect(ctx.clone(), host, true);
                }
            }
            Action::RunSuiteOn(i) => self.run_suite_on(ctx.clone(), i),
        }
    }

    fn set_live(&mut self, live: Result<Topology, String>) {
        match live {
            Ok(t) => {
                self.live = LiveState::Ready(Box::new(t));
            }
            Err(e) => self.live_failed(e),
        }
    }

    fn live_failed(&mut self, reason: String) {
        self.live = LiveState::Failed(reason);
        if self.selected == SourceKey::Live && !self.user_selected {
            // The first bundled example (measured on a real machine) beats a catalog entry.
            if let Some(i) = self.reports.iter().position(|e| e.example) {
                self.select(SourceKey::Report(i));
                return;
            }
            let id = self
                .catalog
                .iter()
                .find(|e| e.id == PREFERRED_CATALOG)
                .or_else(|| self.catalog.first())
                .map(|e| e.id.clone());
            if let Some(id) = id {
                self.select(SourceKey::Catalog(id));
            }
        }
    }

    fn select(&mut self, key: SourceKey) {
        match &key {
            SourceKey::Catalog(id) => match catalog::load(id) {
                Ok(t) => self.catalog_topology = Some(t),
                Err(e) => {
                    self.error = Some(format!("Cannot load catalog entry {id}: {e}"));
                    return;
                }
            },
            SourceKey::Imported(i) if *i >= self.imported.len() => return,
            SourceKey::Report(i) if *i >= self.reports.len() => return,
            SourceKey::Server(i)
                if !matches!(
                    self.servers.get(*i).map(|s| &s.state),
                    Some(ServerState::Ready { .. })
                ) =>
            {
                return;
            }
            SourceKey::Live if matches!(self.live, LiveState::Failed(_)) => return,
            _ => {}
        }
        self.selected = key;
    }

    fn on_imported(&mut self, result: Result<Topology, String>) {
        match result {
            Ok(t) => {
                self.imported.push(t);
                self.user_selected = true;
                self.select(SourceKey::Imported(self.imported.len() - 1));
                self.error = None;
            }
            Err(e) => self.error = Some(format!("Import failed: {e}")),
        }
    }

    fn on_reports(&mut self, results: Vec<Result<Report, String>>) {
        let mut errors = Vec::new();
        for r in results {
            match r {
                Ok(report) => {
                    // A report already open (a bundled example opened from its file, or a file
                    // opened twice) is selected, not listed again.
                    let i = match self.reports.iter().position(|e| e.report == report) {
                        Some(i) => i,
                        None => {
                            self.reports.push(ReportEntry::new(report, false));
                            self.reports.len() - 1
                        }
                    };
                    self.user_selected = true;
                    self.select(SourceKey::Report(i));
                }
                Err(e) => errors.push(e),
            }
        }
        self.error =
            (!errors.is_empty()).then(|| format!("Cannot open report: {}", errors.join("; ")));
    }

    /// Runs `work` on a thread named `name`, sends its message and wakes the UI; a thread that
    /// cannot start becomes the error line. Returns whether it started.
    fn spawn_worker(
        &mut self,
        ctx: egui::Context,
        name: &str,
        work: impl FnOnce() -> Msg + Send + 'static,
    ) -> bool {
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                // The receiver is gone only when the window closed; nothing left to tell.
                let _ = tx.send(work());
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => true,
            Err(e) => {
                self.error = Some(format!("Cannot start the {name} thread: {e}"));
                false
            }
        }
    }

    fn spawn_open_reports(&mut self, ctx: egui::Context, paths: Vec<PathBuf>) {
        self.spawn_worker(ctx, "scalescope-report", move || {
            Msg::Reports(read_reports(&paths))
        });
    }

    fn open_report_dialog(&mut self, ctx: egui::Context) {
        if self.dialog_open {
            return;
        }
        self.dialog_open = self.spawn_worker(ctx, "scalescope-open", || {
            match pick_files("Open scalescope reports", "scalescope report", &["json"]) {
                Ok(Some(paths)) => Msg::Reports(read_reports(&paths)),
                Ok(None) => Msg::DialogClosed,
                Err(()) => Msg::Reports(vec![Err(
                    "the file dialog failed; drop the report onto the window instead".into(),
                )]),
            }
        });
    }

    /// What the current view would save: a file name and the bytes, made on the worker thread.
    fn save_job(&self, kind: SaveKind) -> Option<(String, SaveWork)> {
        let view = self.settings.view;
        let topo = self.current_topology()?.clone();
        let base = view.label().to_lowercase();
        let ext = match kind {
            SaveKind::Csv => "csv",
            SaveKind::Png => "png",
        };
        let name = format!("{base}.{ext}");
        let w = report_view::PAGE_WIDTH;
        let work: SaveWork = match (view, kind) {
            (View::Topology, SaveKind::Csv) => {
                Box::new(move || crate::export::csv::links(&topo).map_err(|e| e.to_string()))
            }
            (View::Topology, SaveKind::Png) => {
                let health = self.current_report().and_then(|r| r.health.clone());
                Box::new(move || {
                    report_view::render_topology_with_health(&topo, health.as_ref())
                        .map_err(|e| format!("{e:#}"))
                })
            }
            (View::Bandwidth, _) => {
                let data = self.current_bandwidth()?.data()?.clone();
                match kind {
                    SaveKind::Csv => Box::new(move || {
                        crate::export::csv::bandwidth(&data.results).map_err(|e| e.to_string())
                    }),
                    SaveKind::Png => Box::new(move || {
                        let mut v = BandwidthView::with_results(&topo, data);
                        super::snapshot::render_png(w, 1400, self_theme(), move |ui| {
                            v.ui(ui, &topo)
                        })
                        .map_err(|e| format!("{e:#}"))
                    }),
                }
            }
            (View::Collectives, _) => {
                let data = self.current_collectives()?.data()?.clone();
                match kind {
                    SaveKind::Csv => Box::new(move || {
                        crate::export::csv::collectives(&data.results).map_err(|e| e.to_string())
                    }),
                    SaveKind::Png => Box::new(move || {
                        let mut v = CollectivesView::with_results(&topo, data);
                        super::snapshot::render_png(w, 1100, self_theme(), move |ui| {
                            v.ui(ui, &topo)
                        })
                        .map_err(|e| format!("{e:#}"))
                    }),
                }
            }
            (View::Scaling, _) => {
                let run = self.current_scaling()?.export_run();
                match kind {
                    SaveKind::Csv => Box::new(move || {
                        crate::export::csv::scaling(&run.rows).map_err(|e| e.to_string())
                    }),
                    SaveKind::Png => Box::new(move || {
                        let shown = run.workloads.len().max(1);
                        let h = (420 + 620 * shown as u32).min(8192);
                        let mut v = ScalingView::with_report(run, shown);
                        super::snapshot::render_png(w, h, self_theme(), move |ui| v.ui(ui, &topo))
                            .map_err(|e| format!("{e:#}"))
                    }),
                }
            }
            (View::Compare, _) => {
                let reports: Vec<Report> = self.reports.iter().map(|e| e.report.clone()).collect();
                match kind {
                    SaveKind::Csv => Box::new(move || {
                        let refs: Vec<&Report> = reports.iter().collect();
                        crate::report::compare::to_csv(&crate::report::compare::compare(
                            &refs, None,
                        ))
                        .map_err(|e| e.to_string())
                    }),
                    SaveKind::Png => Box::new(move || {
                        super::snapshot::render_png(w, 1600, self_theme(), move |ui| {
                            let refs: Vec<&Report> = reports.iter().collect();
                            compare_view::show(ui, &refs, None)
                        })
                        .map_err(|e| format!("{e:#}"))
                    }),
                }
            }
        };
        Some((name, work))
    }

    fn save(&mut self, ctx: egui::Context, kind: SaveKind) {
        let Some((name, work)) = self.save_job(kind) else {
            self.error = Some("Nothing to save in this view yet.".into());
            return;
        };
        self.spawn_worker(ctx, "scalescope-save", move || {
            let picked = std::panic::catch_unwind(|| {
                rfd::FileDialog::new()
                    .set_title("Save")
                    .set_file_name(&name)
                    .save_file()
            });
            match picked {
                Ok(Some(path)) => Msg::Saved(Some(work().and_then(|bytes| {
                    std::fs::write(&path, bytes)
                        .map(|_| path.display().to_string())
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))
                }))),
                Ok(None) => Msg::Saved(None),
                Err(_) => Msg::Saved(Some(Err("the save dialog failed".into()))),
            }
        });
    }

    fn current_bandwidth(&self) -> Option<&BandwidthView> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i)?.bandwidth.as_ref(),
            _ => Some(&self.bandwidth),
        }
    }

    fn current_collectives(&self) -> Option<&CollectivesView> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i)?.collectives.as_ref(),
            _ => Some(&self.collectives),
        }
    }

    fn current_scaling(&self) -> Option<&ScalingView> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i)?.scaling.as_ref(),
            _ => Some(&self.scaling),
        }
    }

    fn spawn_import(&mut self, ctx: egui::Context, paths: Vec<String>) {
        self.spawn_worker(ctx, "scalescope-import", move || {
            Msg::Imported(import::import_paths(&paths).map_err(|e| e.to_string()))
        });
    }

    fn open_dialog(&mut self, ctx: egui::Context) {
        if self.dialog_open {
            return;
        }
        self.dialog_open = self.spawn_worker(ctx, "scalescope-open", || {
            match pick_files(
                "Open nvidia-smi topo output",
                "nvidia-smi output",
                &["txt", "log", "out"],
            ) {
                Ok(Some(paths)) => {
                    let paths: Vec<String> =
                        paths.iter().map(|p| p.display().to_string()).collect();
                    Msg::Imported(import::import_paths(&paths).map_err(|e| e.to_string()))
                }
                Ok(None) => Msg::DialogClosed,
                Err(()) => Msg::Imported(Err(
                    "the file dialog failed; drop the file onto the window instead".into(),
                )),
            }
        });
    }

    /// Drains the worker channel.
    fn poll_workers(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(Msg::Live(r)) => self.set_live(r),
                Ok(Msg::Imported(r)) => {
                    self.dialog_open = false;
                    self.on_imported(r);
                }
                Ok(Msg::Reports(r)) => {
                    self.dialog_open = false;
                    self.on_reports(r);
                }
                Ok(Msg::Saved(Some(Ok(path)))) => self.status = Some(format!("Saved {path}")),
                Ok(Msg::Saved(Some(Err(e)))) => self.error = Some(format!("Save failed: {e}")),
                Ok(Msg::Saved(None)) => {}
                Ok(Msg::DialogClosed) => self.dialog_open = false,
                Ok(Msg::Server { host, result }) => self.on_server(host, result),
                Ok(Msg::ServerSuite { host, result }) => {
                    if let Some(ServerEntry {
                        state: ServerState::Ready { suite_running, .. },
                        ..
                    }) = self.servers.iter_mut().find(|s| s.host == host)
                    {
                        *suite_running = false;
                    }
                    match result {
                        Ok(r) => self.on_reports(vec![Ok(*r)]),
                        Err(e) => self.error = Some(format!("Suite on {host} failed: {e}")),
                    }
                }
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
    }

    /// Imports files dropped onto the window.
    fn handle_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        if dropped.is_empty() {
            return;
        }
        // Native drops carry absolute paths; the files are read on worker threads. A .json file
        // is a report; anything else is nvidia-smi text.
        let (reports, texts): (Vec<PathBuf>, Vec<PathBuf>) = dropped
            .iter()
            .map(|f| f.path().to_path_buf())
            .partition(|p| {
                p.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            });
        if !reports.is_empty() {
            self.spawn_open_reports(ctx.clone(), reports);
        }
        if !texts.is_empty() {
            let paths = texts.iter().map(|p| p.display().to_string()).collect();
            self.spawn_import(ctx.clone(), paths);
        }
    }

    /// Draws the whole window into `ui` (eframe's root ui, or a test harness's).
    pub fn show(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        if self.theme_applied.is_none() {
            super::fonts::install(&ctx);
        }
        if self.theme_applied != Some(self.settings.dark_mode) {
            ctx.set_theme(if self.settings.dark_mode {
                egui::Theme::Dark
            } else {
                egui::Theme::Light
            });
            self.theme_applied = Some(self.settings.dark_mode);
        }
        if let Some(host) = self.connect_on_start.take() {
            self.connect(ctx.clone(), host, false);
        }
        self.poll_workers();
        self.handle_dropped_files(&ctx);

        let mut actions = Vec::new();
        self.top_bar(ui, &mut actions);
        self.sources_panel(ui, &mut actions);
        egui::CentralPanel::default().show(ui, |ui| self.central(ui, &mut actions));
        drop_overlay(&ctx);

        for c in actions {
            self.apply(&ctx, c);
        }
    }

    fn top_bar(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        egui::Panel::top("top-bar").show(ui, |ui| {
            ui.add_space(4.0);
            ui.horizontal(|ui| {
                ui.label(RichText::new("scalescope").strong().size(17.0));
                ui.add_space(16.0);
                for view in View::ALL {
                    let tab = ui.add(egui::Button::selectable(
                        self.settings.view == *view,
                        RichText::new(view.label()).size(14.0),
                    ));
                    if tab.clicked() {
                        actions.push(Action::SetView(*view));
                    }
                }
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    let (icon, tip) = if self.settings.dark_mode {
                        ("Light theme", "Switch to the light theme")
                    } else {
                        ("Dark theme", "Switch to the dark theme")
                    };
                    if ui.button(icon).on_hover_text(tip).clicked() {
                        actions.push(Action::ToggleTheme);
                    }
                    if let Some(t) = self.current_topology() {
                        ui.label(RichText::new(t.source.label()).weak());
                    }
                });
            });
            ui.add_space(2.0);
        });
    }

    fn sources_panel(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        egui::Panel::left("sources")
            .default_size(270.0)
            .min_size(200.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    ui.add_space(6.0);
                    ui.label(RichText::new("Sources").strong().size(16.0));
                    ui.add_space(6.0);
                    self.live_entry(ui, actions);
                    ui.add_space(8.0);
                    self.servers_section(ui, actions);
                    ui.add_space(8.0);
                    ui.label(RichText::new("Hardware catalog").weak());
                    for entry in &self.catalog {
                        let selected = self.selected == SourceKey::Catalog(entry.id.clone());
                        ui.horizontal(|ui| {
                            topology_view::badge(ui, "catalog", palette::source_badge("catalog"));
                            let r = ui
                                .add(egui::Button::selectable(selected, entry.name.as_str()).wrap())
                                .on_hover_text(format!(
                                    "{}\ncatalog id: {}\nDocumented by the vendor, not measured.",
                                    entry.summary, entry.id
                                ));
                            if r.clicked() {
                                actions.push(Action::Select(SourceKey::Catalog(entry.id.clone())));
                            }
                        });
                    }
                    ui.add_space(8.0);
                    ui.label(RichText::new("Imported").weak());
                    if self.imported.is_empty() {
                        ui.label(RichText::new("nothing imported yet").italics().weak());
                    }
                    for (i, t) in self.imported.iter().enumerate() {
                        let selected = self.selected == SourceKey::Imported(i);
                        ui.horizontal(|ui| {
                            topology_view::badge(ui, "imported", palette::source_badge("imported"));
                            let r = ui
                                .add(
                                    egui::Button::selectable(selected, topology_view::title(t))
                                        .wrap(),
                                )
                                .on_hover_text(t.source.label());
                            if r.clicked() {
                                actions.push(Action::Select(SourceKey::Imported(i)));
                            }
                        });
                    }
                    ui.add_space(8.0);
                    ui.label(RichText::new("Reports").weak());
                    if self.reports.is_empty() {
                        ui.label(RichText::new("no report opened").italics().weak());
                    }
                    for (i, e) in self.reports.iter().enumerate() {
                        let selected = self.selected == SourceKey::Report(i);
                        let kind = if e.example { "example" } else { "report" };
                        ui.horizontal(|ui| {
                            topology_view::badge(ui, kind, palette::source_badge("live"));
                            let r = ui
                                .add(egui::Button::selectable(selected, e.report.title()).wrap())
                                .on_hover_text(report_view::provenance(&e.report));
                            if r.clicked() {
                                actions.push(Action::Select(SourceKey::Report(i)));
                            }
                        });
                    }
                    ui.add_space(10.0);
                    let open_report = ui.add_enabled(
                        !self.dialog_open,
                        egui::Button::new("Open report…"),
                    );
                    if open_report
                        .on_hover_text("Open report.json files written by `scalescope --bench`")
                        .clicked()
                    {
                        actions.push(Action::OpenReportDialog);
                    }
                    let open = ui.add_enabled(
                        !self.dialog_open,
                        egui::Button::new("Open nvidia-smi output…"),
                    );
                    if open
                        .on_hover_text(
                            "Import the text of `nvidia-smi topo -m` (and optionally `topo -p2p r|w|n|a`) \
                             captured on any machine",
                        )
                        .clicked()
                    {
                        actions.push(Action::OpenDialog);
                    }
                    ui.label(
                        RichText::new("or drop report .json or nvidia-smi text files onto this window")
                            .size(11.5)
                            .weak(),
                    );
                });
            });
    }

    /// Servers: each with its state, and "Connect to server…" with the recent hosts.
    fn servers_section(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.label(RichText::new("Servers (over ssh)").weak());
        for (i, s) in self.servers.iter().enumerate() {
            let selected = self.selected == SourceKey::Server(i);
            match &s.state {
                ServerState::Connecting => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label(format!("{} (connecting…)", s.host));
                    });
                }
                ServerState::Ready {
                    topology,
                    suite_running,
                    ..
                } => {
                    ui.horizontal(|ui| {
                        topology_view::badge(ui, "server", palette::source_badge("live"));
                        let r = ui
                            .add(
                                egui::Button::selectable(
                                    selected,
                                    format!("{} · {} GPUs", s.host, topology.gpus.len()),
                                )
                                .wrap(),
                            )
                            .on_hover_text(topology.source.label());
                        if r.clicked() {
                            actions.push(Action::Select(SourceKey::Server(i)));
                        }
                    });
                    ui.horizontal(|ui| {
                        ui.add_space(12.0);
                        if *suite_running {
                            ui.spinner();
                            ui.label(RichText::new("quick suite running…").weak());
                        } else if ui
                            .small_button("▶ Quick suite → report")
                            .on_hover_text(
                                "Run --bench --quick there; the report appears under Reports (and in Compare)",
                            )
                            .clicked()
                        {
                            actions.push(Action::RunSuiteOn(i));
                        }
                        if ui.small_button("Reconnect").clicked() {
                            actions.push(Action::Connect(s.host.clone()));
                        }
                    });
                }
                ServerState::Failed {
                    reason,
                    not_installed,
                } => {
                    ui.label(RichText::new(&s.host).strong());
                    ui.colored_label(palette::P2P_REFUSED, reason);
                    ui.horizontal(|ui| {
                        if *not_installed
                            && ui
                                .button("Copy scalescope there")
                                .on_hover_text(
                                    "Copies this binary (same OS and architecture) to ~/.cache/scalescope on the server",
                                )
                                .clicked()
                        {
                            actions.push(Action::InstallOn(i));
                        }
                        if ui.small_button("Retry").clicked() {
                            actions.push(Action::Connect(s.host.clone()));
                        }
                    });
                }
            }
        }
        ui.horizontal(|ui| {
            let field = ui.add(
                egui::TextEdit::singleline(&mut self.server_field)
                    .hint_text("user@host")
                    .desired_width(130.0),
            );
            let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            let ok = !self.server_field.trim().is_empty();
            let clicked = ui
                .add_enabled(ok, egui::Button::new("Connect to server…"))
                .on_hover_text(
                    "Runs `scalescope agent` there through your ssh (keys, ssh-agent, ~/.ssh/config)",
                )
                .clicked();
            if ok && (clicked || enter) {
                actions.push(Action::Connect(self.server_field.trim().to_string()));
            }
        });
        let recent: Vec<&String> = self
            .settings
            .recent_hosts
            .iter()
            .filter(|h| !self.servers.iter().any(|s| &s.host == *h))
            .collect();
        if !recent.is_empty() {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new("recent:").size(11.5).weak());
                for h in recent {
                    if ui.small_button(h.as_str()).clicked() {
                        actions.push(Action::Connect(h.clone()));
                    }
                }
            });
        }
    }

    fn live_entry(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        match &self.live {
            LiveState::Loading => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("This machine (reading NVML…)");
                });
            }
            LiveState::Ready(t) => {
                let selected = self.selected == SourceKey::Live;
                ui.horizontal(|ui| {
                    let r = ui.add(egui::Button::selectable(selected, "This machine"));
                    topology_view::badge(ui, "live", palette::source_badge("live"));
                    if r.on_hover_text(t.source.label()).clicked() {
                        actions.push(Action::Select(SourceKey::Live));
                    }
                });
            }
            LiveState::Failed(reason) => {
                ui.horizontal(|ui| {
                    ui.add_enabled(false, egui::Button::selectable(false, "This machine"))
                        .on_disabled_hover_text(format!("Live data unavailable: {reason}"));
                    ui.label(RichText::new("unavailable").size(11.5).weak())
                        .on_hover_text(format!("Live data unavailable: {reason}"));
                });
            }
        }
    }

    fn central(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        if let Some(err) = &self.error {
            message_line(ui, err, Color32::from_rgb(0xc8, 0x3a, 0x3a), || {
                actions.push(Action::DismissError)
            });
            ui.add_space(6.0);
        }
        if let (LiveState::Failed(reason), false) = (&self.live, self.banner_dismissed)
            && matches!(self.selected, SourceKey::Catalog(_))
        {
            let text = format!(
                "Live data unavailable: {reason}\nShowing a hardware catalog entry instead: its figures are documented by the vendor, not measured on this machine."
            );
            message_line(ui, &text, Color32::from_rgb(0xb0, 0x7a, 0x1c), || {
                actions.push(Action::DismissBanner)
            });
            ui.add_space(6.0);
        }
        if let (LiveState::Failed(reason), false) = (&self.live, self.banner_dismissed)
            && let SourceKey::Report(i) = self.selected
            && let Some(e) = self.reports.get(i).filter(|e| e.example)
        {
            let text = format!(
                "Live data unavailable: {reason}\nShowing a bundled example report ({}), measured there, not on this machine.",
                e.report.title()
            );
            message_line(ui, &text, Color32::from_rgb(0xb0, 0x7a, 0x1c), || {
                actions.push(Action::DismissBanner)
            });
            ui.add_space(6.0);
        }
        if let Some(status) = &self.status {
            ui.label(RichText::new(status).weak());
        }
        ui.horizontal(|ui| {
            if ui
                .button("Save CSV…")
                .on_hover_text("Save this view's data as CSV")
                .clicked()
            {
                actions.push(Action::Save(SaveKind::Csv));
            }
            if ui
                .button("Save PNG…")
                .on_hover_text("Save this view as a PNG image")
                .clicked()
            {
                actions.push(Action::Save(SaveKind::Png));
            }
            if let Some(r) = self.current_report() {
                ui.label(RichText::new(report_view::provenance(r)).weak());
            }
        });
        ui.add_space(4.0);
        if self.settings.view == View::Compare {
            let refs: Vec<&Report> = self.reports.iter().map(|e| &e.report).collect();
            egui::ScrollArea::vertical()
                .auto_shrink([false, false])
                .show(ui, |ui| compare_view::show(ui, &refs, None));
            return;
        }
        if let SourceKey::Report(i) = self.selected
            && self.settings.view != View::Topology
            && let Some(e) = self.reports.get_mut(i)
        {
            let t = e.report.topology.clone();
            let view = self.settings.view;
            match view {
                View::Bandwidth => match &mut e.bandwidth {
                    Some(v) => {
                        v.set_this_machine(false);
                        v.ui(ui, &t)
                    }
                    None => no_section(ui, "bandwidth"),
                },
                View::Collectives => match &mut e.collectives {
                    Some(v) => {
                        v.set_this_machine(false);
                        v.ui(ui, &t)
                    }
                    None => no_section(ui, "collectives"),
                },
                _ => match &mut e.scaling {
                    Some(v) => {
                        v.set_this_machine(false);
                        v.ui(ui, &t)
                    }
                    None => no_section(ui, "scaling"),
                },
            }
            return;
        }
        // Measurement views keep running while another view or source is shown; they get a
        // copy of the topology so that they can hold their own state mutably.
        let topology = self.current_topology().cloned();
        // A server's machine is measured there, through its connection.
        let runner = self.current_runner();
        let this_machine = self.selected == SourceKey::Live || runner.is_some();
        match topology {
            Some(t) if self.settings.view == View::Bandwidth => {
                self.bandwidth.set_this_machine(this_machine);
                self.bandwidth.set_runner(runner);
                self.bandwidth.ui(ui, &t)
            }
            Some(t) if self.settings.view == View::Collectives => {
                self.collectives.set_this_machine(this_machine);
                self.collectives.set_runner(runner);
                self.collectives.ui(ui, &t)
            }
            Some(t) if self.settings.view == View::Scaling => {
                self.scaling.set_this_machine(this_machine);
                self.scaling.set_runner(runner);
                self.scaling.ui(ui, &t)
            }
            Some(t) => {
                // A report's health check shows as a panel on its topology.
                let health = self.current_report().and_then(|r| r.health.clone());
                // Views lay out to the visible width; only content wider than that scrolls.
                let viewport_w = ui.available_width();
                egui::ScrollArea::both()
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        ui.set_max_width(viewport_w);
                        topology_view::show_with_health(ui, &t, health.as_ref());
                    });
            }
            None => {
                ui.centered_and_justified(|ui| {
                    if matches!(self.live, LiveState::Loading) {
                        ui.horizontal(|ui| {
                            ui.spinner();
                            ui.label("Reading this machine through NVML…");
                        });
                    } else {
                        ui.label("Pick a source on the left, or drop nvidia-smi output here.");
                    }
                });
            }
        }
    }
}

/// The work of a Save: makes the file's bytes (on the save thread).
type SaveWork = Box<dyn FnOnce() -> Result<Vec<u8>, String> + Send>;

/// Saved PNGs use the dark theme, like `--bench`'s.
fn self_theme() -> egui::Theme {
    egui::Theme::Dark
}

/// Reads reports, each error naming its file.
fn read_reports(paths: &[PathBuf]) -> Vec<Result<Report, String>> {
    paths
        .iter()
        .map(|p| crate::report::load_named(p).map_err(|e| e.to_string()))
        .collect()
}

/// Says that a report has no section for this view.
fn no_section(ui: &mut Ui, what: &str) {
    ui.label(
        RichText::new(format!(
            "This report has no {what} results (the stage was not run)."
        ))
        .weak(),
    );
}

/// A colored line with a message and a Dismiss button.
fn message_line(ui: &mut Ui, text: &str, color: Color32, mut on_dismiss: impl FnMut()) {
    egui::Frame::new()
        .fill(color.gamma_multiply(0.22))
        .stroke(egui::Stroke::new(1.0, color))
        .corner_radius(CornerRadius::same(6))
        .inner_margin(egui::Margin::symmetric(10, 6))
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(RichText::new("!").color(color).strong().size(16.0));
                // Leave room for the Dismiss button on the right.
                let w = ui.available_width() - 90.0;
                ui.add_sized(
                    [w.max(100.0), 0.0],
                    egui::Label::new(RichText::new(text)).wrap(),
                );
                if ui.small_button("Dismiss").clicked() {
                    on_dismiss();
                }
            });
        });
}

/// Dims the window while files are dragged over it.
fn drop_overlay(ctx: &egui::Context) {
    if ctx.input(|i| i.raw.hovered_files.is_empty()) {
        return;
    }
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Foreground,
        egui::Id::unique("drop-overlay"),
    ));
    let rect = ctx.content_rect();
    painter.rect_filled(rect, 0.0, Color32::from_black_alpha(170));
    painter.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        "Drop nvidia-smi topo output to import it",
        egui::FontId::proportional(22.0),
        Color32::WHITE,
    );
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if let Ok(s) = serde_json::to_string(&self.settings) {
            storage.set_string(SETTINGS_KEY, s);
        }
    }
}

/// A file dialog for opening files of one kind (plus "All files"). `Ok(None)` when closed with no
/// choice — rfd also returns that when no portal or zenity exists; `Err` when the dialog backend
/// panicked instead (caught, so the worker thread still reports).
fn pick_files(title: &str, kind: &str, extensions: &[&str]) -> Result<Option<Vec<PathBuf>>, ()> {
    std::panic::catch_unwind(|| {
        rfd::FileDialog::new()
            .set_title(title)
            .add_filter(kind, extensions)
            .add_filter("All files", &["*"])
            .pick_files()
            .filter(|p| !p.is_empty())
    })
    .map_err(|_| ())
}
