//! The client side of `--remote HOST`: starts `scalescope agent` on the server through the system
//! `ssh` (so keys, ssh-agent, ProxyJump and ~/.ssh/config work as for any ssh command), reads
//! its hello, and runs jobs there, replaying their events into the caller's sink. When the
//! connection drops, what arrived has already reached the sink; the caller gets an error that
//! says so.

use std::collections::VecDeque;
use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::protocol::{FromAgent, MAX_LINE, MachineHello, PROTOCOL_VERSION, ToAgent, line};
use crate::job::{Event, Job, JobError, Target};
use crate::model::traffic::LiveEvent;
use crate::model::validate::quoted;
use crate::model::{Endpoint, Topology};
use crate::report::Report;

/// What runs on the server when no `--remote-command` is given: scalescope from PATH, else the
/// copy `--remote-install` puts in ~/.cache/scalescope; exit 127 (and say so) when neither is
/// there.
pub const DEFAULT_REMOTE_COMMAND: &str = "sh -c 'if command -v scalescope >/dev/null 2>&1; then exec scalescope agent; elif [ -x \"$HOME/.cache/scalescope/scalescope\" ]; then exec \"$HOME/.cache/scalescope/scalescope\" agent; else echo \"scalescope: not installed on this server\" >&2; exit 127; fi'";

/// Where the installed copy goes on the server.
pub const INSTALL_PATH: &str = "~/.cache/scalescope/scalescope";

/// How to reach a server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RemoteOptions {
    /// `[user@]host` (or an alias of ~/.ssh/config).
    pub host: String,
    /// The ssh program and its options, split as a shell would (default `ssh`).
    pub ssh: Option<String>,
    /// What runs on the server instead of [`DEFAULT_REMOTE_COMMAND`], e.g.
    /// `/opt/scalescope/bin/scalescope agent`.
    pub command: Option<String>,
    /// How long the agent may stay silent about a request before the client gives up
    /// ([`SILENCE_LIMIT`] when `None`; tests pass a shorter one).
    pub silence_limit: Option<Duration>,
}

/// How long the agent may say nothing about a request in flight before the client ends it with
/// an error. The agent sends `alive` every [`super::protocol::ALIVE_EVERY`] (10 s) while a job
/// runs, whatever the job is doing, so 60 s is six missed beats: a server that is stopped,
/// wedged or lost behind a link ssh still holds open (ssh's own keepalive, 15 s × 3, sees only
/// a dead link). A topology answer needs at most one `nvidia-smi` call there, well within it.
pub const SILENCE_LIMIT: Duration = Duration::from_secs(60);

/// How long the client waits for the agent's hello after ssh starts: ssh's own connection and
/// authentication, a login banner and the agent's first NVML reading all come before it.
pub const HELLO_LIMIT: Duration = Duration::from_secs(90);

/// Why no connection could be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConnectError {
    /// The server has no scalescope.
    #[error(
        "scalescope is not installed on {host} ({detail}); copy this one there with --remote-install (into {INSTALL_PATH}), or name it with --remote-command"
    )]
    NotInstalled { host: String, detail: String },
    /// ssh itself failed (host unknown, refused, authentication).
    #[error("ssh to {host} failed: {detail}")]
    Ssh { host: String, detail: String },
    /// Something answered, but not a scalescope agent this client understands.
    #[error("{host}: {detail}")]
    Protocol { host: String, detail: String },
    /// Bad options (an ssh command that cannot be split, an empty host).
    #[error("{0}")]
    Options(String),
}

impl ConnectError {
    /// The exit code: 2 for bad options, 1 for everything the network or server did.
    pub fn code(&self) -> i32 {
        match self {
            Self::Options(_) => 2,
            _ => 1,
        }
    }
}

impl From<ConnectError> for JobError {
    fn from(e: ConnectError) -> Self {
        JobError {
            code: e.code(),
            message: e.to_string(),
            no_driver: false,
        }
    }
}

/// A connection to one server's agent.
pub struct Client {
    host: String,
    child: Child,
    stdin: Option<ChildStdin>,
    /// Lines from the agent's stdout; `None` once it ended.
    rx: Receiver<Option<String>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    hello: MachineHello,
    /// The request kinds the agent named in its hello (`watch` since it could).
    jobs: Vec<String>,
    next_id: u64,
    silence_limit: Duration,
}

