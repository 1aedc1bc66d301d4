//! The notice area under the top bar, the same on every tab: the error line, the warning banner
//! (a plain sentence; the raw reason under "details") and where the last Save went.

use eframe::egui::{self, Color32, CornerRadius, RichText, Ui};

use super::action::Action;

/// What the notice area says (the banner comes from the sources: [`banner`]).
#[derive(Default)]
pub struct Notices {
    /// The error line.
    pub error: Option<String>,
    /// Where the last Save went.
    pub status: Option<String>,
    /// The warning banner was dismissed.
    pub banner_dismissed: bool,
}

impl Notices {
    /// Shows why something could not be done on the error line.
    pub fn note(&mut self, done: Result<(), String>) {
        if let Err(e) = done {
            self.error = Some(e);
        }
    }

    /// Draws the error line, the `banner` (sentence, details) and the status line.
    pub fn ui(&self, ui: &mut Ui, banner: Option<&(String, String)>, actions: &mut Vec<Action>) {
        ui.add_space(4.0);
        if let Some(err) = &self.error {
            message_line(ui, err, None, Color32::from_rgb(0xc8, 0x3a, 0x3a), || {
                actions.push(Action::DismissError)
            });
            ui.add_space(4.0);
        }
        if let Some((text, details)) = banner {
            message_line(
                ui,
                text,
                Some(details),
                Color32::from_rgb(0xb0, 0x7a, 0x1c),
                || actions.push(Action::DismissBanner),
            );
            ui.add_space(4.0);
        }
        if let Some(status) = &self.status {
            ui.add(egui::Label::new(RichText::new(status).weak()).truncate());
        }
        ui.add_space(2.0);
    }
}

/// The warning banner when live data failed (`reason`) and a stand-in is shown: a plain
/// sentence (`stand_in` says what is shown instead, after why; none when the user chose what
/// is shown) and the details (the raw reason).
pub fn banner(
    reason: &str,
    stand_in: impl FnOnce(&str) -> Option<String>,
) -> Option<(String, String)> {
    // NVML's loader error names the library and the command line's flags: details only.
    let why = if reason.starts_with("no NVIDIA driver found") {
        "No NVIDIA driver was found on this machine"
    } else {
        "This machine could not be read through NVML"
    };
    let text = stand_in(why)?;
    let details = format!(
        "{reason}\n\nTo look at another machine: File → Open report… or Open nvidia-smi output…, or pick a catalog entry under Sources."
    );
    Some((text, details))
}

/// A colored line with a message, optional details (collapsed) and a Dismiss button.
fn message_line(
    ui: &mut Ui,
    text: &str,
    details: Option<&str>,
    color: Color32,
    mut on_dismiss: impl FnMut(),
) {
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
                ui.vertical(|ui| {
                    ui.set_width(w.max(100.0));
                    ui.add(egui::Label::new(RichText::new(text)).wrap());
                    if let Some(details) = details {
                        egui::CollapsingHeader::new(RichText::new("details").size(11.5))
                            .id_salt("banner-details")
                            .show(ui, |ui| {
                                ui.add(
                                    egui::Label::new(RichText::new(details).size(11.5).weak())
                                        .wrap(),
                                );
                            });
                    }
                });
                if ui.small_button("Dismiss").clicked() {
                    on_dismiss();
                }
            });
        });
}
