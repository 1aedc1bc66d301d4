//! `scalescope check` on machines known from captures and catalog files (no GPU needed): real
//! `nvidia-smi` captures from 2× H200 SXM (tests/data/h200-2x-device-*), copies edited to show a
//! fault (a GPU at PCIe Gen4 x8, an NVLink down, an uncorrectable ECC error), malformed
//! captures, and the importers behind it.

mod common;

use std::path::{Path, PathBuf};

use common::{data_path, read_data, scalescope};
use scalescope::health::{HealthReport, Verdict};
use scalescope::model::{ComputeMode, InventoryKind, LoadState, ThrottleReason};
use scalescope::topology::machine_import::import_machine;
use scalescope::topology::smi_query::{
    CaptureKind, capture_kind, parse_nvlink, parse_query_text, parse_query_xml,
};

/// The catalog's HGX H200 as a file of its own (`id`) with one `[[state]]` table (`state`, its
/// lines), written into `dir`.
fn hgx_h200_stated(dir: &Path, id: &str, state: &str) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/hardware/hgx-h200.toml"),
    )
    .unwrap()
    .replacen("id = \"hgx-h200\"", &format!("id = \"{id}\""), 1);
    let file = dir.join(format!("{id}.toml"));
    std::fs::write(&file, format!("{text}\n[[state]]\n{state}\n")).unwrap();
    file
}

/// The catalog's 2× H200 as a file in `dir` with `state` (`[[state]]` tables) after it: a
/// machine described as degraded.
fn degraded_h200x2(dir: &Path, state: &str) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/hardware/h200-2x-sxm.toml"),
    )
    .unwrap()
    .replace("id = \"h200-2x-sxm\"", "id = \"h200-2x-degraded\"");
    let file = dir.join("degraded.toml");
    std::fs::write(&file, format!("{text}\n{state}")).unwrap();
    file
}

