//! The report document: one model of what a report says, built from a [`Report`]
//! ([`build`]), written as `report.html` ([`html`]) and typeset by typst into `report.png`, the
//! view pages and `report.pdf` ([`typeset`]) — on the CPU, with no GL, Vulkan or display, in
//! the default and the headless build alike.
//!
//! The model holds text and classes, never markup: a cell says it is a modeled figure or an
//! NVLink pair, and each writer decides how that looks. Charts and the machine drawing are SVG
//! made here ([`chart`], [`machine`]); the HTML inlines them and typst embeds them.
//!
//! Depends on `model/`, `report/`, `health/`, `scaling/` and `topology/` data types only.

pub mod build;
pub mod chart;
pub mod fonts;
pub mod html;
pub mod machine;
pub mod shapes;
pub mod timechart;
pub mod typeset;

use serde::Serialize;

use crate::report::Report;

pub use typeset::RenderError;

/// A document: a title and its sections, in reading order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Document {
    /// What the document is about, for the HTML `<title>` and the PDF's metadata.
    pub title: String,
    /// The sections, in reading order.
    pub sections: Vec<Section>,
}

/// One part of a document: an id (an HTML anchor), a heading and its blocks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Section {
    /// The element id of the section (`verdict`, `key-figures`, `topology`, …).
    pub id: String,
    /// The section's heading; `None` for the head and the foot of the document.
    pub heading: Option<String>,
    /// What the section holds, in order.
    pub blocks: Vec<Block>,
}

impl Section {
    /// A section with a heading.
    pub fn new(id: &str, heading: impl Into<String>) -> Self {
        Self {
            id: id.to_string(),
            heading: Some(heading.into()),
            blocks: Vec::new(),
        }
    }

    /// A section without a heading (the document's head and foot).
    pub fn untitled(id: &str) -> Self {
        Self {
            id: id.to_string(),
            heading: None,
            blocks: Vec::new(),
        }
    }

    /// Adds a block.
    pub fn push(&mut self, block: Block) {
        self.blocks.push(block);
    }
}

/// One block of a section. Serialized with its kind as `"kind"`, which the typst template
/// matches on.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Block {
    /// The document's title (what the machine is), with an optional badge beside it.
    Title {
        /// Element id.
        id: String,
        /// The title's text.
        text: String,
        /// A short word beside the title, e.g. `contains modeled figures`.
        badge: Option<String>,
    },
    /// A heading inside a section.
    Subheading {
        /// The heading's text.
        text: String,
    },
    /// A paragraph of styled runs.
    Paragraph(Paragraph),
    /// A bulleted or numbered list of paragraphs.
    List {
        /// Numbered when true.
        ordered: bool,
        /// The items.
        items: Vec<Paragraph>,
    },
    /// A health verdict: the word as a coloured pill and the counts beside it.
    Verdict {
        /// `PASS`, `WARN (modeled)`, …
        word: String,
        /// [`Class::Pass`], [`Class::Warn`], [`Class::Fail`] or [`Class::Unknown`].
        class: Class,
        /// `12 pass · 0 warn · 0 fail · 1 unknown`.
        counts: String,
    },
    /// A table with a header row.
    Table(Table),
    /// A matrix: column labels, row labels and coloured cells.
    Matrix(Matrix),
    /// A chart or the machine drawing, as SVG.
    Figure(Figure),
    /// Blocks side by side (each inner list is one column); they stack where the page is
    /// narrow.
    Columns {
        /// The columns' blocks.
        columns: Vec<Vec<Block>>,
    },
    /// Blocks folded behind a summary in the HTML; printed pages show them.
    Details {
        /// The line that opens them.
        summary: String,
        /// What is folded.
        blocks: Vec<Block>,
    },
}

/// A paragraph: runs of text in one class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Paragraph {
    /// How the paragraph reads: [`Class::Plain`], [`Class::Sub`] (under the title),
    /// [`Class::Note`] (small, grey), [`Class::Modeled`] (a note in the modeled colour) or
    /// [`Class::Warning`].
    pub class: Class,
    /// The runs of text.
    pub spans: Vec<Span>,
}

impl Paragraph {
    /// A paragraph of one plain run.
    pub fn plain(text: impl Into<String>) -> Self {
        Self::of(Class::Plain, text)
    }

    /// A small grey note.
    pub fn note(text: impl Into<String>) -> Self {
        Self::of(Class::Note, text)
    }

    /// A paragraph of one plain run in `class`.
    pub fn of(class: Class, text: impl Into<String>) -> Self {
        Self {
            class,
            spans: vec![Span::plain(text)],
        }
    }
}

