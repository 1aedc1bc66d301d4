//! Which transports NCCL chose, read from its own INIT log: the `Channel … via NET/IB/0/GDRDMA`
//! lines it prints for every connection it sets up, and the `NET/IB : Using [0]mlx5_0:1/IB …`
//! line that names the network devices behind those indices. NCCL has no API that tells a
//! caller its transports; its log is how nccl-tests users read them too.
//!
//! A multi-process run asks NCCL for that log in a file of its own (`NCCL_DEBUG=INFO`,
//! `NCCL_DEBUG_SUBSYS=INIT,NET`, `NCCL_DEBUG_FILE`) unless the user already set `NCCL_DEBUG`;
//! [`summarize`] turns the file into one label per run, e.g.
//! `NET/IB+GDRDMA (mlx5_0, mlx5_3); P2P/CUMEM`.

use std::collections::{BTreeMap, BTreeSet};

/// What one rank's NCCL log says about its connections.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transports {
    /// Every `via …` of a connection, the network ones without their device index: `NET/IB`,
    /// `NET/IB+GDRDMA`, `P2P/CUMEM/read`, `SHM/direct/direct`.
    pub via: BTreeSet<String>,
    /// The network device indices the `NET/…` connections used, by their transport.
    pub devices: BTreeMap<String, BTreeSet<u32>>,
    /// Network device names by index, from `NET/… : Using [0]name …`.
    pub names: BTreeMap<u32, String>,
}

impl Transports {
    /// Whether any connection went over the network (between nodes).
    pub fn networked(&self) -> bool {
        self.via.iter().any(|v| v.starts_with("NET/"))
    }

    /// One line: network transports first with the devices they used, then the others;
    /// `None` when the log showed no connection.
    pub fn label(&self) -> Option<String> {
        if self.via.is_empty() {
            return None;
        }
        let mut net = Vec::new();
        let mut local = Vec::new();
        for v in &self.via {
            if v.starts_with("NET/") {
                let devices = self.devices.get(v).map(|d| {
                    d.iter()
                        .map(|i| {
                            self.names
                                .get(i)
                                .cloned()
                                .unwrap_or_else(|| format!("#{i}"))
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                });
                match devices {
                    Some(d) if !d.is_empty() => net.push(format!("{v} ({d})")),
                    _ => net.push(v.clone()),
                }
            } else {
                local.push(v.clone());
            }
        }
        net.extend(local);
        Some(net.join("; "))
    }
}

/// Reads an NCCL INFO log (any number of ranks' lines; lines of other subsystems ignored).
pub fn summarize(log: &str) -> Transports {
    let mut t = Transports::default();
    for line in log.lines() {
        if let Some((_, rest)) = line.split_once(" via ") {
            if !line.contains("NCCL INFO") || !(line.contains("Channel") || line.contains("Ring")) {
                continue;
            }
            let via = rest.split_whitespace().next().unwrap_or_default();
            if via.is_empty() {
                continue;
            }
            record_via(&mut t, via);
        } else if let Some(pos) = line.find(" : Using ")
            && line[..pos].contains("NET/")
        {
            for token in line[pos + 9..].split_whitespace() {
                if token == ";" {
                    break;
                }
                let Some(rest) = token.strip_prefix('[') else {
                    continue;
                };
                let Some((index, name)) = rest.split_once(']') else {
                    continue;
                };
                let Ok(index) = index.parse::<u32>() else {
                    continue;
                };
                let name = name.split([':', '<']).next().unwrap_or_default();
                if !name.is_empty() {
                    t.names.insert(index, name.to_string());
                }
            }
        }
    }
    t
}

/// `NET/IB/5/GDRDMA` → `NET/IB+GDRDMA` on device 5; anything else as printed.
fn record_via(t: &mut Transports, via: &str) {
    let parts: Vec<&str> = via.split('/').collect();
    if parts.len() >= 3
        && parts[0] == "NET"
        && let Ok(device) = parts[2].parse::<u32>()
    {
        let mut class = format!("NET/{}", parts[1]);
        for flag in &parts[3..] {
            class.push('+');
            class.push_str(flag);
        }
        t.devices.entry(class.clone()).or_default().insert(device);
        t.via.insert(class);
    } else {
        t.via.insert(via.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines in the shape NCCL 2.x prints them (from public NCCL issue threads).
    const IB: &str = "\
node-a:120890:121560 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB ; OOB ib0:10.0.0.1<0>
node-a:120890:121560 [0] NCCL INFO Channel 01/0 : 2[c7000] -> 0[87000] [receive] via NET/IB/2/GDRDMA
node-a:120890:121560 [0] NCCL INFO Channel 01/0 : 0[87000] -> 2[c7000] [send] via NET/IB/0/GDRDMA
node-a:120890:121560 [0] NCCL INFO Channel 00/0 : 0[87000] -> 1[8d000] via P2P/CUMEM/read
node-a:120890:121560 [0] NCCL INFO Connected all rings
node-a:120890:121560 [0] NCCL WARN something via nothing";

    #[test]
    fn ib_with_gdrdma_names_the_devices() {
        let t = summarize(IB);
        assert!(t.networked());
        assert_eq!(
            t.label().as_deref(),
            Some("NET/IB+GDRDMA (mlx5_0, mlx5_2); P2P/CUMEM/read")
        );
    }

    #[test]
    fn sockets_and_shared_memory() {
        let log = "h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.2.3<0> [1]eth1:10.1.3.3<0>
h:1:2 [0] NCCL INFO Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/1
h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 7[7] via SHM/direct/direct";
        let t = summarize(log);
        assert_eq!(
            t.label().as_deref(),
            Some("NET/Socket (eth1); SHM/direct/direct")
        );
    }

    #[test]
    fn unnamed_devices_and_plugins_keep_their_index() {
        let log = "h:1:2 [7] NCCL INFO Channel 03/0 : 47[7] -> 39[7] [receive] via NET/IBext_v8/2";
        let t = summarize(log);
        assert_eq!(t.label().as_deref(), Some("NET/IBext_v8 (#2)"));
    }

    #[test]
    fn a_log_without_connections_has_no_label() {
        let t = summarize("h:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n");
        assert!(!t.networked());
        assert_eq!(t.label(), None);
        assert_eq!(summarize("").label(), None);
    }
}
