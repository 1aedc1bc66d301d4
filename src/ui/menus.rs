//! The top bar's File and View menus: the [`Command`]s each lists (with their shortcuts) and
//! the view tabs.

use eframe::egui::{self, Ui};

use super::action::{Action, View};
use super::command::Command;

/// A menu item for `command`: its label, its shortcut's text and its tooltip.
fn item(ui: &Ui, command: Command) -> egui::Button<'static> {
    let b = egui::Button::new(command.label());
    match command.kb_shortcut() {
        Some(s) => b.shortcut_text(ui.ctx().format_shortcut(&s)),
        None => b,
    }
}

/// File: open reports, captures, recordings and fleets, save and export (waiting while a
/// dialog is open, `dialog_open`), quit.
pub fn file_menu(ui: &mut Ui, dialog_open: bool, actions: &mut Vec<Action>) {
    // Wide enough for the longest item and its shortcut.
    ui.set_min_width(240.0);
    for group in [&Command::OPEN[..], &Command::SAVE[..]] {
        for &command in group {
            let mut r = ui.add_enabled(!dialog_open, item(ui, command));
            if let Some(tip) = command.tooltip() {
                r = r.on_hover_text(tip);
            }
            if r.clicked() {
                actions.push(command.action());
            }
        }
        ui.separator();
    }
    if ui.add(item(ui, Command::Quit)).clicked() {
        actions.push(Command::Quit.action());
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
    let command = Command::ToggleSidebar;
    let mut sidebar = egui::Button::selectable(sidebar_open, command.label());
    if let Some(s) = command.kb_shortcut() {
        sidebar = sidebar.shortcut_text(ui.ctx().format_shortcut(&s));
    }
    if ui.add(sidebar).clicked() {
        actions.push(command.action());
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
