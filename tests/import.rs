//! Imports of `nvidia-smi topo` captures in tests/data/: what each parses to, how files merge,
//! what bad input reports, and that no input makes the parser panic.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::{data_path, read_data};
use scalescope::model::{Blame, LinkKind, P2pCap, P2pStatus, Topology, TopologySource};
use scalescope::topology::TopologyError;
use scalescope::topology::import::{import_paths, parse};

fn load(names: &[&str]) -> Topology {
    let paths: Vec<String> = names.iter().map(|n| data_path(n)).collect();
    import_paths(&paths).unwrap_or_else(|e| panic!("{names:?}: {e}"))
}

/// (origin, line, message) of a parse error; fails the test on anything else.
fn parse_error(result: Result<Topology, TopologyError>) -> (String, usize, String) {
    match result {
        Err(TopologyError::Parse {
            origin,
            line,
            message,
        }) => (origin, line, message),
        Err(other) => panic!("expected a parse error, got {other}"),
        Ok(t) => panic!("expected a parse error, got {} GPUs", t.gpus.len()),
    }
}

fn kind(t: &Topology, a: usize, b: usize) -> Option<LinkKind> {
    t.link(a, b).and_then(|l| l.kind)
}

fn pcie_path(t: &Topology, a: usize, b: usize) -> Option<LinkKind> {
    t.link(a, b).and_then(|l| l.pcie_path)
}

fn cap(t: &Topology, a: usize, b: usize, c: P2pCap) -> Option<P2pStatus> {
    t.p2p(a, b).and_then(|p| p.caps.get(c))
}

fn nic_index(t: &Topology, name: &str) -> usize {
    t.nics
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("no NIC {name}"))
        .index
}

/// Every capture a good import must accept.
const CAPTURES: [&str; 16] = [
    "dgx-a100-topo-m.txt",
    "dgx-a100-topo-m-pasted-spaces.txt",
    "l40s-8x-pcie-topo-m.txt",
    "l40s-8x-topo-p2p-r.txt",
    "l40s-8x-topo-p2p-w.txt",
    "l40s-8x-topo-p2p-n.txt",
    "l40s-8x-topo-p2p-a.txt",
    "dgx-h100-topo-m.txt",
    "dgx-h100-topo-mp.txt",
    "dgx-h100-topo-p2p-all.txt",
    "workstation-ansi-crlf-topo-m.txt",
    "h200-2x-topo-m.txt",
    "h200-2x-topo-p2p.txt",
    "h200-2x-query-gpu.csv",
    "k80-old-driver-topo-m.txt",
    "bad-missing-column.txt",
];

#[test]
fn every_capture_has_the_expected_gpu_count() {
    let expected = [
        ("dgx-a100-topo-m.txt", 8),
        ("dgx-a100-topo-m-pasted-spaces.txt", 8),
        ("l40s-8x-pcie-topo-m.txt", 8),
        ("l40s-8x-topo-p2p-r.txt", 8),
        ("l40s-8x-topo-p2p-w.txt", 8),
        ("l40s-8x-topo-p2p-n.txt", 8),
        ("l40s-8x-topo-p2p-a.txt", 8),
        ("dgx-h100-topo-m.txt", 8),
        ("dgx-h100-topo-mp.txt", 8),
        ("dgx-h100-topo-p2p-all.txt", 8),
        ("workstation-ansi-crlf-topo-m.txt", 4),
        ("h200-2x-topo-m.txt", 2),
        ("h200-2x-topo-p2p.txt", 2),
        ("h200-2x-query-gpu.csv", 2),
        ("k80-old-driver-topo-m.txt", 4),
    ];
    for (name, gpus) in expected {
        let t = load(&[name]);
        assert_eq!(t.gpu_indices(), (0..gpus).collect::<Vec<_>>(), "{name}");
        assert_eq!(t.links.len(), gpus * (gpus - 1) / 2, "{name}");
        assert_eq!(t.p2p.len(), gpus * (gpus - 1), "{name}");
        assert_eq!(t.captured_at, None, "{name}");
        assert_eq!(
            t.source,
            TopologySource::Imported {
                paths: vec![data_path(name)]
            }
        );
    }
}