impl From<Paragraph> for Block {
    fn from(p: Paragraph) -> Self {
        Block::Paragraph(p)
    }
}

/// A run of text in one style.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Span {
    /// The text, as it came (writers escape it).
    pub text: String,
    /// How it is set.
    pub style: SpanStyle,
}

impl Span {
    /// Plain text.
    pub fn plain(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            style: SpanStyle::Plain,
        }
    }

    /// Text in `style`.
    pub fn styled(text: impl Into<String>, style: SpanStyle) -> Self {
        Self {
            text: text.into(),
            style,
        }
    }
}

/// How a run of text is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpanStyle {
    /// As the paragraph.
    Plain,
    /// Bold.
    Strong,
    /// Monospace (a command line).
    Code,
}

/// What a piece of the document is, which decides how it looks: provenance colours, link-kind
/// and P2P-status fills, verdict pills, heat levels. The HTML uses the kebab-case name as its
/// CSS class; the typst template maps it to colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Nothing special.
    Plain,
    /// Under the title: the identity lines.
    Sub,
    /// Small and grey: definitions, sources, notes.
    Note,
    /// A warning line.
    Warning,
    /// Measured on GPUs.
    Measured,
    /// Modeled (amber, italic).
    Modeled,
    /// Projected beyond the box (violet, italic).
    Projected,
    /// No figure ("—").
    None,
    /// A matrix's diagonal (a GPU and itself).
    Diag,
    /// NVLink between the pair.
    Nv,
    /// One PCIe switch.
    Pix,
    /// Several PCIe switches.
    Pxb,
    /// Through the host bridge.
    Phb,
    /// Within a NUMA node, across host bridges.
    Node,
    /// Across sockets.
    Sys,
    /// P2P supported.
    P2pOk,
    /// P2P not supported (NS).
    P2pNs,
    /// P2P refused by chipset, GPU or topology (CNS, GNS, TNS).
    P2pRefused,
    /// P2P status the driver called unknown (U).
    P2pU,
    /// Health verdict PASS.
    Pass,
    /// Health verdict WARN.
    Warn,
    /// Health verdict FAIL.
    Fail,
    /// Health verdict UNKNOWN.
    Unknown,
    /// Heat levels of a bandwidth matrix, the lowest figures to the highest.
    Heat1,
    /// See [`Class::Heat1`].
    Heat2,
    /// See [`Class::Heat1`].
    Heat3,
    /// See [`Class::Heat1`].
    Heat4,
    /// See [`Class::Heat1`].
    Heat5,
}

impl Class {
    /// The kebab-case name (the HTML class).
    pub fn name(self) -> &'static str {
        match self {
            Class::Plain => "plain",
            Class::Sub => "sub",
            Class::Note => "note",
            Class::Warning => "warning",
            Class::Measured => "measured",
            Class::Modeled => "modeled",
            Class::Projected => "projected",
            Class::None => "none",
            Class::Diag => "diag",
            Class::Nv => "nv",
            Class::Pix => "pix",
            Class::Pxb => "pxb",
            Class::Phb => "phb",
            Class::Node => "node",
            Class::Sys => "sys",
            Class::P2pOk => "p2p-ok",
            Class::P2pNs => "p2p-ns",
            Class::P2pRefused => "p2p-refused",
            Class::P2pU => "p2p-u",
            Class::Pass => "pass",
            Class::Warn => "warn",
            Class::Fail => "fail",
            Class::Unknown => "unknown",
            Class::Heat1 => "heat1",
            Class::Heat2 => "heat2",
            Class::Heat3 => "heat3",
            Class::Heat4 => "heat4",
            Class::Heat5 => "heat5",
        }
    }

    /// Whether the class is a provenance (measured, modeled, projected, none).
    pub fn is_provenance(self) -> bool {
        matches!(
            self,
            Class::Measured | Class::Modeled | Class::Projected | Class::None
        )
    }
}

/// A table: columns with their header and how they are set, and rows of cells.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// Element id (tests and links find tables by it).
    pub id: Option<String>,
    /// The columns.
    pub columns: Vec<Column>,
    /// The rows; each has one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

/// How a column is set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Column {
    /// The header.
    pub head: String,
    /// Figures are right-aligned and never wrap; prose wraps.
    pub figures: bool,
}

impl Column {
    /// A column of prose (left-aligned, wraps).
    pub fn text(head: &str) -> Self {
        Self {
            head: head.to_string(),
            figures: false,
        }
    }