fn ssh_argv(opts: &RemoteOptions) -> Result<Vec<String>, ConnectError> {
    // No host name, user name or ssh_config alias holds a space or a control character; such
    // a value is a mistake or an attempt to pass ssh something else.
    if opts.host.trim().is_empty()
        || opts.host.starts_with('-')
        || opts
            .host
            .chars()
            .any(|c| c.is_whitespace() || crate::model::validate::unsafe_on_terminal(c))
    {
        return Err(ConnectError::Options(format!(
            "--remote: {} is not a host",
            quoted(&opts.host)
        )));
    }
    let ssh = opts.ssh.as_deref().unwrap_or("ssh");
    let mut argv = shell_words::split(ssh)
        .map_err(|e| ConnectError::Options(format!("--ssh {}: {e}", quoted(ssh))))?;
    if argv.is_empty() {
        return Err(ConnectError::Options("--ssh: empty command".into()));
    }
    // A `--` of the user's own would make our options below the destination.
    if argv[1..].iter().any(|w| w == "--") {
        return Err(ConnectError::Options(format!(
            "--ssh {}: holds \"--\"; give only the program and its options (the host comes from --remote)",
            quoted(ssh)
        )));
    }
    argv.extend(
        ["-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=15"]
            .iter()
            .map(|s| s.to_string()),
    );
    // OpenSSH goes back to reading options after the destination ("ssh host -V" prints its
    // version) unless `--` ended them: without it a remote command such as
    // `-oProxyCommand=…` would run a local command. After `--` the destination and every word
    // after it are the destination and the remote command, whatever they look like.
    argv.push("--".into());
    argv.push(opts.host.clone());
    Ok(argv)
}

/// The most of a remote stderr line an error quotes, in characters.
const STDERR_LINE_MAX_CHARS: usize = 400;

fn tail_line(stderr: &Mutex<VecDeque<String>>) -> String {
    stderr
        .lock()
        .ok()
        .and_then(|t| {
            t.iter()
                .rev()
                .map(|l| l.trim())
                .find(|l| !l.is_empty())
                // The whole line (ssh's errors run past a quote's 60 characters: "Could not
                // resolve hostname …: Name or service not known" was cut in the middle), escaped
                // for the terminal, bounded.
                .map(|l| {
                    let cut: String = l.chars().take(STDERR_LINE_MAX_CHARS).collect();
                    crate::model::validate::for_terminal(&cut)
                })
        })
        .unwrap_or_default()
}