#[test]
fn dgx_a100_old_style_nic_columns() {
    let t = load(&["dgx-a100-topo-m.txt"]);
    for a in 0..8 {
        for b in a + 1..8 {
            assert_eq!(kind(&t, a, b), Some(LinkKind::Nv(12)), "GPU{a}-GPU{b}");
            // `-m` shows NVLink for every pair: the PCIe path is not known.
            assert_eq!(pcie_path(&t, a, b), None);
        }
    }
    let names: Vec<&str> = t.nics.iter().map(|n| n.name.as_str()).collect();
    let want: Vec<String> = (0..12).map(|i| format!("mlx5_{i}")).collect();
    assert_eq!(names, want);
    assert!(t.nics.iter().all(|n| n.label.is_none()));
    assert_eq!(t.nic_links.len(), 12 * 8);
    assert_eq!(t.nic_link(nic_index(&t, "mlx5_0"), 0), Some(LinkKind::Pix));
    assert_eq!(t.nic_link(nic_index(&t, "mlx5_1"), 0), Some(LinkKind::Pxb));
    assert_eq!(t.nic_link(nic_index(&t, "mlx5_3"), 2), Some(LinkKind::Pxb));
    assert_eq!(t.nic_link(nic_index(&t, "mlx5_3"), 0), Some(LinkKind::Sys));
    assert_eq!(t.nic_link(nic_index(&t, "mlx5_9"), 7), Some(LinkKind::Pix));
    let numa: Vec<Option<u32>> = t.gpus.iter().map(|g| g.numa_node).collect();
    assert_eq!(numa, [3, 3, 1, 1, 7, 7, 5, 5].map(Some));
    assert_eq!(t.gpus[0].cpu_affinity.as_deref(), Some("48-63,176-191"));
    assert_eq!(t.gpus[6].cpu_affinity.as_deref(), Some("80-95,208-223"));
    // A capture carries no speeds.
    assert!(t.links.iter().all(|l| l.line_rate.is_none()));
    assert!(
        t.notes
            .iter()
            .any(|n| n.text.contains("line rates unknown")),
        "{:?}",
        t.notes
    );
}

#[test]
fn spaces_instead_of_tabs_read_the_same() {
    let tabs = load(&["dgx-a100-topo-m.txt"]);
    let spaces = load(&["dgx-a100-topo-m-pasted-spaces.txt"]);
    assert_eq!(spaces.gpus, tabs.gpus);
    assert_eq!(spaces.links, tabs.links);
    assert_eq!(spaces.nics, tabs.nics);
    assert_eq!(spaces.nic_links, tabs.nic_links);
}

#[test]
fn pcie_box_has_every_pcie_level() {
    let t = load(&["l40s-8x-pcie-topo-m.txt"]);
    assert_eq!(kind(&t, 0, 1), Some(LinkKind::Pix));
    assert_eq!(kind(&t, 0, 2), Some(LinkKind::Pxb));
    assert_eq!(kind(&t, 4, 6), Some(LinkKind::Node));
    assert_eq!(kind(&t, 3, 4), Some(LinkKind::Sys));
    // A PCIe cell of `-m` is the PCIe path too.
    for l in &t.links {
        assert_eq!(l.pcie_path, l.kind, "GPU{}-GPU{}", l.a, l.b);
        assert_eq!(l.nvlinks(), Some(0));
    }
    assert_eq!(t.nics.len(), 2);
    assert_eq!(t.nics[0].name, "mlx5_0");
    assert_eq!(t.nics[0].label.as_deref(), Some("NIC0"));
    assert_eq!(t.nic_link(0, 0), Some(LinkKind::Phb));
    assert_eq!(t.nic_link(1, 7), Some(LinkKind::Sys));
    assert_eq!(t.gpus[0].cpu_affinity.as_deref(), Some("0-31,64-95"));
    assert_eq!(t.gpus[7].cpu_affinity.as_deref(), Some("32-63,96-127"));
    assert_eq!(
        t.numa_groups(),
        vec![(Some(0), vec![0, 1, 2, 3]), (Some(1), vec![4, 5, 6, 7])]
    );
}

