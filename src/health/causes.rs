//! Likely causes and what to do, as data: the causes many checks share. A check below PASS names
//! one of these, or writes its own where the cause depends on its readings (`because_text`: the
//! copy checks' host-CPU and modeled causes in `copy_checks.rs`, the clocks' contention in
//! `clock_check.rs`).

/// A likely cause of a finding and what to do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cause {
    /// Stable id, for tests and tooling.
    pub id: &'static str,
    /// The likely cause, in a few words.
    pub likely: &'static str,
    /// What to do.
    pub fix: &'static str,
}

/// A GPU the captures show that the driver did not describe.
pub const GPU_MISSING: Cause = Cause {
    id: "gpu_missing",
    likely: "the GPU did not answer the driver when `nvidia-smi -q` ran (fallen off the bus, \
             Xid 79; a power or thermal fault) — or the capture covers some GPUs only \
             (`nvidia-smi -q -i`) or was cut short",
    fix: "capture `nvidia-smi -q` again for every GPU; if the GPU is still not described, look \
          for Xid 79 / NVRM errors in `dmesg`, reset the GPU (`nvidia-smi -r`) or reboot, and \
          reseat or service it if it stays missing",
};

/// A GPU nvidia-smi said it could not reach.
pub const GPU_LOST: Cause = Cause {
    id: "gpu_lost",
    likely: "the driver cannot reach the GPU (nvidia-smi: \"Unable to determine the device \
             handle\"): fallen off the bus (Xid 79), a power or thermal fault, or a failed reset",
    fix: "look for Xid 79 / NVRM errors in `dmesg`; drain the node, reset the GPU (`nvidia-smi \
          -r`) or reboot, and reseat or service it if it stays lost",
};

/// The driver found GPU memory it cannot repair.
pub const MEMORY_UNREPAIRABLE: Cause = Cause {
    id: "memory_unrepairable",
    likely: "the GPU's memory has a fault the driver cannot repair (no row remapping or page \
             retirement left to cover it)",
    fix: "drain the GPU and replace it (RMA); run NVIDIA's field diagnostic for the ticket",
};

/// Uncorrectable SRAM errors passed NVIDIA's threshold for replacing the GPU.
pub const SRAM_THRESHOLD: Cause = Cause {
    id: "sram_threshold",
    likely: "uncorrectable SRAM errors (L2, register files) passed the threshold NVIDIA sets \
             for replacing the GPU",
    fix: "drain the GPU and replace it (RMA); run NVIDIA's field diagnostic for the ticket",
};

/// The driver asks for a recovery action.
pub const RECOVERY_ASKED: Cause = Cause {
    id: "recovery_asked",
    likely: "the driver flagged the GPU: an error it cannot clear while running (nvidia-smi's \
             GPU Recovery Action)",
    fix: "drain the GPU's jobs and do what the driver asks (a GPU reset: `nvidia-smi -r -i N`; \
          a reboot; drain peer-to-peer jobs), then check again; look in `dmesg` for the Xid",
};

/// The PCIe link trained below what GPU and slot allow.
pub const PCIE_DOWNTRAINED: Cause = Cause {
    id: "pcie_downtrained",
    likely: "the PCIe link trained below its maximum: a card not fully seated, a damaged or \
             wrong riser/cable, or a BIOS link-speed setting",
    fix: "reseat the card / check the riser / BIOS link settings (slot speed Auto or the GPU's \
          generation), then check again",
};

/// The slot (host) allows less than the GPU can do.
pub const PCIE_SLOT_LIMITED: Cause = Cause {
    id: "pcie_slot_limited",
    likely: "the slot or host allows a lower PCIe generation than the GPU supports",
    fix: "move the GPU to a slot of its generation, or raise the slot's speed in the BIOS",
};

/// A GPU's PCIe maximum is below its siblings' (the same model in the same machine).
pub const PCIE_BELOW_SIBLINGS: Cause = Cause {
    id: "pcie_below_siblings",
    likely: "the slot, riser or cable allows this GPU less than its siblings (a slot of lower \
             width or generation, a riser that drops lanes, a per-slot BIOS setting)",
    fix: "compare the slot's wiring and BIOS setting with a sibling's; move the GPU to a full \
          slot or replace the riser, then check again",
};

/// An NVLink is down.
pub const NVLINK_INACTIVE: Cause = Cause {
    id: "nvlink_inactive",
    likely: "an NVLink is down: the fabric manager not running (NVSwitch systems), an NVSwitch, \
             or the baseboard, bridge or cable",
    fix: "check `systemctl status nvidia-fabricmanager` and `nvidia-smi nvlink -s`; reset the \
          GPU (`nvidia-smi -r`) or reboot; if the link stays down, service the baseboard / \
          NVSwitch tray / NVLink bridge",
};