impl Client {
    /// Starts the agent on `opts.host` and reads its hello (within [`HELLO_LIMIT`]).
    pub fn connect(opts: &RemoteOptions) -> Result<Client, ConnectError> {
        let mut argv = ssh_argv(opts)?;
        argv.push(
            opts.command
                .clone()
                .unwrap_or_else(|| DEFAULT_REMOTE_COMMAND.to_string()),
        );
        let host = opts.host.clone();
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| ConnectError::Ssh {
                host: host.clone(),
                detail: format!("cannot start {}: {e}", argv[0]),
            })?;
        let (tx, rx) = channel();
        let stdout = child.stdout.take();
        std::thread::Builder::new()
            .name("scalescope-remote-out".into())
            .spawn(move || {
                if let Some(o) = stdout {
                    crate::lines::read_lines(o, MAX_LINE, &mut |l, _| {
                        let _ = tx.send(Some(l));
                    });
                }
                let _ = tx.send(None);
            })
            .map_err(|e| ConnectError::Ssh {
                host: host.clone(),
                detail: format!("cannot start a reader thread: {e}"),
            })?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(e) = child.stderr.take() {
            let tail = stderr.clone();
            let _ = std::thread::Builder::new()
                .name("scalescope-remote-err".into())
                .spawn(move || {
                    crate::lines::read_lines(e, 4096, &mut |l, _| {
                        if let Ok(mut t) = tail.lock() {
                            if t.len() == 20 {
                                t.pop_front();
                            }
                            t.push_back(l);
                        }
                    })
                });
        }
        let stdin = child.stdin.take();
        let mut client = Client {
            host,
            child,
            stdin,
            rx,
            stderr,
            hello: MachineHello {
                hostname: None,
                os: String::new(),
                arch: String::new(),
                gpus: Vec::new(),
                driver: None,
                live: false,
                reason: None,
            },
            jobs: Vec::new(),
            next_id: 1,
            silence_limit: opts.silence_limit.unwrap_or(SILENCE_LIMIT),
        };
        (client.hello, client.jobs) = client.read_hello()?;
        Ok(client)
    }

    fn read_hello(&mut self) -> Result<(MachineHello, Vec<String>), ConnectError> {
        // A shorter silence limit (tests, fuzzing) shortens the wait for the hello too.
        let limit = if self.silence_limit < SILENCE_LIMIT {
            self.silence_limit
        } else {
            HELLO_LIMIT
        };
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Some(l)) => {
                    let value = serde_json::from_str::<serde_json::Value>(l.trim());
                    let says_hello = value
                        .as_ref()
                        .is_ok_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("hello"));
                    let parsed = value.and_then(|mut v| {
                        escape_strings(&mut v);
                        serde_json::from_value::<FromAgent>(v)
                    });
                    match parsed {
                        Ok(FromAgent::Hello {
                            protocol,
                            machine,
                            jobs,
                            ..
                        }) if protocol == PROTOCOL_VERSION => return Ok((machine, jobs)),
                        Ok(FromAgent::Hello { protocol, .. }) => {
                            return Err(ConnectError::Protocol {
                                host: self.host.clone(),
                                detail: format!(
                                    "its agent speaks protocol {protocol}, this scalescope {PROTOCOL_VERSION}: use the same version on both sides"
                                ),
                            });
                        }
                        // A hello that cannot be read is not chatter to wait past.
                        Err(e) if says_hello => {
                            return Err(ConnectError::Protocol {
                                host: self.host.clone(),
                                detail: format!("its hello cannot be read ({e})"),
                            });
                        }
                        // A login banner or other chatter before the hello.
                        _ => continue,
                    }
                }
                Ok(None) => return Err(self.ended_before_hello()),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ConnectError::Protocol {
                        host: self.host.clone(),
                        detail: format!(
                            "no answer from scalescope agent within {} s",
                            limit.as_secs_f64()
                        ),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.ended_before_hello()),
            }
        }
    }

    fn ended_before_hello(&mut self) -> ConnectError {
        let status = self.child.wait().ok().and_then(|s| s.code());
        // The stderr reader may still be collecting the last lines.
        std::thread::sleep(Duration::from_millis(100));
        let detail = tail_line(&self.stderr);
        let host = self.host.clone();
        match status {
            Some(127) => ConnectError::NotInstalled {
                host,
                detail: if detail.is_empty() {
                    "command not found".into()
                } else {
                    detail
                },
            },
            Some(255) => ConnectError::Ssh { host, detail },
            code => ConnectError::Protocol {
                host,
                detail: format!(
                    "the agent ended before saying hello (exit {}){}",
                    code.map_or("by a signal".into(), |c| c.to_string()),
                    if detail.is_empty() {
                        String::new()
                    } else {
                        format!(": {detail}")
                    }
                ),
            },
        }
    }

    /// The server's name as given.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// What the agent said about its machine.
    pub fn machine(&self) -> &MachineHello {
        &self.hello
    }

    fn send(&mut self, msg: &ToAgent) -> Result<(), JobError> {
        let host = self.host.clone();
        let stdin = self.stdin.as_mut().ok_or_else(|| lost(&host, ""))?;
        stdin
            .write_all(line(msg).as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|e| lost(&host, &e.to_string()))
    }

    fn lost_error(&mut self, events: usize) -> JobError {
        std::thread::sleep(Duration::from_millis(100));
        let why = tail_line(&self.stderr);
        let mut e = lost(&self.host, &why);
        if events > 0 {
            e.message
                .push_str(&format!(" — {events} event(s) had arrived and are kept"));
        }
        e
    }

    /// The next line the agent sent, parsed and with every string escaped for the terminal
    /// ([`escape_strings`]); `None` when nothing came within 200 ms. An error once the agent
    /// has been silent about request `id` for the silence limit since `heard` (the last line
    /// about it), when the connection is lost, or when a line is not JSON.
    fn receive(
        &mut self,
        id: &serde_json::Value,
        heard: &mut Instant,
        events: usize,
    ) -> Result<Option<serde_json::Value>, JobError> {
        let l = match self.rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(l)) => l,
            Err(RecvTimeoutError::Timeout) => {
                if heard.elapsed() < self.silence_limit {
                    return Ok(None);
                }
                let mut e = JobError::machine(format!(
                    "{}: the agent said nothing for {} s (it sends a sign of life every {} s while it works): given up",
                    self.host,
                    self.silence_limit.as_secs_f64(),
                    super::protocol::ALIVE_EVERY.as_secs()
                ));
                if events > 0 {
                    e.message
                        .push_str(&format!(" — {events} event(s) had arrived and are kept"));
                }
                return Err(e);
            }
            Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                return Err(self.lost_error(events));
            }
        };
        let mut v: serde_json::Value = serde_json::from_str(l.trim()).map_err(|e| {
            JobError::machine(format!(
                "{}: the agent sent what this client cannot read ({e}): {}",
                self.host,
                quoted(&l)
            ))
        })?;
        escape_strings(&mut v);
        if v.get("id") == Some(id) {
            *heard = Instant::now();
        }
        Ok(Some(v))
    }

    /// `v` as a message, or the error that names what the client could not read.
    fn message(&self, v: serde_json::Value) -> Result<FromAgent, JobError> {
        let text = v.to_string();
        serde_json::from_value(v).map_err(|e| {
            JobError::machine(format!(
                "{}: the agent sent what this client cannot read ({e}): {}",
                self.host,
                quoted(&text)
            ))
        })
    }

    /// Streams the server's live traffic (`request`) to `sink` until `cancel` is set or the
    /// server's sampler ends. Every header and sample is held to the rules a recording file is
    /// ([`crate::model::traffic::check_sample`]) before it reaches `sink`.
    pub fn watch(
        &mut self,
        request: &crate::job::watch::WatchRequest,
        cancel: &AtomicBool,
        sink: &mut dyn FnMut(LiveEvent),
    ) -> Result<(), JobError> {
        if !self.jobs.iter().any(|j| j == "watch") {
            return Err(JobError::machine(format!(
                "{}: its scalescope agent cannot watch live traffic (an older version): install this one there with --remote-install",
                self.host
            )));
        }
        let id = serde_json::Value::from(self.next_id);
        self.next_id += 1;
        self.send(&ToAgent::Watch {
            id: id.clone(),
            request: request.clone(),
        })?;
        let mut cancel_sent = false;
        let mut samples = 0;
        let mut header: Option<crate::model::traffic::WatchHeader> = None;
        let mut heard = Instant::now();
        loop {
            let Some(v) = self.next_about(&id, cancel, &mut cancel_sent, &mut heard, samples)?
            else {
                continue;
            };
            let refused = |host: &str, why: String| {
                let mut e = JobError::machine(format!(
                    "{host}: the agent sent a sample this client refuses ({why})"
                ));
                if samples > 0 {
                    e.message
                        .push_str(&format!(" — the {samples} sample(s) before it are kept"));
                }
                e
            };
            match self.message(v)? {
                FromAgent::Live { event, .. } => match *event {
                    LiveEvent::Header(h) => {
                        crate::model::traffic::check_header(&h)
                            .map_err(|why| refused(&self.host, why))?;
                        header = Some((*h).clone());
                        sink(LiveEvent::Header(h));
                    }
                    LiveEvent::Sample(s) => {
                        let Some(h) = &header else {
                            return Err(refused(&self.host, "a sample before the header".into()));
                        };
                        crate::model::traffic::check_sample(&s, h)
                            .map_err(|why| refused(&self.host, why))?;
                        samples += 1;
                        sink(LiveEvent::Sample(s));
                    }
                    LiveEvent::End { error } => {
                        return match error {
                            None => Ok(()),
                            Some(e) => Err(JobError::machine(format!("on {}: {e}", self.host))),
                        };
                    }
                },
                m @ (FromAgent::Failed { .. } | FromAgent::Error { .. }) => {
                    return Err(self.ended(m));
                }
                _ => {}
            }
        }
    }

    /// The next message about request `id` (`None` while nothing came), having told the agent
    /// to cancel it once `cancel` is set; `received` counts what arrived, for errors.
    fn next_about(
        &mut self,
        id: &serde_json::Value,
        cancel: &AtomicBool,
        cancel_sent: &mut bool,
        heard: &mut Instant,
        received: usize,
    ) -> Result<Option<serde_json::Value>, JobError> {
        if cancel.load(Ordering::Relaxed) && !*cancel_sent {
            *cancel_sent = true;
            self.send(&ToAgent::Cancel { id: id.clone() })?;
        }
        Ok(self.receive(id, heard, received)?.filter(|v| is_for(v, id)))
    }

    /// The error a `failed` or `error` answer ends a request with: this client's exit code (2
    /// only where the server judged the request itself bad), never the number the server named.
    fn ended(&self, message: FromAgent) -> JobError {
        match message {
            FromAgent::Failed { error, code, .. } => JobError {
                code: if code == 2 { 2 } else { 1 },
                message: format!("on {}: {error}", self.host),
                no_driver: false,
            },
            FromAgent::Error { error, .. } => JobError::input(format!("{}: {error}", self.host)),
            _ => JobError::machine(format!("{}: the agent ended the request", self.host)),
        }
    }

    /// The server's topology (its live machine, or `target` there).
    pub fn topology(&mut self, target: Option<Target>) -> Result<Topology, JobError> {
        let id = serde_json::Value::from(self.next_id);
        self.next_id += 1;
        self.send(&ToAgent::Topology {
            id: id.clone(),
            target,
        })?;
        let mut heard = Instant::now();
        loop {
            let Some(v) = self.receive(&id, &mut heard, 0)? else {
                continue;
            };
            if !is_for(&v, &id) {
                continue;
            }
            match self.message(v)? {
                FromAgent::Topology { topology, .. } => return Ok(*topology),
                FromAgent::Error { error, .. } => {
                    return Err(JobError::machine(format!("{}: {error}", self.host)));
                }
                _ => {}
            }
        }
    }

    /// Runs `job` on the server, sending its events to `sink` as they arrive; sets `cancel` to
    /// stop it there after the step in flight (the report then says `cancelled`).
    ///
    /// Nothing the server sends decides more than its own figures: every string is escaped for
    /// the terminal, every figure is held to the rule a report file is ([`crate::report`]: no
    /// negative or non-finite number) before it reaches `sink`, and a failure there is this
    /// client's error with this client's exit code (1, or 2 where the server refused the job
    /// as input), never the number the server named.
    pub fn run(
        &mut self,
        job: &Job,
        cancel: &AtomicBool,
        sink: &mut dyn FnMut(&Event),
    ) -> Result<Report, JobError> {
        let id = serde_json::Value::from(self.next_id);
        self.next_id += 1;
        self.send(&ToAgent::Run {
            id: id.clone(),
            job: Box::new(job.clone()),
        })?;
        let mut cancel_sent = false;
        let mut events = 0;
        let mut order = EventOrder::default();
        let mut heard = Instant::now();
        loop {
            let Some(v) = self.next_about(&id, cancel, &mut cancel_sent, &mut heard, events)?
            else {
                continue;
            };
            let figures = match v.get("type").and_then(|t| t.as_str()) {
                Some("event") => v
                    .get("event")
                    .map(|e| crate::report::check_section_figures(e, "event")),
                Some("done" | "cancelled") => {
                    v.get("report").map(crate::report::check_report_figures)
                }
                _ => None,
            };
            if let Some(Err(e)) = figures {
                let mut err = JobError::machine(format!(
                    "{}: the agent sent a figure this client refuses ({e})",
                    self.host
                ));
                if events > 0 {
                    err.message
                        .push_str(&format!(" — the {events} event(s) before it are kept"));
                }
                return Err(err);
            }
            match self.message(v)? {
                FromAgent::Event { event, .. } => {
                    if let Err(why) = order.admit(&event) {
                        let mut err = JobError::machine(format!(
                            "{}: the agent broke the protocol: {why}",
                            self.host
                        ));
                        if events > 0 {
                            err.message
                                .push_str(&format!(" — the {events} event(s) before it are kept"));
                        }
                        return Err(err);
                    }
                    events += 1;
                    sink(&event);
                }
                FromAgent::Done { report, .. } => return Ok(*report),
                FromAgent::Cancelled { report, .. } => {
                    let mut r = *report;
                    r.cancelled = true;
                    return Ok(r);
                }
                // The server's number is not an exit code here: it only says whether the
                // server judged the job itself bad (2) or failed running it.
                m @ (FromAgent::Failed { .. } | FromAgent::Error { .. }) => {
                    return Err(self.ended(m));
                }
                _ => {}
            }
        }
    }
}