#[test]
fn nic_legend_maps_labels_to_names() {
    let t = load(&["dgx-h100-topo-m.txt"]);
    assert_eq!(kind(&t, 0, 7), Some(LinkKind::Nv(18)));
    assert_eq!(t.nics.len(), 12);
    for (i, nic) in t.nics.iter().enumerate() {
        assert_eq!(nic.index, i);
        assert_eq!(nic.name, format!("mlx5_{i}"));
        assert_eq!(nic.label, Some(format!("NIC{i}")));
        assert_eq!(nic.line_rate_gbps, None);
    }
    assert_eq!(t.nic_link(0, 0), Some(LinkKind::Pix));
    assert_eq!(t.nic_link(0, 1), Some(LinkKind::Node));
    assert_eq!(t.nic_link(6, 4), Some(LinkKind::Pix));
    assert_eq!(t.nic_link(11, 0), Some(LinkKind::Sys));
    assert_eq!(t.gpus[4].numa_node, Some(1));
    assert_eq!(t.gpus[4].cpu_affinity.as_deref(), Some("56-111,168-223"));
    // No legend entry for a NIC label: the label stands in for the name, with a note.
    let text = read_data("dgx-h100-topo-m.txt").replace("  NIC11: mlx5_11\n", "");
    let t = parse(&text, "h100.txt").unwrap();
    assert_eq!(t.nics[11].name, "NIC11");
    assert!(
        t.notes.iter().any(|n| n.text.contains("NIC11")),
        "{:?}",
        t.notes
    );
}

#[test]
fn ansi_crlf_and_trailing_tabs() {
    let t = load(&["workstation-ansi-crlf-topo-m.txt"]);
    assert_eq!(kind(&t, 0, 1), Some(LinkKind::Nv(4)));
    assert_eq!(kind(&t, 2, 3), Some(LinkKind::Nv(4)));
    assert_eq!(kind(&t, 0, 2), Some(LinkKind::Node));
    assert_eq!(pcie_path(&t, 1, 3), Some(LinkKind::Node));
    assert_eq!(pcie_path(&t, 0, 1), None);
    assert!(t.gpus.iter().all(|g| g.numa_node == Some(0)));
    assert!(
        t.gpus
            .iter()
            .all(|g| g.cpu_affinity.as_deref() == Some("0-63"))
    );
}

#[test]
fn old_driver_soc_and_cpu_affinity_only() {
    let t = load(&["k80-old-driver-topo-m.txt"]);
    assert_eq!(kind(&t, 0, 1), Some(LinkKind::Pix));
    assert_eq!(kind(&t, 0, 2), Some(LinkKind::Sys));
    assert_eq!(t.nics[0].name, "mlx4_0");
    assert_eq!(t.nic_link(0, 1), Some(LinkKind::Phb));
    assert_eq!(t.nic_link(0, 3), Some(LinkKind::Sys));
    assert_eq!(t.gpus[2].cpu_affinity.as_deref(), Some("12-23"));
    assert!(t.gpus.iter().all(|g| g.numa_node.is_none()));
}

#[test]
fn topo_mp_alone_fills_kind_and_pcie_path() {
    let t = load(&["dgx-h100-topo-mp.txt"]);
    assert_eq!(kind(&t, 0, 1), Some(LinkKind::Node));
    assert_eq!(pcie_path(&t, 0, 1), Some(LinkKind::Node));
    assert_eq!(kind(&t, 0, 4), Some(LinkKind::Sys));
    assert_eq!(pcie_path(&t, 0, 4), Some(LinkKind::Sys));
}

fn assert_h100_merged(t: &Topology) {
    for a in 0..8 {
        for b in 0..8 {
            if a == b {
                continue;
            }
            assert_eq!(kind(t, a, b), Some(LinkKind::Nv(18)));
            let want = if (a < 4) == (b < 4) {
                LinkKind::Node
            } else {
                LinkKind::Sys
            };
            assert_eq!(pcie_path(t, a, b), Some(want), "GPU{a}-GPU{b}");
            for c in P2pCap::ALL {
                assert_eq!(cap(t, a, b, c), Some(P2pStatus::Ok), "GPU{a}-GPU{b} {c:?}");
            }
        }
    }
    assert_eq!(t.nics.len(), 12);
    assert_eq!(t.nic_link(3, 3), Some(LinkKind::Pix));
}

#[test]
fn merge_m_mp_and_p2p_files() {
    let names = [
        "dgx-h100-topo-m.txt",
        "dgx-h100-topo-mp.txt",
        "dgx-h100-topo-p2p-all.txt",
    ];
    let t = load(&names);
    assert_h100_merged(&t);
    let TopologySource::Imported { paths } = &t.source else {
        panic!("{:?}", t.source)
    };
    assert_eq!(paths.len(), 3);
    // Order does not matter: -m decides the kind, -mp the PCIe path.
    let reversed = load(&[names[2], names[1], names[0]]);
    assert_eq!(reversed.links, t.links);
    assert_eq!(reversed.p2p, t.p2p);
}

