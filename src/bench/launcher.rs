//! Multi-process runs: recognising torchrun, Slurm and Open MPI from their environment.
//!
//! Each process takes its local GPU; the ranks bootstrap through NCCL's own mechanism
//! (`NCCL_COMM_ID=host:port`, read by ncclGetUniqueId/ncclCommInitRank), and rank 0 writes the
//! results. Nothing here moves data.

use std::collections::HashMap;

/// Where this process sits in a multi-process launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchEnv {
    /// `torchrun`, `slurm` or `mpi`.
    pub launcher: &'static str,
    pub rank: usize,
    pub world_size: usize,
    pub local_rank: usize,
    /// `host:port` every rank agrees on for NCCL's bootstrap; `None` when NCCL_COMM_ID must
    /// already be set by the user.
    pub comm_id: Option<String>,
}

/// Reads the launcher's variables from `env`; `Ok(None)` for a single-process run, an error for
/// an inconsistent set (e.g. RANK ≥ WORLD_SIZE).
pub fn detect(env: &HashMap<String, String>) -> Result<Option<LaunchEnv>, String> {
    let get = |k: &str| env.get(k).map(|v| v.trim().to_string());
    let num = |k: &str| -> Result<Option<usize>, String> {
        get(k)
            .map(|v| {
                v.parse::<usize>()
                    .map_err(|_| format!("{k}={v:?} is not a whole number"))
            })
            .transpose()
    };
    let (launcher, rank, size, local) = if get("WORLD_SIZE").is_some() && get("RANK").is_some() {
        (
            "torchrun",
            num("RANK")?,
            num("WORLD_SIZE")?,
            num("LOCAL_RANK")?,
        )
    } else if get("SLURM_PROCID").is_some() && get("SLURM_NTASKS").is_some() {
        (
            "slurm",
            num("SLURM_PROCID")?,
            num("SLURM_NTASKS")?,
            num("SLURM_LOCALID")?,
        )
    } else if get("OMPI_COMM_WORLD_RANK").is_some() {
        (
            "mpi",
            num("OMPI_COMM_WORLD_RANK")?,
            num("OMPI_COMM_WORLD_SIZE")?,
            num("OMPI_COMM_WORLD_LOCAL_RANK")?,
        )
    } else {
        return Ok(None);
    };
    let (Some(rank), Some(world_size)) = (rank, size) else {
        return Err(format!("{launcher}: rank or world size missing"));
    };
    if world_size <= 1 {
        return Ok(None);
    }
    if rank >= world_size {
        return Err(format!(
            "{launcher}: rank {rank} is not below the world size {world_size}"
        ));
    }
    // torchrun's rendezvous address, one port above MASTER_PORT (torchrun's own store listens on
    // MASTER_PORT itself).
    let comm_id = get("NCCL_COMM_ID").or_else(|| {
        let addr = get("MASTER_ADDR")?;
        let port: u16 = get("MASTER_PORT")?.parse().ok()?;
        Some(format!("{addr}:{}", port.checked_add(1)?))
    });
    Ok(Some(LaunchEnv {
        launcher,
        rank,
        world_size,
        local_rank: local.unwrap_or(rank),
        comm_id,
    }))
}

/// The process environment as a map.
pub fn process_env() -> HashMap<String, String> {
    std::env::vars().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn torchrun() {
        let e = env(&[
            ("RANK", "1"),
            ("WORLD_SIZE", "2"),
            ("LOCAL_RANK", "1"),
            ("MASTER_ADDR", "127.0.0.1"),
            ("MASTER_PORT", "29500"),
        ]);
        let l = detect(&e).unwrap().unwrap();
        assert_eq!(
            (l.launcher, l.rank, l.world_size, l.local_rank),
            ("torchrun", 1, 2, 1)
        );
        assert_eq!(l.comm_id.as_deref(), Some("127.0.0.1:29501"));
    }

    #[test]
    fn slurm_and_mpi() {
        let s = detect(&env(&[
            ("SLURM_PROCID", "3"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_LOCALID", "1"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (s.launcher, s.rank, s.local_rank, s.comm_id),
            ("slurm", 3, 1, None)
        );
        let m = detect(&env(&[
            ("OMPI_COMM_WORLD_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
            ("NCCL_COMM_ID", "node1:4000"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (m.launcher, m.comm_id.as_deref()),
            ("mpi", Some("node1:4000"))
        );
    }

    #[test]
    fn single_process_and_bad_values() {
        assert_eq!(detect(&env(&[])).unwrap(), None);
        assert_eq!(
            detect(&env(&[("RANK", "0"), ("WORLD_SIZE", "1")])).unwrap(),
            None
        );
        assert!(detect(&env(&[("RANK", "2"), ("WORLD_SIZE", "2")])).is_err());
        assert!(detect(&env(&[("RANK", "x"), ("WORLD_SIZE", "2")])).is_err());
    }
}
