//! The one test helper of rewind-mcp: a fresh seeded simulator on loopback port 0, a configuration for
//! the built `rewind-mcp` binary pointing at it (with temporary XDG, catalog and journal paths, so no
//! test touches the user's files), the binary started as a real client would start it (a stdio child
//! process, or an HTTP server), an rmcp client that plays the human, and a small client of the
//! simulator's `/_sim` control API (with its own JSON: the tests never see the simulator's types).

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
pub use zvm_sim::test_kit::Control;

/// Where the server serves MCP.
pub const MCP_PATH: &str = "/mcp";

/// The service client the configuration uses.
pub const CLIENT_ID: &str = "rewind";
/// Its secret: it must never appear in an answer.
pub const CLIENT_SECRET: &str = "rewind-secret";

/// How the configuration reaches the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// A config file with both sites, Boston and Denver.
    File,
    /// Only the `ZVM_*` environment: one site (Boston), as `default`.
    Env,
    /// A config file with the catalog and the journal, and no site at all.
    NoSites,
}

/// Which protocol generation the client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// The initialize handshake (2025-11-25): the server asks with `elicitation/create`.
    Legacy,
    /// 2026-07-28, no handshake: the server asks with an `InputRequiredResult`.
    Mrtr,
}

/// What the human answers when the server asks about an unknown tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Take a tagged checkpoint first.
    Yes,
    /// No checkpoint.
    No,
    /// Yes, and remember it.
    YesRemember,
    /// No, and remember it.
    NoRemember,
    /// Decline the form.
    Decline,
}

/// A test's world: the simulator, the temporary folder, and how the binary is configured.
pub struct TestEnv {
    pub sim: zvm_sim::Simulator,
    pub dir: tempfile::TempDir,
    pub setup: Setup,
    /// The simulator's `/_sim` control API.
    pub control: Control,
    /// The journal's database, when the configuration file keeps the journal in PostgreSQL
    /// ([`journal_in_postgresql`]).
    pub database: Option<String>,
}

/// Whether the tests' configuration files keep the journal in PostgreSQL (a fresh database of the
/// test kit's server per test) rather than in a file: `REWIND_TEST_JOURNAL=postgresql`, which CI
/// sets for a second run of the team server's tests.
fn journal_in_postgresql() -> bool {
    std::env::var("REWIND_TEST_JOURNAL").is_ok_and(|v| v == "postgresql")
}

/// Logs of the tests and of the binary, only when TEST_LOG is set.
fn logging() -> bool {
    std::env::var_os("TEST_LOG").is_some()
}

/// Where the binary's stderr goes: the test's own with TEST_LOG, else nowhere.
fn binary_stderr() -> Stdio {
    if logging() {
        Stdio::inherit()
    } else {
        Stdio::null()
    }
}

impl TestEnv {
    /// A fresh simulator of `seed` (short task durations) and a configuration of the given kind.
    pub async fn start(seed: u64, setup: Setup) -> TestEnv {
        TestEnv::start_with(zvm_sim::Options::for_tests(seed), setup).await
    }

