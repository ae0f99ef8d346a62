//! One scenario's world: a fresh seeded simulator (both sites on loopback ports the system picks),
//! a temporary home with its own XDG config and state folders, the configuration the fronts read
//! there, and the fronts themselves: the `rewind` binary run as the operator runs it, and `rewind-mcp`
//! driven by an MCP client as an agent drives it.
//!
//! The simulator starts when a step first needs it, so that a scenario's `Given` steps can choose
//! how it starts (one session per user, say); scenarios that only read local files (the hook) never
//! start one. Against a real ZVM ([`Mode::Real`]) there is no simulator, and a step that needs one
//! fails, naming itself.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use cucumber::World;
use serde_json::Value;

use crate::answer::Answer;
use crate::bins;
use crate::mcp::{Agent, Human, HumanAnswer, Protocol};
use crate::real::RealZvm;
use crate::sim::{CLIENT_ID, CLIENT_SECRET, Control};

/// What the scenario runs against.
#[derive(Debug, Clone)]
pub enum Mode {
    /// A simulator started in this process for the scenario.
    Simulator,
    /// The real ZVM named by `ZVM_URL` (only `@real-zvm` scenarios run).
    Real(RealZvm),
}

/// Which sites the configuration names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sites {
    /// Boston and Denver.
    Both,
    /// Boston only: Denver's ZVM is not configured.
    BostonOnly,
}

/// How rewind signs in to each configured site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignIn {
    /// The service client `rewind` (client credentials, Administrator).
    ServiceClient,
    /// A ZVM user (password grant).
    User {
        /// The user name.
        name: String,
        /// The password.
        password: String,
    },
    /// The service client with a wrong secret.
    WrongSecret(String),
}

/// How rewind trusts a site served over HTTPS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// The platform's roots only (a self-signed appliance is not trusted).
    Platform,
    /// Each site's own certificate (`ca_cert`).
    SiteCertificate,
    /// No verification at all (`insecure = true`).
    Insecure,
}

/// A `rewind` run still going on in the background.
#[derive(Debug)]
pub struct Background {
    /// What the scenario calls it.
    pub label: String,
    /// The arguments.
    pub args: Vec<String>,
    /// The process.
    pub child: tokio::process::Child,
}

/// The world of one scenario.
#[derive(Debug, World)]
#[world(init = Self::new)]
pub struct RewindWorld {
    /// Simulator or real ZVM.
    pub mode: Mode,
    /// The simulator's seed (from the scenario's name, or `FEATURES_SEED`).
    pub seed: u64,
    /// Start the simulator with one session per user.
    pub session_limit: bool,
    /// Serve both sites over HTTPS, each with its own self-signed certificate.
    pub tls: bool,
    /// How rewind trusts the sites' certificates (with `tls`).
    pub trust: Trust,
    /// The configured sites.
    pub sites: Sites,
    /// How rewind signs in.
    pub sign_in: SignIn,
    /// More TOML for the configuration file (`[guard]`, `[hook]`).
    pub extra_config: String,
    sim: Option<zvm_sim::Simulator>,
    control: Option<Control>,
    /// The temporary home: `home/`, `config/` (XDG_CONFIG_HOME), `state/` (XDG_STATE_HOME), `data/`.
    pub dir: tempfile::TempDir,
    /// Every answer a front gave, oldest first; the last one is "the answer".
    pub answers: Vec<Answer>,
    /// `rewind` runs started and not yet waited for.
    pub background: Vec<Background>,
    agent: Option<Agent>,
    /// The human behind the agent's client (fixed when the session starts).
    pub human: Human,
    /// The protocol the agent's client speaks.
    pub protocol: Protocol,
    /// Values a scenario keeps between steps (a file's bytes before a change, a checkpoint id).
    pub kept: std::collections::HashMap<String, Vec<u8>>,
    /// A simulator serving a capture of the scenario's ZVM (for the parity report).
    pub captured: Option<zvm_sim::Simulator>,
}