#[test]
fn merge_within_one_file() {
    let m = read_data("dgx-h100-topo-m.txt");
    let mp = read_data("dgx-h100-topo-mp.txt");
    let p2p = read_data("dgx-h100-topo-p2p-all.txt");
    // A script that echoed each command before running it.
    let labeled = format!("$ nvidia-smi topo -mp\n{mp}\n$ nvidia-smi topo -m\n{m}\n{p2p}");
    assert_h100_merged(&parse(&labeled, "all.txt").unwrap());
    // No command lines for the matrices: the one without NVLink cells must be `-mp`.
    let unlabeled = format!("{mp}\n{m}\n{p2p}");
    assert_h100_merged(&parse(&unlabeled, "all.txt").unwrap());
}

#[test]
fn p2p_capability_from_file_names() {
    let t = load(&[
        "l40s-8x-pcie-topo-m.txt",
        "l40s-8x-topo-p2p-r.txt",
        "l40s-8x-topo-p2p-w.txt",
        "l40s-8x-topo-p2p-n.txt",
        "l40s-8x-topo-p2p-a.txt",
    ]);
    assert_eq!(cap(&t, 0, 3, P2pCap::Read), Some(P2pStatus::Ok));
    assert_eq!(cap(&t, 0, 4, P2pCap::Read), Some(P2pStatus::Cns));
    assert_eq!(cap(&t, 7, 1, P2pCap::Write), Some(P2pStatus::Cns));
    assert_eq!(cap(&t, 5, 6, P2pCap::Write), Some(P2pStatus::Ok));
    assert_eq!(cap(&t, 0, 1, P2pCap::Nvlink), Some(P2pStatus::Ns));
    assert_eq!(cap(&t, 0, 1, P2pCap::Atomics), Some(P2pStatus::Ns));
    assert_eq!(kind(&t, 0, 1), Some(LinkKind::Pix));
    // One capability alone leaves the others unknown.
    let r = load(&["l40s-8x-topo-p2p-r.txt"]);
    assert_eq!(cap(&r, 0, 1, P2pCap::Read), Some(P2pStatus::Ok));
    assert_eq!(cap(&r, 0, 1, P2pCap::Write), None);
    assert_eq!(kind(&r, 0, 1), None);
}

#[test]
fn h200_reference_machine() {
    let t = load(&["h200-2x-topo-m.txt", "h200-2x-topo-p2p.txt"]);
    assert_eq!(kind(&t, 0, 1), Some(LinkKind::Nv(18)));
    for g in &t.gpus {
        assert_eq!(g.cpu_affinity.as_deref(), Some("0-31"));
        assert_eq!(g.numa_node, Some(0));
    }
    for (a, b) in [(0, 1), (1, 0)] {
        for c in P2pCap::ALL {
            assert_eq!(cap(&t, a, b, c), Some(P2pStatus::Ok), "{a}->{b} {c:?}");
        }
    }
    assert!(t.links.iter().all(|l| l.line_rate.is_none()));
}

#[test]
fn query_gpu_csv_fills_names_memory_and_pcie() {
    let t = load(&[
        "h200-2x-topo-m.txt",
        "h200-2x-topo-p2p.txt",
        "h200-2x-query-gpu.csv",
    ]);
    let g = &t.gpus[1];
    assert_eq!(g.name.as_deref(), Some("NVIDIA H200"));
    assert_eq!(g.pci_bus_id.as_deref(), Some("00000000:00:07.0"));
    assert_eq!(g.memory_mib, Some(143_771));
    assert_eq!(g.pcie.describe(), "Gen5 x16");
    assert!((g.pcie.line_rate_gbps().unwrap() - 63.0).abs() < 0.1);
    assert_eq!(g.numa_node, Some(0));
    // NVLink speeds are still unknown: a capture names links, not their rate.
    assert_eq!(t.link(0, 1).unwrap().line_rate, None);
    assert!(
        t.notes
            .iter()
            .any(|n| n.text.contains("NVLink line rates are unknown"))
    );
    // A PCIe machine gets PCIe line rates from the CSV.
    let mut text = read_data("h200-2x-query-gpu.csv");
    text.push_str("\n\tGPU0\tGPU1\nGPU0\t X \tSYS\nGPU1\tSYS\t X \n");
    let t = parse(&text, "pcie.txt").unwrap();
    let rate = t.link(0, 1).unwrap().line_rate.clone().unwrap();
    assert_eq!(rate.basis, "PCIe Gen5 x16");
}

