//! Real OpenSSH sshd on 127.0.0.1 for the tests that go through ssh (tests/remote.rs,
//! tests/fleet_run.rs): throwaway host and client keys in a temporary folder ([`keys`]), daemons
//! on free ports that accept the client key for the current user ([`Keys::start`]), and the ssh
//! command line or `ssh_config` entry that logs in to one. Where sshd, ssh-keygen or a login is
//! not available here, these print `skipped: …` and give `None` (or `false`), and the test
//! returns without checking anything; scripts/test.sh installs openssh-server when missing.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The ssh client options of every login to a test sshd: only the test's key, and no host key
/// check or record (the host key is as throwaway as the daemon).
const CLIENT_OPTIONS: [(&str, &str); 4] = [
    ("IdentitiesOnly", "yes"),
    ("StrictHostKeyChecking", "no"),
    ("UserKnownHostsFile", "/dev/null"),
    ("LogLevel", "ERROR"),
];

/// A running sshd on 127.0.0.1; killed when dropped.
pub struct Sshd {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl Sshd {
    /// Kills the daemon: it answers no more. Dropping it does the same.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A temporary folder with a throwaway host key (`host_key`) and client key (`client_key`,
/// also its `authorized_keys`), and the sshd program that serves with them. Drop the daemons
/// [`Keys::start`] gave before it: the folder goes with it.
pub struct Keys {
    dir: tempfile::TempDir,
    sshd: PathBuf,
}

/// The sshd program and fresh keys; `None` (with the reason printed) where sshd is missing or
/// ssh-keygen fails.
pub fn keys() -> Option<Keys> {
    let Some(sshd) = ["/usr/sbin/sshd", "/usr/bin/sshd", "/sbin/sshd"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
    else {
        eprintln!("skipped: no sshd (scripts/test.sh installs openssh-server)");
        return None;
    };
    let dir = tempfile::tempdir().ok()?;
    let d = dir.path();
    for key in ["host_key", "client_key"] {
        if !quiet(
            Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-f")
                .arg(d.join(key)),
        ) {
            eprintln!("skipped: ssh-keygen failed");
            return None;
        }
    }
    std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).ok()?;
    // The privilege-separation directory sshd insists on.
    let _ = std::fs::create_dir_all("/run/sshd");
    Some(Keys { dir, sshd })
}

impl Keys {
    /// The folder of the keys and of the daemons' files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Starts an sshd on a free port of 127.0.0.1 with `dir/{name}_config` (its pid file
    /// `dir/{name}.pid`), `extra` appended to that config, and waits until it listens; `None`
    /// (with the reason printed) where it cannot start or does not listen within 10 s.
    pub fn start(&self, name: &str, extra: &str) -> Option<Sshd> {
        let d = self.dir();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {dir}/host_key\nAuthorizedKeysFile {dir}/authorized_keys\nPidFile {dir}/{name}.pid\nPermitRootLogin yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n{extra}",
            dir = d.display()
        );
        let cfg = d.join(format!("{name}_config"));
        std::fs::write(&cfg, config).ok()?;
        let child = Command::new(&self.sshd)
            .args(["-D", "-e", "-f"])
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let sshd = Sshd { child, port };
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if start.elapsed() > Duration::from_secs(10) {
                eprintln!("skipped: sshd did not listen on port {port}");
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(sshd)
    }

    /// The ssh command line that logs in to the sshd on `port` with the client key (a host,
    /// 127.0.0.1, and a remote command go after it).
    pub fn ssh_command(&self, port: u16) -> String {
        let options: String = CLIENT_OPTIONS
            .iter()
            .map(|(option, value)| format!(" -o {option}={value}"))
            .collect();
        format!("ssh -p {port} -i {}{options}", self.client_key().display())
    }

    /// The same as an `ssh_config` entry: host alias `host` is the sshd on `port`.
    pub fn host_entry(&self, host: &str, port: u16) -> String {
        let options: String = CLIENT_OPTIONS
            .iter()
            .map(|(option, value)| format!("  {option} {value}\n"))
            .collect();
        format!(
            "Host {host}\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {}\n{options}",
            self.client_key().display()
        )
    }

    fn client_key(&self) -> PathBuf {
        self.dir().join("client_key")
    }
}

/// Whether `{ssh} {host} true` logs in and succeeds; prints the skip where it does not.
pub fn can_log_in(ssh: &str, host: &str) -> bool {
    let ok = Command::new("sh")
        .args(["-c", &format!("{ssh} {host} true")])
        .stdin(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: cannot log in through the test sshd");
    }
    ok
}

/// Runs `cmd` with its output discarded; whether it ran and succeeded.
fn quiet(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
