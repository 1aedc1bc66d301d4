//! The host's CPU load from /proc/stat: what the soak's per-second readings and the check's
//! sampler set beside the GPUs, so a dip or a low figure can be laid at a saturated host (or a
//! hypervisor taking the CPUs: steal) rather than at the GPU.

/// The host's CPU time counters (/proc/stat's `cpu` line, in clock ticks): what a second's
/// host load is taken from, so a dip in the soak can be set beside a saturated or stolen host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostCpu {
    total: u64,
    /// idle + iowait.
    idle: u64,
    steal: u64,
}

impl HostCpu {
    pub fn read() -> Option<HostCpu> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        Self::parse(text.lines().next()?)
    }

    /// `cpu  user nice system idle iowait irq softirq steal guest guest_nice` (guest time is
    /// already counted in user and nice, so it is left out of the total).
    fn parse(line: &str) -> Option<HostCpu> {
        let mut it = line.split_whitespace();
        if it.next()? != "cpu" {
            return None;
        }
        let v: Vec<u64> = it.take(8).map(|x| x.parse().ok()).collect::<Option<_>>()?;
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        Some(HostCpu {
            total: v.iter().fold(0u64, |a, b| a.saturating_add(*b)),
            idle: at(3).saturating_add(at(4)),
            steal: at(7),
        })
    }

    /// (busy %, steal %) between `earlier` and `self`; `None` when no time passed.
    pub fn since(&self, earlier: &HostCpu) -> Option<(f64, f64)> {
        let total = self.total.checked_sub(earlier.total)?;
        if total == 0 {
            return None;
        }
        let idle = self.idle.saturating_sub(earlier.idle).min(total);
        let steal = self.steal.saturating_sub(earlier.steal).min(total);
        let pct = |x: u64| x as f64 / total as f64 * 100.0;
        Some((pct(total - idle), pct(steal)))
    }
}

#[cfg(test)]
#[test]
fn host_cpu_load_and_steal_from_proc_stat() {
    let a = HostCpu::parse("cpu  100 0 50 800 50 0 0 0 0 0").unwrap();
    let b = HostCpu::parse("cpu  500 0 150 850 50 0 0 50 0 0").unwrap();
    let (busy, steal) = b.since(&a).unwrap();
    // 600 ticks passed: 50 idle, 50 stolen.
    assert!((busy - 550.0 / 600.0 * 100.0).abs() < 1e-9, "{busy}");
    assert!((steal - 50.0 / 600.0 * 100.0).abs() < 1e-9, "{steal}");
    assert!(HostCpu::parse("cpu0 1 2 3").is_none());
    assert!(a.since(&b).is_none(), "a counter that went back");
}
