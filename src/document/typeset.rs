//! The document typeset by typst (as a library) into PNG and PDF, on the CPU: a `World` that
//! serves one template (`assets/document/report.typ`), the document as `/data.json` and the
//! embedded DejaVu fonts, and nothing else — no files, no network, no system fonts. typst lays
//! out tables that wrap and flow over pages with repeated headers, embeds the SVG charts, and
//! rasterizes with tiny-skia; no GL, Vulkan or display is involved.

use std::sync::LazyLock;

use serde::Serialize;
use typst::diag::{FileError, FileResult, SourceDiagnostic};
use typst::foundations::{Bytes, Datetime, Duration};
use typst::syntax::{FileId, RootedPath, Source, VirtualPath, VirtualRoot};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, LibraryExt, World};
use typst_layout::PagedDocument;

use super::Document;
use super::fonts;

/// The template every page and the PDF are typeset with.
const TEMPLATE: &str = include_str!("../../assets/document/report.typ");

/// Pixels per point of the PNGs: a 700 pt page is 1,400 px wide.
const PIXELS_PER_POINT: f32 = 2.0;

/// The tallest PNG page rendered, in points (28,000 px at 2 px/pt, ~160 MB of pixels).
const MAX_PAGE_HEIGHT_PT: f64 = 14_000.0;

/// Why a document could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The template did not compile against this document: a bug in scalescope.
    #[error("the report template did not compile (a bug in scalescope, please report it): {0}")]
    Template(String),
    /// The document did not serialize to JSON.
    #[error("the document could not be serialized: {0}")]
    Data(#[from] serde_json::Error),
    /// The page came out taller than scalescope rasterizes.
    #[error(
        "the page is {height_pt:.0} pt tall, more than the {MAX_PAGE_HEIGHT_PT:.0} pt a PNG page may be"
    )]
    TooTall {
        /// The page's height.
        height_pt: f64,
    },
    /// The PNG or PDF encoder failed.
    #[error("{format} encoding failed: {message}")]
    Encode {
        /// `PNG` or `PDF`.
        format: &'static str,
        /// What the encoder said.
        message: String,
    },
}

/// How the document is set: one PNG page of auto height, or A4 pages for the PDF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Format {
    Png,
    Pdf,
}

/// What the template reads as `/data.json`.
#[derive(Serialize)]
struct Data<'a> {
    format: Format,
    document: &'a Document,
}

/// The embedded fonts, parsed once.
struct Fonts {
    book: LazyHash<FontBook>,
    fonts: Vec<Font>,
}

static FONTS: LazyLock<Fonts> = LazyLock::new(|| {
    let fonts: Vec<Font> = fonts::FILES
        .iter()
        .flat_map(|data| Font::iter(Bytes::new(*data)))
        .collect();
    Fonts {
        book: LazyHash::new(FontBook::from_fonts(&fonts)),
        fonts,
    }
});

/// typst's standard library, built once.
static LIBRARY: LazyLock<LazyHash<Library>> = LazyLock::new(|| LazyHash::new(Library::default()));

/// The world a document is compiled in: the template, the data, the fonts.
struct DocWorld {
    main: Source,
    data: Bytes,
}

impl DocWorld {
    fn new(data: Vec<u8>) -> Self {
        let id = FileId::new(RootedPath::new(
            VirtualRoot::Project,
            VirtualPath::new("report.typ").expect("a plain file name is a valid virtual path"),
        ));
        Self {
            main: Source::new(id, TEMPLATE.to_string()),
            data: Bytes::new(data),
        }
    }
}

impl World for DocWorld {
    fn library(&self) -> &LazyHash<Library> {
        &LIBRARY
    }

    fn book(&self) -> &LazyHash<FontBook> {
        &FONTS.book
    }

    fn main(&self) -> FileId {
        self.main.id()
    }

    fn source(&self, id: FileId) -> FileResult<Source> {
        if id == self.main.id() {
            Ok(self.main.clone())
        } else {
            Err(FileError::NotFound(id.vpath().get_without_slash().into()))
        }
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        match id.vpath().get_without_slash() {
            "data.json" => Ok(self.data.clone()),
            other => Err(FileError::NotFound(other.into())),
        }
    }