impl RewindWorld {
    /// A world with nothing started yet.
    pub async fn new() -> Result<RewindWorld, std::io::Error> {
        let dir = tempfile::Builder::new()
            .prefix("rewind-features-")
            .tempdir()?;
        for sub in ["home", "config", "state", "data", "recovered"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        Ok(RewindWorld {
            mode: match RealZvm::from_env() {
                Some(real) => Mode::Real(real),
                None => Mode::Simulator,
            },
            seed: 42,
            session_limit: false,
            tls: false,
            trust: Trust::SiteCertificate,
            sites: Sites::Both,
            sign_in: SignIn::ServiceClient,
            extra_config: String::new(),
            sim: None,
            control: None,
            dir,
            answers: Vec::new(),
            background: Vec::new(),
            agent: None,
            human: Human::answering(HumanAnswer::Decline),
            protocol: Protocol::Handshake,
            kept: Default::default(),
            captured: None,
        })
    }

    /// Whether this run talks to a real ZVM.
    pub fn is_real(&self) -> bool {
        matches!(self.mode, Mode::Real(_))
    }

    /// Panics unless the simulator has not started yet: for `Given` steps that choose how it starts.
    pub fn before_start(&self, what: &str) {
        assert!(
            self.sim.is_none() && !self.is_real(),
            "{what} must come before anything talks to the simulator"
        );
    }

    /// Starts the simulator and writes the configuration, once; a no-op against a real ZVM.
    pub async fn ready(&mut self) {
        if self.is_real() || self.sim.is_some() {
            return;
        }
        let mut options = zvm_sim::Options::for_tests(self.seed);
        options.session_limit = self.session_limit;
        options.tls = self.tls;
        let sim = zvm_sim::start(options)
            .await
            .unwrap_or_else(|e| panic!("the simulator (seed {}) starts: {e}", self.seed));
        self.control = Some(crate::sim::control(&sim));
        self.sim = Some(sim);
        self.write_config();
    }

    /// The simulator's control API (starting the simulator first).
    pub async fn sim(&mut self) -> &Control {
        if let Mode::Real(_) = self.mode {
            panic!(
                "this step reads the simulator's ground truth, which a real ZVM does not have; it is not for @real-zvm scenarios"
            );
        }
        self.ready().await;
        self.control.as_ref().expect("the simulator started")
    }

    /// The temporary `$XDG_CONFIG_HOME`.
    pub fn config_home(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// The configuration file both fronts find by default.
    pub fn config_file(&self) -> PathBuf {
        self.config_home().join("zerto-ai-rewind/config.toml")
    }

    /// The tool catalog at its default place.
    pub fn catalog_file(&self) -> PathBuf {
        self.config_home().join("zerto-ai-rewind/catalog.toml")
    }

    /// The audit journal at its default place.
    pub fn journal_file(&self) -> PathBuf {
        self.dir.path().join("state/zerto-ai-rewind/journal.jsonl")
    }

    /// The folder files are recovered into.
    pub fn recovery_dir(&self) -> PathBuf {
        self.dir.path().join("recovered")
    }

    /// Writes the configuration file for the current sites, sign-in and extra settings (nothing
    /// against a real ZVM: there the `ZVM_*` environment configures the fronts).
    pub fn write_config(&self) {
        let Some(sim) = &self.sim else {
            return;
        };
        let credentials = match &self.sign_in {
            SignIn::ServiceClient => {
                format!("client_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\"\n")
            }
            SignIn::WrongSecret(secret) => {
                format!("client_id = \"{CLIENT_ID}\"\nclient_secret = \"{secret}\"\n")
            }
            SignIn::User { name, password } => {
                format!("username = \"{name}\"\npassword = \"{password}\"\n")
            }
        };
        let trust = |site: &zvm_sim::SiteEndpoint| match (self.trust, &site.certificate_pem) {
            (Trust::SiteCertificate, Some(pem)) => {
                format!("ca_cert = {:?}\n", pem.display().to_string())
            }
            (Trust::Insecure, _) => "insecure = true\n".to_string(),
            _ => String::new(),
        };
        let mut text = format!(
            "[sites.boston]\nurl = \"{}\"\n{credentials}{}\n",
            sim.local().url,
            trust(sim.local())
        );
        if self.sites == Sites::Both {
            text.push_str(&format!(
                "[sites.denver]\nurl = \"{}\"\n{credentials}{}\n",
                sim.peer().url,
                trust(sim.peer())
            ));
        }
        text.push_str(&self.extra_config);
        let path = self.config_file();
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("the config folder");
        std::fs::write(&path, text).expect("the configuration file is written");
        // It holds a secret: readable by its owner only, as rewind asks of an operator's file.
        private(&path);
    }

    /// Changes the configuration (for the fronts started from now on).
    pub fn reconfigure(&mut self, change: impl FnOnce(&mut RewindWorld)) {
        change(self);
        self.write_config();
    }

    /// A front's command with this scenario's environment only: the developer's own configuration,
    /// catalog and journal are never seen (the environment is cleared).
    fn command(&self, program: &Path) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        let home = self.dir.path();
        cmd.env_clear()
            .env("HOME", home.join("home"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_DATA_HOME", home.join("data"))
            .kill_on_drop(true);
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        if let Mode::Real(real) = &self.mode {
            for (k, v) in &real.env {
                cmd.env(k, v);
            }
        }
        if let Ok(filter) = std::env::var("TEST_LOG") {
            cmd.env("RUST_LOG", filter);
        }
        cmd
    }

    /// Runs `rewind args...` (the simulator started first), keeps its answer and returns it.
    pub async fn rewind(&mut self, args: Vec<String>, stdin: Option<String>) -> &Answer {
        self.ready().await;
        let mut cmd = self.command(&bins::get().rewind);
        cmd.args(&args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("the rewind binary starts");
        if let Some(text) = stdin {
            use tokio::io::AsyncWriteExt;
            let mut input = child.stdin.take().expect("stdin is piped");
            input
                .write_all(text.as_bytes())
                .await
                .expect("the hook's input is written");
        }
        let answer = collect(args, child, crate::bins::FRONT_DEADLINE)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        self.keep(answer)
    }

    /// Keeps an answer as the last one, after checking that it shows no secret.
    pub fn keep(&mut self, answer: Answer) -> &Answer {
        if let Some(secret) = self.shown_secret(&answer.text) {
            // The answer is not printed: against a real ZVM it would show the real secret.
            panic!("{secret} leaked into the answer of {:?}", answer.front);
        }
        self.answers.push(answer);
        self.answers.last().expect("just kept")
    }

    /// The name of the secret `text` shows, if any: the simulator's client secret, or against a real
    /// ZVM the password or client secret of the environment (named by its variable, never shown).
    pub fn shown_secret(&self, text: &str) -> Option<&str> {
        let mut secrets = vec![("the simulator's client secret", CLIENT_SECRET)];
        if let Mode::Real(real) = &self.mode {
            secrets.extend(real.secrets());
        }
        secrets
            .into_iter()
            .find(|(_, value)| text.contains(value))
            .map(|(name, _)| name)
    }

    /// Starts `rewind args...` in the background, under `label`.
    pub async fn spawn_rewind(&mut self, label: &str, args: Vec<String>) {
        self.ready().await;
        let mut cmd = self.command(&bins::get().rewind);
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().expect("the rewind binary starts");
        self.background.push(Background {
            label: label.to_string(),
            args,
            child,
        });
    }

    /// Waits for the background run `label` (within [`crate::bins::FRONT_DEADLINE`]), keeps its answer and
    /// returns it.
    pub async fn finish(&mut self, label: &str) -> &Answer {
        let at = self
            .background
            .iter()
            .position(|b| b.label == label)
            .unwrap_or_else(|| panic!("no run called {label:?} was started"));
        let run = self.background.remove(at);
        let answer = collect(run.args, run.child, crate::bins::FRONT_DEADLINE)
            .await
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        self.keep(answer)
    }

    /// The agent's MCP session, started on first use (the simulator first).
    pub async fn agent(&mut self) -> &Agent {
        self.ready().await;
        if self.agent.is_none() {
            let log = std::env::var_os("TEST_LOG").is_some();
            let cmd = self.command(&bins::get().rewind_mcp);
            self.agent = Some(Agent::start(cmd, self.human.clone(), self.protocol, log).await);
        }
        self.agent.as_ref().expect("just started")
    }

    /// Calls an MCP tool as the agent, keeps the answer and returns it.
    pub async fn call(&mut self, tool: &str, args: Value) -> &Answer {
        let answer = self.agent().await.call(tool, args).await;
        self.keep(answer)
    }

    /// Whether the agent's session has started.
    pub fn agent_started(&self) -> bool {
        self.agent.is_some()
    }

    /// The last answer of any front.
    #[track_caller]
    pub fn last(&self) -> &Answer {
        self.answers
            .last()
            .expect("a step asked for the answer before any front was called")
    }

    /// The audit journal's records as they are on disk.
    pub fn journal(&self) -> Vec<Value> {
        match std::fs::read_to_string(self.journal_file()) {
            Ok(text) => text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).expect("each journal line is JSON"))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("the journal cannot be read: {e}"),
        }
    }

    /// The VM the `@real-zvm` scenarios use: `REWIND_FEATURES_VM`, or `sql-01` on the simulator
    /// (one protecting VPG and one Initializing).
    pub fn test_vm(&self) -> String {
        match &self.mode {
            Mode::Real(real) => real.vm.clone(),
            Mode::Simulator => "sql-01".to_string(),
        }
    }

    /// The VPG the `@real-zvm` guard may tag: `REWIND_FEATURES_VPG`, or `sql-local` on the simulator.
    pub fn test_vpg(&self) -> String {
        match &self.mode {
            Mode::Real(real) => real.vpg.clone().unwrap_or_else(|| {
                panic!("REWIND_FEATURES_VPG is not set, so no scenario may insert a tag into the real ZVM")
            }),
            Mode::Simulator => "sql-local".to_string(),
        }
    }

    /// Ends everything the scenario started, in order: the background runs, the agent's session
    /// (and its server), then the simulator. Then checks the one invariant every scenario shares: no
    /// secret reached the audit journal.
    pub async fn tear_down(&mut self) {
        for mut run in self.background.drain(..) {
            // A run the scenario never waited for is stopped: the scenario already failed.
            let _ = run.child.kill().await;
        }
        if let Some(agent) = self.agent.take() {
            agent.close().await;
        }
        if let Some(sim) = self.sim.take() {
            sim.shutdown().await;
        }
        if let Ok(journal) = std::fs::read_to_string(self.journal_file())
            && let Some(secret) = self.shown_secret(&journal)
        {
            panic!(
                "{secret} reached the audit journal {}",
                self.journal_file().display()
            );
        }
    }
}

/// Waits for a `rewind` run to end, at most `within`, and reads its answer. A run still going at the
/// deadline is an error naming it; its process is killed as the child is dropped (`kill_on_drop`).
async fn collect(
    args: Vec<String>,
    child: tokio::process::Child,
    within: Duration,
) -> Result<Answer, String> {
    let out = tokio::time::timeout(within, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "`rewind {}` did not end within {} s",
                args.join(" "),
                within.as_secs_f64()
            )
        })?
        .expect("the rewind binary runs");
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("rewind {args:?} ended by a signal: {stderr}"));
    if std::env::var_os("TEST_LOG").is_some() {
        eprintln!("rewind {} -> {code}\n{stdout}{stderr}", args.join(" "));
    }
    Ok(Answer::from_cli(args, code, stdout, stderr))
}

