//! One loop for every command that runs a job (`bench bandwidth`, `collectives`, `scaling`,
//! `check`, `--bench`): the progress bar, the backend named once, the command's own checkpoint
//! writes and lines, and the rule that a write error cancels the job and is returned once it has
//! stopped. Each command keeps only what differs: which events it writes or prints on.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{CliError, RemoteArgs, SourceArgs};
use crate::job::{self, Event, Job, JobError};
use crate::remote::Runner;
use crate::report::Report;

/// How a job run through [`drive`] ended badly.
#[derive(Debug)]
pub enum Stopped {
    /// A checkpoint write failed: the job was cancelled (nothing more could be kept) and this is
    /// the write's error.
    Write(CliError),
    /// The job failed, or the connection to its server was lost; `report` holds what arrived.
    Job {
        error: JobError,
        report: Box<Report>,
    },
}

impl Stopped {
    /// The error to exit with: the write's, or the job's as `hint` words it.
    pub fn or_job(self, hint: impl FnOnce(JobError) -> CliError) -> CliError {
        match self {
            Self::Write(e) => e,
            Self::Job { error, .. } => hint(error),
        }
    }
}

/// Where a command prints while the progress bar runs: through the bar, which steps aside so
/// that a line never lands in the middle of it.
pub struct Terminal {
    bar: indicatif::ProgressBar,
}

impl Terminal {
    /// A line on standard error.
    pub fn note(&self, line: &str) {
        self.bar.suspend(|| crate::stderr_line!("{line}"));
    }

    /// A line on standard output.
    pub fn say(&self, line: &str) {
        self.bar.suspend(|| crate::stdout_line!("{line}"));
    }
}

/// Runs `job` on `runner` with a progress bar on standard error and returns its report.
///
/// Every event is applied to the report growing here, then handed with it to `on_event`, the
/// command's part: its checkpoint writes and its own lines. The first error `on_event` returns
/// cancels the job (through `cancel`), `on_event` is not called again, and that error is returned
/// once the job has stopped. With `announce`, the backend's description is printed when its first
/// results arrive, and the warnings that come before them (the model's assumptions) as they come.
pub fn drive(
    runner: &mut Runner,
    job: &Job,
    cancel: &AtomicBool,
    announce: bool,
    on_event: &mut dyn FnMut(&Event, &Report, &Terminal) -> Result<(), CliError>,
) -> Result<Report, Stopped> {
    let term = Terminal {
        bar: super::progress_bar(0),
    };
    let mut report = job::empty_report();
    let mut write_error = None;
    let mut announced = !announce;
    let result = runner.run(job, cancel, &mut |e| {
        job::apply(&mut report, e);
        match e {
            Event::Warning { warning } if !announced => term.note(&format!("warning: {warning}")),
            Event::Bandwidth { backend, .. } | Event::Collectives { backend, .. } if !announced => {
                announced = true;
                term.note(backend);
            }
            Event::Stage { done: false, .. } => {
                term.bar.reset();
                term.bar.set_length(0);
            }
            Event::Stage { done: true, .. } => term.bar.finish_and_clear(),
            Event::Progress { done, total, label } => {
                term.bar.set_length(*total as u64);
                term.bar.set_position(*done as u64);
                term.bar.set_message(label.clone());
            }
            _ => {}
        }
        if write_error.is_none()
            && let Err(e) = on_event(e, &report, &term)
        {
            write_error = Some(e);
            cancel.store(true, Ordering::SeqCst);
        }
    });
    term.bar.finish_and_clear();
    if let Some(e) = write_error {
        return Err(Stopped::Write(e));
    }
    result.map_err(|error| Stopped::Job {
        error,
        report: Box::new(report),
    })
}

impl SourceArgs {
    /// [`drive`] for a `bench` command: runs `job` where `remote` says, not cancellable from
    /// outside, and words a job's error with how to model a machine instead where this one
    /// could not be read ([`SourceArgs::hint`]).
    pub fn run_job(
        &self,
        remote: &RemoteArgs,
        job: &Job,
        modeled: bool,
        announce: bool,
        on_event: &mut dyn FnMut(&Event, &Report, &Terminal) -> Result<(), CliError>,
    ) -> Result<Report, CliError> {
        self.run_job_then(remote, job, modeled, announce, on_event, &mut |_| Ok(()))
    }

    /// [`SourceArgs::run_job`], and when the job fails, `on_failure` with what had arrived
    /// before the job's error is returned: the last write of a command whose checkpoints are
    /// paced ([`super::output::Pacer`]), so that a failure keeps every result. Its own write
    /// error, if any, is returned instead of the job's.
    pub fn run_job_then(
        &self,
        remote: &RemoteArgs,
        job: &Job,
        modeled: bool,
        announce: bool,
        on_event: &mut dyn FnMut(&Event, &Report, &Terminal) -> Result<(), CliError>,
        on_failure: &mut dyn FnMut(&Report) -> Result<(), CliError>,
    ) -> Result<Report, CliError> {
        let mut runner = remote.runner()?;
        drive(
            &mut runner,
            job,
            &AtomicBool::new(false),
            announce,
            on_event,
        )
        .map_err(|s| {
            // What was measured is kept; a job that stopped before any stage leaves no file.
            if let Stopped::Job { report, .. } = &s
                && report.has_results()
                && let Err(e) = on_failure(report)
            {
                return e;
            }
            s.or_job(|e| self.hint(e, modeled, remote.remote.is_some()))
        })
    }
}
