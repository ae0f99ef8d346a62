//! The one test helper: a fresh seeded simulator on loopback port 0 (both sites), a temporary home
//! with its own XDG config and state folders, a configuration file naming both sites, and the real
//! `rewind` binary run in that environment only (the developer's own environment, config and journal
//! are never seen: the child's environment is cleared).
//!
//! Tests talk to the simulator's `/_sim` control API over HTTP with their own JSON.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
pub use zvm_sim::test_kit::Control;

/// The simulator's service client.
pub const CLIENT_ID: &str = "rewind";
/// Its secret: it must never appear in any output.
pub const CLIENT_SECRET: &str = "rewind-secret";

/// How long one run of the binary may take before its test fails.
const RUN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
}

impl Run {
    /// Stdout as the one JSON document `--json` promises.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}): {self:?}"))
    }

    /// Asserts the exit code, showing the whole run when it differs.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Run {
        assert_eq!(self.code, code, "exit code of {self:#?}");
        self
    }

    /// Asserts that stderr is exactly one line, and returns it.
    #[track_caller]
    pub fn one_error_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line on stderr: {self:#?}");
        assert!(lines[0].starts_with("rewind: "), "{self:#?}");
        lines[0]
    }
}

/// `rewind guard <vm> --agent <agent> --action <action> --change <change>`.
pub fn guard_args<'a>(
    vm: &'a str,
    agent: &'a str,
    action: &'a str,
    change: &'a str,
) -> Vec<&'a str> {
    vec![
        "guard", vm, "--agent", agent, "--action", action, "--change", change,
    ]
}

/// A simulator, a temporary home and the binary.
pub struct TestEnv {
    pub sim: zvm_sim::Simulator,
    pub dir: tempfile::TempDir,
    /// The simulator's `/_sim` control API.
    pub control: Control,
}

impl TestEnv {
    /// The simulator with the test options of `seed`, and a configuration naming both sites.
    pub async fn start(seed: u64) -> TestEnv {
        TestEnv::start_with(zvm_sim::Options::for_tests(seed)).await
    }

    /// The simulator with `options`, and a configuration naming both sites.
    pub async fn start_with(options: zvm_sim::Options) -> TestEnv {
        let sim = zvm_sim::start(options).await.expect("the simulator starts");
        let dir = tempfile::tempdir().expect("a temporary folder");
        for sub in ["home", "config", "state", "data"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let control = match &sim.local().certificate_pem {
            // Over HTTPS, the control client trusts the simulator's own certificate.
            Some(pem) => {
                let pem = std::fs::read(pem).expect("the simulator's certificate");
                let http = reqwest::Client::builder()
                    .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
                    .build()
                    .unwrap();
                Control::with_client(http, &sim.local().url)
            }
            None => Control::new(&sim.local().url),
        };
        let env = TestEnv { sim, dir, control };
        env.write_config("");
        env
    }

    /// The temporary `$XDG_CONFIG_HOME`.
    pub fn config_home(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// The configuration file rewind finds by default.
    pub fn config_file(&self) -> PathBuf {
        self.config_home()
            .join("zerto-ai-rewind")
            .join("config.toml")
    }

    /// The default tool catalog.
    pub fn catalog_file(&self) -> PathBuf {
        self.config_home()
            .join("zerto-ai-rewind")
            .join("catalog.toml")
    }

    /// The default audit journal.
    pub fn journal_file(&self) -> PathBuf {
        self.dir
            .path()
            .join("state")
            .join("zerto-ai-rewind")
            .join("journal.jsonl")
    }

    /// Both simulated sites as configuration tables.
    pub fn sites_toml(&self) -> String {
        format!(
            "[sites.boston]\nurl = \"{}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\"\n\n[sites.denver]\nurl = \"{}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\"\n",
            self.sim.local().url,
            self.sim.peer().url
        )
    }

    /// Writes the default configuration file: both sites, then `extra` (more TOML).
    pub fn write_config(&self, extra: &str) {
        self.write_config_text(&format!("{}\n{extra}", self.sites_toml()));
    }

    /// Writes the default configuration file as given.
    pub fn write_config_text(&self, text: &str) {
        let path = self.config_file();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        // It holds a secret: readable by its owner only, as rewind asks of an operator's file.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    /// Runs `rewind args...`.
    pub async fn rewind(&self, args: &[&str]) -> Run {
        self.rewind_with_stdin(args, None).await
    }

    /// Runs `rewind --json args...` and checks that stdout is one JSON document.
    pub async fn rewind_json(&self, args: &[&str]) -> (Run, Value) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = self.rewind(&all).await;
        let json = run.json();
        (run, json)
    }

    /// Runs `rewind args...` with `stdin` as its input.
    pub async fn rewind_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Run {
        let mut child = self
            .command(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .spawn()
            .expect("the rewind binary starts");
        if let Some(text) = stdin {
            let mut input = child.stdin.take().unwrap();
            input.write_all(text.as_bytes()).await.unwrap();
            drop(input);
        }
        // A generous deadline (the simulator's tasks take 50 ms here), so that a run that hangs fails
        // its test naming the command instead of holding the whole run up; the child is killed as
        // it is dropped (`kill_on_drop`).
        let out = tokio::time::timeout(RUN_DEADLINE, child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("rewind {args:?} did not end within {RUN_DEADLINE:?}"))
            .unwrap();
        let run = Run {
            code: out.status.code().expect("an exit code, not a signal"),
            stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
        };
        if std::env::var_os("TEST_LOG").is_some() {
            eprintln!(
                "rewind {args:?} -> {}\n{}{}",
                run.code, run.stdout, run.stderr
            );
        }
        assert!(
            !run.stdout.contains(CLIENT_SECRET) && !run.stderr.contains(CLIENT_SECRET),
            "a secret leaked: {run:#?}"
        );
        run
    }

    /// The binary with this test's environment only, stdout and stderr piped.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_rewind"));
        cmd.args(args)
            .env_clear()
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_CONFIG_HOME", self.config_home())
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Ok(filter) = std::env::var("TEST_LOG") {
            cmd.env("RUST_LOG", filter);
        }
        cmd
    }

    /// `wrapper... rewind args...` (a program that runs the binary: `prlimit`, `sh -c`), with this
    /// test's environment only, stdout and stderr piped.
    pub fn wrapped(&self, wrapper: &[&str], args: &[&str]) -> tokio::process::Command {
        let rewind = self.command(args);
        let rewind = rewind.as_std();
        let mut cmd = tokio::process::Command::new(wrapper[0]);
        cmd.args(&wrapper[1..])
            .arg(rewind.get_program())
            .args(rewind.get_args())
            .env_clear()
            .envs(rewind.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// Runs `rewind guard <vm> --agent <agent> --action edit --change <change>`, which must end
    /// guarded (exit 0).
    pub async fn guard(&self, vm: &str, agent: &str, change: &str) {
        self.rewind(&guard_args(vm, agent, "edit", change))
            .await
            .expect_code(0);
    }

    /// Runs `rewind catalog args...` (adding a tool, say), which must succeed (exit 0).
    pub async fn catalog(&self, args: &[&str]) {
        let mut all = vec!["catalog"];
        all.extend_from_slice(args);
        self.rewind(&all).await.expect_code(0);
    }

    /// A VM's identifier, read through `rewind find --json`.
    pub async fn vm_id(&self, vm: &str) -> String {
        let (run, json) = self.rewind_json(&["find", vm]).await;
        run.expect_code(0);
        json["result"]["vm"]["id"].as_str().unwrap().to_string()
    }

    /// A path in the temporary folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}
