//! `rewind doctor` against the simulator over HTTPS with its self-signed certificates: it passes on
//! a good configuration, and on each broken one fails or warns naming the fix: a wrong secret, an
//! untrusted certificate, a recovery site not configured, a journal that cannot be written, an
//! Operator account. It only reads: the simulator sees no write.

use serde_json::Value;

use crate::env::{CLIENT_SECRET, TestEnv};
use crate::trust::{over_tls, trust_denver};

/// The checks of a run, as `(scope, check, verdict)`, and the run's JSON.
async fn doctor(env: &TestEnv, code: i32) -> Value {
    let (run, json) = env.rewind_json(&["doctor"]).await;
    run.expect_code(code);
    json
}

/// The one check of `scope` and `check` whose verdict is `verdict`; its fix.
fn fix_of(json: &Value, scope: &str, check: &str, verdict: &str) -> String {
    let checks = json["result"]["checks"].as_array().expect("checks");
    let found = checks
        .iter()
        .find(|c| c["scope"] == scope && c["check"] == check && c["verdict"] == verdict)
        .unwrap_or_else(|| panic!("a {verdict} {check} check of {scope}: {json:#}"));
    found["fix"].as_str().unwrap_or_default().to_owned()
}

/// A simulator over HTTPS whose two sites this configuration trusts.
async fn trusted(seed: u64, certs: &std::path::Path) -> TestEnv {
    let (env, boston, _) = over_tls(seed, certs).await;
    env.rewind(&["trust", "boston", "--fingerprint", &boston])
        .await
        .expect_code(0);
    trust_denver(&env).await;
    env
}

