//! `rewind-mcp --gateway` in front of an upstream that changes guests: a small MCP server run in
//! this test process over streamable HTTP, whose `write_file` writes a guest file of the simulator
//! and notes, as it runs, how many tagged checkpoints the simulator had inserted by then. The
//! gateway runs as a client would start it (the built binary over stdio), with a catalog that says
//! which upstream tools change VMs.

use std::sync::{Arc, Mutex};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Tool};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ClientHandler, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::helper::*;
use zvm_sim::test_kit::state_of;

/// What the upstream saw of one call: its tool, and the insert tasks of the simulator that had
/// Completed when it ran.
#[derive(Debug, Clone)]
struct Seen {
    tool: String,
    inserts_completed: usize,
}

/// The upstream: tools over the simulator's guests.
#[derive(Clone)]
struct Guests {
    control: Control,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Set by `grow`: the list holds one more tool.
    grown: Arc<std::sync::atomic::AtomicBool>,
    /// The `Authorization` header of every request the upstream got.
    authorizations: Arc<Mutex<Vec<String>>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct WriteArgs {
    /// The VM.
    vm: String,
    /// The guest path.
    path: String,
    /// What to write.
    content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ReadArgs {
    /// The VM.
    vm: String,
    /// The guest path.
    path: String,
}

#[tool_router]
impl Guests {
    #[tool(description = "Writes a file in a guest.")]
    async fn write_file(&self, Parameters(a): Parameters<WriteArgs>) -> String {
        self.saw("write_file").await;
        self.control
            .put_file(&a.vm, &a.path, a.content.as_bytes())
            .await;
        format!("wrote {} on {}", a.path, a.vm)
    }

    #[tool(description = "Reads a file of a guest.")]
    async fn read_file(&self, Parameters(a): Parameters<ReadArgs>) -> String {
        self.saw("read_file").await;
        let bytes = self.control.try_file(&a.vm, &a.path).await;
        String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned()
    }

    #[tool(description = "Tidies a guest up; nobody has said what that changes.")]
    async fn tidy_up(&self) -> String {
        self.saw("tidy_up").await;
        "tidied".to_owned()
    }

    #[tool(description = "Lists one more tool from now on, and says so to its client.")]
    async fn grow(&self, peer: rmcp::Peer<rmcp::RoleServer>) -> String {
        self.grown.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = peer.notify_tool_list_changed().await;
        "grown".to_owned()
    }

    #[tool(
        description = "Asks the person at the client whether to go on, and says what they answered."
    )]
    async fn confirm(&self, peer: rmcp::Peer<rmcp::RoleServer>) -> String {
        let form = rmcp::model::ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Take a tagged checkpoint first?".to_owned(),
            requested_schema: rmcp::model::ElicitationSchema::builder()
                .required_enum_schema(
                    "checkpoint",
                    rmcp::model::EnumSchema::builder(vec!["yes".into(), "no".into()]).build(),
                )
                .build()
                .unwrap(),
        };
        match peer.create_elicitation(form).await {
            Ok(answer) => format!("{:?} {}", answer.action, json!(answer.content)),
            Err(e) => format!("not asked: {e}"),
        }
    }

    #[tool(name = "files:purge", description = "A name no MCP client takes.")]
    async fn purge(&self) -> String {
        self.saw("files:purge").await;
        "purged".to_owned()
    }
}

#[tool_handler]
impl ServerHandler for Guests {
    async fn list_tools(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let mut tools = Self::tool_router().list_all();
        if self.grown.load(std::sync::atomic::Ordering::SeqCst) {
            let mut grown = tools[0].clone();
            grown.name = "grown_tool".into();
            tools.push(grown);
        }
        Ok(rmcp::model::ListToolsResult::with_all_items(tools))
    }

    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }
}

