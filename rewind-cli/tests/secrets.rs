//! No secret leaves the process: one run with distinctive passwords, client secrets and the tokens the
//! simulator issued, through the core in-process (its tracing captured at trace level) and the `rewind`
//! binary (RUST_LOG=trace, human and `--json` output), across an authentication failure, 401 retries
//! (tokens revoked mid-guard), guards, tags, a file-level recovery, a configuration error that quotes
//! its line, and the journal. Every secret is then looked for as a substring in everything captured.

use std::io::Write;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rewind_core::{
    Config, GuardRequest, NoProgress, RecoverFileRequest, Rewind, SiteConfig, Verdict,
};
use serde_json::{Value, json};
use zvm_sim::test_kit::{self, CLIENT_ID};

const CLIENT_SECRET: &str = "cs-Q7x9-distinct-client-secret";
const ADMIN_PASSWORD: &str = "pw-K3v8-distinct-admin-password";
const OPERATOR_PASSWORD: &str = "pw-Zt5m-distinct-operator-password";
const WRONG_SECRET: &str = "ws-Hq2r-distinct-wrong-secret";

/// Captured tracing output, shared with the subscriber's writer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The default world with this test's passwords and client secret.
fn world() -> zvm_sim::WorldSpec {
    test_kit::world_with_secrets(ADMIN_PASSWORD, OPERATOR_PASSWORD, CLIENT_SECRET)
}

