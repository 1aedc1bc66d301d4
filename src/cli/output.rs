//! How the command line writes files so that nothing finished is lost.
//!
//! - Every result file is written whole to a temporary file in the same folder, flushed to
//!   disk (fsync) and renamed over the old one: an interruption, a SIGKILL or a full disk leaves
//!   the last complete file, never an empty or cut one.
//! - The `--out` folder of `--bench` is locked (`flock`) while a run writes it; a second run
//!   says which process holds it. The lock file is removed when the run ends.
//! - I/O errors are sorted into the user's (a path that is not a folder, no permission: exit 2)
//!   and the machine's (a full disk, an I/O error: exit 1).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::CliError;
use crate::model::Fault;
pub use crate::output::{TEMP_SUFFIX, open_stream, write_all_atomic, write_atomic};

/// The lock file `--bench` holds in its `--out` folder while it writes there.
pub const LOCK_FILE: &str = ".scalescope.lock";

/// True for errors of the machine rather than of the path the user gave: a full disk or quota,
/// an I/O error, a read-only file system, a file too large.
pub fn is_machine_error(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSPC | libc::EDQUOT | libc::EIO | libc::EROFS | libc::EFBIG | libc::ENOMEM)
    )
}

/// A write error with the path named, as exit 1 (machine) or 2 (the user's path).
pub fn write_error(path: &Path, e: io::Error) -> CliError {
    let fault = io_fault(&e);
    let mut message = format!("cannot write {}: {e}", path.display());
    if fault == Fault::Machine {
        message.push_str("; the last complete files are kept");
    }
    CliError::new(fault, anyhow::anyhow!(message))
}

/// Whose fault an I/O error is: see [`is_machine_error`].
fn io_fault(e: &io::Error) -> Fault {
    if is_machine_error(e) {
        Fault::Machine
    } else {
        Fault::Input
    }
}

/// When to write the next checkpoint of a run's results: a checkpoint rewrites every file whole
/// (atomically, fsynced), so writing after every result makes a run of n results cost n² in
/// bytes and n fsyncs — 81 s for the 100-GPU bandwidth CSV that took 0.14 s to model. The pacer
/// lets a write through only when the last one ended at least four of its own durations ago:
/// writing then takes at most a fifth of the run whatever its size, a result measured on a GPU
/// (milliseconds to seconds each) is still written as it finishes, and a crash loses at most
/// the results of the last few write durations. Whoever paces writes once more at the end.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pacer {
    /// When the last write ended and how long it took.
    last: Option<(std::time::Instant, std::time::Duration)>,
}

impl Pacer {
    /// A pacer whose first write is due at once.
    pub fn new() -> Pacer {
        Pacer::default()
    }

    /// Whether a checkpoint should be written now.
    pub fn due(&self) -> bool {
        self.due_at(std::time::Instant::now())
    }

    /// Whether a checkpoint is due at `now`: four times the last write's duration after it ended.
    fn due_at(&self, now: std::time::Instant) -> bool {
        self.last
            .is_none_or(|(end, cost)| now.saturating_duration_since(end) >= cost * 4)
    }

    /// Runs `write`, timing it for the next [`Pacer::due`].
    pub fn timed<T>(&mut self, write: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let out = write();
        self.last = Some((std::time::Instant::now(), start.elapsed()));
        out
    }

    /// Runs `write` when due (see [`Pacer::due`]); `None` when it was not.
    pub fn when_due<T>(&mut self, write: impl FnOnce() -> T) -> Option<T> {
        self.due().then(|| self.timed(write))
    }
}

/// Creates the `--out` folder if missing; refuses a path that exists and is not a folder.
pub fn prepare_out_dir(dir: &Path) -> Result<(), CliError> {
    if let Ok(m) = fs::metadata(dir)
        && !m.is_dir()
    {
        return Err(CliError::input(anyhow::anyhow!(
            "--out: {} exists and is not a folder; give a folder (it is created if missing)",
            dir.display()
        )));
    }
    fs::create_dir_all(dir).map_err(|e| {
        CliError::new(
            io_fault(&e),
            anyhow::anyhow!("--out: cannot create the folder {}: {e}", dir.display()),
        )
    })
}

