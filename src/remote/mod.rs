//! Driving a GPU server from a laptop: `scalescope agent` serves jobs ([`crate::job`]) over its
//! standard input and output as newline-delimited JSON (docs/PROTOCOL.md); the client starts it
//! through the system `ssh` and runs jobs there, replaying their events into the same sinks a
//! local run feeds. [`Runner`] is the one way the command line and the app run a job: here, or
//! on a server.

pub mod agent;
pub mod client;
pub mod protocol;

use std::sync::atomic::AtomicBool;

pub use client::{Client, ConnectError, RemoteOptions};

use crate::job::{self, Event, Job, JobError};
use crate::report::Report;

/// Where jobs run.
pub enum Runner {
    /// On this machine, with these test hooks (none in a normal run).
    Local(job::TestHooks),
    /// On a server, through its agent.
    Remote(Box<Client>),
}

impl Runner {
    /// Runs `job`, sending its events to `sink` (from this machine's job, or replayed from the
    /// server's); `cancel` stops it after the step in flight.
    pub fn run(
        &mut self,
        job: &Job,
        cancel: &AtomicBool,
        sink: &mut dyn FnMut(&Event),
    ) -> Result<Report, JobError> {
        match self {
            Self::Local(hooks) => job::run_with(job, *hooks, cancel, sink),
            Self::Remote(c) => c.run(job, cancel, sink),
        }
    }

    /// Streams the live traffic where jobs run (this machine's NVML sampler, or the server's
    /// through its agent) to `sink` — the header, then a sample per interval — until `cancel`
    /// is set or the sampler ends.
    pub fn watch(
        &mut self,
        gpus: crate::model::GpuSelection,
        interval_s: crate::model::Interval,
        cancel: &AtomicBool,
        sink: &mut dyn FnMut(crate::model::traffic::LiveEvent),
    ) -> Result<(), JobError> {
        let request = job::watch::WatchRequest { gpus, interval_s };
        match self {
            Self::Local(_) => job::watch::watch(&request, cancel, sink),
            Self::Remote(c) => c.watch(&request, cancel, sink),
        }
    }

    /// The topology of `target` where jobs run (a quick check before a long job).
    pub fn topology(&mut self, target: &job::Target) -> Result<crate::model::Topology, JobError> {
        match self {
            Self::Local(_) => Ok(target.load()?),
            Self::Remote(c) => c.topology(Some(target.clone())),
        }
    }

    /// The host jobs run on, `None` for this machine.
    pub fn host(&self) -> Option<&str> {
        match self {
            Self::Local(_) => None,
            Self::Remote(c) => Some(c.host()),
        }
    }
}