    fn font(&self, index: usize) -> Option<Font> {
        FONTS.fonts.get(index).cloned()
    }

    fn today(&self, _: Option<Duration>) -> Option<Datetime> {
        // A document's date is its report's; the template never asks for today's.
        None
    }
}

/// The diagnostics as one line each, joined.
fn diagnostics(diags: &[SourceDiagnostic]) -> String {
    diags
        .iter()
        .map(|d| {
            let mut s = d.message.to_string();
            for h in &d.hints {
                s.push_str(&format!(" (hint: {})", h.v));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Lays `doc` out in `format`.
fn compile(doc: &Document, format: Format) -> Result<PagedDocument, RenderError> {
    let data = serde_json::to_vec(&Data {
        format,
        document: doc,
    })?;
    let world = DocWorld::new(data);
    let result = typst::compile::<PagedDocument>(&world).output;
    // Memoized layouts of earlier documents are of no use to the next one; keep the cache small
    // in a long-running app.
    typst::comemo::evict(10);
    result.map_err(|e| RenderError::Template(diagnostics(&e)))
}

/// The document as one PNG page: 700 pt (1,400 px) wide, as tall as its content, on white.
pub fn png(doc: &Document) -> Result<Vec<u8>, RenderError> {
    let laid = compile(doc, Format::Png)?;
    let page = laid
        .pages()
        .first()
        .ok_or_else(|| RenderError::Template("the template made no page".into()))?;
    let height_pt = page.frame.height().to_pt();
    if height_pt > MAX_PAGE_HEIGHT_PT {
        return Err(RenderError::TooTall { height_pt });
    }
    let pixmap = typst_render::render(
        page,
        &typst_render::RenderOptions {
            pixel_per_pt: typst::utils::Scalar::new(f64::from(PIXELS_PER_POINT)),
            ..Default::default()
        },
    );
    pixmap.encode_png().map_err(|e| RenderError::Encode {
        format: "PNG",
        message: e.to_string(),
    })
}

/// The document as a PDF: A4 pages, tables flowing over them with their headers repeated.
pub fn pdf(doc: &Document) -> Result<Vec<u8>, RenderError> {
    let laid = compile(doc, Format::Pdf)?;
    let mut bytes = typst_pdf::pdf(&laid, &typst_pdf::PdfOptions::default()).map_err(|e| {
        RenderError::Encode {
            format: "PDF",
            message: diagnostics(&e),
        }
    })?;
    blank_default_suspects(&mut bytes);
    Ok(bytes)
}

/// The default-valued key typst writes in the catalog's `/MarkInfo` dictionary.
const SUSPECTS_FALSE: &[u8] = b"/Suspects false";

/// Blanks `/Suspects false` in the catalog's `/MarkInfo` with spaces, in place. It is valid PDF
/// (ISO 32000-1 §14.7.1: false is the default) but poppler (pdftoppm, pdftotext, evince) reads a
/// false there as an error and prints "Syntax Error: Suspects object is wrong type (boolean)"
/// for every file. Leaving the key out means the same; spaces of the same length keep every
/// byte offset of the cross-reference table true.
fn blank_default_suspects(pdf: &mut [u8]) {
    let Some(mark) = find(pdf, b"/MarkInfo") else {
        return;
    };
    // Within the dictionary that follows: up to its closing `>>`.
    let Some(end) = find(&pdf[mark..], b">>").map(|e| mark + e) else {
        return;
    };
    if let Some(at) = find(&pdf[mark..end], SUSPECTS_FALSE).map(|a| mark + a) {
        pdf[at..at + SUSPECTS_FALSE.len()].fill(b' ');
    }
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The number of pages `doc` takes as a PDF (for tests and the example's output).
pub fn pdf_pages(doc: &Document) -> Result<usize, RenderError> {
    Ok(compile(doc, Format::Pdf)?.pages().len())
}
