//! Child processes with a time limit: the one wait loop behind every program scalescope starts
//! and will not wait for forever (python3 asked for its site-packages, the framework runs,
//! a process group ended politely, the ssh connection to an agent) — and this process's own
//! command line as text.

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// This process's command line as text (bytes that are not UTF-8 replaced): what a report and
/// an output folder's lock record. Never panics, whatever the arguments' bytes.
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

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

/// Runs `cmd` (stdin and stderr closed) and returns its standard output when it exits
/// successfully within `limit` having printed at most `max` bytes; `None` when it cannot start,
/// fails, runs past the limit (it is killed) or prints more (it is killed: a program that
/// prints gigabytes where a few lines were asked for is not answering).
pub fn output_within(
    mut cmd: std::process::Command,
    limit: Duration,
    max: usize,
) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take()?;
    // Read on a thread: a child that fills the pipe would otherwise never exit to be waited on.
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let read = stdout.take(max as u64 + 1).read_to_end(&mut out);
        read.ok().map(|_| out)
    });
    let status = wait_within(&mut child, limit);
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let out = reader.join().ok().flatten();
    match (status, out) {
        (Some(s), Some(out)) if s.success() && out.len() <= max => Some(out),
        _ => None,
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

    #[test]
    fn output_within_bounds_time_and_size() {
        let echo = |text: &str| {
            let mut c = Command::new("sh");
            c.args(["-c", &format!("printf '{text}'")]);
            c
        };
        assert_eq!(
            output_within(echo("n1\\nn2\\n"), Duration::from_secs(10), 100).as_deref(),
            Some(&b"n1\nn2\n"[..])
        );
        let start = Instant::now();
        let mut silent = Command::new("sleep");
        silent.arg("30");
        assert_eq!(output_within(silent, Duration::from_millis(100), 100), None);
        let mut flood = Command::new("yes");
        flood.arg("n1");
        assert_eq!(output_within(flood, Duration::from_secs(20), 1 << 16), None);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
    }
}
