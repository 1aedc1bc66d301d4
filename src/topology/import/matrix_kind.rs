//! Which command printed a matrix: `topo -m`, `topo -mp` or `topo -p2p r|w|n|a|p`, as a command
//! line above it or the capture's file name says.

use crate::model::P2pCap;

/// Which `nvidia-smi topo` matrix comes next, as a command line (or a file name) says (the
/// matrix's counterpart of `smi_query::CaptureKind`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum MatrixKind {
    /// `topo -m`.
    TopoM,
    /// `topo -mp`: PCIe paths only.
    TopoMp,
    /// `topo -p2p r|w|n|a`.
    P2p(P2pCap),
    /// `topo -p2p p` (prop), which the model does not store.
    P2pProp,
    /// `topo -p2p` with a letter nvidia-smi does not take.
    P2pUnknown(String),
}

pub(super) fn p2p_word(word: &str) -> MatrixKind {
    match word {
        "r" | "read" => MatrixKind::P2p(P2pCap::Read),
        "w" | "write" => MatrixKind::P2p(P2pCap::Write),
        "n" | "nvlink" => MatrixKind::P2p(P2pCap::Nvlink),
        "a" | "atomics" | "atomic" => MatrixKind::P2p(P2pCap::Atomics),
        "p" | "prop" => MatrixKind::P2pProp,
        other => MatrixKind::P2pUnknown(other.to_string()),
    }
}

/// The matrix a command line names, e.g. `$ nvidia-smi topo -p2p r`, `# nvidia-smi topo -mp`,
/// `echo "== nvidia-smi topo --p2pstatus=w =="`, or any line holding `-p2p a`.
pub(super) fn matrix_kind_in_line(line: &str) -> Option<MatrixKind> {
    // A command line is short; a long line (a matrix row of 1000 GPUs, a pasted blob) is not.
    if line.len() > 4096 {
        return None;
    }
    let lower = line.to_ascii_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ';' | '|' | '(' | ')'))
        .filter(|t| !t.is_empty())
        .collect();
    for (i, token) in tokens.iter().enumerate() {
        if let Some(word) = token.strip_prefix("--p2pstatus=") {
            return Some(p2p_word(word));
        }
        if matches!(*token, "-p2p" | "--p2pstatus") {
            return Some(p2p_word(tokens.get(i + 1).copied().unwrap_or("")));
        }
    }
    if !tokens.iter().any(|t| t.ends_with("topo")) {
        return None;
    }
    if tokens.iter().any(|t| matches!(*t, "-mp" | "--matrix_pci")) {
        Some(MatrixKind::TopoMp)
    } else if tokens.iter().any(|t| matches!(*t, "-m" | "--matrix")) {
        Some(MatrixKind::TopoM)
    } else {
        None
    }
}

/// What a file name says about a matrix with no command line above it: `…p2p-r…`, `…p2p_w…`,
/// `p2p.n`, `p2p-read` → that capability; `…topo-mp…`, `…_mp.txt` → `topo -mp`.
pub(super) fn matrix_kind_in_name(path: &str) -> Option<MatrixKind> {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = base.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, word) in words.iter().enumerate() {
        // `p2p-r` splits into `p2p`, `r`; `p2pr` stays one word.
        let letter = if *word == "p2p" {
            words.get(i + 1).copied()
        } else {
            word.strip_prefix("p2p").filter(|rest| !rest.is_empty())
        };
        if let Some(letter) = letter
            && let cmd @ (MatrixKind::P2p(_) | MatrixKind::P2pProp) = p2p_word(letter)
        {
            return Some(cmd);
        }
    }
    words
        .iter()
        .any(|w| matches!(*w, "mp" | "topomp"))
        .then_some(MatrixKind::TopoMp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_from_command_lines() {
        let p2p = |c| Some(MatrixKind::P2p(c));
        assert_eq!(
            matrix_kind_in_line("$ nvidia-smi topo -p2p r"),
            p2p(P2pCap::Read)
        );
        assert_eq!(
            matrix_kind_in_line("# nvidia-smi topo -p2p w"),
            p2p(P2pCap::Write)
        );
        assert_eq!(
            matrix_kind_in_line("echo \"$ nvidia-smi topo -p2p n\""),
            p2p(P2pCap::Nvlink)
        );
        assert_eq!(
            matrix_kind_in_line("user@h200:~$ nvidia-smi topo --p2pstatus a"),
            p2p(P2pCap::Atomics)
        );
        assert_eq!(
            matrix_kind_in_line("nvidia-smi topo --p2pstatus=r"),
            p2p(P2pCap::Read)
        );
        assert_eq!(
            matrix_kind_in_line("nvidia-smi topo -p2p p"),
            Some(MatrixKind::P2pProp)
        );
        assert_eq!(
            matrix_kind_in_line("nvidia-smi topo -p2p rw"),
            Some(MatrixKind::P2pUnknown("rw".to_string()))
        );
        assert_eq!(
            matrix_kind_in_line("$ nvidia-smi topo -mp"),
            Some(MatrixKind::TopoMp)
        );
        assert_eq!(
            matrix_kind_in_line("root@node2:~# nvidia-smi topo -m"),
            Some(MatrixKind::TopoM)
        );
        assert_eq!(matrix_kind_in_line("$ ls -m"), None);
        assert_eq!(matrix_kind_in_line("the -p2path is long"), None);
    }

    #[test]
    fn capability_from_file_names() {
        let p2p = |c| Some(MatrixKind::P2p(c));
        assert_eq!(
            matrix_kind_in_name("caps/h200-topo-p2p-r.txt"),
            p2p(P2pCap::Read)
        );
        assert_eq!(matrix_kind_in_name("x_p2p_w.log"), p2p(P2pCap::Write));
        assert_eq!(matrix_kind_in_name("p2p.n"), p2p(P2pCap::Nvlink));
        assert_eq!(
            matrix_kind_in_name("C:\\caps\\p2pa.txt"),
            p2p(P2pCap::Atomics)
        );
        assert_eq!(matrix_kind_in_name("p2p-read.txt"), p2p(P2pCap::Read));
        assert_eq!(
            matrix_kind_in_name("topo-p2p-p.txt"),
            Some(MatrixKind::P2pProp)
        );
        assert_eq!(
            matrix_kind_in_name("dgx-topo-mp.txt"),
            Some(MatrixKind::TopoMp)
        );
        assert_eq!(matrix_kind_in_name("dgx-topo-m.txt"), None);
        assert_eq!(matrix_kind_in_name("p2p-all.txt"), None);
        assert_eq!(matrix_kind_in_name("<stdin>"), None);
    }
}
