//! Reading a file the user named (a capture, a report, a catalog entry, thresholds, a workload):
//! bounded in size and never waiting forever. A regular file over the limit is refused without
//! reading it; an endless one (`/dev/zero`) is read one byte past the limit and refused; a FIFO,
//! pipe or device that sends nothing for [`STALL`] is given up on, so `mkfifo f; scalescope topo
//! --import f` ends with an error instead of hanging. Pipes that do send (`<(nvidia-smi topo -m)`)
//! work as before.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a FIFO, pipe or device may stay silent before reading it is given up.
pub const STALL: Duration = Duration::from_secs(5);

/// A shorter [`STALL`] set by the hidden `--test-stall-ms` (0: none), so that fuzzing many
/// silent FIFOs takes minutes instead of an hour.
static TEST_STALL_MS: AtomicU64 = AtomicU64::new(0);

/// Shortens the wait for a silent FIFO, pipe or device to `limit` (test hook; never longer
/// than [`STALL`]).
pub fn shorten_stall_for_tests(limit: Duration) {
    let ms = u64::try_from(limit.min(STALL).as_millis())
        .unwrap_or(0)
        .max(1);
    TEST_STALL_MS.store(ms, Ordering::Relaxed);
}

/// The wait in force: [`STALL`] unless a test shortened it.
fn stall() -> Duration {
    match TEST_STALL_MS.load(Ordering::Relaxed) {
        0 => STALL,
        ms => Duration::from_millis(ms),
    }
}

/// Why an input file could not be read. The path is the caller's to name.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Opening or reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// More than the caller's limit.
    #[error("larger than {}", size_words(*max))]
    TooLarge {
        /// The limit, bytes.
        max: u64,
    },
    /// A FIFO, pipe or device sent nothing for [`STALL`].
    #[error("{kind} sent nothing for {} s (nothing is writing to it?)", stall().as_secs_f64())]
    Stalled {
        /// "FIFO", "pipe", "device", "socket".
        kind: &'static str,
    },
    /// A directory or another thing that holds no bytes to read.
    #[error("is a {0}, not a file")]
    NotAFile(&'static str),
    /// Not UTF-8 text (from [`read_text`]).
    #[error("not UTF-8 text ({0})")]
    NotUtf8(std::str::Utf8Error),
}

impl From<InputError> for std::io::Error {
    /// For callers whose error type holds an `io::Error`: the I/O error itself, or the message.
    fn from(e: InputError) -> Self {
        match e {
            InputError::Io(e) => e,
            other => std::io::Error::other(other.to_string()),
        }
    }
}

/// `64 KiB`, `1 MiB`, `256 MiB`: the limit as the error says it.
fn size_words(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads at most `max` bytes of the file at `path` (see the module comment for FIFOs and
/// devices).
pub fn read(path: &Path, max: u64) -> Result<Vec<u8>, InputError> {
    // O_NONBLOCK: opening a FIFO that has no writer returns at once instead of blocking in
    // open(2); reads below wait in poll(2) with a time limit instead.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(InputError::NotAFile("directory"));
    }
    if kind.is_file() {
        if meta.len() > max {
            return Err(InputError::TooLarge { max });
        }
        return read_bounded(file, max);
    }
    let what = if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else {
        "device"
    };
    read_polled(&file, max, what)
}

/// [`read`], then UTF-8 (a byte-order mark is kept for the caller to judge).
pub fn read_text(path: &Path, max: u64) -> Result<String, InputError> {
    let bytes = read(path, max)?;
    String::from_utf8(bytes).map_err(|e| InputError::NotUtf8(e.utf8_error()))
}

/// What standard input held, once read: a command that looks at `-` twice (which tool wrote it,
/// then the machine it describes) gets the same bytes again instead of an empty stream.
static STDIN: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

/// Reads at most `max` bytes of standard input. A terminal is read until end of input (the user
/// is typing); a pipe or FIFO that sends nothing for [`STALL`] is given up on. Read once per
/// process: a later call returns the same bytes.
pub fn read_stdin(max: u64) -> Result<Vec<u8>, InputError> {
    if let Some(bytes) = STDIN.get() {
        if bytes.len() as u64 > max {
            return Err(InputError::TooLarge { max });
        }
        return Ok(bytes.clone());
    }
    let bytes = read_stdin_once(max)?;
    Ok(STDIN.get_or_init(|| bytes).clone())
}

fn read_stdin_once(max: u64) -> Result<Vec<u8>, InputError> {
    let stdin = std::io::stdin();
    // SAFETY: isatty only inspects the descriptor number; fd 0 is owned by the process.
    if unsafe { libc::isatty(stdin.as_raw_fd()) } == 1 {
        return read_bounded(stdin.lock(), max);
    }
    read_polled(&stdin, max, "pipe")
}

/// Reads a regular file or a terminal: at most one byte past `max`.
fn read_bounded(r: impl Read, max: u64) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    r.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(InputError::TooLarge { max });
    }
    Ok(bytes)
}

/// Reads a descriptor that may never send (FIFO, pipe, device), waiting at most [`STALL`] for
/// each chunk.
fn read_polled(source: &impl AsRawFd, max: u64, kind: &'static str) -> Result<Vec<u8>, InputError> {
    let fd = source.as_raw_fd();
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    let mut last = Instant::now();
    loop {
        let left = stall().saturating_sub(last.elapsed());
        if left.is_zero() {
            return Err(InputError::Stalled { kind });
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd for the duration of the call; fd stays open (borrowed).
        let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
        if ready < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e.into());
        }
        if ready == 0 {
            continue;
        }
        let room = (max + 1 - bytes.len() as u64).min(chunk.len() as u64) as usize;
        // SAFETY: `chunk` is valid for `room` ≤ its length bytes; fd stays open (borrowed).
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), room) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock => continue,
                _ => return Err(e.into()),
            }
        }
        if n == 0 {
            return Ok(bytes);
        }
        bytes.extend_from_slice(&chunk[..n as usize]);
        if bytes.len() as u64 > max {
            return Err(InputError::TooLarge { max });
        }
        last = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_and_a_large_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "hello").unwrap();
        assert_eq!(read_text(&p, 5).unwrap(), "hello");
        let e = read(&p, 4).unwrap_err();
        assert_eq!(e.to_string(), "larger than 4 bytes");
    }

    #[test]
    fn an_endless_device_is_cut_one_byte_past_the_limit() {
        let e = read(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "larger than 1 MiB");
    }

    #[test]
    fn a_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read(dir.path(), 10).unwrap_err().to_string(),
            "is a directory, not a file"
        );
    }

    #[test]
    fn a_fifo_nobody_writes_ends_after_the_stall_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = Instant::now();
        let e = read(&p, 10).unwrap_err();
        assert!(matches!(e, InputError::Stalled { kind: "FIFO" }), "{e}");
        assert!(started.elapsed() < STALL + Duration::from_secs(3));
    }

    #[test]
    fn a_fifo_that_sends_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let writer_path = p.clone();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            std::fs::write(writer_path, "GPU0\tX\n").unwrap();
        });
        assert_eq!(read_text(&p, 100).unwrap(), "GPU0\tX\n");
        writer.join().unwrap();
    }
}