/// Every file under `dir` with its length and modification time.
fn files_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                folders.push(entry.path());
            } else {
                out.push((entry.path(), meta.len(), meta.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn doctor_passes_a_good_configuration_and_writes_nothing_at_the_zvm() {
    let certs = tempfile::tempdir().unwrap();
    let env = trusted(81, certs.path()).await;
    env.control.clear_calls().await;
    let before = files_under(env.dir.path());
    let json = doctor(&env, 0).await;
    assert_eq!(
        files_under(env.dir.path()),
        before,
        "doctor writes nothing on disk"
    );
    let result = &json["result"];
    assert_eq!(result["failed"], 0, "{json:#}");
    for check in ["reachable", "tls", "credential", "version"] {
        fix_of(&json, "site boston", check, "pass");
        fix_of(&json, "site denver", check, "pass");
    }
    fix_of(&json, "local", "recovery sites", "pass");
    fix_of(&json, "local", "journal", "pass");
    // sql-init (Initializing) and files-dr (syncing) are named: rewind cannot tag them now.
    let vpgs = fix_of(&json, "site boston", "vpgs", "warn");
    assert!(vpgs.contains("cannot be guarded"), "{vpgs}");
    let calls = env.control.calls().await;
    assert!(
        calls
            .iter()
            .all(|c| c["Method"] == "GET" || c["Path"].as_str().unwrap().contains("/token")),
        "doctor only reads: {calls:#?}"
    );
}

#[tokio::test]
async fn doctor_names_the_fix_of_an_untrusted_certificate_and_of_a_wrong_secret() {
    let certs = tempfile::tempdir().unwrap();
    let (env, boston, _) = over_tls(82, certs.path()).await;
    let json = doctor(&env, 5).await;
    let fix = fix_of(&json, "site boston", "tls", "fail");
    assert!(
        fix.contains(&format!("rewind trust boston --fingerprint {boston}")),
        "{fix}"
    );

    env.rewind(&["trust", "boston", "--fingerprint", &boston])
        .await
        .expect_code(0);
    trust_denver(&env).await;
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    env.write_config_text(&config.replacen(CLIENT_SECRET, "not-the-secret", 1));
    let json = doctor(&env, 5).await;
    let fix = fix_of(&json, "site boston", "credential", "fail");
    assert!(
        fix.contains("client_id = \"rewind\"") && fix.contains("client_secret"),
        "{fix}"
    );
    assert!(
        !json.to_string().contains("not-the-secret"),
        "no secret in the diagnosis"
    );
    fix_of(&json, "site denver", "credential", "pass");
}

#[tokio::test]
async fn doctor_gives_the_block_of_a_recovery_site_not_configured() {
    let certs = tempfile::tempdir().unwrap();
    let (env, boston, _) = over_tls(83, certs.path()).await;
    let only_boston = format!(
        "[sites.boston]\nurl = \"{}\"\nclient_id = \"rewind\"\nclient_secret = \"{CLIENT_SECRET}\"\n",
        env.sim.local().url
    );
    env.write_config_text(&only_boston);
    env.rewind(&["trust", "boston", "--fingerprint", &boston])
        .await
        .expect_code(0);
    let json = doctor(&env, 0).await;
    let fix = fix_of(&json, "local", "recovery sites", "warn");
    assert!(
        fix.contains("[sites.denver]") && fix.contains("url = "),
        "{fix}"
    );
}

#[tokio::test]
async fn doctor_fails_a_journal_that_cannot_be_written() {
    let certs = tempfile::tempdir().unwrap();
    let env = trusted(84, certs.path()).await;
    // A journal under a regular file can be made by nobody, root included.
    let blocker = env.dir.path().join("not-a-folder");
    std::fs::write(&blocker, "").unwrap();
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    let journal = blocker.join("journal.jsonl");
    env.write_config_text(&format!("journal = \"{}\"\n{config}", journal.display()));
    let json = doctor(&env, 1).await;
    let fix = fix_of(&json, "local", "journal", "fail");
    assert!(fix.contains("journal = "), "{fix}");
}

#[tokio::test]
async fn doctor_warns_that_an_operator_account_cannot_restore_files() {
    let certs = tempfile::tempdir().unwrap();
    let env = trusted(85, certs.path()).await;
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    let operator = config.replacen(
        &format!("client_id = \"rewind\"\nclient_secret = \"{CLIENT_SECRET}\""),
        "username = \"operator\"\npassword = \"operator\"",
        1,
    );
    assert_ne!(operator, config);
    env.write_config_text(&operator);
    let json = doctor(&env, 0).await;
    let fix = fix_of(&json, "site boston", "permissions", "warn");
    assert!(
        fix.contains("10.9") && fix.contains("Administrator"),
        "{fix}"
    );
    let credential = &json["result"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["scope"] == "site boston" && c["check"] == "credential")
        .unwrap()["detail"];
    assert!(
        credential.as_str().unwrap().contains("password grant"),
        "{credential}"
    );
}

#[tokio::test]
async fn doctor_reports_a_ca_cert_it_cannot_read_as_its_finding() {
    let certs = tempfile::tempdir().unwrap();
    let (env, _, _) = over_tls(86, certs.path()).await;
    let broken = env.sites_toml().replacen(
        "client_secret",
        "ca_cert = \"/nonexistent/boston.pem\"\nclient_secret",
        1,
    );
    env.write_config_text(&broken);
    let json = doctor(&env, 2).await;
    let check = &json["result"]["checks"][0];
    assert_eq!(check["check"], "configuration", "{json:#}");
    assert!(
        check["detail"].as_str().unwrap().contains("ca_cert"),
        "{json:#}"
    );
}

#[tokio::test]
async fn with_no_site_doctor_says_so_and_still_checks_the_catalog_the_journal_and_the_hook() {
    let env = TestEnv::start(87).await;
    env.write_config_text("");
    let (run, json) = env.rewind_json(&["doctor"]).await;
    run.expect_code(2);
    let checks = json["result"]["checks"].as_array().unwrap();
    let named = |check: &str| checks.iter().any(|c| c["check"] == check);
    assert!(named("configuration"), "{json:#}");
    assert!(named("hook"), "{json:#}");
    assert!(
        checks.iter().any(|c| c["scope"] == "local"
            && c["check"] != "configuration"
            && c["check"] != "hook"),
        "the local files are checked too: {json:#}"
    );
}

#[tokio::test]
async fn doctor_warns_of_a_gateway_upstream_that_a_client_also_reaches_directly() {
    let certs = tempfile::tempdir().unwrap();
    let env = trusted(88, certs.path()).await;
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    env.write_config_text(&format!(
        "{config}\n[[gateway.upstream]]\nname = \"fs\"\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv\"]\n"
    ));
    let clean = doctor(&env, 0).await;
    let checks = clean["result"]["checks"].as_array().unwrap();
    assert!(
        checks
            .iter()
            .any(|c| c["check"] == "gateway" && c["verdict"] == "pass"),
        "{clean:#}"
    );
    let cursor = env.dir.path().join("home/.cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(
        &cursor,
        r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]}}}"#,
    )
    .unwrap();
    let warned = doctor(&env, 0).await;
    let fix = fix_of(&warned, "local", "gateway", "warn");
    assert!(
        fix.contains("remove \"files\"") && fix.contains(".cursor/mcp.json"),
        "{fix}"
    );
    let checks = warned["result"]["checks"].as_array().unwrap();
    let detail = checks
        .iter()
        .find(|c| c["check"] == "gateway")
        .and_then(|c| c["detail"].as_str())
        .unwrap();
    assert!(
        detail.contains("upstream fs") && detail.contains("its command"),
        "{detail}"
    );
}

#[tokio::test]
async fn doctor_checks_a_journal_in_postgresql_naming_only_its_host_and_database() {
    let certs = tempfile::tempdir().unwrap();
    let env = trusted(86, certs.path()).await;
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    let url = zvm_sim::test_kit::Postgres::shared().fresh_database();
    env.write_config_text(&format!("journal = {url:?}\n{config}"));
    let json = doctor(&env, 0).await;
    let checks = json["result"]["checks"].as_array().unwrap();
    let journal = checks
        .iter()
        .find(|c| c["scope"] == "local" && c["check"] == "journal")
        .unwrap();
    assert_eq!(journal["verdict"], "pass", "{journal}");
    assert!(
        journal["detail"].as_str().unwrap().contains("127.0.0.1:"),
        "{journal}"
    );

    // A database nothing listens for, with a password in the URL: failed, and the password unsaid.
    let gone = "postgresql://rewind:hunter2@127.0.0.1:1/team?sslmode=disable&connect_timeout=1";
    env.write_config_text(&format!("journal = {gone:?}\n{config}"));
    let (run, json) = env.rewind_json(&["doctor"]).await;
    run.expect_code(1);
    let fix = fix_of(&json, "local", "journal", "fail");
    assert!(fix.contains("127.0.0.1:1/team"), "{fix}");
    assert!(!run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"));
}
