//! Background jobs for views: a named worker thread that reports over a channel, asks for a
//! repaint after every message, and stops when its cancel flag is set. Measurements never run
//! on the UI thread.

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
/// reports, after every event that adds results, the report so far as `view` makes it into
/// the view's data; then the final report, or the job's error.
pub fn spawn_job<R: Send + 'static>(
    ctx: &egui::Context,
    name: &str,
    runner: Option<SharedRunner>,
    job: crate::job::Job,
    view: fn(&crate::report::Report) -> R,
) -> Worker<R> {
    use crate::job::{self, Event};
    Worker::spawn(ctx, name, move |rep, cancel| {
        let mut report = job::empty_report();
        let mut progress = (0, 0, String::new());
        let mut sink = |e: &Event| {
            job::apply(&mut report, e);
            match e {
                Event::Progress { done, total, label } => {
                    progress = (*done, *total, label.clone());
                }
                Event::Bandwidth { .. }
                | Event::Collectives { .. }
                | Event::Scaling { .. }
                | Event::Health { .. } => rep.send(WorkerMsg::Progress {
                    done: progress.0,
                    total: progress.1,
                    label: progress.2.clone(),
                    partial: view(&report),
                }),
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
            Ok(r) => rep.send(WorkerMsg::Done(view(&r))),
            Err(e) => rep.send(WorkerMsg::Failed(e.message)),
        }
    })
}

/// What a measurement view keeps between frames besides its own choices: which machine the
/// selection belongs to, the selected GPUs, the run in flight, the last results and error.
pub struct RunState<D> {
    /// False when the topology shown is not this machine (an opened report): runs are then
    /// modeled, never measured on whatever GPUs this machine has.
    this_machine: bool,
    /// The server the topology shown belongs to: runs go there (`None`: this machine).
    pub runner: Option<SharedRunner>,
    /// The server's name, for labels.
    pub host: Option<String>,
    /// Which topology the selection belongs to (its source label).
    topo_label: String,
    pub gpus: std::collections::BTreeSet<usize>,
    pub job: Option<Worker<D>>,
    pub data: Option<D>,
    pub error: Option<String>,
}

impl<D> Default for RunState<D> {
    fn default() -> Self {
        Self {
            this_machine: true,
            runner: None,
            host: None,
            topo_label: String::new(),
            gpus: Default::default(),
            job: None,
            data: None,
            error: None,
        }
    }
}

impl<D> RunState<D> {
    /// Says whether the topology shown is this machine (measured runs allowed) or another one.
    pub fn set_this_machine(&mut self, this_machine: bool) {
        self.this_machine = this_machine;
    }

    /// Sends runs to this server (`None`: this machine).
    pub fn set_runner(&mut self, runner: Option<(SharedRunner, String)>) {
        (self.runner, self.host) = match runner {
            Some((r, h)) => (Some(r), Some(h)),
            None => (None, None),
        };
    }

    /// The machine a measurement runs on, for its button: "this machine" or the server.
    pub fn where_label(&self) -> String {
        self.host
            .as_ref()
            .map_or("this machine".to_string(), |h| h.clone())
    }

    /// The job's target: the server's (or this machine's) live GPUs when measuring, else the
    /// topology shown, modeled.
    pub fn target(&self, topology: &crate::model::Topology, measured: bool) -> crate::job::Target {
        if measured && self.runner.is_some() {
            crate::job::Target::Live
        } else {
            crate::job::Target::Topology {
                topology: Box::new(topology.clone()),
            }
        }
    }

    /// True when a run would measure this machine's GPUs rather than model `topology`.
    pub fn measures(&self, topology: &crate::model::Topology) -> bool {
        self.this_machine && matches!(topology.source, crate::model::TopologySource::Live { .. })
    }

    /// True while a run is in flight.
    pub fn running(&self) -> bool {
        self.job.as_ref().is_some_and(|j| !j.finished)
    }

    /// On a new topology, selects all its GPUs and drops results of the old one (unless a run
    /// is still filling them).
    pub fn sync_topology(&mut self, topology: &crate::model::Topology) {
        let label = topology.source.label();
        if self.topo_label != label {
            self.topo_label = label;
            self.gpus = topology.gpu_indices().into_iter().collect();
            if !self.running() {
                self.data = None;
            }
        }
    }

    /// Takes the job's new messages: partial and final results, or why it failed.
    pub fn poll(&mut self) {
        let Some(job) = &mut self.job else { return };
        for msg in job.poll() {
            match msg {
                WorkerMsg::Progress { partial, .. } => self.data = Some(partial),
                WorkerMsg::Done(d) => {
                    self.data = Some(d);
                    self.error = None;
                }
                WorkerMsg::Failed(e) => self.error = Some(e),
            }
        }
    }
}