    /// A fresh simulator started with `options` (say, over HTTPS) and a configuration of the given
    /// kind.
    pub async fn start_with(options: zvm_sim::Options, setup: Setup) -> TestEnv {
        let sim = zvm_sim::start(options).await.expect("the simulator starts");
        let dir = tempfile::tempdir().expect("a temporary folder");
        let control = Control::new(&sim.local().url);
        let database = (setup == Setup::File && journal_in_postgresql())
            .then(|| zvm_sim::test_kit::Postgres::shared().fresh_database());
        let env = TestEnv {
            sim,
            dir,
            control,
            setup,
            database,
        };
        if setup == Setup::File {
            let journal = match &env.database {
                Some(url) => url.clone(),
                None => env.journal_path().display().to_string(),
            };
            let site = |name: &str, url: &str| {
                format!(
                    "[sites.{name}]\nurl = {url:?}\nclient_id = {CLIENT_ID:?}\nclient_secret = {CLIENT_SECRET:?}\n\n"
                )
            };
            let text = format!(
                "catalog = {:?}\njournal = {:?}\n\n{}{}[guard]\ndeadline_secs = 30\n",
                env.catalog_path(),
                journal,
                site("boston", &env.sim.local().url),
                site("denver", &env.sim.peer().url),
            );
            write_private(&env.config_path(), &text);
        }
        if setup == Setup::NoSites {
            let text = format!(
                "catalog = {:?}\njournal = {:?}\n",
                env.catalog_path(),
                env.journal_path()
            );
            write_private(&env.config_path(), &text);
        }
        env
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    /// The catalog: in the temporary folder, named in the file or found under XDG_CONFIG_HOME.
    pub fn catalog_path(&self) -> PathBuf {
        match self.setup {
            Setup::File | Setup::NoSites => self.dir.path().join("catalog.toml"),
            Setup::Env => self
                .dir
                .path()
                .join("xdg-config/zerto-ai-rewind/catalog.toml"),
        }
    }

    /// The journal: in the temporary folder, named in the file or found under XDG_STATE_HOME.
    pub fn journal_path(&self) -> PathBuf {
        match self.setup {
            Setup::File | Setup::NoSites => self.dir.path().join("journal.jsonl"),
            Setup::Env => self
                .dir
                .path()
                .join("xdg-state/zerto-ai-rewind/journal.jsonl"),
        }
    }

    /// The built binary with `args`, its environment pointed at this test's simulator and folders
    /// only.
    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_rewind-mcp"));
        let home = self.dir.path();
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("xdg-config"))
            .env("XDG_STATE_HOME", home.join("xdg-state"))
            .env("XDG_DATA_HOME", home.join("xdg-data"))
            .kill_on_drop(true);
        if let Ok(filter) = std::env::var("TEST_LOG") {
            cmd.env("RUST_LOG", filter);
        }
        match self.setup {
            Setup::File | Setup::NoSites => {
                cmd.arg("--config").arg(self.config_path());
            }
            Setup::Env => {
                cmd.env("ZVM_URL", &self.sim.local().url)
                    .env("ZVM_CLIENT_ID", CLIENT_ID)
                    .env("ZVM_CLIENT_SECRET", CLIENT_SECRET);
            }
        }
        cmd.args(args);
        cmd
    }

    /// The binary as a stdio child process, and a client of it that plays `human`.
    pub async fn stdio<H: ClientHandler>(
        &self,
        human: H,
        protocol: Protocol,
    ) -> RunningService<RoleClient, H> {
        let stderr = binary_stderr();
        self.stdio_with_stderr(human, protocol, stderr).await
    }

    /// The binary as a stdio child process writing its stderr to `stderr`, and a client of it.
    pub async fn stdio_with_stderr<H: ClientHandler>(
        &self,
        human: H,
        protocol: Protocol,
        stderr: Stdio,
    ) -> RunningService<RoleClient, H> {
        self.stdio_of(self.command(&[]), human, protocol, stderr)
            .await
    }

    /// The binary logging everything at trace level (`RUST_LOG=trace`) to `stderr`, and a client of it.
    pub async fn stdio_at_trace<H: ClientHandler>(
        &self,
        human: H,
        protocol: Protocol,
        stderr: Stdio,
    ) -> RunningService<RoleClient, H> {
        let cmd = self.command(&[]).configure(|cmd| {
            cmd.env("RUST_LOG", "trace");
        });
        self.stdio_of(cmd, human, protocol, stderr).await
    }

    async fn stdio_of<H: ClientHandler>(
        &self,
        cmd: tokio::process::Command,
        human: H,
        protocol: Protocol,
        stderr: Stdio,
    ) -> RunningService<RoleClient, H> {
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(stderr)
            .spawn()
            .expect("rewind-mcp starts");
        connect(human, transport, protocol).await
    }

    /// The binary as a gateway (`--gateway`) over stdio, and a client of it that plays `human`.
    pub async fn gateway_stdio<H: ClientHandler>(&self, human: H) -> RunningService<RoleClient, H> {
        self.gateway_stdio_on(human, Protocol::Legacy).await
    }

    /// [`TestEnv::gateway_stdio`] with a client of the `protocol` generation.
    pub async fn gateway_stdio_on<H: ClientHandler>(
        &self,
        human: H,
        protocol: Protocol,
    ) -> RunningService<RoleClient, H> {
        let stderr = binary_stderr();
        self.stdio_of(self.command(&["--gateway"]), human, protocol, stderr)
            .await
    }

    /// The binary as an HTTP server on a free loopback port.
    pub async fn http_server(&self) -> HttpServer {
        self.http_server_with(&[]).await
    }

    /// The binary as an HTTP server on a free loopback port, with more flags.
    pub async fn http_server_with(&self, flags: &[&str]) -> HttpServer {
        self.http_server_logging(flags, None).await
    }

    /// The binary as an HTTP server on a free loopback port, with more flags, logging at
    /// `RUST_LOG=filter` when given; its stderr is kept ([`HttpServer::log`]).
    pub async fn http_server_logging(&self, flags: &[&str], filter: Option<&str>) -> HttpServer {
        self.http_server_on("127.0.0.1:0", flags, filter).await
    }

    /// The binary as an HTTP server on `addr` (a port the configuration already names), with
    /// more flags.
    pub async fn http_server_on(
        &self,
        addr: &str,
        flags: &[&str],
        filter: Option<&str>,
    ) -> HttpServer {
        let mut args = vec!["--http", addr];
        args.extend_from_slice(flags);
        let mut command = self.command(&args);
        if let Some(filter) = filter {
            command.env("RUST_LOG", filter);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rewind-mcp starts");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr is piped")).lines();
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let kept = log.clone();
        let url = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.expect("stderr is readable") {
                if logging() {
                    eprintln!("{line}");
                }
                kept.lock().unwrap().push(line.clone());
                if let Some(url) = line.strip_prefix("rewind-mcp: serving MCP on ") {
                    return url.trim().to_string();
                }
            }
            panic!(
                "rewind-mcp ended without serving HTTP: {:?}",
                kept.lock().unwrap()
            );
        })
        .await
        .expect("rewind-mcp says where it serves within a minute");
        // Keep draining stderr so the server never blocks on a full pipe.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                if logging() {
                    eprintln!("{line}");
                }
                kept.lock().unwrap().push(line);
            }
        });
        HttpServer {
            _process: child,
            url,
            log,
        }
    }

    /// A fresh simulator of `seed`, a configuration of the given kind, and a stdio client of the binary
    /// that cannot be asked anything: the start of most tests.
    pub async fn with_client(
        seed: u64,
        setup: Setup,
    ) -> (TestEnv, RunningService<RoleClient, Human>) {
        let env = TestEnv::start(seed, setup).await;
        let client = env.stdio(Human::unreachable(), Protocol::Legacy).await;
        (env, client)
    }

    /// The binary as a stdio child process this test holds (to signal it or wait for it), and a
    /// client of it that cannot be asked anything.
    pub async fn stdio_child(&self) -> (tokio::process::Child, RunningService<RoleClient, Human>) {
        let mut child = self
            .command(&[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("rewind-mcp starts");
        let transport = (
            child.stdout.take().expect("stdout"),
            child.stdin.take().expect("stdin"),
        );
        let client = Human::unreachable()
            .serve(transport)
            .await
            .expect("the MCP session starts");
        (child, client)
    }

    /// Rewrites the configuration file with `from` replaced by `to`.
    pub fn edit_config(&self, from: &str, to: &str) {
        let config = std::fs::read_to_string(self.config_path()).expect("the config file reads");
        std::fs::write(self.config_path(), config.replace(from, to))
            .expect("the config file is written");
    }

    /// The identifiers of the tagged-checkpoint insert tasks the simulator has run.
    pub async fn insert_tasks(&self) -> Vec<String> {
        let inserts = self.control.inserts(None).await;
        let id = |t: &Value| t["TaskIdentifier"].as_str().unwrap_or_default().to_owned();
        inserts.iter().map(id).collect()
    }

    /// The journal the binary writes: its file, or its database.
    pub fn journal(&self) -> rewind_core::AuditJournal {
        match &self.database {
            Some(url) => {
                let database = rewind_core::config::JournalDatabase::parse(url).unwrap();
                rewind_core::AuditJournal::in_database(&database, self.journal_path()).unwrap()
            }
            None => rewind_core::AuditJournal::new(self.journal_path()),
        }
    }

    /// The journal record of the guard of `change_id`; fails the test when there is none.
    pub fn journal_record(&self, change_id: &str) -> Value {
        // Read as `zerto_journal` reads it: a guard's intent, task and verdict lines as one record.
        let read = self
            .journal()
            .read(&rewind_core::JournalFilter {
                change_id: Some(change_id.to_string()),
                ..Default::default()
            })
            .expect("the journal reads");
        let record = read
            .records
            .last()
            .unwrap_or_else(|| panic!("the guard of {change_id} reached the journal: {read:?}"));
        serde_json::to_value(record).expect("a record is JSON")
    }

    /// The identifier of the VPG named `name` in a find_protection result.
    pub fn vpg_id(protection: &Value, name: &str) -> String {
        protection["vpgs"]
            .as_array()
            .expect("vpgs")
            .iter()
            .find(|v| v["vpg_name"] == name)
            .and_then(|v| v["vpg_id"].as_str())
            .unwrap_or_else(|| panic!("no VPG {name} in {protection}"))
            .to_string()
    }
}

/// A running `rewind-mcp --http`; killed when dropped.
pub struct HttpServer {
    /// Held so the server lives as long as the test needs it (`kill_on_drop`).
    _process: tokio::process::Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Every line it wrote on stderr so far.
    log: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    /// What it wrote on stderr so far, one line each.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Its URL with `/mcp` replaced by `path`.
    pub fn at(&self, path: &str) -> String {
        self.url.replace(crate::helper::MCP_PATH, path)
    }

    /// The server's process, to signal it or wait for it.
    pub fn process(&mut self) -> &mut tokio::process::Child {
        &mut self._process
    }

    /// A client of this server that plays `human`.
    pub async fn client<H: ClientHandler>(
        &self,
        human: H,
        protocol: Protocol,
    ) -> RunningService<RoleClient, H> {
        connect(
            human,
            StreamableHttpClientTransport::from_uri(self.url.clone()),
            protocol,
        )
        .await
    }

    /// A client that sends `token` as its bearer token (a server with `[http.auth]`).
    pub async fn client_with_token<H: ClientHandler>(
        &self,
        human: H,
        token: &str,
    ) -> RunningService<RoleClient, H> {
        let config =
            rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                self.url.clone(),
            )
            .auth_header(token.to_owned());
        connect(
            human,
            StreamableHttpClientTransport::from_config(config),
            Protocol::Legacy,
        )
        .await
    }
}