/// Before a run measures: whether each output file a flag names (`("--csv", path)`) can be
/// written as [`write_atomic`] writes it (a temporary file in the folder of the file, or of what
/// a link to it points to, renamed over it), so that results that could not be saved end the run
/// before it starts rather than after it measured: a temporary file is created there and
/// removed. A device or FIFO is taken as it is (it is written directly at the end).
pub fn check_writable(files: &[(&str, Option<&PathBuf>)]) -> Result<(), CliError> {
    each_writable(files, false)
}

/// [`check_writable`] after refusing outputs that would replace what the command reads or each
/// other: an output flag naming one of `inputs` (`("--import", path)`: the files it reads, by
/// the flag or argument naming them), or two output flags naming one file. A device or FIFO
/// (`/dev/stdout`) is never refused here: writing it replaces no file.
pub fn check_outputs<P: AsRef<Path>>(
    outputs: &[(&str, Option<&PathBuf>)],
    inputs: &[(&str, P)],
) -> Result<(), CliError> {
    let named: Vec<(&str, &PathBuf)> = outputs
        .iter()
        .filter_map(|&(flag, path)| path.map(|p| (flag, p)))
        .collect();
    let inputs: Vec<(&str, PathBuf)> = inputs
        .iter()
        .filter_map(|(flag, p)| Some((*flag, existing_file(p.as_ref())?)))
        .collect();
    let shown = |p: &Path| crate::model::validate::for_terminal(&p.display().to_string());
    for (i, &(flag, path)) in named.iter().enumerate() {
        let Some(id) = file_identity(path) else {
            continue;
        };
        if let Some((other, _)) = named[..i]
            .iter()
            .find(|(_, p)| file_identity(p).as_ref() == Some(&id))
        {
            return Err(CliError::input(anyhow::anyhow!(
                "{other} and {flag} name the same file ({}): one would replace the other",
                shown(path)
            )));
        }
        if let Some((input, _)) = inputs.iter().find(|(_, p)| *p == id) {
            return Err(CliError::input(anyhow::anyhow!(
                "{flag} {}: that is the file {input} reads; writing it would replace it (name \
                 another file)",
                shown(path)
            )));
        }
    }
    check_writable(outputs)
}

/// The canonical path of `p` where it is a regular file (what a write would replace).
fn existing_file(p: &Path) -> Option<PathBuf> {
    fs::metadata(p)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| fs::canonicalize(p).ok())
}

/// Which file an output path names: an existing regular file's canonical path, or for one not
/// there yet its folder's canonical path and its name; `None` for a device, FIFO or folder.
fn file_identity(p: &Path) -> Option<PathBuf> {
    match fs::metadata(p) {
        Ok(m) if m.is_file() => fs::canonicalize(p).ok(),
        Ok(_) => None,
        Err(_) => {
            let name = p.file_name()?;
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(fs::canonicalize(dir).ok()?.join(name))
        }
    }
}

/// [`check_writable`] for files written in place as they grow (`watch --csv`, `--record`): an
/// existing file must open for writing (it is not cut here).
pub fn check_writable_in_place(files: &[(&str, Option<&PathBuf>)]) -> Result<(), CliError> {
    each_writable(files, true)
}

fn each_writable(files: &[(&str, Option<&PathBuf>)], in_place: bool) -> Result<(), CliError> {
    files
        .iter()
        .filter_map(|&(flag, path)| path.map(|p| (flag, p)))
        .try_for_each(|(flag, path)| writable(flag, path, in_place))
}

