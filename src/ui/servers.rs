//! Servers driven over ssh: connecting (after copying this binary there when asked), running the
//! quick suite there, the recent hosts, and their part of the Sources panel. A connected server
//! is a source like this machine: its jobs run there through its connection.

use std::sync::{Arc, Mutex};

use eframe::egui::{self, RichText, Ui};

use super::action::{Action, SourceKey};
use super::jobs::{Inbox, SharedRunner};
use super::machine::Machine;
use super::palette::{self, SourceBadge};
use super::widgets;
use crate::model::Topology;
use crate::remote::{Client, RemoteOptions, Runner};
use crate::report::Report;

/// How many servers "recent" remembers.
pub const RECENT_HOSTS: usize = 8;

/// A server the app connected to (or tries to).
pub struct ServerEntry {
    /// `[user@]host` as typed.
    pub host: String,
    pub state: ServerState,
}

/// Where a server's connection stands.
pub enum ServerState {
    Connecting,
    /// Connected: jobs go through `runner`; `machine` is the server's live machine.
    Ready {
        runner: SharedRunner,
        machine: Box<Machine>,
        /// A quick suite is running there (its report will appear under Reports).
        suite_running: bool,
    },
    /// Why not; `not_installed`: the server has no scalescope (the app offers to copy it).
    Failed {
        reason: String,
        not_installed: bool,
    },
}

/// A connection attempt's outcome: the client and the server's topology, or why not (and
/// whether scalescope is missing there).
type Connected = Result<(Box<Client>, Box<Topology>), (String, bool)>;

/// What the connection workers send back.
enum Msg {
    Connected {
        host: String,
        result: Connected,
    },
    Suite {
        host: String,
        result: Result<Box<Report>, String>,
    },
}

/// What the shell does after a server's worker reported.
pub enum ServerEvent {
    /// The n-th server is connected: show it and remember its host.
    Ready(usize),
    /// A quick suite's report: open it under Reports.
    SuiteReport(Box<Report>),
    /// A quick suite failed, in words for the error line.
    Failed(String),
}

/// The servers connected to (or tried), and the "Connect to server…" field.
#[derive(Default)]
pub struct Servers {
    list: Vec<ServerEntry>,
    /// The "Connect to server…" field.
    field: String,
    /// The ssh and remote commands every connection uses (from `--ssh`, `--remote-command`).
    defaults: RemoteOptions,
    /// The server named by `--remote`, connected to on the first frame.
    connect_on_start: Option<String>,
    inbox: Inbox<Msg>,
}

impl Servers {
    /// Takes the ssh settings of `--remote` for every connection, and connects to its host on
    /// the first frame.
    pub fn remote_at_start(&mut self, remote: Option<RemoteOptions>) {
        if let Some(r) = remote {
            self.connect_on_start = Some(r.host.clone());
            self.defaults = r;
        }
    }

    /// The server `--remote` named, once (to connect on the first frame).
    pub fn take_start(&mut self) -> Option<String> {
        self.connect_on_start.take()
    }

    /// The servers connected to (or tried).
    pub fn list(&self) -> &[ServerEntry] {
        &self.list
    }

    /// The n-th server's machine, when connected.
    pub fn machine(&self, i: usize) -> Option<&Machine> {
        match &self.list.get(i)?.state {
            ServerState::Ready { machine, .. } => Some(machine),
            _ => None,
        }
    }

    /// The n-th server's machine, when connected.
    pub fn machine_mut(&mut self, i: usize) -> Option<&mut Machine> {
        match &mut self.list.get_mut(i)?.state {
            ServerState::Ready { machine, .. } => Some(machine),
            _ => None,
        }
    }

    /// Every connected server's machine (their runs are polled every frame).
    pub fn machines_mut(&mut self) -> impl Iterator<Item = &mut Machine> {
        self.list.iter_mut().filter_map(|s| match &mut s.state {
            ServerState::Ready { machine, .. } => Some(&mut **machine),
            _ => None,
        })
    }

    /// Starts connecting to `host` on a worker thread (after copying this binary there when
    /// `install`); the server shows at once, connecting.
    pub fn connect(
        &mut self,
        ctx: &egui::Context,
        host: &str,
        install: bool,
    ) -> Result<(), String> {
        let host = host.trim().to_string();
        if host.is_empty() {
            return Ok(());
        }
        let entry = ServerEntry {
            host: host.clone(),
            state: ServerState::Connecting,
        };
        match self.list.iter().position(|s| s.host == host) {
            Some(i) => self.list[i] = entry,
            None => self.list.push(entry),
        }
        let opts = RemoteOptions {
            host: host.clone(),
            ..self.defaults.clone()
        };
        self.inbox.spawn(ctx, "scalescope-connect", move || {
            let result = connect_and_read(&opts, install);
            Msg::Connected { host, result }
        })
    }