async fn connect<H, T, E, A>(
    human: H,
    transport: T,
    protocol: Protocol,
) -> RunningService<RoleClient, H>
where
    H: ClientHandler,
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    match protocol {
        Protocol::Legacy => human
            .serve(transport)
            .await
            .expect("the MCP session starts"),
        Protocol::Mrtr => human
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("the MCP session starts"),
    }
}

/// `cmd` as a stdio child, a client of it that plays `human`, and its stderr's lines, gathered until
/// it closes.
pub async fn stdio_logged<H: ClientHandler>(
    cmd: tokio::process::Command,
    human: H,
) -> (
    RunningService<RoleClient, H>,
    tokio::task::JoinHandle<Vec<String>>,
) {
    let (transport, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("rewind-mcp starts");
    let stderr = stderr.expect("stderr is piped");
    let lines = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        let mut all = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            all.push(line);
        }
        all
    });
    (connect(human, transport, Protocol::Legacy).await, lines)
}

/// A client that plays the human: it can show forms (or not), answers each with `answer`, and keeps
/// every question it was asked and every progress message it got.
#[derive(Clone)]
pub struct Human {
    /// `None`: a client without the elicitation capability.
    pub answer: Option<Answer>,
    pub asked: Arc<Mutex<Vec<ElicitRequestParams>>>,
    pub progress: Arc<Mutex<Vec<String>>>,
    /// How many times the server said its tools changed.
    pub lists_changed: Arc<std::sync::atomic::AtomicUsize>,
}

