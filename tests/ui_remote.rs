//! The app driving a server: `scalescope agent` reached through an ssh stand-in (a script that
//! runs its last argument here, as ssh runs it there), so the connection, the job stream and a
//! lost connection go through the real client and agent. tests/remote.rs covers a real sshd.

mod common;

use std::path::Path;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::job::Target;
use scalescope::model::Source;
use scalescope::remote::{Client, RemoteOptions};
use scalescope::ui::ServerState;
use scalescope::ui::{App, Startup};

/// An ssh that runs the remote command here, recording the agent's process id in `pid_file`.
fn fake_ssh(dir: &Path) -> String {
    let script = dir.join("ssh");
    let pid_file = dir.join("agent.pid");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nfor a; do last=$a; done\necho $$ > '{}'\nexport CUDA_VISIBLE_DEVICES=\neval \"exec $last\"\n",
            pid_file.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

fn options(dir: &Path) -> RemoteOptions {
    RemoteOptions {
        host: "gpu-box".into(),
        ssh: Some(fake_ssh(dir)),
        command: Some(format!("{} agent", common::bin().display())),
        ..Default::default()
    }
}

/// Steps frames until `done` holds (the workers report on their own threads).
fn step_until(harness: &mut Harness<'_, App>, done: impl Fn(&App) -> bool) {
    assert!(
        common::ui::step_until(harness, 1000, done),
        "the app did not get there in 10 s"
    );
}

/// `scalescope --remote gpu-box` on a server without GPUs: the app connects at start and says
/// why the server cannot show its machine, naming the server.
#[test]
fn a_server_without_a_driver_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let startup = Startup {
        remote: Some(options(dir.path())),
        ..Default::default()
    };
    let mut h =
        common::ui::app_harness(App::new_with(Err("no NVIDIA driver found".into()), startup));
    step_until(&mut h, |app| {
        app.servers()
            .iter()
            .any(|s| !matches!(s.state, ServerState::Connecting))
    });
    let ServerState::Failed { reason, .. } = &h.state().servers()[0].state else {
        panic!("connected to a server without GPUs");
    };
    let reason = reason.clone();
    assert!(reason.contains("driver"), "{reason}");
    assert!(h.query_by_label("gpu-box").is_some());
    assert!(h.query_all_by_label(&reason).next().is_some(), "{reason}");
    assert!(h.query_by_label("Retry").is_some());
}

/// A server's machine runs its jobs there: the Bandwidth view's run streams rows back through
/// the connection; once the server is gone, the next run says the connection was lost and
/// keeps the rows already shown.
#[test]
fn a_servers_jobs_run_there_and_a_lost_connection_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path());
    let mut client = Client::connect(&opts).expect("agent through the ssh stand-in");
    // The server shows a catalog machine here (it has no GPUs); jobs on it are modeled there.
    let topology = client
        .topology(Some(Target::Catalog {
            name: "h200-2x-sxm".into(),
        }))
        .expect("the server's topology");
    let mut app = App::new_with(Err("no NVIDIA driver found".into()), Startup::default());
    app.add_server("gpu-box", client, topology);
    let mut h = common::ui::app_harness(app);
    h.run();
    assert!(h.query_by_label_contains("gpu-box · 2 GPUs").is_some());
    h.get_by_label("Bandwidth").click();
    h.run();
    h.get_by_label("▶ Model this machine").click();
    let bandwidth = |app: &App| app.shown_report().unwrap().bandwidth.clone();
    let running = |app: &App| app.views().unwrap().bandwidth.panel().running();
    step_until(&mut h, |app| bandwidth(app).is_some() && !running(app));
    let data = bandwidth(h.state()).unwrap();
    assert!(!data.results.is_empty());
    assert!(data.results.iter().all(|r| r.source == Source::Modeled));
    let rows = data.results.len();

    // The server goes away; the next run fails with the reason and the rows stay.
    let pid = std::fs::read_to_string(dir.path().join("agent.pid")).unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());
    h.get_by_label("▶ Model this machine").click();
    let error = |app: &App| {
        app.views()
            .unwrap()
            .bandwidth
            .panel()
            .error()
            .map(str::to_string)
    };
    step_until(&mut h, |app| !running(app) && error(app).is_some());
    let err = error(h.state()).unwrap();
    assert!(err.contains("gpu-box"), "{err}");
    assert_eq!(bandwidth(h.state()).unwrap().results.len(), rows);
    assert!(h.query_by_label_contains(&err).is_some());
}
