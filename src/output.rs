//! Writing the files a run produces: atomically (a temporary file beside the target, fsync,
//! rename, fsync of the folder), several as one set, and devices or FIFOs (`/dev/stdout`, a
//! named pipe) directly without waiting in open(2). The command line (cli/output.rs), the fleet
//! report (fleet/mod.rs, the bytes of fleet/files.rs) and the app's saves (ui/saving.rs) write
//! through it; `input.rs` is its reading counterpart.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// `eprintln!` that never panics: a line for standard error, lost (not a panic, exit 101) when
/// standard error is a pipe nobody reads any more (`cmd 2>&1 | head -1`). A run's warnings and
/// its one-line error go through it; what was measured is in its files either way.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that never panics: a progress or result line for standard output, lost when
/// standard output is a pipe nobody reads any more (`scalescope --bench | head -3`), so the
/// run goes on and writes its files.
#[macro_export]
macro_rules! stdout_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// The suffix of a temporary file before its rename (a leftover one is stale: cli/output.rs
/// removes them).
pub const TEMP_SUFFIX: &str = ".scalescope-tmp";

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsync, rename, fsync of the
/// folder. The old file stays whole until the new one is complete on disk. A path that is not a
/// regular file (`/dev/stdout`, a FIFO) is written directly; a symbolic link is followed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_all_atomic(&[(path, bytes)]).map_err(|(_, e)| e)
}

/// Writes several files as one: every temporary file is written and flushed first, and only
/// when all are complete are they renamed into place, so that a full disk leaves the earlier
/// set whole and consistent (a CSV never ahead of the report.json beside it). `Err` names the
/// file that failed.
pub fn write_all_atomic<'a>(files: &[(&'a Path, &[u8])]) -> Result<(), (&'a Path, io::Error)> {
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let cleanup = |staged: &[(PathBuf, PathBuf)]| {
        for (temp, _) in staged {
            let _ = fs::remove_file(temp);
        }
    };
    for &(path, bytes) in files {
        match stage(path, bytes) {
            Ok(Some((temp, target, dir))) => {
                staged.push((temp, target));
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
            Ok(None) => {}
            Err(e) => {
                cleanup(&staged);
                return Err((path, e));
            }
        }
    }
    for (i, (temp, target)) in staged.iter().enumerate() {
        if let Err(e) = fs::rename(temp, target) {
            cleanup(&staged[i..]);
            return Err((files[i].0, e));
        }
    }
    // The renames are durable once their folders are synced.
    for dir in dirs {
        let _ = File::open(&dir).and_then(|d| d.sync_all());
    }
    Ok(())
}

/// Writes `bytes` to a flushed temporary file beside `path`; returns (temporary, target, folder),
/// or `None` when `path` is a device or FIFO, which is written directly.
fn stage(path: &Path, bytes: &[u8]) -> io::Result<Option<(PathBuf, PathBuf, PathBuf)>> {
    match fs::metadata(path) {
        Ok(m) if !m.is_file() && !m.is_dir() => {
            let mut f = open_stream(path)?;
            f.write_all(bytes)?;
            f.flush()?;
            return Ok(None);
        }
        _ => {}
    }
    let target = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path)?,
        _ => path.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let temp = dir.join(format!(
        ".{}.{}{TEMP_SUFFIX}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    match written {
        Ok(()) => Ok(Some((temp, target, dir))),
        Err(e) => {
            let _ = fs::remove_file(&temp);
            Err(e)
        }
    }
}

/// Opens a device or FIFO (`/dev/stdout`, a named pipe) for writing without waiting in
/// open(2): a FIFO that nobody reads is an error at once (`ENXIO`), not a hang that not even
/// SIGTERM ends. Writes then block as usual (the descriptor is made blocking again).
pub fn open_stream(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "a FIFO that no process reads (start its reader first)",
                )
            } else {
                e
            }
        })?;
    // SAFETY: fcntl on a descriptor this function owns; F_GETFL/F_SETFL touch only its flags.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(f)
}
