//! Background jobs for views: a named worker thread that reports over a channel, asks for a
//! repaint after every message, and stops when its cancel flag is set. Measurements never run
//! on the UI thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};

use eframe::egui;

/// What a job reports.
#[derive(Debug)]
pub enum JobMsg<R> {
    /// `done` of `total` steps finished; `partial` is everything so far.
    Progress {
        done: usize,
        total: usize,
        label: String,
        partial: R,
    },
    /// The job finished (or stopped after a cancel) with this result.
    Done(R),
    /// The job could not run at all.
    Failed(String),
}

/// Sends a job's messages to the UI and wakes it.
pub struct Reporter<R> {
    tx: Sender<JobMsg<R>>,
    ctx: egui::Context,
}

impl<R> Reporter<R> {
    /// Sends one message; a closed window is not an error.
    pub fn send(&self, msg: JobMsg<R>) {
        let _ = self.tx.send(msg);
        self.ctx.request_repaint();
    }
}

/// A running (or finished) job, polled by the view each frame.
pub struct Job<R> {
    rx: Receiver<JobMsg<R>>,
    cancel: Arc<AtomicBool>,
    /// Steps done and total, and the last step's label.
    pub progress: (usize, usize, String),
    /// True once `Done` or `Failed` arrived (or the worker vanished).
    pub finished: bool,
}

impl<R: Send + 'static> Job<R> {
    /// Starts `work` on a thread named `name`.
    pub fn spawn(
        ctx: &egui::Context,
        name: &str,
        work: impl FnOnce(Reporter<R>, Arc<AtomicBool>) + Send + 'static,
    ) -> Job<R> {
        let (tx, rx) = channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let reporter = Reporter {
            tx: tx.clone(),
            ctx: ctx.clone(),
        };
        let flag = cancel.clone();
        let spawned = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || work(reporter, flag));
        if let Err(e) = spawned {
            let _ = tx.send(JobMsg::Failed(format!("cannot start a worker thread: {e}")));
        }
        Job {
            rx,
            cancel,
            progress: (0, 0, String::new()),
            finished: false,
        }
    }
}

impl<R> Job<R> {
    /// Asks the worker to stop after the step in flight.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// True once cancel was asked for.
    pub fn cancelling(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Messages that arrived since the last poll.
    pub fn poll(&mut self) -> Vec<JobMsg<R>> {
        let mut out = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(msg) => {
                    match &msg {
                        JobMsg::Progress {
                            done, total, label, ..
                        } => self.progress = (*done, *total, label.clone()),
                        JobMsg::Done(_) | JobMsg::Failed(_) => self.finished = true,
                    }
                    out.push(msg);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    if !self.finished {
                        self.finished = true;
                        out.push(JobMsg::Failed("the worker stopped unexpectedly".into()));
                    }
                    break;
                }
            }
        }
        out
    }
}