#[test]
fn empty_input() {
    let (origin, line, message) = parse_error(import_paths(&[data_path("bad-empty.txt")]));
    assert_eq!(origin, data_path("bad-empty.txt"));
    assert_eq!(line, 1);
    assert_eq!(message, "empty input: expected `nvidia-smi topo -m` output");
    for blank in ["", "\n\n", " \t\r\n  \r\n"] {
        let (_, line, message) = parse_error(parse(blank, "x"));
        assert_eq!(line, 1);
        assert!(message.starts_with("empty input"), "{message}");
    }
}

#[test]
fn binary_input() {
    let (_, line, message) = parse_error(import_paths(&[data_path("bad-binary.bin")]));
    assert_eq!(line, 1);
    assert!(
        message.starts_with("binary data, not nvidia-smi text"),
        "{message}"
    );
    let (_, line, message) = parse_error(parse("\tGPU0\nGPU0\t X \n\0\0", "x"));
    assert_eq!(line, 3);
    assert!(message.contains("binary data"), "{message}");
}

#[test]
fn missing_column() {
    let (_, line, message) = parse_error(import_paths(&[data_path("bad-missing-column.txt")]));
    assert_eq!(line, 4);
    assert_eq!(
        message,
        "row GPU2 has 3 cells, expected 4 (one per column GPU0..GPU3)"
    );
    // The same in a file with CRLF endings, an ANSI header and a leading blank line.
    let text = read_data("workstation-ansi-crlf-topo-m.txt")
        .replace("GPU2\tNODE\tNODE\t X ", "GPU2\tNODE\t X ");
    let (_, line, message) = parse_error(parse(&text, "ws.txt"));
    assert_eq!(line, 5);
    assert_eq!(
        message,
        "row GPU2 has 3 cells, expected 4 (one per column GPU0..GPU3)"
    );
    // NIC columns are named in the message too.
    let text = read_data("dgx-h100-topo-m.txt").replace(
        "\tNODE\t56-111,168-223\t1\t\tN/A\nNIC0",
        "\t56-111,168-223\t1\t\tN/A\nNIC0",
    );
    let (_, line, message) = parse_error(parse(&text, "h100.txt"));
    assert_eq!(line, 9);
    assert!(
        message.contains(
            "row GPU7 has 19 cells, expected 20 (one per column GPU0..GPU7, NIC0..NIC11)"
        ),
        "{message}"
    );
}

#[test]
fn p2p_matrix_with_unknown_capability() {
    let text = read_data("bad-p2p-no-capability.txt");
    let (_, line, message) = parse_error(parse(&text, "bad-p2p-no-capability.txt"));
    assert_eq!(line, 1);
    assert!(
        message.starts_with("a P2P matrix whose capability (r, w, n or a) is unknown"),
        "{message}"
    );
    assert!(message.contains("nvidia-smi topo -p2p r"), "{message}");
    assert!(message.contains("topo-p2p-r.txt"), "{message}");
    // The same text is fine once its name or a command line says which capability it is.
    let t = parse(&text, "host-p2p_w.txt").unwrap();
    assert_eq!(cap(&t, 1, 0, P2pCap::Write), Some(P2pStatus::Ok));
    let t = parse(&format!("user@host:~$ nvidia-smi topo -p2p a\n{text}"), "x").unwrap();
    assert_eq!(cap(&t, 0, 1, P2pCap::Atomics), Some(P2pStatus::Ok));
    // `-p2p p` (prop) is read and skipped.
    let h200 = read_data("h200-2x-topo-m.txt");
    let t = parse(&format!("{h200}\n$ nvidia-smi topo -p2p p\n{text}"), "x").unwrap();
    assert!(t.p2p.iter().all(|p| p.caps == Default::default()));
    let (_, line, message) =
        parse_error(parse(&format!("\n$ nvidia-smi topo -p2p p\n{text}"), "x"));
    assert_eq!(line, 3);
    assert!(message.contains("only a `topo -p2p p` matrix"), "{message}");
}