/// What a job's events have said so far, to hold a server to saying each thing once: a job
/// starts once, a stage begins and ends once, a result cell arrives once (a scaling or health
/// section replaces the one before, so it may come again). A server that repeats them (a 2-GPU run sent 86,671 bandwidth results, each
/// repeat printing its stage's line again) is refused instead of followed.
#[derive(Default)]
struct EventOrder {
    started: bool,
    stages: std::collections::HashSet<(crate::job::Stage, bool)>,
    bandwidth: std::collections::HashSet<(crate::model::TestId, Endpoint, Endpoint, u64)>,
    collectives: std::collections::HashSet<String>,
    soak_started: bool,
}

impl EventOrder {
    /// `Ok` when `e` says something new; else what it repeats.
    fn admit(&mut self, e: &Event) -> Result<(), String> {
        let fresh = match e {
            Event::Started { .. } => !std::mem::replace(&mut self.started, true),
            Event::Stage { stage, done, .. } => self.stages.insert((*stage, *done)),
            Event::Bandwidth { results, .. } => results
                .iter()
                .all(|r| self.bandwidth.insert((r.test, r.src, r.dst, r.bytes))),
            Event::Collectives { results, .. } => results.iter().all(|r| {
                self.collectives.insert(format!(
                    "{:?} {:?} {:?} {} {:?} {}",
                    r.op, r.algo, r.gpus, r.bytes, r.dtype, r.in_place
                ))
            }),
            Event::SoakStarted { .. } => !std::mem::replace(&mut self.soak_started, true),
            Event::Scaling { .. }
            | Event::Health { .. }
            | Event::SoakSamples { .. }
            | Event::Progress { .. }
            | Event::Warning { .. }
            | Event::Note { .. } => true,
        };
        if fresh {
            Ok(())
        } else {
            Err(format!("it sent {} a second time", event_name(e)))
        }
    }
}

