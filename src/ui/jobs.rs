//! Background work: a view's job on a named worker thread that reports over a channel, asks
//! for a repaint after every message, and stops when its cancel flag is set; and the [`Inbox`]
//! the app's parts use for their one-message workers. Measurements, NVML, ssh and file dialogs
//! never run on the UI thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};

use eframe::egui;

/// What a job reports.
#[derive(Debug)]
pub enum WorkerMsg<R> {
    /// `done` of `total` steps finished; `partial` is everything so far.
    Progress {
        done: usize,
        total: usize,
        label: String,
        partial: R,
    },
    /// Events that `partial` reports leave to the receiver, to apply to its copy with
    /// [`crate::job::apply`] (a soak's samples: a whole report every interval would copy hours
    /// of samples; a partial report holds none of them), or none when only the progress moved;
    /// with the progress so far.
    Events {
        done: usize,
        total: usize,
        label: String,
        events: Vec<crate::job::Event>,
    },
    /// The job finished (or stopped after a cancel) with this result.
    Done(R),
    /// The job could not run at all.
    Failed(String),
}

/// Sends a job's messages to the UI and wakes it.
pub struct Reporter<R> {
    tx: Sender<WorkerMsg<R>>,
    ctx: egui::Context,
}

impl<R> Reporter<R> {
    /// Sends one message; a closed window is not an error.
    pub fn send(&self, msg: WorkerMsg<R>) {
        let _ = self.tx.send(msg);
        self.ctx.request_repaint();
    }
}

/// A running (or finished) job, polled by the view each frame.
pub struct Worker<R> {
    rx: Receiver<WorkerMsg<R>>,
    cancel: Arc<AtomicBool>,
    /// Steps done and total, and the last step's label.
    pub progress: (usize, usize, String),
    /// True once `Done` or `Failed` arrived (or the worker vanished).
    pub finished: bool,
}

impl<R: Send + 'static> Worker<R> {
    /// Starts `work` on a thread named `name`.
    pub fn spawn(
        ctx: &egui::Context,
        name: &str,
        work: impl FnOnce(Reporter<R>, Arc<AtomicBool>) + Send + 'static,
    ) -> Worker<R> {
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
            let _ = tx.send(WorkerMsg::Failed(format!(
                "cannot start a worker thread: {e}"
            )));
        }
        Worker {
            rx,
            cancel,
            progress: (0, 0, String::new()),
            finished: false,
        }
    }
}

impl<R> Worker<R> {
    /// Asks the worker to stop after the step in flight.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// True once cancel was asked for.
    pub fn cancelling(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Messages that arrived since the last poll.
    pub fn poll(&mut self) -> Vec<WorkerMsg<R>> {
        let mut out = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(msg) => {
                    match &msg {
                        WorkerMsg::Progress {
                            done, total, label, ..
                        }
                        | WorkerMsg::Events {
                            done, total, label, ..
                        } => self.progress = (*done, *total, label.clone()),
                        WorkerMsg::Done(_) | WorkerMsg::Failed(_) => self.finished = true,
                    }
                    out.push(msg);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    if !self.finished {
                        self.finished = true;
                        out.push(WorkerMsg::Failed("the worker stopped unexpectedly".into()));
                    }
                    break;
                }
            }
        }
        out
    }
}

/// A server's connection shared by the app and its views (one job at a time through it).
pub type SharedRunner = Arc<Mutex<crate::remote::Runner>>;

/// Runs `job` on a worker thread — on the server `runner` reaches, or here when `None` — and
/// reports, after every event that adds results, the job's report so far (its events applied
/// with [`crate::job::apply`]) — a soak's events themselves, for the receiver to apply —; then
/// the final report, or the job's error.
pub fn spawn_job(
    ctx: &egui::Context,
    name: &str,
    runner: Option<SharedRunner>,
    job: crate::job::Job,
) -> Worker<crate::report::Report> {
    use crate::job::{self, Event};
    Worker::spawn(ctx, name, move |rep, cancel| {
        let mut report = job::empty_report();
        let mut progress = (0, 0, String::new());
        let mut sink = |e: &Event| {
            // A soak's samples go to the receiver as they are, never in a partial report: a
            // third copy of hours of samples here would serve no one.
            if !matches!(e, Event::SoakSamples { .. }) {
                job::apply(&mut report, e);
            }
            match e {
                Event::Progress { done, total, label } => {
                    progress = (*done, *total, label.clone());
                    // The progress alone, so that a long step (a soak) moves its bar.
                    rep.send(WorkerMsg::Events {
                        done: *done,
                        total: *total,
                        label: label.clone(),
                        events: Vec::new(),
                    });
                }
                Event::Bandwidth { .. }
                | Event::Collectives { .. }
                | Event::Scaling { .. }
                | Event::Health { .. } => rep.send(WorkerMsg::Progress {
                    done: progress.0,
                    total: progress.1,
                    label: progress.2.clone(),
                    partial: report.clone(),
                }),
                Event::SoakStarted { .. } | Event::SoakSamples { .. } => {
                    rep.send(WorkerMsg::Events {
                        done: progress.0,
                        total: progress.1,
                        label: progress.2.clone(),
                        events: vec![e.clone()],
                    })
                }
                _ => {}
            }
        };
        let result = match &runner {
            Some(r) => match r.lock() {
                Ok(mut r) => r.run(&job, &cancel, &mut sink),
                Err(_) => Err(job::JobError::machine("the server connection is broken")),
            },
            None => job::run(&job, &cancel, &mut sink),
        };
        match result {
            Ok(r) => rep.send(WorkerMsg::Done(r)),
            Err(e) => rep.send(WorkerMsg::Failed(e.message)),
        }
    })
}

/// A channel for the app's own workers (the NVML read, file dialogs, reading files, ssh
/// connections): each worker runs on a named thread, sends one message and wakes the UI; the
/// owner drains the messages at the start of a frame.
pub struct Inbox<M> {
    tx: Sender<M>,
    rx: Receiver<M>,
}

impl<M> Default for Inbox<M> {
    fn default() -> Self {
        let (tx, rx) = channel();
        Self { tx, rx }
    }
}

impl<M: Send + 'static> Inbox<M> {
    /// Runs `work` on a thread named `name` and sends its message; why not when the thread
    /// cannot start.
    pub fn spawn(
        &self,
        ctx: &egui::Context,
        name: &str,
        work: impl FnOnce() -> M + Send + 'static,
    ) -> Result<(), String> {
        let tx = self.tx.clone();
        let ctx = ctx.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                // The receiver is gone only when the window closed; nothing left to tell.
                let _ = tx.send(work());
                ctx.request_repaint();
            })
            .map(|_| ())
            .map_err(|e| format!("Cannot start the {name} thread: {e}"))
    }

    /// The messages that arrived since the last call.
    pub fn drain(&self) -> Vec<M> {
        self.rx.try_iter().collect()
    }
}