    /// Copies this binary to the n-th server, then connects.
    pub fn install_on(&mut self, ctx: &egui::Context, i: usize) -> Result<(), String> {
        match self.list.get(i).map(|s| s.host.clone()) {
            Some(host) => self.connect(ctx, &host, true),
            None => Ok(()),
        }
    }

    /// Adds a connected server (the app connects on a worker thread; tests pass a client).
    /// Returns its index.
    pub fn add(&mut self, host: String, client: Box<Client>, topology: Box<Topology>) -> usize {
        self.on_connected(host, Ok((client, topology)))
    }

    fn on_connected(&mut self, host: String, result: Connected) -> usize {
        let state = match result {
            Ok((client, topology)) => {
                let runner: SharedRunner = Arc::new(Mutex::new(Runner::Remote(client)));
                let machine = Machine::new(*topology, Some((runner.clone(), host.clone())));
                ServerState::Ready {
                    runner,
                    machine: Box::new(machine),
                    suite_running: false,
                }
            }
            Err((reason, not_installed)) => ServerState::Failed {
                reason,
                not_installed,
            },
        };
        match self.list.iter().position(|s| s.host == host) {
            Some(i) => {
                self.list[i].state = state;
                i
            }
            None => {
                self.list.push(ServerEntry { host, state });
                self.list.len() - 1
            }
        }
    }

    /// Runs the quick suite on the n-th server; its report comes back as a
    /// [`ServerEvent::SuiteReport`].
    pub fn run_suite_on(&mut self, ctx: &egui::Context, i: usize) -> Result<(), String> {
        let Some(ServerEntry {
            host,
            state:
                ServerState::Ready {
                    runner,
                    suite_running,
                    ..
                },
        }) = self.list.get_mut(i)
        else {
            return Ok(());
        };
        if *suite_running {
            return Ok(());
        }
        *suite_running = true;
        let (runner, host) = (runner.clone(), host.clone());
        let job = crate::job::Job::Suite {
            target: crate::job::Target::Live,
            options: crate::job::SuiteOptions {
                stages: crate::job::Stage::ALL.to_vec(),
                ..Default::default()
            },
        };
        self.inbox.spawn(ctx, "scalescope-server-suite", move || {
            let cancel = std::sync::atomic::AtomicBool::new(false);
            let result = match runner.lock() {
                Ok(mut r) => r
                    .run(&job, &cancel, &mut |_| {})
                    .map(Box::new)
                    .map_err(|e| e.message),
                Err(_) => Err("the server connection is broken".to_string()),
            };
            Msg::Suite { host, result }
        })
    }

    /// What the connection and suite workers reported since the last frame.
    pub fn poll(&mut self) -> Vec<ServerEvent> {
        let mut events = Vec::new();
        for msg in self.inbox.drain() {
            match msg {
                Msg::Connected { host, result } => {
                    let ready = result.is_ok();
                    let i = self.on_connected(host, result);
                    if ready {
                        events.push(ServerEvent::Ready(i));
                    }
                }
                Msg::Suite { host, result } => {
                    if let Some(ServerEntry {
                        state: ServerState::Ready { suite_running, .. },
                        ..
                    }) = self.list.iter_mut().find(|s| s.host == host)
                    {
                        *suite_running = false;
                    }
                    events.push(match result {
                        Ok(r) => ServerEvent::SuiteReport(r),
                        Err(e) => ServerEvent::Failed(format!("Suite on {host} failed: {e}")),
                    });
                }
            }
        }
        events
    }