#[test]
fn bad_cells_and_labels_name_the_line() {
    let h200 = read_data("h200-2x-topo-m.txt");
    let cases = [
        (
            h200.replace("GPU1\tNV18", "GPU1\tNV0"),
            3,
            "unknown cell \"NV0\" in row GPU1, column GPU0",
        ),
        (
            h200.replace("GPU1\tNV18", "GPU2\tNV18"),
            3,
            "row label GPU2 is not a column",
        ),
        (
            h200.replace("GPU1\tNV18\t X ", "GPU1\t X \tNV18"),
            3,
            "row GPU1 has X in column GPU0",
        ),
        (
            h200.replace("GPU1\tNV18\t X \t0-31\t0\t\tN/A\n", ""),
            3,
            "no row for GPU1",
        ),
        (
            h200.replace("\tGPU0\tGPU1\tCPU", "\tNIC0\tNIC1\tCPU"),
            1,
            "a matrix with no GPU columns",
        ),
        (
            h200.lines().skip(1).collect::<Vec<_>>().join("\n"),
            1,
            "row GPU0 comes before any header line",
        ),
        (
            h200.replace("GPU1\tNV18", "GPU1\tOK"),
            3,
            "cell OK in row GPU1, column GPU0 is a P2P status",
        ),
        (
            format!("$ nvidia-smi topo -p2p r\n{h200}"),
            3,
            "cell NV18 in row GPU0, column GPU1 is a link type",
        ),
        (
            "hello\nworld\n".to_string(),
            1,
            "expected `nvidia-smi topo -m` output (a header line of GPU0 GPU1 … columns), found \"hello\"",
        ),
    ];
    for (text, want_line, want) in cases {
        let (origin, line, message) = parse_error(parse(&text, "case.txt"));
        assert_eq!(origin, "case.txt");
        assert!(message.contains(want), "{message:?} lacks {want:?}");
        assert_eq!(line, want_line, "{message}");
    }
}

#[test]
fn conflicting_gpu_sets_name_the_file() {
    let a100 = data_path("dgx-a100-topo-m.txt");
    let h200 = data_path("h200-2x-topo-p2p.txt");
    let (origin, line, message) = parse_error(import_paths(&[a100.clone(), h200.clone()]));
    assert_eq!(origin, h200);
    assert_eq!(line, 2);
    assert!(message.contains("GPU0, GPU1"), "{message}");
    assert!(message.contains(&a100), "{message}");
}

#[test]
fn unreadable_file_is_an_io_error() {
    let err = import_paths(&[data_path("no-such-capture.txt")]).unwrap_err();
    assert!(matches!(err, TopologyError::Io { .. }), "{err}");
    assert!(err.is_bad_input());
}

#[test]
fn utf16_capture_from_powershell() {
    let text = read_data("h200-2x-topo-m.txt").replace('\n', "\r\n");
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("topo.txt");
    std::fs::write(&file, bytes).unwrap();
    let t = import_paths(&[file.to_string_lossy().into_owned()]).unwrap();
    assert_eq!(kind(&t, 0, 1), Some(LinkKind::Nv(18)));
}

/// Parses `text`; a panic fails the test and shows the input.
fn must_not_panic(text: &str, what: &str) {
    if catch_unwind(AssertUnwindSafe(|| parse(text, what))).is_err() {
        panic!("parser panicked on {what}: {text:?}");
    }
}