impl Human {
    /// A human who answers `answer`.
    pub fn answering(answer: Answer) -> Human {
        Human {
            answer: Some(answer),
            asked: Default::default(),
            progress: Default::default(),
            lists_changed: Default::default(),
        }
    }

    /// A client that cannot show a form.
    pub fn unreachable() -> Human {
        Human {
            answer: None,
            asked: Default::default(),
            progress: Default::default(),
            lists_changed: Default::default(),
        }
    }

    /// How many times the server said its tools changed.
    pub fn lists_changed(&self) -> usize {
        self.lists_changed.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many times the human was asked.
    pub fn times_asked(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        let capabilities = match self.answer {
            Some(_) => ClientCapabilities::builder().enable_elicitation().build(),
            None => ClientCapabilities::default(),
        };
        ClientConfig::new(capabilities, Implementation::new("test-human", "0.1.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _ctx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        // A yes-or-no consent form (keeping tags) has one field, `proceed`; the question about an
        // unknown tool has `checkpoint` and `remember`.
        let consent = serde_json::to_value(&request)
            .is_ok_and(|r| r["requestedSchema"]["properties"].get("proceed").is_some());
        self.asked.lock().unwrap().push(request);
        let form = |checkpoint: &str, remember: bool| {
            let content = if consent {
                json!({"proceed": checkpoint})
            } else {
                json!({"checkpoint": checkpoint, "remember": remember})
            };
            ElicitResult::new(ElicitationAction::Accept).with_content(content)
        };
        Ok(match self.answer {
            Some(Answer::Yes) => form("yes", false),
            Some(Answer::No) => form("no", false),
            Some(Answer::YesRemember) => form("yes", true),
            Some(Answer::NoRemember) => form("no", true),
            Some(Answer::Decline) | None => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn on_tool_list_changed(&self, _ctx: NotificationContext<RoleClient>) {
        self.lists_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
    }
}

/// Calls `tool` with `args` and returns the result, failing the test on a protocol error, or when no
/// answer comes within two minutes (the simulator's tasks take milliseconds here), so that a call that
/// hangs fails its test naming the tool rather than holding the run up.
pub async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let result = tokio::time::timeout(
        Duration::from_secs(120),
        client.call_tool(params(tool, args)),
    )
    .await
    .unwrap_or_else(|_| panic!("{tool} did not answer within two minutes"))
    .unwrap_or_else(|e| panic!("{tool} answers without a protocol error: {e}"));
    expect_declared_shape(client, tool, &result).await;
    result
}

/// Checks that a result's structured content validates against the `outputSchema` its tool declares
/// (an unknown tool declares none), and says what happened and what to do next.
pub async fn expect_declared_shape<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    result: &CallToolResult,
) {
    let tools = client.list_all_tools().await.expect("the tools are listed");
    let Some(schema) = tools
        .iter()
        .find(|t| t.name == tool)
        .and_then(|t| t.output_schema.clone())
    else {
        return;
    };
    let content = structured(result);
    let schema = Value::Object(schema.as_ref().clone());
    let validator = jsonschema::validator_for(&schema).expect("the outputSchema is a JSON Schema");
    let problems: Vec<String> = validator
        .iter_errors(content)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        problems.is_empty(),
        "{tool}'s answer does not match its outputSchema: {problems:?}\n{content}"
    );
    for key in ["headline", "next_step"] {
        assert!(
            content[key].as_str().is_some_and(|s| !s.is_empty()),
            "{tool}'s answer says its {key}: {content}"
        );
    }
}

/// The parameters of a call of `tool` with `args`.
pub fn params(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().expect("arguments are an object").clone())
}

/// Guards `vm` for `change_id` as the agent `claude-code` about to do `action`.
pub async fn guard<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    vm: &str,
    action: &str,
    change_id: &str,
) -> CallToolResult {
    let args = json!({"vm": vm, "agent": "claude-code", "action": action, "change_id": change_id});
    call(client, "zerto_guard_before_mutate", args).await
}

/// Recovers the guest file `path` of `vm` from the tag of `change_id` into the folder `destination`.
pub async fn recover_file<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    vm: &str,
    change_id: &str,
    path: &str,
    destination: &std::path::Path,
) -> CallToolResult {
    let destination = destination.to_str().expect("the destination is UTF-8");
    let args =
        json!({"vm": vm, "change_id": change_id, "paths": [path], "destination": destination});
    call(client, "zerto_recover_file", args).await
}