/// NVLink error counters grew while data moved.
pub const NVLINK_ERRORS_GROWING: Cause = Cause {
    id: "nvlink_errors_growing",
    likely: "a marginal NVLink: its error counters grew while data moved over it",
    fix: "note the link numbers; reset the GPU and check again; if the counters keep growing, \
          service the link (baseboard, bridge or NVSwitch)",
};

/// NVLink error counters are not zero (one reading).
pub const NVLINK_ERRORS_PRESENT: Cause = Cause {
    id: "nvlink_errors_present",
    likely: "NVLink errors since the driver loaded; one reading cannot say whether they grow",
    fix: "run `scalescope check` on the machine: it reads the counters before and after load",
};

/// PCIe replays grew (or are present).
pub const PCIE_REPLAYS: Cause = Cause {
    id: "pcie_replays",
    likely: "PCIe replays: the link retransmits packets (signal integrity: riser, slot, cable)",
    fix: "reseat the card / check the riser; if the counter keeps growing, try another slot",
};

/// Uncorrectable ECC errors since the driver loaded.
pub const ECC_UNCORRECTABLE: Cause = Cause {
    id: "ecc_uncorrectable",
    likely: "uncorrectable memory errors since the driver loaded: data on this GPU may be wrong",
    fix: "drain the node; reset the GPU (`nvidia-smi -r`) so the rows are remapped; if errors \
          come back, RMA the GPU",
};

/// Uncorrectable ECC errors in the GPU's lifetime (not since the driver loaded).
pub const ECC_HISTORY: Cause = Cause {
    id: "ecc_history",
    likely: "uncorrectable memory errors earlier in the GPU's life",
    fix: "check the remapped rows / retired pages lines; watch for new errors",
};

/// Correctable errors grew during the load.
pub const ECC_CORRECTED_GROWING: Cause = Cause {
    id: "ecc_corrected_growing",
    likely: "correctable memory errors grew during the load: memory getting weaker",
    fix: "watch the counter; if it keeps growing, plan an RMA",
};

/// ECC is off.
pub const ECC_OFF: Cause = Cause {
    id: "ecc_off",
    likely: "ECC is disabled: memory errors go undetected",
    fix: "enable it (`nvidia-smi -e 1`) and reboot, unless it is off on purpose",
};

/// A remap or retirement waits for a reset.
pub const REPAIR_PENDING: Cause = Cause {
    id: "repair_pending",
    likely: "a row remapping or page retirement waits for a GPU reset",
    fix: "reset the GPU (`nvidia-smi -r`) or reboot before the next job",
};

/// Row remapping failed.
pub const REMAP_FAILURE: Cause = Cause {
    id: "remap_failure",
    likely: "row remapping failed: the memory has no spare rows left",
    fix: "take the GPU out of service and RMA it",
};

/// Rows remapped / pages retired for uncorrectable errors.
pub const MEMORY_REPAIRED: Cause = Cause {
    id: "memory_repaired",
    likely: "memory rows were remapped or pages retired after uncorrectable errors",
    fix: "fine while spares remain; watch for new uncorrectable errors",
};

/// The power cap held the clocks.
pub const THROTTLE_POWER: Cause = Cause {
    id: "throttle_power",
    likely: "the power cap held the clocks down during the load",
    fix: "check the power limit (`nvidia-smi -q -d POWER`), the PSUs and any power-capping policy",
};

/// Temperature held the clocks.
pub const THROTTLE_THERMAL: Cause = Cause {
    id: "throttle_thermal",
    likely: "the GPU ran too hot and slowed down",
    fix: "check cooling: fans, airflow, inlet temperature, heatsink contact",
};

/// The GPU at or past its operating temperature, short of its slowdown limit.
pub const TEMPERATURE_HIGH: Cause = Cause {
    id: "temperature_high",
    likely: "the GPU runs at or past its operating temperature limit: cooling (fans, airflow, \
             inlet temperature, heatsink contact) — its clocks may soon be held down",
    fix: "check cooling: fans, airflow, inlet temperature, heatsink contact; compare with its \
          neighbours in the same chassis",
};

/// Hardware slowdown without its thermal or power-brake reason: NVML engages HW Slowdown for
/// high temperature, an external power brake or high power draw (nvml.h,
/// `nvmlClocksEventReasonHwSlowdown`); the first two have reasons of their own.
pub const THROTTLE_HW: Cause = Cause {
    id: "throttle_hw",
    likely: "hardware slowdown (NVML engages it for high temperature, an external power brake or \
             high power draw; where its HW Thermal and HW Power Brake reasons were read not \
             active, power draw: the board's power delivery)",
    fix: "check the PSUs and the board's power delivery (`nvidia-smi -q -d PERFORMANCE,POWER`), \
          then cooling; if it recurs on one GPU only, service that GPU",
};

