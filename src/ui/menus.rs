//! The top bar's File and View menus: what each item says and the [`Action`] it pushes.

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers, Ui};

use super::action::{Action, SaveKind, View};

// The menus' commands carry their shortcuts; the app reads them to act on the keys.
/// File → Open report… (Ctrl+O).
pub const OPEN_REPORT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
/// File → Save CSV… (Ctrl+S).
pub const SAVE_CSV: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
/// File → Quit (Ctrl+Q).
pub const QUIT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::Q);
/// View → Sources panel (Ctrl+B, as in editors with a side bar).
pub const TOGGLE_SIDEBAR: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::B);

/// File: open reports, captures, recordings and fleets, save and export (waiting while a
/// dialog is open, `dialog_open`), quit.
pub fn file_menu(ui: &mut Ui, dialog_open: bool, actions: &mut Vec<Action>) {
    // Wide enough for the longest item and its shortcut.
    ui.set_min_width(240.0);
    let open = [
        (
            "Open report…",
            Some(&OPEN_REPORT),
            "Open report.json files written by `scalescope --bench`",
            Action::OpenReportDialog,
        ),
        (
            "Open nvidia-smi output…",
            None,
            super::sources::IMPORT_HELP,
            Action::OpenDialog,
        ),
        (
            "Open traffic recording…",
            None,
            "Open a recording of live traffic (.jsonl, from `scalescope watch --record` or \
             the Topology view's Save recording…) and replay it on its machine",
            Action::OpenRecordingDialog,
        ),
        (
            "Open fleet…",
            None,
            "Open a fleet's folder (`scalescope fleet run`'s OUT, or any folder of node \
             report.json files) and judge its nodes together, as `scalescope fleet report` \
             does: the Fleet tab",
            Action::OpenFleetDialog,
        ),
    ];
    let save = [
        (
            "Save CSV…",
            Some(&SAVE_CSV),
            "Save this view's data as CSV",
            Action::Save(SaveKind::Csv),
        ),
        (
            "Save PNG…",
            None,
            "Save this view as a PNG image",
            Action::Save(SaveKind::Png),
        ),
        (
            "Export report.html…",
            None,
            "The whole report as one self-contained HTML file (tables and figures inline; \
             opens offline in any browser, prints as a document)",
            Action::Save(SaveKind::Html),
        ),
    ];
    for group in [&open[..], &save[..]] {
        for (text, shortcut, tip, action) in group {
            let mut b = egui::Button::new(*text);
            if let Some(s) = shortcut {
                b = b.shortcut_text(ui.ctx().format_shortcut(s));
            }
            if ui
                .add_enabled(!dialog_open, b)
                .on_hover_text(*tip)
                .clicked()
            {
                actions.push(action.clone());
            }
        }
        ui.separator();
    }
    let quit = egui::Button::new("Quit").shortcut_text(ui.ctx().format_shortcut(&QUIT));
    if ui.add(quit).clicked() {
        actions.push(Action::Quit);
    }
}

/// View: the Sources panel, the theme, and the `tabs` (`current` selected).
pub fn view_menu(
    ui: &mut Ui,
    sidebar_open: bool,
    dark_mode: bool,
    tabs: &[View],
    current: View,
    actions: &mut Vec<Action>,
) {
    let shortcut = ui.ctx().format_shortcut(&TOGGLE_SIDEBAR);
    let sidebar = egui::Button::selectable(sidebar_open, "Sources panel").shortcut_text(shortcut);
    if ui.add(sidebar).clicked() {
        actions.push(Action::ToggleSidebar);
    }
    let theme = if dark_mode {
        "Light theme"
    } else {
        "Dark theme"
    };
    if ui.button(theme).clicked() {
        actions.push(Action::ToggleTheme);
    }
    ui.separator();
    for view in tabs {
        if ui
            .add(egui::Button::selectable(current == *view, view.label()))
            .clicked()
        {
            actions.push(Action::SetView(*view));
        }
    }
}