/// Lists the tagged checkpoints of `vm` for `change_id`.
pub async fn list_tags<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    vm: &str,
    change_id: &str,
) -> CallToolResult {
    call(
        client,
        "zerto_list_tags",
        json!({"vm": vm, "change_id": change_id}),
    )
    .await
}

/// Starts a guard of web-01 for `change_id` in the background, so a test can stop the server while
/// the guard's inserts run at Zerto.
pub fn guard_in_background<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    change_id: &str,
) -> tokio::task::JoinHandle<Result<CallToolResult, rmcp::ServiceError>> {
    let peer = client.peer().clone();
    let args = json!({"vm": "web-01", "agent": "claude-code", "action": "edit app.conf", "change_id": change_id});
    tokio::spawn(async move {
        peer.call_tool(params("zerto_guard_before_mutate", args))
            .await
    })
}

/// Sends SIGTERM to the server, as a service manager or a host stops it, and waits (a minute at
/// most) for it to leave.
pub async fn terminate(server: &mut tokio::process::Child) -> std::process::ExitStatus {
    let pid = server.id().expect("a pid").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    leaves(server).await
}

/// Waits (a minute at most) for the server to leave, and returns how it left.
pub async fn leaves(server: &mut tokio::process::Child) -> std::process::ExitStatus {
    tokio::time::timeout(Duration::from_secs(60), server.wait())
        .await
        .expect("the server leaves once the guard is done")
        .expect("the server's exit status")
}

/// Checks the tool did not fail, showing its line when it did.
#[track_caller]
pub fn expect_ok(result: &CallToolResult) {
    assert!(!is_error(result), "{}", line(result));
}

/// Checks the guard's verdict is guarded, showing its line when it is not.
#[track_caller]
pub fn expect_guarded(result: &CallToolResult) {
    assert_eq!(structured(result)["verdict"], "guarded", "{}", line(result));
}

/// Checks the tool failed and its line says `words`.
#[track_caller]
pub fn expect_error_saying(result: &CallToolResult, words: &str) {
    assert!(is_error(result), "{}", line(result));
    assert!(line(result).contains(words), "{}", line(result));
}

/// A result's structured content.
pub fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("the result has structured content")
}

/// A result's first text block: the one-line summary.
pub fn line(result: &CallToolResult) -> String {
    result.content[0]
        .as_text()
        .expect("the first block is text")
        .text
        .clone()
}

/// Whether the tool said it failed.
pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// Writes a configuration file readable by its owner only, as rewind asks of a file with a secret.
fn write_private(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).expect("the config file is written");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .expect("the config file's mode is set");
}
