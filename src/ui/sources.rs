//! The sources the app shows and the Sources panel that lists them: this machine (read through
//! NVML on a worker thread), servers ([`super::servers`]), hardware catalog entries, machines
//! imported from `nvidia-smi` captures, and opened (or bundled) reports; which one is selected;
//! names given to reports' machines.
//!
//! Each source holds a report and the views' state on it ([`super::shown`]); the views reach
//! them through [`ViewSources`].

use std::collections::BTreeMap;

use eframe::egui::{self, RichText, Ui};

use super::action::{Action, SourceKey};
use super::command::Command;
use super::jobs::Inbox;
use super::machine::Machine;
use super::palette::SourceBadge;
use super::servers::Servers;
use super::views::tabs::ViewSources;
use super::views::{self, Views};
use super::{report_view, widgets};
use crate::model::Topology;
use crate::report::Report;
use crate::topology::{catalog, live};

/// The catalog entry shown when live data is unavailable, if the catalog has it.
const PREFERRED_CATALOG: &str = "dgx-h100";

/// An opened report and the views' state on it.
pub struct ReportEntry {
    /// The report as opened (renaming its machine changes `machine.display_name` only).
    pub report: Report,
    /// The bundled example (not a file the user opened).
    pub example: bool,
    views: Views,
}

impl ReportEntry {
    /// A report with its views.
    pub fn new(report: Report, example: bool) -> Self {
        Self {
            views: Views::report(&report),
            report,
            example,
        }
    }

    /// The measurement views' state on this report.
    pub fn views(&self) -> &Views {
        &self.views
    }
}

/// The state of the live (NVML) read.
enum LiveState {
    /// The `scalescope-nvml` thread is still reading.
    Loading,
    Ready(Box<Machine>),
    /// Why live data is unavailable (the error's text).
    Failed(String),
}

/// Every source, and which one is shown.
pub struct Sources {
    live: LiveState,
    live_inbox: Inbox<Result<Topology, String>>,
    catalog: Vec<catalog::CatalogEntry>,
    /// Catalog machines loaded so far, by id.
    catalog_machines: BTreeMap<String, Machine>,
    imported: Vec<Machine>,
    reports: Vec<ReportEntry>,
    /// Servers connected to (or tried).
    pub servers: Servers,
    selected: SourceKey,
    /// Whether the user picked a source themselves (then a late live failure does not move them).
    user_selected: bool,
}

impl Sources {
    /// The catalog and the bundled example reports (under the names given to their machines);
    /// this machine still loading.
    pub fn new(names: &BTreeMap<String, String>) -> Self {
        // Every bundled report that parses, as an example (a broken one is caught by
        // `bundled`'s tests rather than shown as an error here), under the name it was given.
        let reports = crate::report::bundled::reports()
            .into_iter()
            .filter_map(|(_, r)| r.ok())
            .map(|mut r| {
                apply_name(names, &mut r);
                ReportEntry::new(r, true)
            })
            .collect();
        Self {
            live: LiveState::Loading,
            live_inbox: Inbox::default(),
            catalog: catalog::entries(),
            catalog_machines: BTreeMap::new(),
            imported: Vec::new(),
            reports,
            servers: Servers::default(),
            selected: SourceKey::Live,
            user_selected: false,
        }
    }

    /// Reads this machine through NVML on a worker thread.
    pub fn read_live(&mut self, ctx: &egui::Context) {
        let spawned = self.live_inbox.spawn(ctx, "scalescope-nvml", || {
            live::read().map_err(|e| e.to_string())
        });
        if let Err(e) = spawned {
            self.live_failed(e);
        }
    }

    /// This machine as read (or why it could not be).
    pub fn set_live(&mut self, live: Result<Topology, String>) {
        match live {
            Ok(t) => self.live = LiveState::Ready(Box::new(Machine::new(t, None))),
            Err(e) => self.live_failed(e),
        }
    }