    /// The Servers part of the Sources panel: each server with its state, and "Connect to
    /// server…" with the `recent` hosts.
    pub fn section(
        &mut self,
        ui: &mut Ui,
        selected: &SourceKey,
        recent: &[String],
        actions: &mut Vec<Action>,
    ) {
        ui.label(RichText::new("Servers (over ssh)").weak());
        for (i, s) in self.list.iter().enumerate() {
            match &s.state {
                ServerState::Connecting => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label(format!("{} (connecting…)", s.host));
                    });
                }
                ServerState::Ready {
                    machine,
                    suite_running,
                    ..
                } => {
                    let selected = *selected == SourceKey::Server(i);
                    ready_entry(ui, i, &s.host, &machine.report.topology, selected, actions);
                    ready_actions(ui, i, &s.host, *suite_running, actions);
                }
                ServerState::Failed {
                    reason,
                    not_installed,
                } => failed_entry(ui, i, &s.host, reason, *not_installed, actions),
            }
        }
        self.connect_field(ui, actions);
        let recent: Vec<&String> = recent
            .iter()
            .filter(|h| !self.list.iter().any(|s| &s.host == *h))
            .collect();
        if !recent.is_empty() {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new("recent:").size(11.5).weak());
                for h in recent {
                    if ui.small_button(h.as_str()).clicked() {
                        actions.push(Action::Connect(h.clone()));
                    }
                }
            });
        }
    }

    /// The `user@host` field and its Connect button.
    fn connect_field(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.horizontal(|ui| {
            let field = ui.add(
                egui::TextEdit::singleline(&mut self.field)
                    .hint_text("user@host")
                    .desired_width(130.0),
            );
            let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            let ok = !self.field.trim().is_empty();
            let clicked = ui
                .add_enabled(ok, egui::Button::new("Connect to server…"))
                .on_hover_text(
                    "Runs `scalescope agent` there through your ssh (keys, ssh-agent, ~/.ssh/config)",
                )
                .clicked();
            if ok && (clicked || enter) {
                actions.push(Action::Connect(self.field.trim().to_string()));
            }
        });
    }
}

/// Connects (after copying this binary there when `install`) and reads the server's machine.
fn connect_and_read(opts: &RemoteOptions, install: bool) -> Connected {
    if install {
        crate::remote::client::install(opts).map_err(|e| (e.to_string(), false))?;
    }
    let mut client = Client::connect(opts).map_err(|e| {
        let missing = matches!(e, crate::remote::ConnectError::NotInstalled { .. });
        (e.to_string(), missing)
    })?;
    let topology = client.topology(None).map_err(|e| (e.message, false))?;
    Ok((Box::new(client), Box::new(topology)))
}

/// A connected server: its badge and name, selectable.
fn ready_entry(
    ui: &mut Ui,
    i: usize,
    host: &str,
    topology: &Topology,
    selected: bool,
    actions: &mut Vec<Action>,
) {
    ui.horizontal(|ui| {
        widgets::source_badge(ui, SourceBadge::Server);
        let name = format!(
            "{host} · {}",
            crate::report::compare::gpus(topology.gpus.len())
        );
        let r = ui
            .add(egui::Button::selectable(selected, name).wrap())
            .on_hover_text(topology.source.label());
        if r.clicked() {
            actions.push(Action::Select(SourceKey::Server(i)));
        }
    });
}

/// Under a connected server: its quick suite (or that it runs) and Reconnect.
fn ready_actions(
    ui: &mut Ui,
    i: usize,
    host: &str,
    suite_running: bool,
    actions: &mut Vec<Action>,
) {
    ui.horizontal(|ui| {
        ui.add_space(12.0);
        if suite_running {
            ui.spinner();
            ui.label(RichText::new("quick suite running…").weak());
        } else if ui
            .small_button("▶ Quick suite → report")
            .on_hover_text(
                "Run --bench --quick there; the report appears under Reports (and in Compare)",
            )
            .clicked()
        {
            actions.push(Action::RunSuiteOn(i));
        }
        if ui.small_button("Reconnect").clicked() {
            actions.push(Action::Connect(host.to_string()));
        }
    });
}

/// A server that could not be reached: why, and what to do.
fn failed_entry(
    ui: &mut Ui,
    i: usize,
    host: &str,
    reason: &str,
    not_installed: bool,
    actions: &mut Vec<Action>,
) {
    ui.label(RichText::new(host).strong());
    ui.colored_label(palette::P2P_REFUSED, reason);
    ui.horizontal(|ui| {
        if not_installed
            && ui
                .button("Copy scalescope there")
                .on_hover_text(
                    "Copies this binary (same OS and architecture) to ~/.cache/scalescope on the server",
                )
                .clicked()
        {
            actions.push(Action::InstallOn(i));
        }
        if ui.small_button("Retry").clicked() {
            actions.push(Action::Connect(host.to_string()));
        }
    });
}