impl Guests {
    async fn saw(&self, tool: &str) {
        let inserts = self.control.inserts(None).await;
        let completed = inserts.iter().filter(|t| state_of(t) == 6).count();
        self.seen.lock().unwrap().push(Seen {
            tool: tool.to_owned(),
            inserts_completed: completed,
        });
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// The upstream served on a free loopback port: it and its MCP URL.
async fn upstream(env: &TestEnv) -> (Guests, String) {
    let guests = Guests {
        control: Control::new(&env.sim.local().url),
        seen: Arc::default(),
        grown: Arc::default(),
        authorizations: Arc::default(),
    };
    let served = guests.clone();
    let service = StreamableHttpService::new(
        move || Ok(served.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let seen = guests.authorizations.clone();
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let header = request
                    .headers()
                    .get("authorization")
                    .map(|v| v.to_str().unwrap_or_default().to_owned());
                seen.lock().unwrap().push(header.unwrap_or_default());
                next.run(request)
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (guests, url)
}

/// A seeded simulator, the upstream, a gateway configured with it under `guests` (and `extra`
/// configuration), write_file recorded as mutating with its VM in `vm`, read_file as read-only;
/// and a client of the gateway that plays `human`.
async fn gateway<H: ClientHandler>(
    seed: u64,
    extra: &str,
    human: H,
) -> (TestEnv, Guests, RunningService<RoleClient, H>) {
    gateway_on(seed, extra, human, Protocol::Legacy).await
}

/// [`gateway`] with a client of the `protocol` generation.
async fn gateway_on<H: ClientHandler>(
    seed: u64,
    extra: &str,
    human: H,
    protocol: Protocol,
) -> (TestEnv, Guests, RunningService<RoleClient, H>) {
    let env = TestEnv::start(seed, Setup::File).await;
    let (guests, url) = upstream(&env).await;
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    let with_gateway =
        format!("{config}\n[[gateway.upstream]]\nname = \"guests\"\nurl = {url:?}\n{extra}");
    std::fs::write(env.config_path(), with_gateway).unwrap();
    let catalog = "[[mutating]]\nserver = \"guests\"\ntool = \"write_file\"\nvm_arg = \"vm\"\n\n\
                   [[read_only]]\nserver = \"guests\"\ntool = \"read_file\"\n";
    std::fs::write(env.catalog_path(), catalog).unwrap();
    let client = env.gateway_stdio_on(human, protocol).await;
    (env, guests, client)
}

/// Calls `tool` and gives its result, whatever it is (an upstream's refusal has no structured
/// content to check against its outputSchema).
async fn call_through<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    tokio::time::timeout(
        std::time::Duration::from_secs(120),
        client.call_tool(params(tool, args)),
    )
    .await
    .unwrap_or_else(|_| panic!("{tool} did not answer within two minutes"))
    .unwrap_or_else(|e| panic!("{tool} answers without a protocol error: {e}"))
}

fn guard_meta(result: &CallToolResult) -> Value {
    let meta = result.meta.as_ref().map(|m| json!(m)).unwrap_or_default();
    meta["io.zerto-rewind/guard"].clone()
}

fn write(vm: &str, content: &str) -> Value {
    json!({"vm": vm, "path": "sda1/etc/app/app.conf", "content": content})
}

#[tokio::test]
async fn upstream_tools_are_served_under_their_names_with_their_schemas_beside_rewinds_own() {
    let (env, _guests, client) = gateway(501, "", Human::unreachable()).await;
    let tools: Vec<Tool> = client.list_all_tools().await.unwrap();
    let named = |n: &str| tools.iter().find(|t| t.name == n).cloned();
    let write = named("guests__write_file").expect("write_file is served");
    assert_eq!(
        write.input_schema.get("required"),
        Some(&json!(["vm", "path", "content"])),
        "its inputSchema passes unchanged: {:?}",
        write.input_schema
    );
    assert!(named("guests__read_file").is_some() && named("guests__tidy_up").is_some());
    assert!(
        named("zerto_guard_before_mutate").is_some(),
        "rewind's own tools stay"
    );
    assert!(
        tools.iter().all(|t| !t.name.contains(':')),
        "a name a client refuses is left out: {:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    let info = client.peer_info().unwrap();
    assert!(
        info.capabilities
            .tools
            .as_ref()
            .and_then(|t| t.list_changed)
            == Some(true),
        "a gateway says its list changes"
    );
    drop(env);
}

#[tokio::test]
async fn a_read_only_upstream_tool_is_forwarded_and_tags_nothing() {
    let (env, guests, client) = gateway(502, "", Human::unreachable()).await;
    env.control
        .put_file("web-01", "sda1/etc/app/app.conf", b"v1")
        .await;
    let read = call_through(
        &client,
        "guests__read_file",
        json!({"vm": "web-01", "path": "sda1/etc/app/app.conf"}),
    )
    .await;
    expect_ok(&read);
    assert_eq!(line(&read), "v1");
    assert_eq!(env.control.insert_posts().await, 0, "nothing tagged");
    assert_eq!(guests.seen().len(), 1);
}

#[tokio::test]
async fn a_mutating_call_is_forwarded_only_once_every_vpg_of_its_vm_is_tagged() {
    let (env, guests, client) = gateway(503, "", Human::unreachable()).await;
    let written = call_through(&client, "guests__write_file", write("web-01", "v2")).await;
    expect_ok(&written);
    let seen = guests.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].tool, "write_file");
    assert_eq!(
        seen[0].inserts_completed, 3,
        "web-01's three VPGs were tagged before the upstream was called: {seen:?}"
    );
    assert_eq!(
        env.control.file("web-01", "sda1/etc/app/app.conf").await,
        b"v2"
    );
    let guard = guard_meta(&written);
    let change = guard["change_id"].as_str().unwrap().to_owned();
    assert!(change.starts_with("gw-guests-web-01-"), "{guard}");
    assert_eq!(guard["tags"].as_array().map(Vec::len), Some(3), "{guard}");
    assert_eq!(guard["reused"], false);
    let lines = std::fs::read_to_string(env.journal_path()).unwrap();
    let records: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let of = |kind: &str| -> Vec<Value> {
        records
            .iter()
            .filter(|r| r["kind"] == kind)
            .cloned()
            .collect()
    };
    let guarded = of("guard");
    let guarded = guarded.last().expect("the guard is journaled");
    assert_eq!(guarded["verdict"], "guarded", "{guarded}");
    assert_eq!(guarded["change_id"], change.as_str());
    assert_eq!(
        guarded["agent"], "test-human",
        "the client's own name: {guarded}"
    );
    assert_eq!(guarded["action"], "gateway guests");
    let calls = of("call");
    let verdicts: Vec<&Value> = calls.iter().map(|c| &c["verdict"]).collect();
    assert_eq!(
        verdicts,
        [&json!("started"), &json!("completed")],
        "{calls:?}"
    );
    assert_eq!(calls[0]["details"]["tool"], "write_file");
    assert_eq!(
        calls[0]["details"]["arguments_hmac"].as_str().map(str::len),
        Some(64)
    );
    assert!(
        !lines.contains("v2\""),
        "the arguments themselves are not journaled"
    );
}

#[tokio::test]
async fn a_later_call_in_the_window_reuses_the_guard_and_a_named_change_is_the_clients() {
    let (env, guests, client) = gateway(504, "", Human::unreachable()).await;
    let first = call_through(&client, "guests__write_file", write("web-01", "a")).await;
    expect_ok(&first);
    let inserts = env.control.insert_posts().await;
    let again = call_through(&client, "guests__write_file", write("web-01", "b")).await;
    expect_ok(&again);
    assert_eq!(
        env.control.insert_posts().await,
        inserts,
        "no second guard in the window"
    );
    assert_eq!(guard_meta(&again)["reused"], true);
    assert_eq!(
        guard_meta(&again)["change_id"],
        guard_meta(&first)["change_id"]
    );
    let mut named = params("guests__write_file", write("web-01", "c"));
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.insert("io.zerto-rewind/change".into(), json!("upgrade-app-7"));
    named.meta = Some(meta);
    let own = client.call_tool(named).await.unwrap();
    expect_ok(&own);
    assert_eq!(guard_meta(&own)["change_id"], "upgrade-app-7");
    assert_eq!(guard_meta(&own)["reused"], false);
    assert_eq!(env.control.insert_posts().await, inserts + 3);
    assert_eq!(guests.seen().len(), 3);
}

#[tokio::test]
async fn with_zerto_out_of_reach_a_mutating_call_never_reaches_its_upstream() {
    let env = TestEnv::start(505, Setup::File).await;
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://127.0.0.1:{}", free.local_addr().unwrap().port());
    drop(free);
    env.edit_config(&env.sim.local().url, &dead);
    env.edit_config(&env.sim.peer().url, &dead);
    let (guests, url) = upstream(&env).await;
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        format!("{config}\n[[gateway.upstream]]\nname = \"guests\"\nurl = {url:?}\n"),
    )
    .unwrap();
    let catalog = "[[mutating]]\nserver = \"guests\"\ntool = \"write_file\"\nvm_arg = \"vm\"\n";
    std::fs::write(env.catalog_path(), catalog).unwrap();
    let client = env.gateway_stdio(Human::unreachable()).await;
    let refused = call_through(&client, "guests__write_file", write("web-01", "x")).await;
    expect_error_saying(&refused, "guests__write_file was not called");
    assert!(guests.seen().is_empty(), "the upstream was never called");
    assert!(
        env.control
            .try_file("web-01", "sda1/etc/app/app.conf")
            .await
            .as_deref()
            != Some(b"x".as_slice()),
        "the file stays unwritten"
    );
}

#[tokio::test]
async fn a_call_whose_vm_cannot_be_told_is_refused_before_its_upstream() {
    let (_env, guests, client) = gateway(506, "", Human::unreachable()).await;
    let no_vm = call_through(
        &client,
        "guests__write_file",
        json!({"path": "sda1/etc/app/app.conf", "content": "x"}),
    )
    .await;
    expect_error_saying(&no_vm, "has no vm");
    let nobody = call_through(&client, "guests__write_file", write("no-such-vm", "x")).await;
    expect_error_saying(&nobody, "was not called");
    assert!(guests.seen().is_empty(), "{:?}", guests.seen());
}

#[tokio::test]
async fn an_unknown_upstream_tool_is_put_to_the_human_and_never_run_unasked() {
    let (env, guests, client) = gateway(507, "vm = \"web-01\"\n", Human::unreachable()).await;
    let held = call_through(&client, "guests__tidy_up", json!({})).await;
    expect_error_saying(&held, "held for a person's approval");
    assert!(
        line(&held).contains("rewind approvals approve h-"),
        "{}",
        line(&held)
    );
    assert!(
        held.structured_content.is_none(),
        "a hold of an upstream tool is text only"
    );
    assert!(guests.seen().is_empty());

    // A person at this machine approves it (as `rewind approvals approve` does): the identical call
    // then runs once, guarded first, and a third is not run again.
    let store = rewind_core::approvals::HeldCalls::new(
        env.journal_path().parent().unwrap(),
        &env.catalog_path(),
        Default::default(),
    );
    let id = store.list().unwrap()[0].id.clone();
    let approver = rewind_core::Person {
        subject: "local:approver@test".into(),
        name: Some("approver".into()),
    };
    store.decide(&id, &approver, true, None).unwrap();
    let run = call_through(&client, "guests__tidy_up", json!({})).await;
    expect_ok(&run);
    assert_eq!(
        guests.seen()[0].inserts_completed,
        3,
        "approved: guarded first"
    );
    let again = call_through(&client, "guests__tidy_up", json!({})).await;
    expect_error_saying(&again, "already ran");
    assert_eq!(guests.seen().len(), 1, "it ran once");
    let line_of_call = std::fs::read_to_string(env.journal_path()).unwrap();
    assert!(
        line_of_call.contains(&format!("\"approval_id\":\"{id}\"")),
        "the call names its approval"
    );
    drop(env);

    let human = Human::answering(Answer::Yes);
    let (env, guests, client) = gateway(508, "vm = \"web-01\"\n", human.clone()).await;
    let run = call_through(&client, "guests__tidy_up", json!({})).await;
    expect_ok(&run);
    assert_eq!(human.times_asked(), 1);
    assert_eq!(guests.seen()[0].inserts_completed, 3, "yes: guarded first");
    assert_eq!(guard_meta(&run)["tags"].as_array().map(Vec::len), Some(3));
    drop(env);
}

#[tokio::test]
async fn an_agent_cannot_make_an_upstream_tool_read_only() {
    let (env, _guests, client) = gateway(509, "", Human::unreachable()).await;
    let refused = call(
        &client,
        "zerto_add_read_only_tool",
        json!({"server": "guests", "tool": "write_file"}),
    )
    .await;
    expect_error_saying(&refused, "only a person");
    let catalog = std::fs::read_to_string(env.catalog_path()).unwrap();
    assert!(!catalog.contains("[[read_only]]\nserver = \"guests\"\ntool = \"write_file\""));
}

#[tokio::test]
async fn a_child_upstream_gets_none_of_the_gateways_zvm_credentials() {
    let env = TestEnv::start(510, Setup::File).await;
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    let child = format!(
        "\n[[gateway.upstream]]\nname = \"inner\"\ncommand = {:?}\nenv = {{ REWIND_INNER = \"1\" }}\n\
         [[gateway.upstream]]\nname = \"broken\"\ncommand = \"/nonexistent/upstream\"\n",
        env!("CARGO_BIN_EXE_rewind-mcp")
    );
    std::fs::write(env.config_path(), format!("{config}{child}")).unwrap();
    std::fs::write(
        env.catalog_path(),
        "[[read_only]]\nserver = \"inner\"\ntool = \"zerto_find_protection\"\n",
    )
    .unwrap();
    // The gateway's own ZVM credentials, in its environment as well as in its file.
    let mut cmd = env.command(&["--gateway"]);
    cmd.env("ZVM_URL", &env.sim.local().url)
        .env("ZVM_CLIENT_ID", CLIENT_ID)
        .env("ZVM_CLIENT_SECRET", CLIENT_SECRET);
    let (client, stderr) = stdio_logged(cmd, Human::unreachable()).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t.name == "inner__zerto_find_protection")
    );
    assert!(!tools.iter().any(|t| t.name.starts_with("broken__")));
    let found = call_through(
        &client,
        "inner__zerto_find_protection",
        json!({"vm": "web-01"}),
    )
    .await;
    let said = serde_json::to_string(&found).unwrap();
    assert!(
        found.is_error == Some(true),
        "the child has no site: {said}"
    );
    assert!(
        said.contains("ZVM_URL"),
        "it says no site is configured: {said}"
    );
    assert!(!said.contains(CLIENT_SECRET));
    client.cancel().await.unwrap();
    let log = stderr.await.unwrap();
    let broken: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("upstream broken"))
        .collect();
    assert_eq!(
        broken.len(),
        1,
        "one line names the upstream that did not start: {log:?}"
    );
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent is the second field after the command's closing parenthesis.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if parent == Some(pid) {
            out.push(child);
        }
    }
    out
}