fn writable(flag: &str, path: &Path, in_place: bool) -> Result<(), CliError> {
    let shown = || crate::model::validate::for_terminal(&path.display().to_string());
    let refuse = |e: io::Error| {
        CliError::new(
            io_fault(&e),
            anyhow::anyhow!("{flag} {}: cannot be written: {e}", shown()),
        )
    };
    let target = match fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(CliError::input(anyhow::anyhow!(
                "{flag} {}: is a folder; give a file",
                shown()
            )));
        }
        Ok(m) if m.is_file() && in_place => {
            return OpenOptions::new()
                .write(true)
                .open(path)
                .map(drop)
                .map_err(refuse);
        }
        // Replaced by a rename in the folder of what it is (a link is followed).
        Ok(m) if m.is_file() => fs::canonicalize(path).map_err(refuse)?,
        // A device or FIFO: written directly.
        Ok(_) => return Ok(()),
        // Not there yet, or a file on the way (its folder is judged below).
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            path.to_path_buf()
        }
        Err(e) => return Err(refuse(e)),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(CliError::input(anyhow::anyhow!(
                "{flag} {}: {} is not a folder",
                shown(),
                dir.display()
            )));
        }
        Err(e) => {
            return Err(CliError::new(
                io_fault(&e),
                anyhow::anyhow!("{flag} {}: its folder {}: {e}", shown(), dir.display()),
            ));
        }
    }
    let probe = dir.join(format!(
        ".scalescope-probe-{}{TEMP_SUFFIX}",
        std::process::id()
    ));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(refuse)?;
    let _ = fs::remove_file(&probe);
    Ok(())
}

/// Refuses `path` when any folder or file on the way from `out` down to it is a symbolic link:
/// a node folder under OUT/nodes that links elsewhere (a shared file system, or someone else's
/// doing) would have files written outside OUT. `out` itself is what the user named and may be
/// a link. A path not under `out`, or parts that do not exist yet, pass.
pub fn refuse_links_below(out: &Path, path: &Path) -> Result<(), CliError> {
    let Ok(rest) = path.strip_prefix(out) else {
        return Ok(());
    };
    let mut at = out.to_path_buf();
    for part in rest.components() {
        at.push(part);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(CliError::input(anyhow::anyhow!(
                    "{} is a symbolic link: scalescope writes only inside {}, never through a link out of it; replace the link with a folder",
                    crate::model::validate::for_terminal(&at.display().to_string()),
                    crate::model::validate::for_terminal(&out.display().to_string())
                )));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// Removes temporary files a killed run left in `dir` (only ours, by their suffix).
pub fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(TEMP_SUFFIX) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// An exclusive lock on an `--out` folder, held until dropped (or the process ends, however it
/// ends: the kernel releases `flock` locks with the last descriptor).
#[derive(Debug)]
pub struct OutLock {
    /// Held open for the `flock`; closing it releases the lock.
    _file: File,
    path: PathBuf,
}

impl OutLock {
    /// Takes the lock on `dir` (which must exist) or says which process holds it (exit 1: the
    /// folder is busy, not wrong). Writes this process's id and command line into the lock file.
    pub fn acquire(dir: &Path) -> Result<OutLock, CliError> {
        // The holder removes the file when it is done (see Drop), so a run that opened the old
        // file just before may lock a file no longer in the folder: it then tries again on the
        // new one, a bounded number of times (each retry means another run finished meanwhile).
        for _ in 0..8 {
            if let Some(lock) = Self::try_acquire(dir)? {
                return Ok(lock);
            }
        }
        Err(CliError::env(anyhow::anyhow!(
            "--out {} is being taken by other scalescope runs one after another; try again",
            dir.display()
        )))
    }

    /// One attempt: `None` when the locked file was removed from the folder meanwhile.
    fn try_acquire(dir: &Path) -> Result<Option<OutLock>, CliError> {
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| write_error(&path, e))?;
        // SAFETY: flock on a descriptor this function owns; no memory is shared with the call.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(write_error(&path, e));
            }
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.lines().next().unwrap_or("").trim();
            let who = if holder.is_empty() {
                "another scalescope run".to_string()
            } else {
                format!(
                    "another scalescope run ({})",
                    crate::model::validate::one_line(holder, 200)
                )
            };
            return Err(CliError::env(anyhow::anyhow!(
                "--out {} is being written by {who}; wait for it to finish or give another --out",
                dir.display()
            )));
        }
        let same_file = match (file.metadata(), fs::symlink_metadata(&path)) {
            (Ok(held), Ok(named)) => held.ino() == named.ino() && held.dev() == named.dev(),
            _ => false,
        };
        if !same_file {
            return Ok(None);
        }
        let args = crate::process::command_line();
        let line = format!("process {}: {}\n", std::process::id(), args.join(" "));
        let _ = file
            .set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| file.write_all(line.as_bytes()));
        Ok(Some(OutLock { _file: file, path }))
    }
}

