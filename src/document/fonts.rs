//! The fonts of the document, embedded (DejaVu Sans and DejaVu Sans Mono, from Debian's
//! fonts-dejavu-core; licence in `assets/fonts/LICENSE-DejaVu.txt`): typst sets every page in
//! them, and the SVG charts and the machine drawing measure their labels with them, so that a
//! label laid out to fit does fit. Nothing is read from the system.

use std::sync::LazyLock;

/// Every embedded font file: DejaVu Sans (regular, bold, oblique, bold oblique) and DejaVu Sans
/// Mono (regular, bold).
pub const FILES: [&[u8]; 6] = [
    include_bytes!("../../assets/fonts/DejaVuSans.ttf"),
    include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf"),
    include_bytes!("../../assets/fonts/DejaVuSans-Oblique.ttf"),
    include_bytes!("../../assets/fonts/DejaVuSans-BoldOblique.ttf"),
    include_bytes!("../../assets/fonts/DejaVuSansMono.ttf"),
    include_bytes!("../../assets/fonts/DejaVuSansMono-Bold.ttf"),
];

/// The family SVG text names (typst serves it; browsers fall back to a sans-serif).
pub const SANS_FAMILY: &str = "DejaVu Sans";
/// The monospace family SVG text names.
pub const MONO_FAMILY: &str = "DejaVu Sans Mono";

/// Which face a label is set in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    /// DejaVu Sans.
    Sans,
    /// DejaVu Sans Bold.
    Bold,
    /// DejaVu Sans Mono.
    Mono,
}

/// The parsed faces, by [`Face`]; `None` where a file does not parse (never for the embedded
/// files; widths then fall back to an estimate).
static FACES: LazyLock<[Option<ttf_parser::Face<'static>>; 3]> = LazyLock::new(|| {
    [FILES[0], FILES[1], FILES[4]].map(|data| ttf_parser::Face::parse(data, 0).ok())
});

/// The advance width of `text` set in `face` at `size` (the same unit as `size`). Characters
/// the font lacks count as one em, so that an estimate is too wide rather than too narrow.
pub fn text_width(text: &str, size: f64, face: Face) -> f64 {
    let slot = match face {
        Face::Sans => 0,
        Face::Bold => 1,
        Face::Mono => 2,
    };
    let Some(f) = &FACES[slot] else {
        return text.chars().count() as f64 * size * 0.65;
    };
    let em = f64::from(f.units_per_em().max(1));
    let units: f64 = text
        .chars()
        .map(|c| {
            f.glyph_index(c)
                .and_then(|g| f.glyph_hor_advance(g))
                .map_or(em, f64::from)
        })
        .sum();
    units / em * size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_come_from_the_embedded_fonts() {
        // DejaVu Sans Mono advances 1233 of 2048 units per character.
        let w = text_width("NV18", 10.0, Face::Mono);
        assert!((w - 4.0 * 1233.0 / 2048.0 * 10.0).abs() < 1e-9, "{w}");
        let (regular, bold) = (
            text_width("GPU 0", 12.0, Face::Sans),
            text_width("GPU 0", 12.0, Face::Bold),
        );
        assert!(regular > 25.0 && bold > regular, "{regular} {bold}");
        // A character the font lacks is counted wide, not zero.
        assert!(text_width("\u{4e00}", 10.0, Face::Sans) >= 10.0);
    }
}