/// An event as the protocol names it, for an error.
fn event_name(e: &Event) -> String {
    match e {
        Event::Started { .. } => "the job's start".into(),
        Event::Stage { stage, done, .. } => format!(
            "the {} of stage {}",
            if *done { "end" } else { "start" },
            serde_json::to_value(stage)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ),
        Event::Bandwidth { .. } => "a bandwidth result".into(),
        Event::Collectives { .. } => "a collectives result".into(),
        Event::SoakStarted { .. } => "the soak's start".into(),
        Event::Scaling { .. }
        | Event::SoakSamples { .. }
        | Event::Health { .. }
        | Event::Progress { .. }
        | Event::Warning { .. }
        | Event::Note { .. } => "an event".into(),
    }
}

/// Whether message `v` answers request `id` (an `error` without an id answers any).
fn is_for(v: &serde_json::Value, id: &serde_json::Value) -> bool {
    match v.get("id") {
        Some(i) if i == id => true,
        Some(serde_json::Value::Null) | None => {
            v.get("type").and_then(|t| t.as_str()) == Some("error")
        }
        _ => false,
    }
}

/// Escapes every string and key of a server's message for the terminal
/// ([`crate::model::validate::for_terminal`]) as it arrives, so that no print of a hostname,
/// reason, check detail or name anywhere after it can move the cursor, clear the screen, set the
/// title or clipboard, or start a line of its own.
fn escape_strings(v: &mut serde_json::Value) {
    use crate::model::validate::{for_terminal, unsafe_on_terminal};
    match v {
        serde_json::Value::String(s) if s.chars().any(unsafe_on_terminal) => {
            *s = for_terminal(s);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(escape_strings),
        serde_json::Value::Object(m) => {
            if m.keys().any(|k| k.chars().any(unsafe_on_terminal)) {
                let old = std::mem::take(m);
                for (k, mut x) in old {
                    escape_strings(&mut x);
                    m.insert(for_terminal(&k), x);
                }
            } else {
                m.values_mut().for_each(escape_strings);
            }
        }
        _ => {}
    }
}

fn lost(host: &str, why: &str) -> JobError {
    JobError::machine(format!(
        "the connection to {host} was lost{}",
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({why})")
        }
    ))
}

