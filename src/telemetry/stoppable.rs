//! A named thread with a stop flag, stopped and joined when dropped: the shape of every
//! NVML reader here that runs beside a measurement (the soak's probe, live-traffic feeds).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// The running thread. Dropping it (or [`StoppableThread::stop`]) sets the flag and waits for it.
pub struct StoppableThread {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl StoppableThread {
    /// Runs `work` on a thread named `name`; `work` returns once the flag it is given is set.
    pub fn spawn(
        name: &str,
        work: impl FnOnce(&AtomicBool) + Send + 'static,
    ) -> std::io::Result<StoppableThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || work(&flag))?;
        Ok(StoppableThread {
            stop,
            handle: Some(handle),
        })
    }

    /// Sets the flag and waits for the thread.
    pub fn stop(mut self) {
        self.halt();
    }

    /// [`StoppableThread::stop`] for an owner that stops it from its own `Drop` (again harmless).
    pub fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for StoppableThread {
    fn drop(&mut self) {
        self.halt();
    }
}
