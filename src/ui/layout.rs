//! Layout pieces shared by the views: the framed "Run settings" group (what the next run will
//! measure) kept apart from the "Show" group (what the plots and tables on screen show), and
//! text kept within the visible width under tables wider than the window.

use eframe::egui::{self, CornerRadius, Margin, RichText, Stroke, Ui};

/// A framed group titled "Run settings": inputs that only take effect when a run starts (GPUs,
/// tests, ops, sizes) and the Run button. Filled and outlined so that it never reads as a
/// filter of the results below it.
pub fn run_settings<R>(ui: &mut Ui, add_contents: impl FnOnce(&mut Ui) -> R) -> R {
    let visuals = ui.visuals();
    let fill = visuals.faint_bg_color;
    let stroke = Stroke::new(1.0, visuals.widgets.noninteractive.bg_stroke.color);
    egui::Frame::new()
        .fill(fill)
        .stroke(stroke)
        .corner_radius(CornerRadius::same(6))
        .inner_margin(Margin::symmetric(10, 8))
        .show(ui, |ui| {
            ui.set_min_width(ui.available_width());
            ui.label(RichText::new("Run settings").strong())
                .on_hover_text(
                    "Take effect when you press Run; they do not filter the results shown",
                );
            ui.add_space(2.0);
            add_contents(ui)
        })
        .inner
}

/// A lighter group titled "Show": filters of the results on screen (which test, size, series,
/// axis). Changing them never starts a run.
pub fn show_group<R>(ui: &mut Ui, add_contents: impl FnOnce(&mut Ui) -> R) -> R {
    let stroke = Stroke::new(1.0, ui.visuals().widgets.noninteractive.bg_stroke.color);
    egui::Frame::new()
        .stroke(stroke)
        .corner_radius(CornerRadius::same(6))
        .inner_margin(Margin::symmetric(10, 6))
        .show(ui, |ui| {
            ui.set_min_width(ui.available_width());
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new("Show").strong())
                    .on_hover_text("Filters of the results on screen; they never start a run");
                ui.add_space(6.0);
                add_contents(ui)
            })
            .inner
        })
        .inner
}

/// `add_contents` laid out no wider than the visible part of the scroll area it is in (its clip
/// rectangle): text under a table wider than the window wraps where the reader can see it,
/// not at the table's width, where its ends would need scrolling sideways.
pub fn within_view<R>(ui: &mut Ui, add_contents: impl FnOnce(&mut Ui) -> R) -> R {
    let visible = (ui.clip_rect().right() - ui.cursor().left()).max(200.0);
    ui.scope(|ui| {
        ui.set_max_width(visible.min(ui.available_width()));
        add_contents(ui)
    })
    .inner
}