impl Drop for OutLock {
    /// Removes the lock file while still holding the lock, so the folder holds only the run's
    /// results afterwards; a run waiting on the old file sees it gone and locks a new one.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacer_lets_the_first_write_through_then_waits_four_of_its_durations() {
        use std::time::Duration;
        let mut pacer = Pacer::new();
        assert!(pacer.due());
        assert_eq!(pacer.when_due(|| 1), Some(1));
        // A 20 ms write that ended at `end`: due again 80 ms later, not before (judged on
        // stated instants, so a loaded machine cannot change the answer).
        let end = std::time::Instant::now();
        pacer.last = Some((end, Duration::from_millis(20)));
        assert!(!pacer.due_at(end));
        assert!(!pacer.due_at(end + Duration::from_millis(79)));
        assert!(pacer.due_at(end + Duration::from_millis(80)));
        // The write's own duration is what `timed` records.
        pacer.timed(|| std::thread::sleep(Duration::from_millis(5)));
        let (_, cost) = pacer.last.unwrap();
        assert!(cost >= Duration::from_millis(5));
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn atomic_write_follows_symlinks_and_writes_devices_directly() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.csv");
        fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        write_atomic(Path::new("/dev/null"), b"x").unwrap();
    }

    #[test]
    fn a_second_lock_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutLock::acquire(dir.path()).unwrap();
        let err = OutLock::acquire(dir.path()).unwrap_err();
        assert_eq!(err.code, 1);
        let msg = err.error.to_string();
        assert!(
            msg.contains(&format!("process {}", std::process::id())),
            "{msg}"
        );
        drop(first);
        assert!(!dir.path().join(LOCK_FILE).exists(), "lock file left");
        let again = OutLock::acquire(dir.path()).unwrap();
        assert!(dir.path().join(LOCK_FILE).exists());
        drop(again);
        assert!(!dir.path().join(LOCK_FILE).exists(), "lock file left");
    }

    #[test]
    fn an_output_that_cannot_be_written_is_refused_before_the_run_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.csv");
        let old = dir.path().join("old.csv");
        fs::write(&old, b"kept").unwrap();
        check_writable(&[("--csv", Some(&new)), ("--json", Some(&old)), ("--x", None)]).unwrap();
        assert!(!new.exists(), "the probe leaves no file");
        assert_eq!(
            fs::read(&old).unwrap(),
            b"kept",
            "an existing file is not cut"
        );
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = dir.path().join("nowhere/x.csv");
        let e = check_writable(&[("--csv", Some(&missing))]).unwrap_err();
        assert_eq!(e.code, super::super::EXIT_INPUT);
        let text = e.error.to_string();
        assert!(
            text.starts_with("--csv ") && text.contains("nowhere"),
            "{text}"
        );
        let folder = dir.path().to_path_buf();
        let e = check_writable(&[("--json", Some(&folder))]).unwrap_err();
        assert!(e.error.to_string().contains("is a folder"), "{}", e.error);
        let under_file = old.join("x.csv");
        let e = check_writable(&[("--csv", Some(&under_file))]).unwrap_err();
        assert!(e.error.to_string().contains("not a folder"), "{}", e.error);
        check_writable(&[("--csv", Some(&PathBuf::from("/dev/null")))]).unwrap();
        // A read-only file in a writable folder is replaced by the rename, as before.
        let ro = dir.path().join("ro.csv");
        fs::write(&ro, b"old").unwrap();
        fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o444)).unwrap();
        check_writable(&[("--csv", Some(&ro))]).unwrap();
        check_writable_in_place(&[("--csv", Some(&new))]).unwrap();
        assert!(!new.exists());
    }

    #[test]
    fn out_must_be_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("file");
        fs::write(&f, "x").unwrap();
        let err = prepare_out_dir(&f).unwrap_err();
        assert_eq!(err.code, 2);
        assert!(err.error.to_string().contains("not a folder"));
    }
}
