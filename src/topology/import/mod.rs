//! Parser for `nvidia-smi topo -m`, `topo -mp` and `topo -p2p r|w|n|a` text.
//!
//! Captures come from terminals, scripts, issue trackers and web pages, so the parser accepts
//! what those do to nvidia-smi's output: ANSI codes around the header, CRLF line endings,
//! trailing tabs, tabs turned into runs of spaces, UTF-16 files (PowerShell's `>`), and several
//! matrices one after another in one file. It rejects anything it cannot read with a
//! [`TopologyError::Parse`] naming the line, what was expected and what was found, and never
//! panics.
//!
//! The format, as nvidia-smi 535–580 prints it (tab-separated, header indented by one tab):
//!
//! ```text
//!         GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
//! GPU0     X      NV18    PXB     0-31            0               N/A
//! GPU1    NV18     X      SYS     0-31            0               N/A
//! NIC0    PXB     SYS      X
//!
//! Legend:
//!
//!   X    = Self
//!   ...
//!
//! NIC Legend:
//!
//!   NIC0: mlx5_0
//! ```
//!
//! Older drivers name NIC columns directly (`mlx5_0`), print `SOC` for `SYS` and only a
//! `CPU Affinity` column. `topo -p2p X` prints the same grid with `OK`/`CNS`/`GNS`/`TNS`/`NS`/`U`
//! (and `DR`, disabled by regkey) cells. The output of `nvidia-smi --query-gpu=index,name,…
//! --format=csv` is also accepted, to fill in GPU names, memory and PCIe links.
//!
//! One file per stage: `input` reads a capture (bounded) and decodes it, `tokens` splits lines
//! into cells and labels, `matrix_kind` tells which command printed a matrix, `matrices` reads a
//! text into matrices, `settle` decides what each matrix holds, `query_csv` reads the
//! `--query-gpu` CSV, and `merge` makes one [`Topology`] of every text's matrices.

mod input;
mod matrices;
mod matrix_kind;
mod merge;
mod query_csv;
mod raw;
mod settle;
mod tokens;

use super::TopologyError;
use crate::model::Topology;
pub(crate) use input::{decode, read_input};
use matrices::parse_text;
use merge::build;

/// Reads each path ("-" = standard input) and merges what they hold into one Topology.
///
/// Every matrix in every file must cover the same GPUs. `topo -m` decides each pair's link
/// kind, `topo -mp` its PCIe path, and `topo -p2p` matrices fill the P2P capabilities.
pub fn import_paths(paths: &[String]) -> Result<Topology, TopologyError> {
    if paths.is_empty() {
        return Err(parse_error(
            "<none>",
            1,
            "no input files: expected at least one file with `nvidia-smi topo -m` output",
        ));
    }
    let mut parsed = Vec::with_capacity(paths.len());
    for path in paths {
        let (origin, bytes) = read_input(path)?;
        let text = decode(&bytes, &origin)?;
        parsed.push(parse_text(&text, &origin, path)?);
    }
    build(parsed, paths.to_vec())
}

/// [`import_paths`] for texts already read and decoded: `(path, text)` each, `-` naming standard
/// input.
pub(crate) fn import_texts(inputs: &[(String, String)]) -> Result<Topology, TopologyError> {
    let mut parsed = Vec::with_capacity(inputs.len());
    for (path, text) in inputs {
        let origin = if path == "-" { "<stdin>" } else { path };
        parsed.push(parse_text(text, origin, path)?);
    }
    build(parsed, inputs.iter().map(|(p, _)| p.clone()).collect())
}

/// Parses one text, which may hold a `topo -m`/`-mp` matrix and/or one or more `-p2p` matrices. `origin` names it in errors.
///
/// `origin` is also read as a file name: a P2P matrix with no command line above it takes its
/// capability from a name like `topo-p2p-r.txt`, and a name like `topo-mp.txt` marks a
/// `topo -mp` capture.
pub fn parse(text: &str, origin: &str) -> Result<Topology, TopologyError> {
    let parsed = parse_text(text, origin, origin)?;
    build(vec![parsed], vec![origin.to_string()])
}

pub(crate) fn parse_error(origin: &str, line: usize, message: impl Into<String>) -> TopologyError {
    TopologyError::Parse {
        origin: origin.to_string(),
        line,
        message: message.into(),
    }
}

/// A piece of the input as an error message quotes it: escaped, at most 60 characters.
fn shown(s: &str) -> String {
    crate::model::validate::quoted(s)
}

/// The most device columns one matrix may have: far beyond one machine's GPUs and NICs, and a
/// bound on the dense grid of cells (`settle::Grid`).
const MAX_COLUMNS: usize = 4096;

/// The largest capture read, bytes: a 1000-GPU `topo -m` matrix is about 5 MB, all four
/// `-p2p` matrices beside it about 25 MB.
pub const MAX_CAPTURE_BYTES: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LinkKind;

    #[test]
    fn small_matrix_round_trip() {
        let text = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
                    GPU0\t X \tNV18\t0-31\t0\t\tN/A\n\
                    GPU1\tNV18\t X \t0-31\t0\t\tN/A\n";
        let t = parse(text, "t.txt").unwrap();
        assert_eq!(t.gpu_indices(), [0, 1]);
        let link = t.link(0, 1).unwrap();
        assert_eq!(link.kind, Some(LinkKind::Nv(18)));
        assert_eq!(link.pcie_path, None);
        assert_eq!(t.gpus[1].cpu_affinity.as_deref(), Some("0-31"));
        assert_eq!(t.gpus[1].numa_node, Some(0));
        assert!(
            t.notes
                .iter()
                .any(|n| n.text.contains("line rates unknown"))
        );
    }

    #[test]
    fn csv_fills_gpus_and_pcie_rates() {
        let text = "\tGPU0\tGPU1\nGPU0\t X \tSYS\nGPU1\tSYS\t X \n\n\
                    index, name, memory.total [MiB], pcie.link.gen.max, pcie.link.width.max\n\
                    0, NVIDIA L40S, 46068 MiB, 4, 16\n\
                    1, NVIDIA L40S, 46068 MiB, 4, 16\n";
        let t = parse(text, "t.txt").unwrap();
        assert_eq!(t.gpus[0].name.as_deref(), Some("NVIDIA L40S"));
        assert_eq!(t.gpus[0].memory_mib, Some(46068));
        let rate = t.link(0, 1).unwrap().line_rate.as_ref().unwrap();
        assert_eq!(rate.basis, "PCIe Gen4 x16");
    }
}