    fn live_failed(&mut self, reason: String) {
        self.live = LiveState::Failed(reason);
        if self.selected != SourceKey::Live || self.user_selected {
            return;
        }
        // A bundled example (measured on a real machine) beats a catalog entry: of today's
        // method, the one with the most GPUs (it shows links and scaling), the newest of those
        // (the examples are listed oldest first); else the first.
        let current = self
            .reports
            .iter()
            .enumerate()
            .filter(|(_, e)| e.example && e.report.older_method().is_none())
            .max_by_key(|(i, e)| (e.report.topology.gpus.len(), *i))
            .map(|(i, _)| i);
        if let Some(i) = current.or_else(|| self.reports.iter().position(|e| e.example)) {
            self.selected = SourceKey::Report(i);
            return;
        }
        let id = self
            .catalog
            .iter()
            .find(|e| e.id == PREFERRED_CATALOG)
            .or_else(|| self.catalog.first())
            .map(|e| e.id.clone());
        if let Some(id) = id {
            // A catalog entry that does not load leaves the selection as it is.
            let _ = self.select(SourceKey::Catalog(id));
        }
    }

    /// Takes the live read's result and what every source's runs and Live feeds delivered
    /// (shown or not); the feeds' errors, for the notice area.
    pub fn poll(&mut self, ctx: &egui::Context) -> Result<(), String> {
        let mut errors = Vec::new();
        for live in self.live_inbox.drain() {
            self.set_live(live);
        }
        let machines = self
            .catalog_machines
            .values_mut()
            .chain(self.imported.iter_mut())
            .chain(self.servers.machines_mut());
        let live = match &mut self.live {
            LiveState::Ready(m) => Some(&mut **m),
            _ => None,
        };
        for m in machines.chain(live) {
            errors.extend(m.views.poll(ctx, &mut m.report));
        }
        for e in &mut self.reports {
            errors.extend(e.views.poll(ctx, &mut e.report));
        }
        match errors.is_empty() {
            true => Ok(()),
            false => Err(errors.join("; ")),
        }
    }

    /// Shows `key` if it can be shown (a catalog entry is loaded first); why not, for the
    /// error line, when a catalog entry does not load.
    pub fn select(&mut self, key: SourceKey) -> Result<(), String> {
        let ok = match &key {
            SourceKey::Catalog(id) => {
                if !self.catalog_machines.contains_key(id) {
                    let t = catalog::load(id)
                        .map_err(|e| format!("Cannot load catalog entry {id}: {e}"))?;
                    self.catalog_machines
                        .insert(id.clone(), Machine::new(t, None));
                }
                true
            }
            SourceKey::Imported(i) => *i < self.imported.len(),
            SourceKey::Report(i) => *i < self.reports.len(),
            SourceKey::Server(i) => self.servers.machine(*i).is_some(),
            SourceKey::Live => !matches!(self.live, LiveState::Failed(_)),
        };
        if ok {
            self.selected = key;
        }
        Ok(())
    }

