//! SIGINT, SIGTERM and SIGHUP for `--bench`: the first stops the run after the test in flight
//! (the runners poll [`CANCEL`]) and, at once, a watcher thread records the cancellation in the
//! files on disk; a second exits as soon as the files are consistent (at once when they are); a
//! third exits at once. The exit code is 128 + the first signal's number (130 for Ctrl-C, 143 for
//! SIGTERM, 129 for SIGHUP).
//!
//! Writers wrap each write of the files in [`writing`], so that an exit never lands between a
//! cancellation and the file that records it.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

/// Set by the first signal (or by a failed write, `cli::run_job`); every runner of the suite polls it.
pub static CANCEL: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static FIRST_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// A second signal came: exit once the files are consistent.
static EXIT_NOW: AtomicBool = AtomicBool::new(false);
/// A write of the files is in progress.
static WRITING: AtomicBool = AtomicBool::new(false);
/// The files on disk say the run was cancelled (or there was nothing to record).
static RECORDED: AtomicBool = AtomicBool::new(false);
/// Write end of the pipe that wakes the watcher thread; -1 before [`install`].
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

const SIGNALS_HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn exit_now() -> ! {
    // SAFETY: _exit is async-signal-safe and ends the process without running anything else.
    unsafe { libc::_exit(exit_code()) }
}

fn wake() {
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let byte = 1u8;
        // SAFETY: write(2) is async-signal-safe; the buffer is one byte on this stack frame.
        unsafe {
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work here: atomics, write(2) and _exit.
    let n = SIGNALS.fetch_add(1, Ordering::SeqCst);
    if n == 0 {
        FIRST_SIGNAL.store(sig, Ordering::SeqCst);
        CANCEL.store(true, Ordering::SeqCst);
        wake();
        return;
    }
    if n >= 2 {
        exit_now();
    }
    EXIT_NOW.store(true, Ordering::SeqCst);
    if RECORDED.load(Ordering::SeqCst) && !WRITING.load(Ordering::SeqCst) {
        exit_now();
    }
    wake();
}

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP and starts the watcher thread, which
/// calls `record` once after the first signal (to write the cancellation into the files) and
/// then exits if a second signal came meanwhile.
pub fn install(record: impl Fn() + Send + 'static) {
    let mut fds = [-1; 2];
    // SAFETY: pipe2 fills the two-element array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0 {
        let read_fd = fds[0];
        WAKE_FD.store(fds[1], Ordering::SeqCst);
        let spawned = std::thread::Builder::new()
            .name("scalescope-signals".into())
            .spawn(move || {
                let mut recorded_once = false;
                loop {
                    let mut byte = 0u8;
                    // SAFETY: reads one byte into a local buffer from a pipe this thread owns.
                    let n = unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
                    if n < 0
                        && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                    {
                        continue;
                    }
                    if n <= 0 {
                        return;
                    }
                    if !recorded_once {
                        recorded_once = true;
                        record();
                        RECORDED.store(true, Ordering::SeqCst);
                    }
                    if EXIT_NOW.load(Ordering::SeqCst) && !WRITING.load(Ordering::SeqCst) {
                        exit_now();
                    }
                }
            });
        if spawned.is_err() {
            // Without the watcher, the files record the cancellation at the next write.
            RECORDED.store(true, Ordering::SeqCst);
        }
    } else {
        RECORDED.store(true, Ordering::SeqCst);
    }
    let handler: extern "C" fn(libc::c_int) = on_signal;
    for sig in SIGNALS_HANDLED {
        // SAFETY: a zeroed sigaction with a handler that only touches atomics, write(2) and
        // _exit (all async-signal-safe); SA_RESTART keeps the main thread's system calls going.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// True once the run was asked to stop (a signal, or a failed write).
pub fn cancelled() -> bool {
    CANCEL.load(Ordering::SeqCst)
}

/// True when a signal (not an error) stopped the run.
pub fn signalled() -> bool {
    FIRST_SIGNAL.load(Ordering::SeqCst) != 0
}

/// `SIGINT`, `SIGTERM` or `SIGHUP`: the signal that stopped the run, if one did.
pub fn signal_name() -> Option<&'static str> {
    match FIRST_SIGNAL.load(Ordering::SeqCst) {
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        libc::SIGHUP => Some("SIGHUP"),
        _ => None,
    }
}

/// 128 + the first signal's number (130 when none came).
pub fn exit_code() -> i32 {
    match FIRST_SIGNAL.load(Ordering::SeqCst) {
        0 => 130,
        s => 128 + s,
    }
}

/// Runs one write of the files. `records_cancel`: the files written say `cancelled: true`.
/// After it, a pending second signal exits (the files are consistent now).
pub fn writing<T>(records_cancel: bool, write: impl FnOnce() -> T) -> T {
    WRITING.store(true, Ordering::SeqCst);
    let out = write();
    if records_cancel {
        RECORDED.store(true, Ordering::SeqCst);
    }
    WRITING.store(false, Ordering::SeqCst);
    if EXIT_NOW.load(Ordering::SeqCst) && RECORDED.load(Ordering::SeqCst) {
        exit_now();
    }
    out
}