#[test]
fn never_panics_on_truncated_or_garbled_captures() {
    // A fixed linear congruential generator (Numerical Recipes constants): reproducible flips.
    let mut seed: u64 = 0x5ca1_e5c0_9e00_0001;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223) % (1 << 32);
        seed
    };
    let noise = [
        b'\0', b'\t', b' ', b'\n', b'\r', 0x1b, b'X', b'N', b'V', b'9', b'-', b':', b'=', 0xff,
        0xc3,
    ];
    for name in CAPTURES {
        let bytes = std::fs::read(data_path(name)).unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for n in 0..=lines.len() {
            must_not_panic(&lines[..n].concat(), &format!("{name}, first {n} lines"));
            must_not_panic(&lines[n..].concat(), &format!("{name}, from line {n}"));
            if n < lines.len() {
                let without: String = [&lines[..n], &lines[n + 1..]].concat().concat();
                must_not_panic(&without, &format!("{name} without line {n}"));
            }
        }
        for (i, _) in text.char_indices().step_by(7) {
            must_not_panic(&text[..i], &format!("{name}, first {i} bytes"));
        }
        for round in 0..300 {
            let mut garbled = bytes.clone();
            for _ in 0..1 + next() % 4 {
                if garbled.is_empty() {
                    break;
                }
                let at = usize::try_from(next()).unwrap() % garbled.len();
                let pick = usize::try_from(next()).unwrap();
                match pick % 3 {
                    0 => garbled[at] = noise[pick / 3 % noise.len()],
                    1 => {
                        garbled.remove(at);
                    }
                    _ => garbled.insert(at, noise[pick / 3 % noise.len()]),
                }
            }
            must_not_panic(
                &String::from_utf8_lossy(&garbled),
                &format!("{name}, garbled round {round}"),
            );
        }
    }
}

#[test]
fn never_panics_on_garbled_bytes_from_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed: u64 = 42;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    for name in CAPTURES.iter().chain(&["bad-binary.bin", "bad-empty.txt"]) {
        let bytes = std::fs::read(data_path(name)).unwrap();
        for round in 0..10 {
            let mut garbled = bytes.clone();
            if round % 2 == 0 {
                garbled.splice(0..0, [0xFF, 0xFE]);
            }
            if !garbled.is_empty() {
                let at = usize::try_from(next()).unwrap() % garbled.len();
                garbled[at] = u8::try_from(next() % 256).unwrap();
            }
            let file = dir.path().join(format!("g{round}.txt"));
            std::fs::write(&file, &garbled).unwrap();
            let arg = file.to_string_lossy().into_owned();
            if catch_unwind(|| import_paths(&[arg])).is_err() {
                panic!("import panicked on {name} round {round}: {garbled:?}");
            }
        }
    }
}

/// Captured by scripts/gpu-check.sh on the 2× H200 device machine (2026-11-22): the real
/// header ANSI codes, `GPU NUMA ID` column and the four `-p2p` blocks behind `$ nvidia-smi …`.
#[test]
fn real_h200_capture_from_the_device() {
    let paths = [
        "tests/data/h200-2x-device-topo-m.txt".to_string(),
        "tests/data/h200-2x-device-topo-p2p.txt".to_string(),
    ];
    let t = scalescope::topology::import::import_paths(&paths).expect("parses");
    assert_eq!(t.gpus.len(), 2);
    assert_eq!(
        t.link(0, 1).and_then(|l| l.kind),
        Some(scalescope::model::LinkKind::Nv(18))
    );
    for (a, b) in [(0, 1), (1, 0)] {
        let caps = t.p2p(a, b).unwrap().caps;
        for cap in scalescope::model::P2pCap::ALL {
            assert_eq!(
                caps.get(cap),
                Some(scalescope::model::P2pStatus::Ok),
                "{a}->{b} {cap:?}"
            );
        }
    }
    assert_eq!(t.gpus[0].cpu_affinity.as_deref(), Some("0-31"));
    assert_eq!(t.gpus[1].numa_node, Some(0));
}

/// The 4× H200 device machine (2026-11-22): NV18 between every pair, P2P OK everywhere.
#[test]
fn real_h200_4x_capture_from_the_device() {
    let paths = [
        "tests/data/h200-4x-device-topo-m.txt".to_string(),
        "tests/data/h200-4x-device-topo-p2p.txt".to_string(),
    ];
    let t = scalescope::topology::import::import_paths(&paths).expect("parses");
    assert_eq!(t.gpus.len(), 4);
    assert_eq!(t.links.len(), 6);
    assert!(
        t.links
            .iter()
            .all(|l| l.kind == Some(scalescope::model::LinkKind::Nv(18)))
    );
    assert!(t.p2p.iter().all(|p| {
        scalescope::model::P2pCap::ALL
            .iter()
            .all(|c| p.caps.get(*c) == Some(scalescope::model::P2pStatus::Ok))
    }));
    assert_eq!(t.gpus[3].cpu_affinity.as_deref(), Some("0-63"));
}

