//! nvidia-smi's vocabulary for how GPUs are connected: the `topo -m` link codes (`NV18`, `PIX`,
//! `SYS`, …) and the `topo -p2p` statuses (`OK`, `NS`, …) of the four P2P capabilities, written
//! and read back in reports as nvidia-smi writes them. Leaf types: `topology.rs` builds
//! the machine from them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How two devices are connected, named exactly as `nvidia-smi topo -m` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkKind {
    /// A bonded set of this many NVLinks (`NV#`).
    Nv(u32),
    /// At most a single PCIe bridge.
    Pix,
    /// Multiple PCIe bridges, without the PCIe host bridge.
    Pxb,
    /// A PCIe host bridge (typically the CPU).
    Phb,
    /// The interconnect between PCIe host bridges within a NUMA node.
    Node,
    /// The SMP interconnect between NUMA nodes (QPI/UPI/Infinity Fabric).
    Sys,
}

impl LinkKind {
    /// The CSV code: `NV`, `PIX`, `PXB`, `PHB`, `NODE` or `SYS`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Nv(_) => "NV",
            Self::Pix => "PIX",
            Self::Pxb => "PXB",
            Self::Phb => "PHB",
            Self::Node => "NODE",
            Self::Sys => "SYS",
        }
    }

    /// NVLink count, or `None` for a PCIe path.
    pub fn nvlinks(&self) -> Option<u32> {
        match self {
            Self::Nv(n) => Some(*n),
            _ => None,
        }
    }

    /// nvidia-smi's legend text for this connection.
    pub fn legend(&self) -> &'static str {
        match self {
            Self::Nv(_) => "Connection traversing a bonded set of # NVLinks",
            Self::Pix => "Connection traversing at most a single PCIe bridge",
            Self::Pxb => {
                "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)"
            }
            Self::Phb => {
                "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)"
            }
            Self::Node => {
                "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node"
            }
            Self::Sys => {
                "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)"
            }
        }
    }

    /// PCIe paths from nearest to farthest, as nvidia-smi orders them.
    pub const PCIE_PATHS: [LinkKind; 5] = [Self::Pix, Self::Pxb, Self::Phb, Self::Node, Self::Sys];
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nv(n) => write!(f, "NV{n}"),
            other => f.write_str(other.code()),
        }
    }
}

impl FromStr for LinkKind {
    type Err = String;

    /// Parses `NV18`, `PIX`, `PXB`, `PHB`, `NODE`, `SYS`, and `SOC` (old drivers' name for SYS).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s {
            "PIX" => Ok(Self::Pix),
            "PXB" => Ok(Self::Pxb),
            "PHB" => Ok(Self::Phb),
            "NODE" => Ok(Self::Node),
            "SYS" | "SOC" => Ok(Self::Sys),
            _ => match s.strip_prefix("NV").and_then(|n| n.parse::<u32>().ok()) {
                Some(n) if n > super::NVLINKS_PER_GPU_MAX => Err(format!(
                    "{s}: more NVLinks than a GPU has (at most {})",
                    super::NVLINKS_PER_GPU_MAX
                )),
                Some(n) if n > 0 => Ok(Self::Nv(n)),
                _ => Err(format!(
                    "expected NV#, PIX, PXB, PHB, NODE or SYS, found {s:?}"
                )),
            },
        }
    }
}

impl Serialize for LinkKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for LinkKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// P2P status as `nvidia-smi topo -p2p` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum P2pStatus {
    /// OK: P2P supported.
    Ok,
    /// CNS: chipset not supported.
    Cns,
    /// GNS: GPU not supported.
    Gns,
    /// TNS: topology not supported.
    Tns,
    /// NS: not supported.
    Ns,
    /// U: the driver reported "unknown".
    U,
}

impl P2pStatus {
    /// The code nvidia-smi prints.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Cns => "CNS",
            Self::Gns => "GNS",
            Self::Tns => "TNS",
            Self::Ns => "NS",
            Self::U => "U",
        }
    }

    /// nvidia-smi's legend text.
    pub fn legend(&self) -> &'static str {
        match self {
            Self::Ok => "Status Ok",
            Self::Cns => "Chipset not supported",
            Self::Gns => "GPU not supported",
            Self::Tns => "Topology not supported",
            Self::Ns => "Not supported",
            Self::U => "Unknown",
        }
    }

    /// Every status, in nvidia-smi's legend order.
    pub const ALL: [P2pStatus; 6] = [Self::Ok, Self::Cns, Self::Gns, Self::Tns, Self::Ns, Self::U];
}

impl fmt::Display for P2pStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for P2pStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Self::ALL
            .into_iter()
            .find(|st| st.code() == s)
            .ok_or_else(|| format!("expected OK, CNS, GNS, TNS, NS or U, found {s:?}"))
    }
}

impl Serialize for P2pStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for P2pStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The four P2P capabilities nvidia-smi reports (`topo -p2p r|w|n|a`); `None` = not known,
/// left out of JSON (a 1,000-GPU topology has a million pairs, most of them saying nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct P2pCaps {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<P2pStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<P2pStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink: Option<P2pStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomics: Option<P2pStatus>,
}

/// Which of the four P2P capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum P2pCap {
    Read,
    Write,
    Nvlink,
    Atomics,
}

impl P2pCap {
    /// All four, in the CSV's order.
    pub const ALL: [P2pCap; 4] = [Self::Read, Self::Write, Self::Nvlink, Self::Atomics];

    /// The letter `nvidia-smi topo -p2p` takes: r, w, n or a.
    pub fn letter(&self) -> char {
        match self {
            Self::Read => 'r',
            Self::Write => 'w',
            Self::Nvlink => 'n',
            Self::Atomics => 'a',
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Nvlink => "nvlink",
            Self::Atomics => "atomics",
        }
    }
}

impl P2pCaps {
    pub fn get(&self, cap: P2pCap) -> Option<P2pStatus> {
        match cap {
            P2pCap::Read => self.read,
            P2pCap::Write => self.write,
            P2pCap::Nvlink => self.nvlink,
            P2pCap::Atomics => self.atomics,
        }
    }

    pub fn set(&mut self, cap: P2pCap, status: Option<P2pStatus>) {
        match cap {
            P2pCap::Read => self.read = status,
            P2pCap::Write => self.write = status,
            P2pCap::Nvlink => self.nvlink = status,
            P2pCap::Atomics => self.atomics = status,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_kind_round_trips_through_text() {
        for s in ["NV18", "NV1", "PIX", "PXB", "PHB", "NODE", "SYS"] {
            assert_eq!(s.parse::<LinkKind>().unwrap().to_string(), s);
        }
        assert_eq!("SOC".parse::<LinkKind>().unwrap(), LinkKind::Sys);
        assert!("NV".parse::<LinkKind>().is_err());
        assert!("NV0".parse::<LinkKind>().is_err());
        assert_eq!("NV64".parse::<LinkKind>(), Ok(LinkKind::Nv(64)));
        assert!(
            "NV99"
                .parse::<LinkKind>()
                .unwrap_err()
                .contains("more NVLinks than a GPU has")
        );
        assert!("X".parse::<LinkKind>().is_err());
    }
}
