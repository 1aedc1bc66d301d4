//! `report.html`: a [`Document`] as one self-contained HTML file for a browser and for print.
//! No external links, scripts or fonts; the charts and the machine drawing are inline SVG.
//! Every string is escaped here, once. Tables and matrices fit the page: prose cells wrap (a
//! long word too), figures do not, and wide matrices are set smaller.

use std::fmt::Write as _;

use super::{Block, Cell, Class, Column, Document, Figure, Matrix, Paragraph, SpanStyle, Table};

/// Escapes text for HTML and SVG (element content and quoted attribute values alike):
/// `& < > " '`, and the characters a terminal must not see raw (controls, bidirectional
/// overrides: `model::validate::unsafe_on_terminal`) shown as their escapes (`\u{1b}`,
/// `\u{202e}`) rather than passed through; newlines and tabs stay.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c => crate::model::validate::push_for_terminal(&mut out, c),
        }
    }
    out
}

/// Matrices with more columns than this are set in the compact style.
const COMPACT_FROM: usize = 9;
/// Matrices with more columns than this (a rack of 72 GPUs) are set dense: colour cells of a
/// few pixels, their figures in the hover titles.
const DENSE_FROM: usize = 33;

const STYLE: &str = "
body{font-family:'DejaVu Sans','Liberation Sans',Arial,sans-serif;color:#1b1f24;background:#fff;
margin:24px auto;max-width:1100px;padding:0 16px;font-size:14px;line-height:1.4}
p,li,td,th,figcaption,summary{overflow-wrap:anywhere}
h1{font-size:28px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ccd;
padding-bottom:3px}h3{font-size:15px;margin:16px 0 6px}
.sub{color:#444;margin:2px 0}.note{color:#555;font-size:12.5px}.warning{color:#7c4a03}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px;max-width:100%}
th,td{border:1px solid #ccd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eef1f5}#health-table td,#soak-checks-table td{min-width:3.6em}td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
table.matrix td{text-align:center;min-width:44px;white-space:nowrap}
table.matrix.compact{font-size:11px}table.matrix.compact td,table.matrix.compact th{min-width:0;
padding:2px 3px}
table.matrix.dense{font-size:7px;table-layout:fixed}table.matrix.dense td,table.matrix.dense th{
padding:0;min-width:0;width:10px;height:10px;overflow:hidden;line-height:10px}
table.matrix.dense tr>th:first-child{width:auto;font-size:9px;padding:0 3px}
.diag{color:#999}.nv{background:#b9e3b0}.pix{background:#d4e9f7}.pxb{background:#b4d0ec}
.phb{background:#f3dcaa}.node{background:#efc29c}.sys{background:#e3b3a4}
.p2p-ok{color:#1d6b34;font-weight:bold}.p2p-ns{color:#a35c0f;font-weight:bold}
.p2p-refused{color:#a32323;font-weight:bold}.p2p-u{color:#7a5548;font-weight:bold}
.heat1{background:#eef5ec}.heat2{background:#d7ebd2}.heat3{background:#b9dcb1}
.heat4{background:#93c88a}.heat5{background:#6cb364}
.prov{font-size:12.5px}.measured{color:#14532d}.modeled{color:#7c4a03;font-style:italic}
.projected{color:#5b21b6;font-style:italic}.none{color:#777}
.verdict{display:inline-block;font-weight:bold;padding:2px 10px;border-radius:4px;color:#fff;
white-space:nowrap;overflow-wrap:normal}
.v-pass{background:#15803d}.v-warn{background:#b45309}.v-fail{background:#b91c1c}
.v-unknown{background:#6b7280}.badge{display:inline-block;border:1px solid #b45309;color:#7c4a03;
border-radius:4px;padding:0 6px;font-size:12px;margin-left:6px;vertical-align:middle}
figure{margin:8px 0 14px}figcaption{font-size:12.5px;color:#444}
figure svg{max-width:100%;height:auto;display:block}
svg text{font-family:'DejaVu Sans','Liberation Sans',Arial,sans-serif}
.cols{display:flex;flex-wrap:wrap;gap:8px 28px;align-items:flex-start}.cols>div{min-width:0;
max-width:100%}
@media print{body{margin:0;max-width:none}h2,h3{break-after:avoid}figure,tr{break-inside:avoid}}
";

/// The document as one HTML file.
pub fn write(d: &Document) -> String {
    let mut h = String::with_capacity(64 << 10);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&d.title)
    );
    for s in &d.sections {
        let tag = match s.id.as_str() {
            "head" => "header",
            "foot" => "footer",
            _ => "section",
        };
        let _ = writeln!(h, "<{tag} id=\"{}\">", escape(&s.id));
        if let Some(heading) = &s.heading {
            let _ = writeln!(h, "<h2>{}</h2>", escape(heading));
        }
        blocks(&mut h, &s.blocks);
        let _ = writeln!(h, "</{tag}>");
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn blocks(h: &mut String, blocks: &[Block]) {
    for b in blocks {
        block(h, b);
    }
}

fn block(h: &mut String, b: &Block) {
    match b {
        Block::Title { id, text, badge } => {
            let _ = write!(h, "<h1 id=\"{}\">{}", escape(id), escape(text));
            if let Some(b) = badge {
                let _ = write!(h, "<span class=\"badge\">{}</span>", escape(b));
            }
            h.push_str("</h1>\n");
        }
        Block::Subheading { text } => {
            let _ = writeln!(h, "<h3>{}</h3>", escape(text));
        }
        Block::Paragraph(p) => {
            let _ = writeln!(h, "<p{}>{}</p>", paragraph_class(p.class), spans(p));
        }
        Block::List { ordered, items } => {
            let tag = if *ordered { "ol" } else { "ul" };
            let _ = writeln!(h, "<{tag}>");
            for p in items {
                let _ = writeln!(h, "<li{}>{}</li>", paragraph_class(p.class), spans(p));
            }
            let _ = writeln!(h, "</{tag}>");
        }
        Block::Verdict {
            word,
            class,
            counts,
        } => {
            let _ = writeln!(
                h,
                "<p>{} {}</p>",
                verdict_pill(word, *class),
                escape(counts)
            );
        }
        Block::Table(t) => table(h, t),
        Block::Matrix(m) => matrix(h, m),
        Block::Figure(f) => figure(h, f),
        Block::Columns { columns } => {
            h.push_str("<div class=\"cols\">\n");
            for c in columns {
                h.push_str("<div>\n");
                blocks(h, c);
                h.push_str("</div>\n");
            }
            h.push_str("</div>\n");
        }
        Block::Details {
            summary,
            blocks: inner,
        } => {
            let _ = writeln!(h, "<details><summary>{}</summary>", escape(summary));
            blocks(h, inner);
            h.push_str("</details>\n");
        }
    }
}

/// ` class="…"` of a paragraph, or nothing for a plain one.
fn paragraph_class(c: Class) -> &'static str {
    match c {
        Class::Sub => " class=\"sub\"",
        Class::Note => " class=\"note\"",
        Class::Measured => " class=\"note measured\"",
        Class::Modeled => " class=\"note modeled\"",
        Class::Projected => " class=\"note projected\"",
        Class::Warning => " class=\"warning\"",
        _ => "",
    }
}

fn spans(p: &Paragraph) -> String {
    let mut out = String::new();
    for s in &p.spans {
        match s.style {
            SpanStyle::Plain => out.push_str(&escape(&s.text)),
            SpanStyle::Strong => {
                let _ = write!(out, "<b>{}</b>", escape(&s.text));
            }
            SpanStyle::Code => {
                let _ = write!(out, "<code>{}</code>", escape(&s.text));
            }
        }
    }
    out
}

fn verdict_pill(word: &str, class: Class) -> String {
    format!(
        "<span class=\"verdict v-{}\">{}</span>",
        class.name(),
        escape(word)
    )
}

fn table(h: &mut String, t: &Table) {
    match &t.id {
        Some(id) => {
            let _ = writeln!(h, "<table id=\"{}\">", escape(id));
        }
        None => h.push_str("<table>\n"),
    }
    h.push_str("<tr>");
    for c in &t.columns {
        let _ = write!(h, "<th>{}</th>", escape(&c.head));
    }
    h.push_str("</tr>\n");
    for row in &t.rows {
        h.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            td(h, c, t.columns.get(i));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

/// One table cell: figures right-aligned and unbroken, prose wrapping, provenance and verdicts
/// in their colours.
fn td(h: &mut String, c: &Cell, column: Option<&Column>) {
    let figures = column.is_some_and(|c| c.figures);
    let class = match c.class {
        Class::Plain if figures => " class=\"n\"".to_string(),
        Class::Plain => String::new(),
        k if k.is_provenance() => format!(" class=\"prov {}\"", k.name()),
        k => format!(" class=\"{}\"", k.name()),
    };
    let title = c
        .title
        .as_ref()
        .map_or(String::new(), |t| format!(" title=\"{}\"", escape(t)));
    let _ = write!(h, "<td{class}{title}>{}</td>", cell_content(c));
}

/// A cell's content: its parts, a verdict pill, or its text (bold where strong).
fn cell_content(c: &Cell) -> String {
    if !c.parts.is_empty() {
        return c
            .parts
            .iter()
            .map(|p| {
                format!(
                    "<span class=\"{}\">{}</span>",
                    p.class.name(),
                    escape(&p.text)
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
    }
    if matches!(
        c.class,
        Class::Pass | Class::Warn | Class::Fail | Class::Unknown
    ) {
        return verdict_pill(&c.text, c.class);
    }
    if c.strong {
        format!("<b>{}</b>", escape(&c.text))
    } else {
        escape(&c.text)
    }
}

fn matrix(h: &mut String, m: &Matrix) {
    let compact = if m.columns.len() >= DENSE_FROM {
        " compact dense"
    } else if m.columns.len() >= COMPACT_FROM {
        " compact"
    } else {
        ""
    };
    let id =
        m.id.as_ref()
            .map_or(String::new(), |id| format!(" id=\"{}\"", escape(id)));
    let _ = write!(h, "<table class=\"matrix{compact}\"{id}>\n<tr><th></th>");
    for c in &m.columns {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h.push_str("</tr>\n");
    for r in &m.rows {
        let _ = write!(h, "<tr><th>{}</th>", escape(&r.head));
        for c in &r.cells {
            let class = match c.class {
                Class::Plain => String::new(),
                k => format!(" class=\"{}\"", k.name()),
            };
            let title = c
                .title
                .as_ref()
                .map_or(String::new(), |t| format!(" title=\"{}\"", escape(t)));
            let _ = write!(h, "<td{class}{title}>{}</td>", cell_content(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

fn figure(h: &mut String, f: &Figure) {
    // Inline SVG in HTML needs no namespace declaration, and the file names no address.
    let svg = f
        .svg
        .replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    let _ = write!(
        h,
        "<figure class=\"chart\" id=\"{}\">\n{svg}",
        escape(&f.id)
    );
    if let Some(c) = &f.caption {
        let _ = writeln!(h, "<figcaption>{}</figcaption>", escape(c));
    }
    h.push_str("</figure>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            escape("<b a=\"x\" b='y'>&\u{1b}[31m"),
            "&lt;b a=&quot;x&quot; b=&#39;y&#39;&gt;&amp;\\u{1b}[31m"
        );
    }

    #[test]
    fn prose_in_a_figures_column_wraps_and_figures_do_not() {
        let t = Table {
            id: Some("t".into()),
            columns: vec![Column::text("workload"), Column::figures("efficiency")],
            rows: vec![vec![
                Cell::plain("llama2-7b-ddp"),
                Cell::of(
                    Class::Note,
                    "does not fit: 112 GiB per GPU > 80 GiB; try fsdp",
                ),
            ]],
        };
        let mut h = String::new();
        table(&mut h, &t);
        assert!(h.contains("<td class=\"note\">does not fit: "), "{h}");
        let t = Table {
            rows: vec![vec![Cell::plain("resnet50"), Cell::plain("0.93")]],
            ..t
        };
        let mut h = String::new();
        table(&mut h, &t);
        assert!(h.contains("<td class=\"n\">0.93</td>"), "{h}");
    }

    #[test]
    fn figures_lose_their_namespace_address_in_the_page() {
        let mut h = String::new();
        figure(
            &mut h,
            &Figure {
                id: "f".into(),
                caption: Some("a <b>".into()),
                svg: "<svg xmlns=\"http://www.w3.org/2000/svg\"><path d=\"M0,0\"/></svg>".into(),
                width: 1.0,
                height: 1.0,
            },
        );
        assert!(!h.contains("http"), "{h}");
        assert!(h.contains("<figcaption>a &lt;b&gt;</figcaption>"));
    }
}