    /// A column of figures (right-aligned, no wrap).
    pub fn figures(head: &str) -> Self {
        Self {
            head: head.to_string(),
            figures: true,
        }
    }
}

/// A table or matrix cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// The text.
    pub text: String,
    /// What the cell is: a provenance, a note, a link kind, a verdict, a heat level.
    pub class: Class,
    /// Bold (a key figure's value).
    pub strong: bool,
    /// More about the cell (the HTML's hover title; printed pages leave it out).
    pub title: Option<String>,
    /// Coloured parts instead of one text (the P2P matrix's r, w, n, a); empty for most cells.
    pub parts: Vec<Part>,
}

impl Cell {
    /// A plain cell.
    pub fn plain(text: impl Into<String>) -> Self {
        Self::of(Class::Plain, text)
    }

    /// A cell of `class`.
    pub fn of(class: Class, text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            class,
            strong: false,
            title: None,
            parts: Vec::new(),
        }
    }

    /// A cell in bold.
    pub fn strong(mut self) -> Self {
        self.strong = true;
        self
    }

    /// A cell with a hover title.
    pub fn titled(mut self, title: impl Into<String>) -> Self {
        let t = title.into();
        self.title = (!t.is_empty()).then_some(t);
        self
    }
}

/// One coloured part of a cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Part {
    /// The text.
    pub text: String,
    /// Its colour's class.
    pub class: Class,
}

/// A matrix: labelled columns and rows of coloured cells.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Matrix {
    /// Element id.
    pub id: Option<String>,
    /// The column labels.
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<MatrixRow>,
}

/// One row of a [`Matrix`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatrixRow {
    /// The row label.
    pub head: String,
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// A chart or drawing as SVG.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// Element id.
    pub id: String,
    /// The caption under it.
    pub caption: Option<String>,
    /// The SVG document (no scripts, no external references; text in DejaVu Sans).
    pub svg: String,
    /// The SVG's own width, in its units (1 unit reads as 1 CSS px).
    pub width: f64,
    /// The SVG's own height.
    pub height: f64,
}

/// The pages scalescope renders from a report: `report.png` (the one-page summary) and each
/// view's page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Page {
    /// `report.png`: identity, verdict, key figures, matrices, curves, warnings counted.
    Report,
    /// `topology.png`: the Topology view's content.
    Topology,
    /// `bandwidth.png`: the Bandwidth view's content.
    Bandwidth,
    /// `collectives.png`: the Collectives view's content.
    Collectives,
    /// `scaling.png`: the Scaling view's content.
    Scaling,
    /// `soak.png`: the burn-in's series, verdict and events (only when a soak ran).
    Soak,
}

impl Page {
    /// Every page, in the order they are written.
    pub const ALL: [Page; 6] = [
        Page::Report,
        Page::Topology,
        Page::Bandwidth,
        Page::Collectives,
        Page::Scaling,
        Page::Soak,
    ];

    /// The file the page is written to.
    pub fn file_name(self) -> &'static str {
        match self {
            Page::Report => "report.png",
            Page::Topology => "topology.png",
            Page::Bandwidth => "bandwidth.png",
            Page::Collectives => "collectives.png",
            Page::Scaling => "scaling.png",
            Page::Soak => "soak.png",
        }
    }
}

/// One page of `r` as a PNG (1,400 px wide, as tall as its content, light, for print); `None`
/// when the report has nothing for that page (no bandwidth results: no `bandwidth.png`).
pub fn page_png(r: &Report, page: Page) -> Option<Result<Vec<u8>, RenderError>> {
    build::page(r, page).map(|d| typeset::png(&d))
}

/// The whole report as a PDF (A4, tables flowing over pages with their headers repeated).
pub fn report_pdf(r: &Report) -> Result<Vec<u8>, RenderError> {
    typeset::pdf(&build::report(r))
}

/// The whole report as `report.html`.
pub fn report_html(r: &Report) -> String {
    html::write(&build::report(r))
}

/// Every rendered file of a report: `(file name, bytes or why not)` for each page that has
/// content ([`Page::ALL`]) and `report.pdf`.
pub fn render_all(r: &Report) -> Vec<(&'static str, Result<Vec<u8>, RenderError>)> {
    let mut out: Vec<(&'static str, Result<Vec<u8>, RenderError>)> = Page::ALL
        .iter()
        .filter_map(|&p| page_png(r, p).map(|png| (p.file_name(), png)))
        .collect();
    out.push(("report.pdf", report_pdf(r)));
    out
}