/// Runs the `rewind` binary with `RUST_LOG=trace` and returns stdout and stderr together.
fn rewind(home: &std::path::Path, args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rewind"))
        .args(args)
        .env_clear()
        .env("HOME", home.join("home"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("RUST_LOG", "trace")
        .stdin(Stdio::null())
        .output()
        .expect("the rewind binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passwords_client_secrets_and_tokens_never_reach_a_log_an_error_json_or_the_journal() {
    let logs = Captured::default();
    let writer = logs.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let sim = zvm_sim::start(zvm_sim::Options {
        world: world(),
        ..zvm_sim::Options::for_tests(31)
    })
    .await
    .unwrap();
    let (boston, denver) = (sim.local().url.clone(), sim.peer().url.clone());
    let dir = tempfile::tempdir().unwrap();
    let mut seen = String::new();
    let http = reqwest::Client::new();
    let control = test_kit::Control::new(&boston);

    // A token this test fetches itself, as an operator would with curl.
    let token: Value = test_kit::password_grant(&http, &boston, "admin", ADMIN_PASSWORD)
        .await
        .json()
        .await
        .unwrap();
    let mut tokens: Vec<String> = ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| token[*k].as_str().map(str::to_string))
        .collect();
    assert!(!tokens.is_empty(), "{token}");

    // The core in-process: the client secret at Boston, the admin's password at Denver.
    let config = Config {
        sites: vec![
            SiteConfig::with_client("boston", &boston, CLIENT_ID, CLIENT_SECRET).unwrap(),
            SiteConfig::with_password("denver", &denver, "admin", ADMIN_PASSWORD).unwrap(),
        ],
        ..Config::new(
            dir.path().join("catalog.toml"),
            dir.path().join("journal.jsonl"),
        )
    };
    seen.push_str(&format!("{config:?}"));
    let core = Rewind::new(config.clone()).unwrap();
    // 401 retries: every Boston token is revoked at the first task poll.
    control
        .fault(
            json!({"Method": "GET", "Path": "/v1/tasks/*", "Site": "Boston",
            "Action": "RevokeTokens", "Count": 1}),
        )
        .await;
    let report = core
        .guard(
            GuardRequest {
                vm: "web-01".into(),
                agent: "secret-test".into(),
                action: "edit app.conf".into(),
                change_id: "chg-secrets".into(),
            },
            &NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
    seen.push_str(&serde_json::to_string(&report).unwrap());
    seen.push_str(&report.summary());
    let tags = core.list_tags("web-01", Some("chg-secrets")).await.unwrap();
    seen.push_str(&serde_json::to_string(&tags).unwrap());
    let recovered = core
        .recover_file(
            RecoverFileRequest {
                vm: "web-01".into(),
                change: "chg-secrets".into(),
                paths: vec!["sda1/etc/hostname".into()],
                destination: dir.path().join("recovered"),
                overwrite: false,
                plan: None,
            },
            &NoProgress,
        )
        .await
        .unwrap();
    seen.push_str(&serde_json::to_string(&recovered).unwrap());
    // An authentication failure: a wrong secret and a wrong password.
    let mut wrong = config.clone();
    wrong.sites = vec![
        SiteConfig::with_client("boston", &boston, CLIENT_ID, WRONG_SECRET).unwrap(),
        SiteConfig::with_password("denver", &denver, "admin", WRONG_SECRET).unwrap(),
    ];
    seen.push_str(&format!("{wrong:?}"));
    let err = Rewind::connect(wrong)
        .await
        .expect_err("a wrong secret is refused");
    seen.push_str(&format!(
        "{err} {err:?} {}",
        serde_json::to_string(&err.report()).unwrap()
    ));
    let err = core
        .find_protection("no-such-vm")
        .await
        .expect_err("no such VM");
    seen.push_str(&format!("{err} {err:?}"));

    // The binary: a configuration file holding the secret, then the same loop at trace level.
    let config_dir = dir.path().join("config/zerto-ai-rewind");
    std::fs::create_dir_all(&config_dir).unwrap();
    let config_file = config_dir.join("config.toml");
    let sites = format!(
        "[sites.boston]\nurl = \"{boston}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\"\n\n[sites.denver]\nurl = \"{denver}\"\nusername = \"admin\"\npassword = \"{ADMIN_PASSWORD}\"\n"
    );
    std::fs::write(&config_file, &sites).unwrap();
    let home = dir.path();
    for args in [
        vec![
            "--json", "guard", "web-01", "--agent", "cli", "--action", "edit", "--change",
            "chg-cli",
        ],
        vec![
            "guard", "db-01", "--agent", "cli", "--action", "edit", "--change", "chg-cli2",
        ],
        vec!["--json", "tags", "web-01"],
        vec!["-vvv", "find", "web-01"],
        vec!["--json", "sites"],
        vec!["--json", "journal"],
    ] {
        let (code, out) = rewind(home, &args);
        assert_eq!(code, 0, "rewind {args:?}: {out}");
        seen.push_str(&out);
    }
    let to = dir.path().join("cli-recovered");
    let (code, out) = rewind(
        home,
        &[
            "--json",
            "recover",
            "file",
            "web-01",
            "--change",
            "chg-cli",
            "--path",
            "sda1/etc/hostname",
            "--to",
            to.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}");
    seen.push_str(&out);
    // A wrong secret, then configuration errors whose messages could quote the line with the secret.
    std::fs::write(&config_file, sites.replace(CLIENT_SECRET, WRONG_SECRET)).unwrap();
    let (code, out) = rewind(home, &["--json", "find", "web-01"]);
    assert_eq!(code, 5, "{out}");
    seen.push_str(&out);
    for broken in [
        format!(
            "[sites.boston]\nurl = \"{boston}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\n"
        ),
        format!(
            "[sites.boston]\nurl = \"{boston}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = [\"{CLIENT_SECRET}\"]\n"
        ),
        format!(
            "[sites.boston]\nurl = \"{boston}\"\nusername = \"admin\"\npassword = {{ value = \"{ADMIN_PASSWORD}\" }}\n"
        ),
        format!(
            "[sites.boston]\nurl = \"{boston}\"\nclient_id = \"{CLIENT_ID}\"\nclient_secret = \"{CLIENT_SECRET}\"\nusername = \"admin\"\npassword = \"{ADMIN_PASSWORD}\"\n"
        ),
    ] {
        std::fs::write(&config_file, &broken).unwrap();
        let (code, out) = rewind(home, &["--json", "find", "web-01"]);
        assert_eq!(code, 2, "a broken configuration is a usage error: {out}");
        seen.push_str(&out);
    }

    // Every token the simulator issued in this run, live or revoked, as its saved state holds them.
    tokens.extend(control.issued_tokens().await);
    assert!(
        tokens.len() > 2,
        "the run's tokens were found: {}",
        tokens.len()
    );

    let journal = std::fs::read_to_string(dir.path().join("journal.jsonl")).unwrap()
        + &std::fs::read_to_string(dir.path().join("state/zerto-ai-rewind/journal.jsonl")).unwrap();
    assert!(journal.contains("chg-secrets") && journal.contains("chg-cli"));
    let core_logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        core_logs.contains("TRACE") || core_logs.contains("DEBUG"),
        "trace logs were captured"
    );
    let secrets: Vec<String> = [
        CLIENT_SECRET,
        ADMIN_PASSWORD,
        OPERATOR_PASSWORD,
        WRONG_SECRET,
    ]
    .into_iter()
    .map(str::to_string)
    .chain(tokens)
    .collect();
    test_kit::assert_no_secret(
        &secrets,
        &[
            ("the core's logs", core_logs.as_str()),
            ("errors, reports and the binary's output", seen.as_str()),
            ("the journal", journal.as_str()),
        ],
    );
    sim.shutdown().await;
}