impl Drop for Client {
    fn drop(&mut self) {
        // End of input ends the agent (it cancels a running job and releases the GPUs).
        drop(self.stdin.take());
        if crate::process::wait_within(&mut self.child, Duration::from_secs(5)).is_some() {
            return;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies this binary to the server (same OS and architecture only) into [`INSTALL_PATH`],
/// where [`DEFAULT_REMOTE_COMMAND`] finds it. Returns what was done, in words.
pub fn install(opts: &RemoteOptions) -> Result<String, ConnectError> {
    let run = |remote: &str, input: Option<&std::path::Path>| -> Result<String, ConnectError> {
        let mut argv = ssh_argv(opts)?;
        argv.push(remote.to_string());
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match input {
            Some(p) => {
                let f = std::fs::File::open(p).map_err(|e| {
                    ConnectError::Options(format!("cannot read {}: {e}", p.display()))
                })?;
                cmd.stdin(Stdio::from(f));
            }
            None => {
                cmd.stdin(Stdio::null());
            }
        }
        let out = cmd.output().map_err(|e| ConnectError::Ssh {
            host: opts.host.clone(),
            detail: format!("cannot start {}: {e}", argv[0]),
        })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(ConnectError::Ssh {
                host: opts.host.clone(),
                detail: err.lines().last().unwrap_or("failed").trim().to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let there = run("uname -sm", None)?;
    let here = format!(
        "{} {}",
        if std::env::consts::OS == "linux" {
            "Linux"
        } else {
            std::env::consts::OS
        },
        std::env::consts::ARCH
    );
    if there != here {
        return Err(ConnectError::Protocol {
            host: opts.host.clone(),
            detail: format!(
                "the server is {} and this binary {here}: build scalescope for it (scripts/build-portable.sh) and name it with --remote-command",
                quoted(&there)
            ),
        });
    }
    let exe = std::env::current_exe()
        .map_err(|e| ConnectError::Options(format!("cannot find this program's binary: {e}")))?;
    run(
        "mkdir -p \"$HOME/.cache/scalescope\" && cat > \"$HOME/.cache/scalescope/scalescope.part\" && chmod 755 \"$HOME/.cache/scalescope/scalescope.part\" && mv -f \"$HOME/.cache/scalescope/scalescope.part\" \"$HOME/.cache/scalescope/scalescope\"",
        Some(&exe),
    )?;
    Ok(format!(
        "copied {} ({here}) to {}:{INSTALL_PATH}",
        exe.display(),
        opts.host
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ssh_error_line_is_kept_whole_and_inert() {
        let line = "ssh: Could not resolve hostname gpu-server-that-is-not-there.example: Name or service not known";
        let tail = Mutex::new(VecDeque::from([line.to_string(), "  ".to_string()]));
        assert_eq!(tail_line(&tail), line);
        let tail = Mutex::new(VecDeque::from([
            "x\u{1b}[31m".to_string() + &"y".repeat(1000)
        ]));
        let t = tail_line(&tail);
        assert!(
            !t.contains('\u{1b}') && t.starts_with("x\\u{1b}[31m"),
            "{t}"
        );
        assert!(t.chars().count() < 420, "{}", t.len());
    }

    #[test]
    fn ssh_arguments_split_like_a_shell_and_refuse_bad_hosts() {
        let opts = RemoteOptions {
            host: "me@gpu01".into(),
            ssh: Some("ssh -p 2222 -i 'my key'".into()),
            ..Default::default()
        };
        let argv = ssh_argv(&opts).unwrap();
        assert_eq!(&argv[..5], &["ssh", "-p", "2222", "-i", "my key"]);
        assert_eq!(argv.last().unwrap(), "me@gpu01");
        for bad in [
            "",
            "-oProxyCommand=x",
            "host -oProxyCommand=x",
            "host\n-V",
            "a\u{2028}b",
            "\u{1b}]0;x\u{7}",
        ] {
            let e = ssh_argv(&RemoteOptions {
                host: bad.into(),
                ..Default::default()
            })
            .unwrap_err();
            assert_eq!(e.code(), 2, "{e}");
            assert!(!e.to_string().chars().any(|c| c.is_control()), "{e}");
        }
        let e = ssh_argv(&RemoteOptions {
            host: "h".into(),
            ssh: Some("ssh 'unclosed".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().starts_with("--ssh"), "{e}");
    }
}
