//! A named thread with a stop flag, stopped and joined when dropped: the shape of every
//! NVML reader here that runs beside a measurement (the soak's probe, live-traffic feeds).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// The running thread. Dropping it (or [`Worker::stop`]) sets the flag and waits for it.
pub struct Worker {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    /// Runs `work` on a thread named `name`; `work` returns once the flag it is given is set.
    pub fn spawn(
        name: &str,
        work: impl FnOnce(&AtomicBool) + Send + 'static,
    ) -> std::io::Result<Worker> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || work(&flag))?;
        Ok(Worker {
            stop,
            handle: Some(handle),
        })
    }

    /// Sets the flag and waits for the thread.
    pub fn stop(mut self) {
        self.halt();
    }

    /// [`Worker::stop`] for an owner that stops it from its own `Drop` (again harmless).
    pub fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.halt();
    }
}