    /// [`Self::select`], as the user's own choice.
    pub fn user_select(&mut self, key: SourceKey) -> Result<(), String> {
        self.user_selected = true;
        self.select(key)
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

    /// True while this machine is being read.
    pub fn live_loading(&self) -> bool {
        matches!(self.live, LiveState::Loading)
    }

    /// The report the selected source holds, if it is loaded.
    pub fn shown(&self) -> Option<&Report> {
        self.get(&self.selected).map(|(r, _)| r)
    }

    /// The report and views of the selected source, if it is loaded.
    pub fn shown_mut(&mut self) -> Option<(&mut Report, &mut Views)> {
        let key = self.selected.clone();
        self.get_mut(&key)
    }

    /// The report and views of source `key`, if it is loaded.
    pub fn get(&self, key: &SourceKey) -> Option<(&Report, &Views)> {
        let m = match key {
            SourceKey::Report(i) => {
                return self.reports.get(*i).map(|e| (&e.report, &e.views));
            }
            SourceKey::Live => match &self.live {
                LiveState::Ready(m) => Some(&**m),
                _ => None,
            },
            SourceKey::Catalog(id) => self.catalog_machines.get(id),
            SourceKey::Imported(i) => self.imported.get(*i),
            SourceKey::Server(i) => self.servers.machine(*i),
        }?;
        Some((&m.report, &m.views))
    }

    fn get_mut(&mut self, key: &SourceKey) -> Option<(&mut Report, &mut Views)> {
        let m = match key {
            SourceKey::Report(i) => {
                return self
                    .reports
                    .get_mut(*i)
                    .map(|e| (&mut e.report, &mut e.views));
            }
            SourceKey::Live => match &mut self.live {
                LiveState::Ready(m) => Some(&mut **m),
                _ => None,
            },
            SourceKey::Catalog(id) => self.catalog_machines.get_mut(id),
            SourceKey::Imported(i) => self.imported.get_mut(*i),
            SourceKey::Server(i) => self.servers.machine_mut(*i),
        }?;
        Some((&mut m.report, &mut m.views))
    }

    /// The selected report (an opened or bundled one) and whether it is an example.
    pub fn current_report(&self) -> Option<(&Report, bool)> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i).map(|e| (&e.report, e.example)),
            _ => None,
        }
    }

    /// The opened reports (the bundled examples first).
    pub fn reports(&self) -> &[ReportEntry] {
        &self.reports
    }

    /// Adds the recordings that were read (each with its file name) as sources and shows the
    /// last; they start playing. The errors of those that were not, as one line.
    pub fn add_recordings(
        &mut self,
        results: Vec<Result<(crate::model::traffic::TrafficRecording, String), String>>,
    ) -> Result<(), String> {
        let mut errors = Vec::new();
        for r in results {
            match r {
                Ok((rec, name)) => self.add_recording(rec, name),
                Err(e) => errors.push(e),
            }
        }
        match errors.is_empty() {
            true => Ok(()),
            false => Err(format!("Cannot open recording: {}", errors.join("; "))),
        }
    }

    /// Adds a recording (`name`: its file name) as a source and shows it; it starts playing.
    pub fn add_recording(
        &mut self,
        recording: crate::model::traffic::TrafficRecording,
        name: String,
    ) {
        self.imported.push(Machine::recording(recording, name));
        self.user_selected = true;
        self.selected = SourceKey::Imported(self.imported.len() - 1);
    }

    /// Adds a machine read from captures and shows it.
    pub fn add_imported(&mut self, report: Report) {
        self.imported.push(Machine::with_report(report, None));
        self.user_selected = true;
        self.selected = SourceKey::Imported(self.imported.len() - 1);
    }

    /// Opens reports and shows the last one; a report already open (a bundled example opened
    /// from its file, or a file opened twice) is selected, not listed again. The errors of
    /// those that did not open.
    pub fn open_reports(
        &mut self,
        results: Vec<Result<Report, String>>,
        names: &BTreeMap<String, String>,
    ) -> Vec<String> {
        let mut errors = Vec::new();
        for r in results {
            let report = match r {
                Ok(report) => report,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let open = self.reports.iter().position(|e| {
                // A renamed report is still the same report.
                let mut open = e.report.clone();
                open.machine.display_name = report.machine.display_name.clone();
                open == report
            });
            let i = open.unwrap_or_else(|| {
                let mut report = report;
                apply_name(names, &mut report);
                self.reports.push(ReportEntry::new(report, false));
                self.reports.len() - 1
            });
            self.user_selected = true;
            self.selected = SourceKey::Report(i);
        }
        errors
    }

    /// Names the n-th report's machine (an empty name restores the name from its GPUs) and
    /// remembers it in `names` for the next time that report is opened.
    pub fn rename_report(&mut self, i: usize, name: &str, names: &mut BTreeMap<String, String>) {
        let Some(e) = self.reports.get_mut(i) else {
            return;
        };
        let key = rename_key(&e.report);
        let name = name.trim();
        if name.is_empty() {
            e.report.machine.display_name = None;
            names.remove(&key);
        } else {
            // A name, not a document: one line of at most 80 characters.
            let name: String = name.chars().filter(|c| !c.is_control()).take(80).collect();
            e.report.machine.display_name = Some(name.clone());
            names.insert(key, name);
        }
    }

    /// What is shown and how it is known, for the top bar: a report says which (an example
    /// measured elsewhere, or a report file), a recording that it is a replay of its file
    /// (its topology says `live`, but that was where and when it was recorded), never this
    /// machine's live label; any other source its topology's label.
    pub fn shown_label(&self) -> Option<String> {
        if let Some((r, example)) = self.current_report() {
            return Some(format!(
                "{} ({})",
                report_view::list_name(r),
                if example { "example" } else { "report file" }
            ));
        }
        let (r, views) = self.get(&self.selected)?;
        Some(
            views
                .live
                .replay_label(r)
                .unwrap_or_else(|| r.topology.source.label()),
        )
    }

    /// The warning banner's sentence when live data failed and a stand-in is shown (`why`
    /// first); none when the user's own choice is shown.
    pub fn stand_in(&self, why: &str) -> Option<String> {
        match self.selected {
            SourceKey::Catalog(_) => Some(format!(
                "{why}. Showing a hardware catalog entry instead: documented by the vendor, not measured on this machine."
            )),
            SourceKey::Report(i) if self.reports.get(i).is_some_and(|e| e.example) => {
                Some(format!(
                    "{why}. Showing a bundled example report ({}), measured there, not on this machine.",
                    self.reports[i].report.title()
                ))
            }
            _ => None,
        }
    }

    /// The Sources panel's contents: this machine, servers, imported machines, reports, the Open
    /// buttons (disabled while a dialog is open) and the hardware catalog.
    pub fn panel(
        &mut self,
        ui: &mut Ui,
        recent_hosts: &[String],
        dialog_open: bool,
        actions: &mut Vec<Action>,
    ) {
        ui.add_space(6.0);
        ui.label(RichText::new("Sources").strong().size(16.0));
        ui.add_space(6.0);
        self.live_entry(ui, actions);
        ui.add_space(8.0);
        self.servers
            .section(ui, &self.selected, recent_hosts, actions);
        ui.add_space(8.0);
        self.imported_list(ui, actions);
        ui.add_space(8.0);
        self.reports_list(ui, actions);
        ui.add_space(10.0);
        open_buttons(ui, dialog_open, actions);
        // The catalog last: eleven machines (racks of 72 GPUs among them) would push the user's
        // own imports and reports below the fold.
        ui.add_space(10.0);
        self.catalog_list(ui, actions);
    }

    fn live_entry(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        match &self.live {
            LiveState::Loading => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("This machine (reading NVML…)");
                });
            }
            LiveState::Ready(m) => {
                let selected = self.selected == SourceKey::Live;
                ui.horizontal(|ui| {
                    let r = ui.add(egui::Button::selectable(selected, "This machine"));
                    widgets::source_badge(ui, SourceBadge::MeasuredHere);
                    if r.on_hover_text(m.report.topology.source.label()).clicked() {
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

    fn catalog_list(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.label(RichText::new("Hardware catalog").weak());
        for entry in &self.catalog {
            let key = SourceKey::Catalog(entry.id.clone());
            ui.horizontal(|ui| {
                widgets::source_badge(ui, SourceBadge::Catalog);
                let r = ui
                    .add(egui::Button::selectable(self.selected == key, entry.name.as_str()).wrap())
                    .on_hover_text(format!(
                        "{}\ncatalog id: {}\nDocumented by the vendor, not measured.",
                        entry.summary, entry.id
                    ));
                if r.clicked() {
                    actions.push(Action::Select(key.clone()));
                }
            });
        }
    }

    fn imported_list(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.label(RichText::new("Imported").weak());
        if self.imported.is_empty() {
            ui.label(RichText::new("nothing imported yet").italics().weak());
        }
        for (i, m) in self.imported.iter().enumerate() {
            let t = &m.report.topology;
            let selected = self.selected == SourceKey::Imported(i);
            let recording = m.views.live.recording_name();
            ui.horizontal(|ui| {
                match recording {
                    Some(_) => widgets::source_badge(ui, SourceBadge::Recording),
                    None => widgets::source_badge(ui, SourceBadge::Imported),
                };
                let hover = match m.views.live.replay_label(&m.report) {
                    Some(label) => format!("A traffic recording: {label}"),
                    None => t.source.label(),
                };
                let r = ui
                    .add(egui::Button::selectable(selected, views::topology::title(t)).wrap())
                    .on_hover_text(hover);
                if r.clicked() {
                    actions.push(Action::Select(SourceKey::Imported(i)));
                }
            });
        }
    }

    fn reports_list(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.label(RichText::new("Reports").weak());
        if self.reports.is_empty() {
            ui.label(RichText::new("no report opened").italics().weak());
        }
        for (i, e) in self.reports.iter().enumerate() {
            let selected = self.selected == SourceKey::Report(i);
            let origin = report_view::origin(&e.report, e.example);
            ui.horizontal(|ui| {
                widgets::source_badge(ui, origin.badge).on_hover_text(&origin.text);
                let name = report_view::list_name(&e.report);
                let r = ui
                    .add(egui::Button::selectable(selected, name).wrap())
                    .on_hover_text(format!(
                        "{}\n{}",
                        origin.text,
                        report_view::provenance(&e.report)
                    ));
                if r.clicked() {
                    actions.push(Action::Select(SourceKey::Report(i)));
                }
                // Stays open while the name is typed (a menu closes on any click).
                egui::Popup::context_menu(&r)
                    .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside)
                    .show(|ui| rename_menu(ui, i, &e.report, actions));
            });
        }
    }
}

impl ViewSources for Sources {
    fn selected_source(&self) -> Option<(&Report, &Views)> {
        self.get(&self.selected)
    }

    fn selected_source_mut(&mut self) -> Option<(&mut Report, &mut Views)> {
        self.shown_mut()
    }

    fn opened_report(&self) -> Option<(&Report, bool)> {
        self.current_report()
    }

    fn opened_reports(&self) -> Vec<&Report> {
        self.reports.iter().map(|e| &e.report).collect()
    }

    fn loading(&self) -> bool {
        self.live_loading()
    }
}

/// Open report… and Open nvidia-smi output…, and that files can be dropped instead.
fn open_buttons(ui: &mut Ui, dialog_open: bool, actions: &mut Vec<Action>) {
    for command in [Command::OpenReport, Command::OpenSmi] {
        let mut r = ui.add_enabled(!dialog_open, egui::Button::new(command.label()));
        if let Some(tip) = command.tooltip() {
            r = r.on_hover_text(tip);
        }
        if r.clicked() {
            actions.push(command.action());
        }
    }
    ui.label(
        RichText::new("or drop report .json or nvidia-smi text files onto this window")
            .size(11.5)
            .weak(),
    );
}

/// Which report a remembered machine name belongs to: its host (or label) and when it ran.
pub fn rename_key(r: &Report) -> String {
    format!(
        "{}|{}",
        r.machine.hostname.as_deref().unwrap_or(&r.machine.label),
        r.machine.created_at
    )
}

/// Gives `report` the name remembered for its machine, if any.
fn apply_name(names: &BTreeMap<String, String>, report: &mut Report) {
    if let Some(n) = names.get(&rename_key(report)) {
        report.machine.display_name = Some(n.clone());
    }
}

/// Right-click on a report in Sources: a name for its machine (kept between runs).
fn rename_menu(ui: &mut Ui, i: usize, r: &Report, actions: &mut Vec<Action>) {
    let id = egui::Id::unique(("rename-report", i));
    let mut text = ui.data_mut(|d| {
        d.get_temp::<String>(id)
            .unwrap_or_else(|| crate::report::summary::machine_name(r))
    });
    let label = ui.label("Machine name");
    let edit = ui.text_edit_singleline(&mut text).labelled_by(label.id);
    let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
    ui.data_mut(|d| d.insert_temp(id, text.clone()));
    ui.horizontal(|ui| {
        if ui.button("Rename").clicked() || enter {
            actions.push(Action::RenameReport(i, text.clone()));
            ui.data_mut(|d| d.remove::<String>(id));
            ui.close();
        }
        if r.machine.display_name.is_some() && ui.button("Name from its GPUs").clicked() {
            actions.push(Action::RenameReport(i, String::new()));
            ui.data_mut(|d| d.remove::<String>(id));
            ui.close();
        }
    });
}