#[tokio::test]
async fn an_upstream_that_dies_mid_call_leaves_it_may_have_run_and_comes_back() {
    let env = TestEnv::start(511, Setup::File).await;
    // The upstream is rewind-mcp itself, with its own journal and the same sites.
    let inner = env.dir.path().join("inner.toml");
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    let sites = &config[config.find("[sites.").unwrap()..];
    std::fs::write(
        &inner,
        format!(
            "catalog = {:?}\njournal = {:?}\n{sites}",
            env.dir.path().join("inner-catalog.toml"),
            env.dir.path().join("inner-journal.jsonl")
        ),
    )
    .unwrap();
    let upstream = format!(
        "\n[[gateway.upstream]]\nname = \"inner\"\ncommand = {:?}\nargs = [\"--config\", {inner:?}]\nvm = \"web-01\"\n",
        env!("CARGO_BIN_EXE_rewind-mcp")
    );
    std::fs::write(env.config_path(), format!("{config}{upstream}")).unwrap();
    std::fs::write(
        env.catalog_path(),
        "[[mutating]]\nserver = \"inner\"\ntool = \"zerto_guard_before_mutate\"\n\n\
         [[read_only]]\nserver = \"inner\"\ntool = \"zerto_list_tags\"\n",
    )
    .unwrap();
    let (transport, _) = TokioChildProcess::builder(env.command(&["--gateway"]))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let gateway = transport.id().unwrap();
    let client = Human::unreachable().serve(transport).await.unwrap();
    let inner_guard = |change: &str| json!({"vm": "web-01", "agent": "claude-code", "action": "edit", "change_id": change});
    let first = call_through(
        &client,
        "inner__zerto_guard_before_mutate",
        inner_guard("c-1"),
    )
    .await;
    expect_ok(&first);

    // The next call reuses the window's guard; the upstream's own guard then waits on slow tasks.
    env.control.timing(20_000, 0).await;
    let before = env.control.inserts(None).await.len();
    let peer = client.peer().clone();
    let second = params("inner__zerto_guard_before_mutate", inner_guard("c-2"));
    let call = tokio::spawn(async move { peer.call_tool(second).await.unwrap() });
    while env.control.inserts(None).await.len() == before {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let upstreams = children_of(gateway);
    assert_eq!(upstreams.len(), 1, "the gateway's one child: {upstreams:?}");
    let killed = std::process::Command::new("kill")
        .args(["-9", &upstreams[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let lost = call.await.unwrap();
    expect_error_saying(&lost, "inner__zerto_guard_before_mutate was sent");
    assert!(line(&lost).contains("may have run"), "{}", line(&lost));
    let lines = std::fs::read_to_string(env.journal_path()).unwrap();
    let verdicts: Vec<String> = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "call")
        .map(|r| r["verdict"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        verdicts,
        ["started", "completed", "started", "may_have_run"]
    );

    env.control.timing(50, 0).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let tools = client.list_all_tools().await.unwrap();
        if tools.iter().any(|t| t.name == "inner__zerto_list_tags") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the upstream never came back"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let tags = call_through(&client, "inner__zerto_list_tags", json!({"vm": "web-01"})).await;
    expect_ok(&tags);
}

#[tokio::test]
async fn an_upstreams_changed_list_is_listed_again_and_the_client_told() {
    let human = Human::unreachable();
    let (env, _guests, client) = gateway(512, "", human.clone()).await;
    let before = client.list_all_tools().await.unwrap();
    assert!(!before.iter().any(|t| t.name == "guests__grown_tool"));
    std::fs::write(
        env.catalog_path(),
        "[[read_only]]\nserver = \"guests\"\ntool = \"grow\"\n",
    )
    .unwrap();
    expect_ok(&call_through(&client, "guests__grow", json!({})).await);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while human.lists_changed() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the client was never told"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let after = client.list_all_tools().await.unwrap();
    assert!(
        after.iter().any(|t| t.name == "guests__grown_tool"),
        "{:?}",
        after.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_2026_client_listening_for_changed_tools_is_told_on_its_subscription() {
    let (env, _guests, client) = gateway_on(513, "", Human::unreachable(), Protocol::Mrtr).await;
    std::fs::write(
        env.catalog_path(),
        "[[read_only]]\nserver = \"guests\"\ntool = \"grow\"\n",
    )
    .unwrap();
    let filter = rmcp::model::SubscriptionFilter::builder()
        .tools_list_changed()
        .build();
    let mut subscription = client.peer().listen(filter).await.unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    expect_ok(&call_through(&client, "guests__grow", json!({})).await);
    let told = tokio::time::timeout(std::time::Duration::from_secs(15), subscription.next())
        .await
        .expect("told within 15 s")
        .unwrap();
    assert!(
        matches!(
            told,
            Some(rmcp::model::ServerNotification::ToolListChangedNotification(_))
        ),
        "{told:?}"
    );
    let after = client.list_all_tools().await.unwrap();
    assert!(after.iter().any(|t| t.name == "guests__grown_tool"));
}

#[tokio::test]
async fn an_upstreams_question_is_put_to_the_gateways_client_from_the_call() {
    let human = Human::answering(Answer::Yes);
    let (env, _guests, client) = gateway(514, "", human.clone()).await;
    std::fs::write(
        env.catalog_path(),
        "[[read_only]]\nserver = \"guests\"\ntool = \"confirm\"\n",
    )
    .unwrap();
    let answered = call_through(&client, "guests__confirm", json!({})).await;
    expect_ok(&answered);
    assert_eq!(human.times_asked(), 1, "the client was asked once");
    assert!(
        line(&answered).starts_with("Accept") && line(&answered).contains("\"yes\""),
        "the upstream got the answer: {}",
        line(&answered)
    );
    let unable = Human::unreachable();
    let (env, _guests, client) = gateway(515, "", unable).await;
    std::fs::write(
        env.catalog_path(),
        "[[read_only]]\nserver = \"guests\"\ntool = \"confirm\"\n",
    )
    .unwrap();
    let declined = call_through(&client, "guests__confirm", json!({})).await;
    assert!(
        line(&declined).starts_with("Decline"),
        "a client that cannot be asked declines, never a yes: {}",
        line(&declined)
    );
}

/// A gateway in front of the upstream reached with `credential` (keys of its table, made for the
/// test's simulator), its process given `env_vars`; the client, and the lines of its log.
async fn with_credential(
    seed: u64,
    credential: impl Fn(&TestEnv) -> String,
    env_vars: &[(&str, &str)],
) -> (
    TestEnv,
    Guests,
    RunningService<RoleClient, Human>,
    tokio::task::JoinHandle<Vec<String>>,
) {
    let env = TestEnv::start(seed, Setup::File).await;
    let (guests, url) = upstream(&env).await;
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        format!(
            "{config}\n[[gateway.upstream]]\nname = \"guests\"\nurl = {url:?}\n{}",
            credential(&env)
        ),
    )
    .unwrap();
    std::fs::write(
        env.catalog_path(),
        "[[read_only]]\nserver = \"guests\"\ntool = \"read_file\"\n",
    )
    .unwrap();
    let mut cmd = env.command(&["--gateway"]);
    for (key, value) in env_vars {
        cmd.env(key, value);
    }
    let (client, log) = stdio_logged(cmd, Human::unreachable()).await;
    (env, guests, client, log)
}

#[tokio::test]
async fn an_http_upstream_is_reached_with_the_gateways_own_credential_only() {
    let read = json!({"vm": "web-01", "path": "sda1/etc/hostname"});
    let bearer = |_: &TestEnv| "bearer_env = \"GUESTS_TOKEN\"\n".to_owned();
    let (_env, guests, client, _log) =
        with_credential(516, bearer, &[("GUESTS_TOKEN", "tok-516")]).await;
    expect_ok(&call_through(&client, "guests__read_file", read.clone()).await);
    let seen = guests.authorizations.lock().unwrap().clone();
    assert!(
        !seen.is_empty() && seen.iter().all(|a| a == "Bearer tok-516"),
        "{seen:?}"
    );

    let oauth = |env: &TestEnv| {
        let token_url = format!(
            "{}/auth/realms/zerto/protocol/openid-connect/token",
            env.sim.local().url
        );
        format!(
            "token_url = {token_url:?}\nclient_id = {CLIENT_ID:?}\nclient_secret_env = \"GUESTS_SECRET\"\n"
        )
    };
    let (env, guests, client, _log) =
        with_credential(518, oauth, &[("GUESTS_SECRET", CLIENT_SECRET)]).await;
    expect_ok(&call_through(&client, "guests__read_file", read).await);
    let seen = guests.authorizations.lock().unwrap().clone();
    assert!(
        !seen.is_empty() && seen.iter().all(|a| a == &seen[0]),
        "one token: {seen:?}"
    );
    // The token the realm issued to the client credentials: its claims name the client and realm.
    use base64::Engine;
    let claims = seen[0]
        .strip_prefix("Bearer ")
        .and_then(|jwt| jwt.split('.').nth(1))
        .and_then(|part| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(part)
                .ok()
        })
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .unwrap_or_else(|| panic!("a JWT: {}", seen[0]));
    assert_eq!(claims["azp"], CLIENT_ID, "{claims}");
    assert_eq!(
        claims["iss"],
        format!("{}/auth/realms/zerto", env.sim.local().url),
        "{claims}"
    );
}

#[tokio::test]
async fn an_http_upstream_whose_credential_is_missing_is_named_and_its_tools_absent() {
    let bearer = |_: &TestEnv| "bearer_env = \"GUESTS_TOKEN\"\n".to_owned();
    let (_env, guests, client, log) = with_credential(519, bearer, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(!tools.iter().any(|t| t.name.starts_with("guests__")));
    assert!(tools.iter().any(|t| t.name == "zerto_guard_before_mutate"));
    assert!(
        guests.authorizations.lock().unwrap().is_empty(),
        "never reached"
    );
    client.cancel().await.unwrap();
    let log = log.await.unwrap();
    let named: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("upstream guests") && l.contains("$GUESTS_TOKEN"))
        .collect();
    assert!(!named.is_empty(), "{log:?}");
}

#[tokio::test]
async fn on_a_team_server_an_upstreams_tools_need_its_role_and_the_role_of_what_they_do() {
    let world = zvm_sim::test_kit::world_with_people(&[
        ("alice", &["rewind-read", "rewind-guard", "guests-op"]),
        ("bob", &["rewind-read", "rewind-guard"]),
        ("carol", &["rewind-read", "guests-op"]),
    ]);
    let options = zvm_sim::Options {
        world,
        ..zvm_sim::Options::for_tests(520)
    };
    let env = TestEnv::start_with(options, Setup::File).await;
    crate::sign_in::signed_in(&env, "account");
    let (guests, url) = upstream(&env).await;
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    std::fs::write(
        env.config_path(),
        format!(
            "{config}\n[[gateway.upstream]]\nname = \"guests\"\nurl = {url:?}\nrole = \"guests-op\"\n\
             [[gateway.upstream]]\nname = \"norole\"\nurl = {url:?}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        env.catalog_path(),
        "[[mutating]]\nserver = \"guests\"\ntool = \"write_file\"\nvm_arg = \"vm\"\n\n\
         [[read_only]]\nserver = \"guests\"\ntool = \"read_file\"\n\n\
         [[read_only]]\nserver = \"norole\"\ntool = \"read_file\"\n",
    )
    .unwrap();
    let server = env.http_server_with(&["--gateway"]).await;
    let read = json!({"vm": "web-01", "path": "sda1/etc/hostname"});

    let bob = crate::sign_in::client_as(&env, &server, "bob").await;
    let refused = call_through(&bob, "guests__read_file", read.clone()).await;
    expect_error_saying(&refused, "guests-op");
    bob.cancel().await.unwrap();

    let carol = crate::sign_in::client_as(&env, &server, "carol").await;
    expect_ok(&call_through(&carol, "guests__read_file", read.clone()).await);
    let refused = call_through(&carol, "guests__write_file", write("web-01", "x")).await;
    expect_error_saying(&refused, "rewind-guard");
    assert!(env.insert_tasks().await.is_empty(), "nothing was inserted");
    carol.cancel().await.unwrap();

    let alice = crate::sign_in::client_as(&env, &server, "alice").await;
    let refused = call_through(&alice, "norole__read_file", read).await;
    expect_error_saying(&refused, "names no role");
    expect_ok(&call_through(&alice, "guests__write_file", write("web-01", "y")).await);
    let writes = guests
        .seen()
        .iter()
        .filter(|s| s.tool == "write_file")
        .count();
    assert_eq!(writes, 1, "only alice's write reached the upstream");
    let lines = std::fs::read_to_string(env.journal_path()).unwrap();
    let call = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "call")
        .expect("the call is journaled");
    assert_eq!(call["person"]["name"], "alice", "{call}");
    alice.cancel().await.unwrap();
}

#[tokio::test]
async fn a_cancel_during_the_guard_lets_its_inserts_end_and_calls_no_upstream() {
    let (env, guests, client) = gateway(521, "", Human::unreachable()).await;
    env.control.timing(2_000, 0).await;
    let peer = client.peer().clone();
    let call = tokio::spawn(async move {
        peer.call_tool(params("guests__write_file", write("web-01", "x")))
            .await
    });
    while env.control.inserts(None).await.is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // Dropping the call's future is how an rmcp client cancels it: it sends notifications/cancelled.
    call.abort();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let guarded = loop {
        let lines = std::fs::read_to_string(env.journal_path()).unwrap_or_default();
        let verdict = lines
            .lines()
            .rev()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["kind"] == "guard")
            .find_map(|r| r["verdict"].as_str().map(str::to_owned));
        if verdict.as_deref() == Some("guarded") {
            break lines;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the guard was not finished"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let inserts = env.control.inserts(None).await;
    assert_eq!(inserts.len(), 3, "the inserts already sent ended");
    assert!(inserts.iter().all(|t| state_of(t) == 6), "{inserts:?}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(guests.seen().is_empty(), "the upstream was never called");
    assert!(
        !guarded.contains("\"kind\":\"call\""),
        "no call was journaled"
    );
}

#[tokio::test]
async fn a_mutating_tool_that_approvals_require_names_is_held_before_anything_is_sent() {
    let extra = "\n[[approvals.require]]\nserver = \"guests\"\ntool = \"write_file\"\n";
    let (env, guests, client) = gateway(531, extra, Human::unreachable()).await;
    let held = call_through(&client, "guests__write_file", write("web-01", "x")).await;
    expect_error_saying(&held, "held for a person's approval");
    assert!(guests.seen().is_empty(), "the upstream was not called");
    assert!(
        env.insert_tasks().await.is_empty(),
        "no guard before a person approves"
    );
    let read = json!({"vm": "web-01", "path": "sda1/etc/app/app.conf"});
    let other = call_through(&client, "guests__read_file", read).await;
    expect_ok(&other);
    assert_eq!(guests.seen().len(), 1, "only what require names is held");
}
