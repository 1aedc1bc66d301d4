//! Fonts: egui's built-in proportional font (Ubuntu Light) has no arrows (→ ⇄) or the play/stop
//! glyphs (▶ ■) scalescope's labels use; its built-in monospace font (Hack) has them, so Hack is
//! added as a proportional fallback. Nothing is read from the system, so windows, reports and test
//! snapshots look the same everywhere.

use eframe::egui::{self, FontDefinitions, FontFamily};

/// The font definitions scalescope uses.
pub fn definitions() -> FontDefinitions {
    let mut fonts = FontDefinitions::default();
    if let Some(list) = fonts.families.get_mut(&FontFamily::Proportional)
        && !list.iter().any(|f| f == "Hack")
    {
        // After Ubuntu Light (which covers the text) and before the icon fallbacks.
        list.insert(1.min(list.len()), "Hack".to_owned());
    }
    fonts
}

/// Installs [`definitions`] in `ctx`. Call once, before the first frame that draws text.
pub fn install(ctx: &egui::Context) {
    ctx.set_fonts(definitions());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hack_backs_up_the_proportional_font() {
        let f = definitions();
        let prop = &f.families[&FontFamily::Proportional];
        assert_eq!(prop.first().map(String::as_str), Some("Ubuntu-Light"));
        assert!(prop.iter().any(|n| n == "Hack"));
    }
}
