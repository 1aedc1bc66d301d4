//! Embeds every `assets/reports/*.json` (the bundled example reports) into the binary: writes
//! `$OUT_DIR/bundled_reports.rs` with one `include_str!` per file, oldest first: by the date the
//! name ends in (`<machine>-YYYY-MM-DD.json`), then by name. Without GPUs the app opens on the
//! last one listed of today's method (report schema 2 or later; else the first): a newer example
//! of the current method becomes the first screen. No file → an empty list, and the app runs
//! without an example.

use std::path::Path;

fn main() {
    let dir = Path::new("assets/reports");
    println!("cargo:rerun-if-changed=assets/reports");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    // The date is the name's last ten characters before `.json` (any other name sorts first).
    files.sort_by_key(|f| {
        let stem = f.trim_end_matches(".json");
        let date = stem
            .get(stem.len().saturating_sub(10)..)
            .unwrap_or("")
            .to_string();
        (date, f.clone())
    });
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let mut out = String::from(
        "/// (file name, contents) of every bundled report.\npub const BUNDLED: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        println!("cargo:rerun-if-changed=assets/reports/{f}");
        let path = Path::new(&root).join("assets/reports").join(f);
        out.push_str(&format!(
            "    ({f:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    if let Err(e) = std::fs::write(Path::new(&out_dir).join("bundled_reports.rs"), out) {
        panic!("cannot write bundled_reports.rs: {e}");
    }
}