/// Makes the file at `path` readable and writable by its owner only.
fn private(path: &std::path::Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .expect("the configuration file's mode is set");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn against_a_real_zvm_its_password_and_client_secret_count_as_secrets_too() {
        let mut world = RewindWorld::new().await.expect("a world");
        world.mode = Mode::Real(RealZvm {
            env: vec![
                ("ZVM_URL".into(), "https://zvm.example".into()),
                ("ZVM_CLIENT_ID".into(), "rewind".into()),
                ("ZVM_CLIENT_SECRET".into(), "s3cret-of-the-real-one".into()),
                ("ZVM_PASSWORD".into(), "pa55word-of-the-real-one".into()),
            ],
            vm: "app-test-01".into(),
            vpg: None,
        });
        assert_eq!(
            world.shown_secret("token refused for s3cret-of-the-real-one"),
            Some("ZVM_CLIENT_SECRET")
        );
        assert_eq!(
            world.shown_secret("pa55word-of-the-real-one"),
            Some("ZVM_PASSWORD")
        );
        assert_eq!(
            world.shown_secret("client_secret = rewind-secret"),
            Some("the simulator's client secret")
        );
        assert_eq!(
            world.shown_secret("GUARDED: app-test-01, client rewind"),
            None
        );
    }

    #[tokio::test]
    async fn a_run_that_does_not_end_fails_at_the_deadline_naming_its_command() {
        let child = tokio::process::Command::new("sleep")
            .arg("600")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("sleep starts");
        let args = vec!["guard".to_string(), "web-01".to_string()];
        let waited = tokio::time::timeout(
            Duration::from_secs(60),
            collect(args, child, Duration::from_millis(200)),
        )
        .await
        .expect("collect gives up at its own deadline");
        let err = waited.expect_err("a run that does not end is an error");
        assert!(
            err.contains("`rewind guard web-01` did not end within 0.2 s"),
            "{err}"
        );
    }
}