/// Hardware slowdown by an external power-brake signal.
pub const THROTTLE_POWER_BRAKE: Cause = Cause {
    id: "throttle_power_brake",
    likely: "an external power-brake signal from the PSU or chassis held the clocks down (HW \
             Power Brake Slowdown)",
    fix: "check the PSUs (a failed or missing supply, lost redundancy), the chassis' power \
          budget and its BMC event log",
};

/// P2P refused on a PCIe path that allows it.
pub const P2P_ACS_IOMMU: Cause = Cause {
    id: "p2p_acs_iommu",
    likely: "P2P refused on a PCIe path that allows it: ACS on the PCIe switch ports or the \
             IOMMU send peer traffic through the root complex",
    fix: "boot with `iommu=pt` (or turn the IOMMU off where allowed) and disable ACS on the \
          switch ports (BIOS, or `setpci`), then check `nvidia-smi topo -p2p r`",
};

/// P2P refused over NVLink.
pub const P2P_NVLINK: Cause = Cause {
    id: "p2p_nvlink",
    likely: "the driver refuses P2P between NVLink-connected GPUs: the fabric manager or an \
             NVLink fault",
    fix: "check `systemctl status nvidia-fabricmanager` and `nvidia-smi nvlink -s`",
};

/// Another process uses the GPU.
pub const CONTENTION: Cause = Cause {
    id: "contention",
    likely: "another process is using this GPU/link (contention)",
    fix: "rerun when the GPUs are idle (`nvidia-smi` lists the processes), or stop the other job",
};

/// Samples vary a lot.
pub const NOISY: Cause = Cause {
    id: "noisy",
    likely: "the samples vary widely: other traffic on the link or host (contention)",
    fix: "rerun on an idle machine; check for other jobs and for host memory pressure",
};

/// Below expected and nothing explains it.
pub const UNEXPLAINED: Cause = Cause {
    id: "unexplained",
    likely: "cause unknown: no evidence on the GPUs involved (processes, settings, link state, \
             error counters that grew, clock limits) explains it",
    fix: "rerun; if it persists, compare with `scalescope bench bandwidth` and nvbandwidth on \
          the same GPUs, and check BIOS and driver settings",
};

/// Verification of copied data failed.
pub const WRONG_DATA: Cause = Cause {
    id: "wrong_data",
    likely: "copied data arrived wrong: a memory or link fault",
    fix: "drain the node; check the ECC and NVLink/PCIe error lines; reset the GPU and check \
          again",
};

/// A copy figure above the line rate of the links it crossed.
pub const ABOVE_LINE_RATE: Cause = Cause {
    id: "above_line_rate",
    likely: "a figure above what the links it crossed can carry: the measurement or the imported \
             file is not of these GPUs and links, or the topology states slower links than the \
             machine has",
    fix: "check that the file comes from this machine and that `scalescope topo` shows its links \
          as they are, then measure again here",
};

/// A value that could not be read.
pub const NOT_READ: Cause = Cause {
    id: "not_read",
    likely: "the value could not be read here",
    fix: "run `scalescope check` on the machine itself, or import a capture that has it",
};

/// Application or locked clocks hold the GPU below its maximum.
pub const CLOCKS_SET: Cause = Cause {
    id: "clocks_set",
    likely: "a clock setting holds the GPU below its maximum: locked clocks (`nvidia-smi -lgc`) \
             or application clocks (`nvidia-smi -ac`)",
    fix: "reset them (`nvidia-smi -rgc` for locked clocks, `nvidia-smi -rac` for application \
          clocks) unless they are set on purpose, then check again",
};

/// Persistence mode is off.
pub const PERSISTENCE_OFF: Cause = Cause {
    id: "persistence_off",
    likely: "persistence mode is off: the driver unloads between jobs, so each job's first CUDA \
             call waits for it to load, and settings made with nvidia-smi can be lost",
    fix: "enable it (`nvidia-smi -pm 1`, or run nvidia-persistenced at boot)",
};

/// MIG mode is on or pending.
pub const MIG_ON: Cause = Cause {
    id: "mig_on",
    likely: "MIG mode partitions the GPU: a job sees one instance, not the whole GPU, and \
             NVLink peer access between GPUs is not available",
    fix: "disable it (`nvidia-smi -i N -mig 0`, then reset the GPU) unless the partitioning is \
          intended",
};

/// The compute mode restricts who may use the GPU.
pub const COMPUTE_MODE: Cause = Cause {
    id: "compute_mode",
    likely: "the compute mode restricts contexts: with Exclusive_Process a second process cannot \
             use the GPU, with Prohibited none can",
    fix: "set the default mode (`nvidia-smi -i N -c DEFAULT`) unless the restriction is intended",
};