/// The 8× H200 device machine (2026-11-22): NV18 between all 28 pairs, P2P OK everywhere.
#[test]
fn real_h200_8x_capture_from_the_device() {
    let paths = [
        "tests/data/h200-8x-device-topo-m.txt".to_string(),
        "tests/data/h200-8x-device-topo-p2p.txt".to_string(),
    ];
    let t = scalescope::topology::import::import_paths(&paths).expect("parses");
    assert_eq!(t.gpus.len(), 8);
    assert_eq!(t.links.len(), 28);
    assert!(
        t.links
            .iter()
            .all(|l| l.kind == Some(scalescope::model::LinkKind::Nv(18)))
    );
    assert_eq!(t.p2p.len(), 56);
    assert!(
        t.p2p
            .iter()
            .all(|p| p.caps.read == Some(scalescope::model::P2pStatus::Ok))
    );
}

/// `topo -m` counts the NVLinks up, as NVML does: a GB200 GPU with 6 of its 18 links down reads
/// NV12 to every peer. The import's topology is the design (NV18 as built, with a note) and the
/// machine as it runs takes the links down once (NV12 at 12/18 of the rate), not twice. A capture
/// whose `topo -m` still reads NV18 with a link down (edited) is the design as read.
#[test]
fn links_down_that_topo_m_already_counts_are_taken_off_once() {
    use scalescope::topology::machine_import::import_machine;
    let m = import_machine(&[
        data_path("gb200-nvl72-constructed-gpu5-nv12-topo-m.txt"),
        data_path("gb200-nvl72-constructed-gpu5-nvlink-s.txt"),
    ])
    .unwrap();
    let rate = |t: &Topology, a, b| {
        t.link(a, b)
            .and_then(|l| l.line_rate.as_ref())
            .unwrap()
            .gbps
    };
    assert_eq!(kind(&m.topology, 0, 5), Some(LinkKind::Nv(18)));
    assert_eq!(kind(&m.topology, 0, 1), Some(LinkKind::Nv(18)));
    assert_eq!(rate(&m.topology, 0, 5), rate(&m.topology, 0, 1));
    assert!(
        m.topology
            .notes
            .iter()
            .any(|n| n.text.contains("NV12 counts the links up; NV18 as built")),
        "{:?}",
        m.topology.notes
    );
    let running = m.running();
    assert_eq!(kind(&running, 0, 5), Some(LinkKind::Nv(12)));
    assert_eq!(kind(&running, 0, 1), Some(LinkKind::Nv(18)));
    let share = rate(&running, 0, 5) / rate(&running, 0, 1);
    assert!((share - 12.0 / 18.0).abs() < 1e-9, "{share}");
    // NV18 in topo -m with 17 links up: the count is the design's, taken down once.
    let edited = import_machine(&[
        data_path("h200-2x-device-topo-m.txt"),
        data_path("h200-2x-edited-nvlink-down-nvlink-s.txt"),
    ])
    .unwrap();
    assert_eq!(kind(&edited.topology, 0, 1), Some(LinkKind::Nv(18)));
    assert_eq!(kind(&edited.running(), 0, 1), Some(LinkKind::Nv(17)));
    // Every GPU at 12 of 18 (an NVSwitch tray lost): no pair reads its full count, every pair
    // reads the links up; still taken off once.
    let dir = tempfile::tempdir().unwrap();
    let topo = read_data("gb200-nvl72-constructed-gpu5-nv12-topo-m.txt").replace("NV18", "NV12");
    let links: String = read_data("gb200-nvl72-constructed-gpu5-nvlink-s.txt")
        .lines()
        .map(|l| {
            let down = ["12", "13", "14", "15", "16", "17"]
                .iter()
                .any(|n| l.trim_start().starts_with(&format!("Link {n}:")));
            if down {
                format!("{}: <inactive>\n", l.split(':').next().unwrap())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let (tp, lp) = (dir.path().join("topo.txt"), dir.path().join("nvlink.txt"));
    std::fs::write(&tp, topo).unwrap();
    std::fs::write(&lp, links).unwrap();
    let all = import_machine(&[tp.display().to_string(), lp.display().to_string()]).unwrap();
    assert_eq!(kind(&all.topology, 0, 1), Some(LinkKind::Nv(18)));
    let running = all.running();
    assert_eq!(kind(&running, 0, 1), Some(LinkKind::Nv(12)));
    assert!((rate(&running, 0, 1) / rate(&m.topology, 0, 1) - 12.0 / 18.0).abs() < 1e-9);
}