/// `scalescope check --import …` for the named captures: (exit code, stdout, stderr).
fn check(captures: &[&str], extra: &[&str]) -> (i32, String, String) {
    let mut cmd = scalescope();
    cmd.arg("check");
    for c in captures {
        cmd.arg("--import").arg(data_path(c));
    }
    cmd.args(extra);
    let out = cmd.output().expect("runs");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

const TOPO: [&str; 2] = ["h200-2x-device-topo-m.txt", "h200-2x-device-topo-p2p.txt"];

#[test]
fn the_real_captures_pass_and_exit_0() {
    for q in [
        "h200-2x-device-smi-q.xml",
        "h200-2x-device-smi-q.txt",
        "h200-2x-device-smi-q-h2d.xml",
    ] {
        let mut caps = vec![q, "h200-2x-device-nvlink-s.txt"];
        caps.extend(TOPO);
        let (code, out, err) = check(&caps, &[]);
        assert_eq!(code, 0, "{q}: {out}{err}");
        assert!(!out.contains("FAIL"), "{q}: {out}");
        assert!(out.contains("18 of 18 NVLinks active"), "{out}");
        assert!(out.contains("PCIe Gen5 x16"), "{out}");
        // GPU 1 of this machine had one PCIe replay since the driver loaded: fewer than DCGM's
        // 8 a minute in all, so no minute reached it — a pass that says its count. The healthy
        // machine's captures PASS.
        let replay = out
            .lines()
            .find(|l| l.contains("pcie_replay") && l.contains("GPU 1"))
            .unwrap_or_else(|| panic!("{q}: {out}"));
        assert!(
            replay.starts_with("PASS") && replay.contains("1 PCIe replay(s)"),
            "{replay}"
        );
        assert!(
            out.lines().last().unwrap().starts_with("verdict: PASS"),
            "{out}"
        );
        assert!(out.contains("(exit 0)"), "{out}");
    }
}

#[test]
fn nvlink_error_counters_before_and_after_a_load_did_not_grow() {
    let (code, out, _) = check(
        &[
            "h200-2x-device-smi-q.xml",
            "h200-2x-device-nvlink-e.txt",
            "h200-2x-device-nvlink-e-after.txt",
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    // Both GPUs say the same: one line for the two (`--verbose` lists each).
    let same: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("no NVLink error counter (CRC, replay, recovery) grew"))
        .collect();
    assert_eq!(same.len(), 1, "{out}");
    assert!(same[0].contains("GPUs 0,1"), "{out}");
}

/// Eight GPUs' topology without a state capture: each check the capture cannot settle is one
/// line for the eight, saying it is not in the captures (not "not readable through NVML"), and
/// `--verbose` lists each GPU's; the verdict counts every GPU's either way.
#[test]
fn checks_alike_on_every_gpu_are_one_line() {
    let caps = ["l40s-8x-pcie-topo-m.txt", "l40s-8x-topo-p2p-r.txt"];
    let (code, out, _) = check(&caps, &[]);
    assert_eq!(code, 0, "{out}");
    let unknown: Vec<&str> = out.lines().filter(|l| l.starts_with("UNKNOWN")).collect();
    assert_eq!(unknown.len(), 6, "{out}");
    for l in &unknown {
        assert!(
            l.contains("GPUs 0–7") && l.contains("not in the captures"),
            "{l}"
        );
    }
    assert!(!out.contains("NVML"), "{out}");
    assert!(out.contains("48 unknown"), "{out}");
    let (_, verbose, _) = check(&caps, &["--verbose"]);
    let each = verbose.lines().filter(|l| l.starts_with("UNKNOWN")).count();
    assert_eq!(each, 48, "{verbose}");
    // Pairs keep their own lines: `GPU 0–1` is a pair, never folded.
    assert!(out.contains("GPU 0–1") && out.contains("GPU 6–7"), "{out}");
}

#[test]
fn a_gpu_at_gen4_x8_fails_with_exit_3() {
    for f in [
        "h200-2x-edited-gen4x8-smi-q.xml",
        "h200-2x-edited-gen4x8-smi-q.txt",
    ] {
        let (code, out, err) = check(&[f], &[]);
        assert_eq!(code, 3, "{f}: {out}");
        let line = out
            .lines()
            .find(|l| l.starts_with("FAIL") && l.contains("pcie_link"))
            .unwrap_or_else(|| panic!("{f}: no pcie_link FAIL in {out}"));
        assert!(line.contains("GPU 1"), "{line}");
        assert!(
            line.contains("PCIe Gen4 x8") && line.contains("expected Gen5 x16"),
            "{line}"
        );
        assert!(
            line.contains("reseat the card / check the riser / BIOS link settings"),
            "{line}"
        );
        // The host copies, modeled at that link, are named too — and said to be modeled.
        assert!(
            out.contains("FAIL (modeled)") && out.contains("h2d"),
            "{out}"
        );
        assert!(err.contains("check failed"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn an_nvlink_down_fails_with_exit_3() {
    let mut caps = vec![
        "h200-2x-device-smi-q.xml",
        "h200-2x-edited-nvlink-down-nvlink-s.txt",
    ];
    caps.extend(TOPO);
    let (code, out, _) = check(&caps, &[]);
    assert_eq!(code, 3, "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("FAIL") && l.contains("nvlink_links"))
        .unwrap_or_else(|| panic!("no nvlink_links FAIL in {out}"));
    assert!(
        line.contains("GPU 1") && line.contains("17 of 18") && line.contains("link 7"),
        "{line}"
    );
    assert!(
        line.contains("fabric manager") || line.contains("fabricmanager"),
        "{line}"
    );
}

#[test]
fn one_nvlink_error_reading_beside_a_state_capture_is_one_reading() {
    // `nvlink -s` and one `nvlink -e` (12 replay errors on GPU 1's link 3, edited from the
    // device capture): two captures of one kind, one reading of the counters. They were taken
    // as a reading before and one after — the -e against itself — and said "no NVLink error
    // counter grew", a PASS. The counters stand as one reading: a WARN naming the link.
    let mut caps = vec![
        "h200-2x-device-smi-q.xml",
        "h200-2x-device-nvlink-s.txt",
        "h200-2x-edited-replay-nvlink-e.txt",
    ];
    caps.extend(TOPO);
    let (_, out, _) = check(&caps, &[]);
    let line = out
        .lines()
        .find(|l| l.contains("GPU 1") && l.contains("nvlink_errors"))
        .unwrap_or_else(|| panic!("no nvlink_errors line for GPU 1 in {out}"));
    assert!(line.starts_with("WARN"), "{line}");
    assert!(line.contains("link 3: 12 replay"), "{line}");
    assert!(!out.contains("grew between the readings"), "{out}");
    // Beside two `-q` readings of another moment (their counters read twice: a reading after),
    // the one -e still stands as one reading: its counters have no reading "after".
    let q = std::fs::read_to_string(data_path("h200-2x-device-smi-q.txt")).unwrap();
    let later: String = q
        .lines()
        .map(|l| {
            if l.starts_with("Timestamp") {
                "Timestamp                                              : Mon Dec  7 12:00:00 2026"
                    .to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(later, q);
    let dir = tempfile::tempdir().unwrap();
    let later_path = dir.path().join("later-smi-q.txt");
    std::fs::write(&later_path, later).unwrap();
    let (_, out, _) = check(
        &[
            "h200-2x-device-smi-q.txt",
            later_path.to_str().unwrap(),
            "h200-2x-edited-replay-nvlink-e.txt",
        ],
        &[],
    );
    let line = out
        .lines()
        .find(|l| l.contains("GPU 1") && l.contains("nvlink_errors"))
        .unwrap_or_else(|| panic!("no nvlink_errors line for GPU 1 in {out}"));
    assert!(
        line.starts_with("WARN") && line.contains("link 3: 12 replay"),
        "{line}"
    );
    // Two -e readings are before and after: their growth is judged.
    let (_, out, _) = check(
        &[
            "h200-2x-device-smi-q.txt",
            "h200-2x-device-nvlink-e.txt",
            "h200-2x-device-nvlink-e-after.txt",
        ],
        &[],
    );
    assert!(out.contains("grew between the readings"), "{out}");
}

#[test]
fn a_gpu_the_driver_did_not_describe_warns() {
    // GPU 1's section cut from the device's `-q` (nvidia-smi still counts 2 attached GPUs), as
    // a GPU fallen off the bus leaves it — or as `nvidia-smi -q -i 0` writes it: the check
    // passed, GPU 1 merely "not in the captures". A WARN that says both.
    let (code, out, _) = check(&["h200-2x-edited-gpu1-missing-smi-q.txt"], &[]);
    assert_eq!(code, 0, "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("gpu_present"))
        .unwrap_or_else(|| panic!("no gpu_present line in {out}"));
    assert!(line.starts_with("WARN") && line.contains("GPU 1"), "{line}");
    assert!(
        line.contains("counts 2 attached GPUs and describes 1"),
        "{line}"
    );
    assert!(line.contains("Xid 79") && line.contains("-q -i"), "{line}");
    // With `topo -m` beside it, which shows GPU 1: one line, not two.
    let mut caps = vec!["h200-2x-edited-gpu1-missing-smi-q.txt"];
    caps.extend(TOPO);
    let (_, out, _) = check(&caps, &[]);
    assert_eq!(out.matches("gpu_present").count(), 1, "{out}");
    // Checking GPU 0 only: GPU 1 is not asked about.
    let (_, out, _) = check(&caps, &["--gpus", "0"]);
    assert!(!out.contains("gpu_present"), "{out}");
    // The whole capture: every GPU described, no such line.
    let (_, out, _) = check(&["h200-2x-device-smi-q.txt"], &[]);
    assert!(!out.contains("gpu_present"), "{out}");
}

#[test]
fn a_gpu_lost_before_the_last_is_named_by_its_own_number() {
    // GPU 0's section cut from the device's `-q`, GPU 1 (00:07.0) left: by position GPU 1's
    // state would be GPU 0's and the WARN would name GPU 1 — the wrong board to pull.
    let text = std::fs::read_to_string(data_path("h200-2x-device-smi-q.txt")).unwrap();
    let (head, rest) = text.split_at(text.find("GPU 00000000:00:06.0").unwrap());
    let second = &rest[rest.find("GPU 00000000:00:07.0").unwrap()..];
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.to_str().unwrap().to_string()
    };
    let gpu_present = |out: &str| {
        out.lines()
            .find(|l| l.contains("gpu_present"))
            .unwrap_or_else(|| panic!("no gpu_present line in {out}"))
            .to_string()
    };
    // 1. nvidia-smi's own line for the lost GPU (as it prints it) numbers the rest by bus order.
    let lost = write(
        "lost.txt",
        format!(
            "{head}Unable to determine the device handle for GPU 0000:00:06.0: Unknown Error\n{second}"
        ),
    );
    let (code, out, _) = check(&[&lost], &[]);
    let line = gpu_present(&out);
    assert!(
        line.contains("GPU 0") && line.contains("0000:00:06.0"),
        "{line}"
    );
    // nvidia-smi's own word that it cannot reach the GPU: a fault, not a doubt.
    assert!(
        line.starts_with("FAIL") && line.contains("GPU 0 lost"),
        "{line}"
    );
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains("GPU 1 not described"), "{out}");
    // The same moment's XML (no such line; GPU 0's element cut) beside it: numbered by the
    // text's bus order, GPU 1 stays GPU 1 (it read as GPU 0 by position, with GPU 0's verdicts).
    let xml = std::fs::read_to_string(data_path("h200-2x-device-smi-q.xml")).unwrap();
    let (a, b) = (
        xml.find("<gpu id=\"00000000:00:06.0\">").unwrap(),
        xml.find("<gpu id=\"00000000:00:07.0\">").unwrap(),
    );
    let cut_xml = write("cut.xml", format!("{}{}", &xml[..a], &xml[b..]));
    let (code, both, err) = check(&[&lost, &cut_xml], &[]);
    assert_eq!(code, 3, "{both}{err}");
    assert_eq!(both.matches("gpu_present").count(), 1, "{both}");
    assert!(
        !both
            .lines()
            .any(|l| l.starts_with("PASS") && l.contains("GPU 0 ") && l.contains("pcie_link")),
        "{both}"
    );
    // GPU 1's own state is GPU 1's: its PCIe line is there, GPU 0 has none.
    assert!(
        out.lines()
            .any(|l| l.contains("pcie_link") && l.contains("GPU 1")),
        "{out}"
    );
    // 2. No such line, but `nvlink -s` beside it: its UUIDs number the GPUs.
    let cut = write("cut.txt", format!("{head}{second}"));
    let (code, out, err) = check(&[&cut, "h200-2x-device-nvlink-s.txt"], &[]);
    assert_ne!(code, 2, "refused: {err}");
    let line = gpu_present(&out);
    assert!(line.contains("GPU 0 not described"), "{line}");
    assert!(line.contains("UUIDs"), "{line}");
    // 3. Neither: numbered by position, and the line says the numbers may be shifted.
    let (_, out, _) = check(&[&cut], &[]);
    let line = gpu_present(&out);
    assert!(line.contains("may be numbered lower"), "{line}");
}

#[test]
fn hardware_slowdown_names_the_reason_that_was_active() {
    // GPU 0's clock event reasons in the device's `-q` edited: HW Slowdown alone (its thermal and
    // power-brake reasons read Not Active), with the power brake, with HW Thermal. Each a FAIL
    // whose cause is the reason read, not temperature for all three.
    let text = std::fs::read_to_string(data_path("h200-2x-device-smi-q.txt")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str, &str); 3] = [
        (&["HW Slowdown"], "power draw", "ran too hot"),
        (
            &["HW Slowdown", "HW Power Brake Slowdown"],
            "power-brake signal",
            "ran too hot",
        ),
        (
            &["HW Slowdown", "HW Thermal Slowdown"],
            "ran too hot",
            "power-brake signal",
        ),
    ];
    for (i, (active, said, not_said)) in cases.into_iter().enumerate() {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for name in active {
            // GPU 0's line (the first): `<name> : Not Active`.
            let at = lines
                .iter()
                .position(|l| {
                    let mut kv = l.trim_start().splitn(2, " : ");
                    kv.next().map(str::trim_end) == Some(*name) && kv.next() == Some("Not Active")
                })
                .unwrap();
            lines[at] = lines[at].replace("Not Active", "Active");
        }
        let path = dir.path().join(format!("slowdown-{i}.txt"));
        std::fs::write(&path, lines.join("\n")).unwrap();
        let (code, out, _) = check(&[path.to_str().unwrap()], &[]);
        assert_eq!(code, 3, "{active:?}: {out}");
        let line = out
            .lines()
            .find(|l| l.starts_with("FAIL") && l.contains("clocks"))
            .unwrap_or_else(|| panic!("{active:?}: no FAIL clocks in {out}"));
        assert!(line.contains("GPU 0"), "{line}");
        assert!(line.contains(said), "{active:?}: {line}");
        assert!(!line.contains(not_said), "{active:?}: {line}");
    }
}

#[test]
fn a_hot_gpu_is_judged_against_its_own_limits() {
    // GPU 0's T.Limit reading in the device's `-q` (46 °C below its operating limit) edited:
    // 0 °C (at the limit) warns, −3 °C (past its slowdown at −2) fails; the XML says the same.
    let text = std::fs::read_to_string(data_path("h200-2x-device-smi-q.txt")).unwrap();
    let xml = std::fs::read_to_string(data_path("h200-2x-device-smi-q.xml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = check(&["h200-2x-device-smi-q.txt"], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("PASS")
            && l.contains("temperature")
            && l.contains("46 °C below")),
        "{out}"
    );
    for (reading, verdict, code_wanted, said) in [
        ("0 C", "WARN", 0, "at or past its operating limit"),
        ("-3 C", "FAIL", 3, "at its slowdown limit"),
    ] {
        let edited_text = text.replacen(
            "GPU T.Limit Temp                               : 46 C",
            &format!("GPU T.Limit Temp                               : {reading}"),
            1,
        );
        let edited_xml = xml.replacen(
            "<gpu_temp_tlimit>46 C</gpu_temp_tlimit>",
            &format!("<gpu_temp_tlimit>{reading}</gpu_temp_tlimit>"),
            1,
        );
        assert!(edited_text != text && edited_xml != xml);
        for (name, body) in [("hot.txt", edited_text), ("hot.xml", edited_xml)] {
            let path = dir.path().join(name);
            std::fs::write(&path, body).unwrap();
            let (code, out, _) = check(&[path.to_str().unwrap()], &[]);
            assert_eq!(code, code_wanted, "{name} {reading}: {out}");
            let line = out
                .lines()
                .find(|l| l.contains("temperature") && l.contains("GPU 0"))
                .unwrap_or_else(|| panic!("{name}: no temperature line in {out}"));
            assert!(line.starts_with(verdict), "{name} {reading}: {line}");
            assert!(line.contains(said), "{line}");
            assert!(line.contains("cooling"), "{line}");
        }
    }
}

#[test]
fn a_busy_gpu_in_a_capture_is_busy_when_the_capture_was_taken() {
    // GPU 0 at 95 % utilization in the device's `-q`: busy, said of the capture's moment (an
    // import runs no tests to be "before").
    let text = std::fs::read_to_string(data_path("h200-2x-device-smi-q.txt")).unwrap();
    let edited = text.replacen(
        "        GPU                                            : 0 %",
        "        GPU                                            : 95 %",
        1,
    );
    assert_ne!(edited, text);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("utilized.txt");
    std::fs::write(&path, edited).unwrap();
    let (_, out, _) = check(&[path.to_str().unwrap()], &[]);
    let line = out
        .lines()
        .find(|l| l.contains(" busy "))
        .unwrap_or_else(|| panic!("no busy line in {out}"));
    assert!(line.starts_with("WARN") && line.contains("GPU 0"), "{line}");
    assert!(
        line.contains("95 % utilization when the capture was taken"),
        "{line}"
    );
}

#[test]
fn pcie_replays_between_two_captures_are_judged_by_their_rate() {
    // The device's `-q` read again 10 minutes later (nvidia-smi's own Timestamp) with GPU 1's
    // replays grown from 1 to 50,000: ~5,000 a minute, a FAIL against DCGM's 8; grown to 3, a
    // WARN (0.2 a minute).
    let text = std::fs::read_to_string(data_path("h200-2x-device-smi-q.txt")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (now, verdict, said) in [
        ("50000", "FAIL", "a minute; they fail at 8"),
        ("3", "WARN", "0.2 a minute"),
    ] {
        let later = text
            .replacen("Mon Nov 23 02:57:36 2026", "Mon Nov 23 03:07:36 2026", 1)
            .replacen(
                "        Replays Since Reset                            : 1",
                &format!("        Replays Since Reset                            : {now}"),
                1,
            );
        let path = dir.path().join(format!("later-{now}.txt"));
        std::fs::write(&path, later).unwrap();
        let (_, out, _) = check(&["h200-2x-device-smi-q.txt", path.to_str().unwrap()], &[]);
        let line = out
            .lines()
            .find(|l| l.contains("pcie_replay") && l.contains("GPU 1"))
            .unwrap_or_else(|| panic!("no pcie_replay GPU 1 in {out}"));
        assert!(line.starts_with(verdict), "{line}");
        assert!(line.contains("in 600 s") && line.contains(said), "{line}");
    }
}

#[test]
fn the_drivers_own_flags_fail_with_the_right_cause() {
    // One line of the device's `-q` (text and XML) edited per case, on one GPU: the driver's
    // memory and recovery flags and the fabric status, read nowhere before (each passed).
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str, usize, &str, &str); 5] = [
        (
            "Unrepairable Memory",
            "No",
            "Yes",
            0,
            "memory_repair",
            "unrepairable memory",
        ),
        (
            "SRAM Threshold Exceeded",
            "No",
            "Yes",
            1,
            "memory_repair",
            "SRAM errors exceeded",
        ),
        (
            "GPU Recovery Action",
            "None",
            "Reset",
            1,
            "recovery_action",
            "Reset",
        ),
        (
            "GPU Recovery Action",
            "None",
            "Drain and Reset",
            0,
            "recovery_action",
            "Drain and Reset",
        ),
        (
            "Status",
            "Success",
            "Failure",
            0,
            "nvlink_links",
            "fabric registration: Failure",
        ),
    ];
    let text = std::fs::read_to_string(data_path("h200-2x-device-smi-q.txt")).unwrap();
    for (field, was, now, gpu, check_id, said) in cases {
        // The field's line of GPU `gpu` (each GPU's section has one).
        let lines: Vec<&str> = text.lines().collect();
        let at: Vec<usize> = (0..lines.len())
            .filter(|&i| {
                let l = lines[i].trim_start();
                l.starts_with(field) && l.split(" : ").nth(1) == Some(was)
            })
            .collect();
        assert_eq!(at.len(), 2, "{field}");
        let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        edited[at[gpu]] = lines[at[gpu]].replace(&format!(": {was}"), &format!(": {now}"));
        let path = dir.path().join(format!("{check_id}-{gpu}.txt"));
        std::fs::write(&path, edited.join("\n")).unwrap();
        let (code, out, _) = check(&[path.to_str().unwrap()], &[]);
        assert_eq!(code, 3, "{field}: {out}");
        let line = out
            .lines()
            .find(|l| l.starts_with("FAIL") && l.contains(check_id))
            .unwrap_or_else(|| panic!("{field}: no FAIL {check_id} in {out}"));
        assert!(line.contains(&format!("GPU {gpu}")), "{line}");
        assert!(line.contains(said), "{line}");
        assert_eq!(
            out.lines().filter(|l| l.starts_with("FAIL")).count(),
            1,
            "{field}: one fault, one FAIL: {out}"
        );
    }
    // The XML says the same.
    let xml = std::fs::read_to_string(data_path("h200-2x-device-smi-q.xml")).unwrap();
    let edited = xml.replacen(
        "<gpu_recovery_action>None</gpu_recovery_action>",
        "<gpu_recovery_action>Reset</gpu_recovery_action>",
        1,
    );
    assert_ne!(edited, xml);
    let path = dir.path().join("reset.xml");
    std::fs::write(&path, edited).unwrap();
    let (code, out, _) = check(&[path.to_str().unwrap()], &[]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("FAIL") && l.contains("GPU 0") && l.contains("recovery_action")),
        "{out}"
    );
}

#[test]
fn a_gpu_whose_slot_allows_less_than_its_siblings_warns() {
    // GPU 1's link width at most x8 (and x8 now: at its own maximum) where GPU 0, the same
    // model, allows x16 — a slot or riser of fewer lanes. It passed: "at its maximum".
    let text = std::fs::read_to_string(data_path("h200-2x-device-smi-q.txt")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let widths: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim() == "Link Width")
        .collect();
    assert_eq!(widths.len(), 2);
    let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for i in [widths[1] + 1, widths[1] + 2] {
        edited[i] = edited[i].replace(": 16x", ": 8x");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x8-slot.txt");
    std::fs::write(&path, edited.join("\n")).unwrap();
    let (code, out, _) = check(&[path.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "a WARN: {out}");
    let line = out
        .lines()
        .find(|l| l.contains("GPU 1") && l.contains("pcie_link"))
        .unwrap();
    assert!(line.starts_with("WARN"), "{line}");
    assert!(
        line.contains("maximum Gen5 x8 where GPU 0, the same model, allows Gen5 x16"),
        "{line}"
    );
    let line0 = out
        .lines()
        .find(|l| l.contains("GPU 0") && l.contains("pcie_link"))
        .unwrap();
    assert!(line0.starts_with("PASS"), "{line0}");
}

#[test]
fn an_uncorrectable_ecc_error_fails_with_exit_3() {
    for f in [
        "h200-2x-edited-ecc-smi-q.xml",
        "h200-2x-edited-ecc-smi-q.txt",
    ] {
        let (code, out, _) = check(&[f], &[]);
        assert_eq!(code, 3, "{f}: {out}");
        let line = out
            .lines()
            .find(|l| l.starts_with("FAIL") && l.contains(" ecc "))
            .unwrap_or_else(|| panic!("{f}: no ecc FAIL in {out}"));
        assert!(
            line.contains("GPU 0") && line.contains("uncorrectable"),
            "{line}"
        );
        assert!(line.contains("nvidia-smi -r"), "{line}");
    }
}

/// The issue-V capture: GPU 0's power limit lowered to 300 W and GPU 1's clocks held by a clock
/// setting (locked clocks show as "Applications Clocks Setting: Active"), edited from the real
/// 2× H200 capture (whose GPU 1 had one PCIe replay since the driver loaded).
#[test]
fn a_lowered_power_limit_and_locked_clocks_are_named() {
    let mut caps = vec![
        "h200-2x-edited-powercap-lgc-smi-q.txt",
        "h200-2x-device-nvlink-s.txt",
    ];
    caps.extend(TOPO);
    let (code, out, err) = check(&caps, &[]);
    assert_eq!(code, 3, "{out}{err}");
    let line = |id: &str, gpu: &str| {
        out.lines()
            .find(|l| l.contains(&format!(" {id} ")) && l.contains(gpu))
            .unwrap_or_else(|| panic!("no {id} line for {gpu} in {out}"))
            .to_string()
    };
    let p = line("power_limit", "GPU 0");
    assert!(p.starts_with("FAIL"), "{p}");
    assert!(p.contains("300 W") && p.contains("700 W"), "{p}");
    assert!(p.contains("nvidia-smi -i 0 -pl 700"), "{p}");
    assert!(line("power_limit", "GPU 1").starts_with("PASS"));
    let c = line("clock_settings", "GPU 1");
    assert!(
        c.starts_with("WARN") && c.contains("Applications Clocks Setting"),
        "{c}"
    );
    assert!(c.contains("nvidia-smi -rgc"), "{c}");
    assert!(line("clock_settings", "GPU 0").starts_with("PASS"));
    // The same on both GPUs: one line for the two.
    for id in ["persistence", "mig_mode", "compute_mode"] {
        assert!(line(id, "GPUs 0,1").starts_with("PASS"), "{id}: {out}");
    }
    // A thresholds file that allows a 300 W cap (a site that caps on purpose) passes it.
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.toml");
    std::fs::write(
        &t,
        "[settings]\npower_limit_warn = 0.4\npower_limit_fail = 0.3\n",
    )
    .unwrap();
    let (_, out, _) = check(&caps, &["--thresholds", t.to_str().unwrap()]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("PASS") && l.contains(" power_limit ") && l.contains("GPU 0")),
        "{out}"
    );
}

#[test]
fn malformed_captures_give_one_line_errors_and_exit_2() {
    for (f, needle) in [
        ("h200-2x-malformed-truncated-smi-q.xml", "XML ends early"),
        ("h200-2x-malformed-value-smi-q.txt", "\"five\""),
        ("bad-binary.bin", "binary data"),
        ("bad-empty.txt", "empty input"),
    ] {
        let (code, out, err) = check(&[f], &[]);
        assert_eq!(code, 2, "{f}: {out}{err}");
        assert_eq!(err.trim().lines().count(), 1, "{f}: {err}");
        assert!(
            err.starts_with("Error: ") && err.contains(&data_path(f)),
            "{err}"
        );
        assert!(err.contains(needle), "{f}: {err}");
        assert!(out.is_empty(), "{out}");
    }
    // The line of the value at fault.
    let (_, _, err) = check(&["h200-2x-malformed-value-smi-q.txt"], &[]);
    assert!(
        err.contains("smi-q.txt:76:") && err.contains("PCIe Generation"),
        "{err}"
    );
}

#[test]
fn strict_fails_on_a_warning_and_thresholds_files_are_checked() {
    let caps = ["h200-2x-device-smi-q.xml"];
    let (code, _, err) = check(&caps, &["--strict"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("--strict"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("t.toml");
    std::fs::write(&bad, "pass = 0.5\nwarn = 0.9\n").unwrap();
    let (code, _, err) = check(&caps, &["--thresholds", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("t.toml") && err.contains("warn"), "{err}");
    let (code, _, err) = check(&caps, &["--gpus", "5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no GPU 5"), "{err}");
}

#[test]
fn json_and_csv_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("c.json"), dir.path().join("c.csv"));
    let mut caps = vec!["h200-2x-edited-gen4x8-smi-q.xml"];
    caps.extend(TOPO);
    let (code, _, _) = check(
        &caps,
        &[
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 3);
    let r: HealthReport = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(r.before.as_ref().unwrap().kind, InventoryKind::Imported);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "check,subject,gpu,peer,verdict,source,figure,expected,percent,unit,detail,cause,fix,basis"
    );
    assert_eq!(lines.count(), r.checks.len());
    // An idle reading of Gen4 x8: the width is a fault; the generation read idle says little,
    // so the link's figure is what x8 carries at its maximum generation (Gen5 x8), the line the
    // modeled copies over it take — never below them.
    assert!(
        text.contains("pcie_link,GPU 1,1,,FAIL,measured,31.508,63.015,50.0,GB/s"),
        "{text}"
    );
    let figure = |check: &str| {
        r.checks
            .iter()
            .find(|c| c.check.id() == check && c.gpu == Some(1))
            .and_then(|c| c.figure)
            .unwrap()
    };
    assert!(figure("h2d") <= figure("pcie_link"), "{text}");
}

#[test]
fn catalog_machines_and_files_are_checked_modeled() {
    let (code, out, _) = {
        let out = scalescope()
            .args(["check", "--catalog", "hgx-h200"])
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("PASS (modeled)"), "{out}");
    assert!(out.contains("not a PASS of a real machine"), "{out}");
    // A catalog file describing a degraded machine.
    let dir = tempfile::tempdir().unwrap();
    let file = degraded_h200x2(
        dir.path(),
        "[[state]]\ngpus = [1]\npcie_current_gen = 4\npcie_current_width = 8\n\n[[state]]\ngpus = [0]\nactive_nvlinks = 16\n",
    );
    let out = scalescope()
        .args(["check", "--catalog"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains("GPU 1") && stdout.contains("PCIe Gen4 x8 as stated, expected Gen5 x16"),
        "{stdout}"
    );
    assert!(stdout.contains("16 of 18 NVLinks active"), "{stdout}");
    assert!(stdout.contains("FAIL (modeled)"), "{stdout}");
    // Half of GPU 1's NVLinks down: the copies into either GPU fail against the healthy
    // figure — GPU 1's own all_pairs is not judged against its own degraded links.
    let half = degraded_h200x2(dir.path(), "[[state]]\ngpus = [1]\nactive_nvlinks = 9\n");
    let out = scalescope()
        .args(["check", "--verbose", "--catalog"])
        .arg(&half)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    for gpu in ["GPU 0 ← all", "GPU 1 ← all"] {
        let line = stdout
            .lines()
            .find(|l| l.contains("all_pairs") && l.contains(gpu))
            .unwrap_or_else(|| panic!("no all_pairs {gpu} in {stdout}"));
        assert!(line.starts_with("FAIL"), "{line}");
        assert!(line.contains("expected 391.6"), "{line}");
    }
    // Every NVLink of GPU 1 down: P2P is not "OK over NV18".
    let down = degraded_h200x2(dir.path(), "[[state]]\ngpus = [1]\nactive_nvlinks = 0\n");
    let out = scalescope()
        .args(["check", "--verbose", "--catalog"])
        .arg(&down)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let p2p = stdout
        .lines()
        .find(|l| l.contains("p2p_status"))
        .unwrap_or_else(|| panic!("no p2p_status in {stdout}"));
    assert!(
        p2p.contains("no NVLink of the pair's NV18 is up (GPU 1 has none active)"),
        "{p2p}"
    );
    // Its copies are not modeled at 0 GB/s: left out, saying why (the driver may carry them
    // over PCIe or refuse peer access; the model knows neither).
    assert!(!stdout.contains("0.0 GB/s"), "{stdout}");
    let note = stdout
        .lines()
        .find(|l| l.starts_with("note: not modeled") && l.contains("p2p_read_ce"))
        .unwrap_or_else(|| panic!("no note on the copies in {stdout}"));
    assert!(
        note.contains("every NVLink between some of the GPUs is down"),
        "{note}"
    );
    // A broken catalog file is bad input.
    std::fs::write(&file, "[machine]\nid = ").unwrap();
    let out = scalescope()
        .args(["check", "--catalog"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// An import's modeled figures are the machine as its captures say it runs, as the check's
/// are: with link 7 of GPU 1 down (`nvlink -s`), `bench bandwidth --modeled --import` gives the
/// p2p figure the check models (17 of 18 links), not the design's.
#[test]
fn modeled_figures_of_an_import_follow_its_links_down_as_the_check_does() {
    let mut caps = vec![
        "h200-2x-device-smi-q.xml",
        "h200-2x-edited-nvlink-down-nvlink-s.txt",
    ];
    caps.extend(TOPO);
    let mut bench = scalescope();
    bench.args(["bench", "bandwidth", "--modeled", "--tests", "p2p_read_ce"]);
    for c in &caps {
        bench.arg("--import").arg(data_path(c));
    }
    let out = bench.output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{table}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, out, _) = check(&caps, &["--verbose"]);
    let line = out
        .lines()
        .find(|l| l.contains("p2p_read_ce") && l.contains("GPU 0→1"))
        .unwrap_or_else(|| panic!("no p2p_read_ce line in {out}"));
    let figure = line
        .split_whitespace()
        .skip_while(|w| *w != "p2p_read_ce")
        .nth(1)
        .unwrap();
    let healthy: f64 = 394.0;
    let degraded: f64 = figure.parse().unwrap();
    assert!(degraded < healthy * 0.97, "{line}");
    assert!(
        table.contains(figure),
        "the check's {figure} GB/s not in the bench's\n{table}"
    );
}

/// On an 8-GPU NVSwitch board with every NVLink of GPU 1 down, the other seven GPUs' all_pairs
/// are still judged (over the peers whose links run); GPU 1's cells and its pairs are left out
/// with one note, never modeled at 0 GB/s.
#[test]
fn one_gpu_with_no_nvlink_up_leaves_the_others_judged() {
    let dir = tempfile::tempdir().unwrap();
    let file = hgx_h200_stated(
        dir.path(),
        "hgx-h200-dead",
        "gpus = [1]\nactive_nvlinks = 0",
    );
    let out = scalescope()
        .args(["check", "--verbose", "--catalog"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    let all_pairs: Vec<&str> = stdout.lines().filter(|l| l.contains("all_pairs")).collect();
    for g in [0, 2, 3, 4, 5, 6, 7] {
        let line = all_pairs
            .iter()
            .find(|l| l.contains(&format!("GPU {g} ← all")))
            .unwrap_or_else(|| panic!("no all_pairs for GPU {g} in {stdout}"));
        assert!(line.starts_with("PASS"), "{line}");
    }
    assert!(
        !all_pairs.iter().any(|l| l.contains("GPU 1 ← all")),
        "{stdout}"
    );
    assert!(!stdout.contains(" 0.0 GB/s"), "{stdout}");
    assert!(
        stdout.contains("every NVLink between some of the GPUs is down"),
        "{stdout}"
    );
}

/// Published figures for machines like the one checked stand beside its copy figures, each
/// with its source and the conditions that differ; a machine whose GPU has none gets none.
#[test]
fn published_figures_stand_beside_the_copy_figures() {
    let out = scalescope()
        .args(["check", "--catalog", "hgx-h200"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("published h2d: 48 GB/s threshold (Azure ND H200 v5, copy engine"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("Azure/azurehpc-health-checks conf/nd96isr_h200_v5.conf, 2024-10-28; here "),
        "{stdout}"
    );
    assert!(
        stdout.contains("GB/s modeled (")
            && stdout.contains("differs: SM copy there, copy engine here"),
        "{stdout}"
    );
    let out = scalescope()
        .args(["check", "--catalog", "l40s-8x-pcie"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains("published "), "{stdout}");
}

/// `--thresholds published` judges copy figures against the published ones whose conditions
/// match (Azure's copy-engine floors for H200), and by line rate where none does.
#[test]
fn thresholds_published_judges_against_matching_published_figures() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/hardware/h200-2x-sxm.toml"),
    )
    .unwrap()
    .replace("id = \"h200-2x-sxm\"", "id = \"h200-2x-slow\"");
    let text =
        format!("{text}\n[[state]]\ngpus = [1]\npcie_current_gen = 4\npcie_current_width = 8\n");
    let dir = tempfile::tempdir().unwrap();
    let file: PathBuf = dir.path().join("slow.toml");
    std::fs::write(&file, text).unwrap();
    let out = scalescope()
        .args(["check", "--thresholds", "published", "--catalog"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    let h2d1 = stdout
        .lines()
        .find(|l| l.contains("GPU 1") && l.contains(" h2d "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(h2d1.starts_with("FAIL (modeled)"), "{h2d1}");
    assert!(
        h2d1.contains("against published 48 GB/s threshold"),
        "{h2d1}"
    );
    // No published p2p_write_ce figure: judged by line rate, and says so.
    let out = scalescope()
        .args([
            "check",
            "--thresholds",
            "published",
            "--verbose",
            "--catalog",
        ])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("p2p_write_ce") && l.contains("no published figure matches here")),
        "{stdout}"
    );
}

#[test]
fn without_a_driver_check_exits_1_and_names_import_and_catalog() {
    if !common::no_driver() {
        return;
    }
    let out = scalescope().arg("check").output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--import") && err.contains("--catalog"),
        "{err}"
    );
}

#[test]
fn xml_and_text_captures_of_one_moment_agree() {
    let x = parse_query_xml(&read_data("h200-2x-device-smi-q.xml"), "x").unwrap();
    let t = parse_query_text(&read_data("h200-2x-device-smi-q.txt"), "t").unwrap();
    assert_eq!(x.gpus.len(), 2);
    assert_eq!(t.gpus.len(), 2);
    for (a, b) in x.gpus.iter().zip(&t.gpus) {
        assert_eq!(a.name.as_deref(), Some("NVIDIA H200"));
        assert_eq!(
            (&a.name, &a.uuid, &a.pci_bus_id),
            (&b.name, &b.uuid, &b.pci_bus_id)
        );
        assert_eq!(a.memory_mib, Some(143771));
        assert_eq!(a.memory_mib, b.memory_mib);
        assert_eq!(a.pcie.link, b.pcie.link);
        assert_eq!(a.pcie.link.describe(), "Gen5 x16");
        assert_eq!(a.pcie.gen_device_max, Some(5));
        assert_eq!(a.pcie.gen_host_max, None, "N/A is unknown");
        assert_eq!(a.pcie.replay_counter, b.pcie.replay_counter);
        assert_eq!(a.pcie.load, Some(LoadState::Idle));
        assert_eq!(a.ecc, b.ecc);
        assert_eq!(a.ecc.enabled, Some(true));
        assert_eq!(a.ecc.volatile_uncorrected, Some(0));
        assert_eq!(a.ecc.retired_pages_sbe, None, "N/A on Hopper");
        assert_eq!(a.ecc.remapped_rows_uncorrectable, Some(0));
        assert_eq!(a.ecc.remap_pending, Some(false));
        assert_eq!(a.throttle, b.throttle);
        assert_eq!(a.utilization_gpu_percent, Some(0));
        assert_eq!(a.processes, Some(vec![]));
        assert_eq!(a.nvlinks, None, "-q carries no NVLink state");
        assert_eq!(a.settings, b.settings);
        let st = &a.settings;
        assert_eq!(
            (st.power_limit_w, st.power_limit_default_w),
            (Some(700.0), Some(700.0))
        );
        assert_eq!(
            (st.power_limit_min_w, st.power_limit_max_w),
            (Some(200.0), Some(700.0))
        );
        assert_eq!(
            (st.app_clock_mhz, st.app_clock_default_mhz),
            (Some(1980), Some(1980))
        );
        assert_eq!(st.max_sm_clock_mhz, Some(1980));
        assert_eq!(st.persistence, Some(true));
        assert_eq!((st.mig_current, st.mig_pending), (Some(false), Some(false)));
        assert_eq!(st.compute_mode, Some(ComputeMode::Default));
    }
    assert_eq!(x.gpus[0].throttle, Some(vec![ThrottleReason::GpuIdle]));
    assert_eq!(x.gpus[1].pcie.replay_counter, Some(1));
    assert_eq!(x.driver_version.as_deref(), Some("580.159.04"));
}

#[test]
fn perf_capture_after_a_training_load_reads_clock_reasons() {
    let inv = parse_query_text(&read_data("h200-2x-device-smi-q-perf-after.txt"), "p").unwrap();
    // GPU 0 still busy when captured, GPU 1 idle; no limit active at that moment.
    assert_eq!(inv.gpus[0].throttle, Some(vec![]));
    assert_eq!(inv.gpus[1].throttle, Some(vec![ThrottleReason::GpuIdle]));
    assert_eq!(
        inv.gpus[0].pcie.link.gen_max, None,
        "not in a -d PERFORMANCE capture"
    );
}

#[test]
fn nvlink_captures_and_merging() {
    let s = parse_nvlink(&read_data("h200-2x-device-nvlink-s.txt"), "s").unwrap();
    for g in &s.gpus {
        assert_eq!(g.nvlinks_active(), Some(18));
        assert_eq!(g.nvlink_gbps_per_link, Some(26.562));
    }
    let e = parse_nvlink(&read_data("h200-2x-device-nvlink-e.txt"), "e").unwrap();
    let links = e.gpus[1].nvlinks.as_ref().unwrap();
    assert_eq!(links.len(), 18);
    assert!(
        links
            .iter()
            .all(|l| l.crc_errors == Some(0) && l.replay_errors == Some(0))
    );
    // Capabilities say nothing about state: a note, no states.
    let c = parse_nvlink(&read_data("h200-2x-device-nvlink-c.txt"), "c").unwrap();
    assert!(c.gpus.iter().all(|g| g.nvlinks.is_none()));
    assert!(!c.notes.is_empty());
    // Every kind is told apart, and topo captures still go to the topo parser.
    assert_eq!(
        capture_kind(&read_data("h200-2x-device-smi-q.xml")),
        CaptureKind::QueryXml
    );
    assert_eq!(
        capture_kind(&read_data("h200-2x-device-smi-q.txt")),
        CaptureKind::QueryText
    );
    assert_eq!(
        capture_kind(&read_data("h200-2x-device-smi-q-d.txt")),
        CaptureKind::QueryText
    );
    assert_eq!(
        capture_kind(&read_data("h200-2x-device-nvlink-e.txt")),
        CaptureKind::Nvlink
    );
    for topo in [
        "h200-2x-device-topo-m.txt",
        "dgx-h100-topo-p2p-all.txt",
        "l40s-8x-pcie-topo-m.txt",
    ] {
        assert_eq!(capture_kind(&read_data(topo)), CaptureKind::Topo, "{topo}");
    }
    // Merged: the topology from topo -m, GPU facts and line rates from the state captures;
    // nvlink -e given twice gives a later reading.
    let m = import_machine(&[
        data_path("h200-2x-device-topo-m.txt"),
        data_path("h200-2x-device-smi-q.xml"),
        data_path("h200-2x-device-nvlink-s.txt"),
        data_path("h200-2x-device-nvlink-e.txt"),
        data_path("h200-2x-device-nvlink-e-after.txt"),
    ])
    .unwrap();
    let g0 = m.topology.gpu(0).unwrap();
    assert_eq!(g0.name.as_deref(), Some("NVIDIA H200"));
    assert_eq!(g0.nvlinks_active, Some(18));
    let rate = m.topology.link(0, 1).unwrap().line_rate.as_ref().unwrap();
    assert!((rate.gbps - 478.116).abs() < 1e-6, "{rate:?}");
    assert!(m.after.is_some());
    assert_eq!(
        m.inventory.as_ref().unwrap().gpus[0]
            .nvlinks
            .as_ref()
            .unwrap()[0]
            .crc_errors,
        Some(0)
    );
}

#[test]
fn captures_of_different_machines_are_refused() {
    let other = read_data("h200-2x-device-nvlink-s.txt").replace("GPU-82e5c952", "GPU-00000000");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("other-nvlink-s.txt");
    std::fs::write(&p, other).unwrap();
    let err = import_machine(&[
        data_path("h200-2x-device-smi-q.xml"),
        p.display().to_string(),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("same machine") && err.contains("UUID"),
        "{err}"
    );
    // A topo capture of more GPUs than the state captures cover is accepted (state of some
    // GPUs only).
    let err = import_machine(&[
        data_path("h200-2x-device-smi-q.xml"),
        data_path("dgx-a100-topo-m.txt"),
    ]);
    assert!(err.is_ok(), "{err:?}");
}

#[test]
fn no_input_makes_the_importers_panic() {
    let texts = [
        read_data("h200-2x-device-smi-q.xml"),
        read_data("h200-2x-device-smi-q.txt"),
        read_data("h200-2x-device-nvlink-s.txt"),
    ];
    for t in &texts {
        // Every prefix at a few hundred cut points, and lines shuffled by dropping every n-th.
        let step = (t.len() / 300).max(1);
        for cut in (0..t.len()).step_by(step) {
            let Some(prefix) = t.get(..cut) else { continue };
            let _ = parse_query_xml(prefix, "x");
            let _ = parse_query_text(prefix, "t");
            let _ = parse_nvlink(prefix, "n");
        }
        for n in 2..6 {
            let dropped: String = t
                .lines()
                .enumerate()
                .filter(|(i, _)| i % n != 0)
                .map(|(_, l)| format!("{l}\n"))
                .collect();
            let _ = parse_query_xml(&dropped, "x");
            let _ = parse_query_text(&dropped, "t");
            let _ = parse_nvlink(&dropped, "n");
        }
    }
}

/// A rack-scale NVLink domain (issue Q): a constructed capture of a GB200 NVL72's 72 GPUs —
/// `topo -m` with GPU 5 at NV12 to every peer, `nvlink -s` with its links 12–17 inactive
/// (tests/data/gb200-nvl72-constructed-*, written from nvidia-smi's documented format, not
/// captured on a rack) — fails that GPU with the cause and the fix, exit 3, and no other GPU.
#[test]
fn a_72_gpu_rack_with_one_gpu_at_12_of_18_links_fails_that_gpu() {
    let out = scalescope()
        .args(["check", "--import"])
        .arg(data_path("gb200-nvl72-constructed-gpu5-nv12-topo-m.txt"))
        .arg("--import")
        .arg(data_path("gb200-nvl72-constructed-gpu5-nvlink-s.txt"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(!fails.is_empty(), "{text}");
    for l in &fails {
        assert!(
            l.contains("GPU 5") && l.contains("12 of 18 NVLinks active"),
            "a FAIL not about GPU 5's links: {l}"
        );
        assert!(l.contains("nvidia-smi nvlink -s"), "{l}");
    }
    assert!(text.contains("verdict: FAIL"), "{text}");
    // `topo -m`'s NV12 already counts the links up: GPU 5's pairs carry 12 of 18 links once,
    // not (12/18)² (329.6 GB/s where 12 links carry 494.4).
    let out = scalescope()
        .args(["check", "-v", "--import"])
        .arg(data_path("gb200-nvl72-constructed-gpu5-nv12-topo-m.txt"))
        .arg("--import")
        .arg(data_path("gb200-nvl72-constructed-gpu5-nvlink-s.txt"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let figure = |pair: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.contains("p2p_read_ce") && l.contains(&format!("GPU {pair} ")))
            .unwrap_or_else(|| panic!("no p2p_read_ce {pair} in {text}"));
        line.split("p2p_read_ce")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (healthy, degraded) = (figure("0→1"), figure("0→5"));
    assert!(
        (degraded / healthy - 12.0 / 18.0).abs() < 0.005,
        "0→5 {degraded} against 0→1 {healthy}"
    );
}

/// A Blackwell board as it runs (issue Q): DGX B200's catalog file with GPU 3 at 12 of its 18
/// NVLink 5 links (`[[state]]`) — `check --catalog FILE.toml` FAILs that GPU, names the fault
/// and exits 3.
#[test]
fn a_dgx_b200_with_a_gpu_short_of_nvlinks_fails_it() {
    let design = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/hardware/dgx-b200.toml"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("b200-degraded.toml");
    std::fs::write(
        &file,
        format!("{design}\n[[state]]\ngpus = [3]\nactive_nvlinks = 12\n"),
    )
    .unwrap();
    let out = scalescope()
        .args(["check", "--catalog"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    let nvlink = text
        .lines()
        .find(|l| l.starts_with("FAIL") && l.contains("nvlink_links"))
        .unwrap_or_else(|| panic!("no NVLink FAIL: {text}"));
    assert!(
        nvlink.contains("GPU 3") && nvlink.contains("12 of 18"),
        "{nvlink}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("FAIL") && l.contains("GPU 0 ") && l.contains("nvlink_links")),
        "{text}"
    );
}

/// Files that cannot be written end the run before it checks anything (one line, exit 2); a
/// file that fails only at the end (a full disk: /dev/full) still leaves the verdict printed and
/// the check's own exit code, so that a scheduler never takes a failed node for bad input.
#[test]
fn an_unwritable_output_is_refused_first_and_never_hides_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("nowhere/check.json");
    let nowhere = nowhere.to_str().unwrap();
    let line = common::one_line_error(
        &["check", "--catalog", "h200-2x-sxm", "--json", nowhere],
        Some(2),
        &["--json", "nowhere/check.json"],
    );
    assert!(!line.contains("verdict"), "{line}");
    let folder = dir.path().to_str().unwrap();
    common::one_line_error(
        &["check", "--catalog", "h200-2x-sxm", "--csv", folder],
        Some(2),
        &["--csv", "is a folder"],
    );
    for sub in [
        &["bench", "scaling", "--modeled", "--workload", "resnet50"][..],
        &["bench", "bandwidth", "--modeled", "--tests", "h2d"][..],
        &["bench", "collectives", "--modeled", "--ops", "all_reduce"][..],
    ] {
        let mut args = sub.to_vec();
        args.extend(["--catalog", "h200-2x-sxm", "--csv", nowhere]);
        common::one_line_error(&args, Some(2), &["--csv", "nowhere"]);
    }

    // A degraded machine whose --json fails only when it is written.
    let file = degraded_h200x2(dir.path(), "[[state]]\ngpus = [0]\nactive_nvlinks = 16\n");
    let out = scalescope()
        .args(["check", "--catalog"])
        .arg(&file)
        .args(["--json", "/dev/full"])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stdout.contains("16 of 18 NVLinks active"), "{stdout}");
    assert!(stdout.contains("verdict: FAIL"), "{stdout}");
    assert!(stderr.contains("cannot write /dev/full"), "{stderr}");
    // A passing check whose file fails ends with the write's code, and its verdict line says it.
    let out = scalescope()
        .args(["check", "--catalog", "h200-2x-sxm", "--json", "/dev/full"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("verdict: PASS") && stdout.contains("(exit 1)"),
        "{stdout}"
    );
}

/// Rows an import could not read are said, and a check that judged nothing says so instead of
/// counting four zeros (an nccl-tests run of a type scalescope does not record, as `-d int8`).
#[test]
fn an_import_with_nothing_judged_says_what_was_not_read() {
    let text = read_data("reference-tools/nccl-tests-all_reduce.txt").replace(" float ", " int8 ");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("all_reduce_perf.txt");
    std::fs::write(&file, text).unwrap();
    let out = scalescope()
        .args(["check", "--import"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("all_reduce_perf.txt: 13 \"int8\" rows not read"),
        "{stdout}"
    );
    assert!(
        stdout.contains("verdict: UNKNOWN — nothing was judged"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("0 fail, 0 warn, 0 pass, 0 unknown"),
        "{stdout}"
    );
}

/// GPU 3 of an HGX H200 with 12 of its 18 NVLinks up takes in and sends out at most 12 links'
/// worth (318.7 GB/s): all_to_one and one_to_all were modeled at the healthy 396.4 and passed,
/// above what its links carry. They now carry 12/18 of a healthy GPU's figure and fail against
/// it; all_pairs, every reader waiting on GPU 3, stays under GPU 3's links up everywhere.
#[test]
fn copies_into_a_gpu_with_links_down_carry_no_more_than_its_links_up() {
    let dir = tempfile::tempdir().unwrap();
    let file = hgx_h200_stated(
        dir.path(),
        "hgx-h200-gpu3-12",
        "gpus = [3]\nactive_nvlinks = 12",
    );
    let csv = dir.path().join("bw.csv");
    let out = scalescope()
        .args([
            "bench",
            "bandwidth",
            "--modeled",
            "--tests",
            "all_pairs,all_to_one,one_to_all",
        ])
        .args(["--sizes", "512M", "--catalog"])
        .arg(&file)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let figure = |test: &str, src: &str, dst: &str| -> (f64, f64) {
        let r = rows
            .iter()
            .find(|r| &r[0] == test && &r[2] == src && &r[3] == dst)
            .unwrap_or_else(|| panic!("no {test} {src}→{dst}"));
        (r[6].parse().unwrap(), r[10].parse().unwrap())
    };
    for (test, deg, ok) in [
        ("all_to_one", ("all", "3"), ("all", "0")),
        ("one_to_all", ("3", "all"), ("0", "all")),
    ] {
        let (d, d_line) = figure(test, deg.0, deg.1);
        let (h, h_line) = figure(test, ok.0, ok.1);
        assert!(
            (d / h - 12.0 / 18.0).abs() < 0.005,
            "{test}: {d} against {h}"
        );
        // Judged against the healthy figure, not its own links.
        assert_eq!(d_line, h_line, "{test}");
    }
    let links_up = 12.0 * 478.116 / 18.0;
    for g in 0..8 {
        let (f, _) = figure("all_pairs", "all", &g.to_string());
        assert!(f <= links_up, "all_pairs into GPU {g}: {f} over {links_up}");
    }
    // The check (which judges all_pairs, not the fans) holds GPU 3's links to its peers'.
    let out = scalescope()
        .args(["check", "-v", "--catalog"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("GPU 3 ") && l.contains("nvlink_links"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.starts_with("FAIL"), "{line}");
}
