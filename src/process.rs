//! Child processes with a time limit: the one wait loop behind every program scalescope starts
//! and will not wait for forever (python3 asked for its site-packages, the framework runs,
//! a process group ended politely, the ssh connection to an agent).

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How often a waiting loop looks at the child again.
const POLL: Duration = Duration::from_millis(10);

/// Waits up to `limit` for `child` to exit: its status, or `None` when it still runs at the
/// limit (or cannot be waited for). The child is left as it is either way: the caller decides
/// how to end it.
pub fn wait_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(POLL),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn returns_the_status_of_a_quick_child_and_none_at_the_limit() {
        let mut quick = Command::new("true").spawn().unwrap();
        assert!(wait_within(&mut quick, Duration::from_secs(10)).is_some_and(|s| s.success()));
        let mut slow = Command::new("sleep").arg("10").spawn().unwrap();
        let start = Instant::now();
        assert_eq!(wait_within(&mut slow, Duration::from_millis(50)), None);
        assert!(start.elapsed() < Duration::from_secs(5));
        let _ = slow.kill();
        let _ = slow.wait();
    }
}
