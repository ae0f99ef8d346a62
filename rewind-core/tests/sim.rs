//! rewind-core against the in-process simulator: tokens, retries, find_protection, the guard, tags,
//! the journal, and what never leaks.

mod common;
// Bounded recover (FLR, failover test, clone) lives in its own module of this one test binary.
mod recover;
// find_protection on large worlds, and what a long-lived client keeps.
mod change_ids;
mod lookup;
// The journal kept in PostgreSQL, and two replicas on one database.
mod postgres;
mod reach;

use std::sync::Mutex;
use std::time::Duration;

use common::{CLIENT_SECRET, Sites, TestEnv, guard, guarded, journal_records, request};
use rewind_core::audit_journal::{JournalFilter, JournalVerdict};
use rewind_core::{
    Culprit, FlrAvailability, GuardNote, NoProgress, Outcome, ProgressSink, Rewind, RewindError,
    RunningInsert, SiteConfig, Stage, TaskProgress, Verdict,
};

fn outcome_of<'a>(report: &'a rewind_core::GuardReport, vpg: &str) -> &'a Outcome {
    &report
        .vpgs
        .iter()
        .find(|v| v.vpg_name == vpg)
        .unwrap_or_else(|| panic!("{vpg} is in the report: {}", report.summary()))
        .outcome
}

fn checkpoint_of(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Tagged { checkpoint_id, .. } => checkpoint_id.clone(),
        other => panic!("expected tagged, got {other:?}"),
    }
}

#[tokio::test]
async fn without_sites_the_catalog_and_journal_work_and_every_zvm_call_refuses_naming_what_to_configure()
 {
    let dir = tempfile::tempdir().unwrap();
    let config = rewind_core::Config::new(
        dir.path().join("catalog.toml"),
        dir.path().join("journal.jsonl"),
    );
    let rewind = Rewind::new(config.clone()).expect("a Rewind without sites");
    assert!(rewind.catalog().classify("ssh", "run", None).is_ok());
    assert!(journal_records(&rewind).is_empty());
    let no_sites = |e: &RewindError| {
        matches!(
            e,
            RewindError::Config(rewind_core::config::ConfigError::NoSites { .. })
        ) && e.kind() == rewind_core::ErrorKind::Usage
            && e.to_string().contains("ZVM_URL")
            && e.to_string().contains("[sites.<name>]")
    };
    let err = rewind.find_protection("web-01").await.unwrap_err();
    assert!(no_sites(&err), "{err}");
    let err = rewind
        .guard(request("web-01", "c1"), &NoProgress)
        .await
        .unwrap_err();
    assert!(no_sites(&err), "{err}");
    let err = rewind.list_tags("web-01", None).await.unwrap_err();
    assert!(no_sites(&err), "{err}");
    let err = Rewind::connect(config).await.unwrap_err();
    assert!(no_sites(&err), "{err}");
    assert!(
        journal_records(&rewind).is_empty(),
        "nothing refused is journaled"
    );
}

#[tokio::test]
async fn connect_learns_each_sites_identifier_from_localsite() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(1), Sites::Both).await;
    let rewind = Rewind::connect(env.config_with(|c| c)).await.unwrap();
    let sites = rewind.sites().await;
    assert_eq!(sites.len(), 2);
    assert!(
        sites.iter().all(|s| s.reachable && s.error.is_none()),
        "{sites:?}"
    );
    assert_eq!(
        sites[0].site_id.as_deref(),
        Some(env.sim.local().site_identifier.as_str())
    );
    assert_eq!(
        sites[1].site_id.as_deref(),
        Some(env.sim.peer().site_identifier.as_str())
    );
    assert_eq!(sites[0].site_name.as_deref(), Some("Boston"));
}

#[tokio::test]
async fn two_hundred_fifty_six_concurrent_calls_from_cold_make_exactly_one_token_request() {
    let env = TestEnv::start(2).await;
    let client = env.rewind.client("boston").unwrap().clone();
    let calls = (0..256).map(|_| {
        let c = client.clone();
        tokio::spawn(async move { c.vpgs().await })
    });
    for r in futures::future::join_all(calls).await {
        assert!(!r.unwrap().unwrap().is_empty());
    }
    assert_eq!(env.control.token_requests().await, 1);
}

#[tokio::test]
async fn with_the_session_limit_on_no_call_surfaces_a_401() {
    let mut options = zvm_sim::Options::for_tests(3);
    options.session_limit = true;
    let env = TestEnv::start_with(options, Sites::Both).await;
    let storm = |rewind: Rewind| async move {
        let calls = (0..256).map(|i| {
            let r = rewind.clone();
            tokio::spawn(async move {
                let site = if i % 2 == 0 { "boston" } else { "denver" };
                r.client(site).unwrap().vpgs().await.map(|_| ())
            })
        });
        for r in futures::future::join_all(calls).await {
            r.unwrap().expect("no call fails, 401s included");
        }
    };
    storm(env.rewind.clone()).await;
    // Every token expires on the ZVM's clock while rewind still holds it: the next storm meets 401s,
    // which must be absorbed by one new token per site.
    env.control.advance(400).await;
    storm(env.rewind.clone()).await;
    guarded(&env.rewind, "app-01", "chg-session").await;
    assert!(
        env.control.token_requests().await <= 4,
        "one token per site and expiry"
    );
}

#[tokio::test]
async fn password_credentials_work_and_a_wrong_secret_is_an_auth_error_that_never_shows_it() {
    let env = TestEnv::start(4).await;
    let user = env.rewind_as_user("admin", "admin");
    assert!(
        !user
            .client("boston")
            .unwrap()
            .vpgs()
            .await
            .unwrap()
            .is_empty()
    );

    let wrong = env.rewind_as_client("rewind", "s3cret-that-must-not-print");
    let err = wrong.find_protection("web-01").await.unwrap_err();
    assert!(matches!(err, RewindError::Auth { .. }), "{err:?}");
    assert_eq!(err.kind(), rewind_core::ErrorKind::Connection);
    let text = format!("{err} {err:?} {:?}", wrong);
    assert!(text.contains("boston"), "{text}");
    assert!(!text.contains("s3cret-that-must-not-print"), "{text}");
}

#[tokio::test]
async fn concurrent_calls_with_a_wrong_secret_share_one_refused_token_request() {
    let env = TestEnv::start(4).await;
    let wrong = env.rewind_as_client("rewind", "wrong");
    env.control.clear_calls().await;
    // The refusal takes long enough for every caller to be waiting for it.
    env.control
        .fault(
            serde_json::json!({"Method": "POST", "Path": "/auth/**", "Action": "Latency",
            "LatencyMs": 1500, "Count": 1}),
        )
        .await;
    let client = wrong.client("boston").unwrap().clone();
    let calls = (0..32).map(|_| {
        let c = client.clone();
        tokio::spawn(async move { c.vpgs().await })
    });
    for r in futures::future::join_all(calls).await {
        let err = r.unwrap().unwrap_err();
        assert!(matches!(err, RewindError::Auth { .. }), "{err:?}");
    }
    // Callers that waited while the token request was refused share its refusal: one failed login at
    // Keycloak, not one per caller (which could lock the account), and no caller waits for the
    // others' attempts one after another.
    assert_eq!(env.control.token_requests().await, 1);
    // A call that comes after the refusal asks again: the credentials may have been mended.
    assert!(client.vpgs().await.is_err());
    assert_eq!(env.control.token_requests().await, 2);
}

#[tokio::test]
async fn a_token_lifetime_of_billions_of_years_is_kept_a_day_not_a_panic() {
    // A Keycloak that answers an absurd expires_in, and a ZVM with no VPG, on one listener.
    let app = axum::Router::new()
        .route(
            zvm_sim::test_kit::TOKEN_PATH,
            axum::routing::post(|| async {
                axum::Json(serde_json::json!({
                    "access_token": "t", "expires_in": i64::MAX
                }))
            }),
        )
        .route(
            "/v1/vpgs",
            axum::routing::get(|| async { axum::Json(serde_json::json!([])) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().unwrap();
    let config = rewind_core::Config {
        sites: vec![SiteConfig::with_client("boston", &url, "rewind", "secret").unwrap()],
        ..rewind_core::Config::new(
            dir.path().join("catalog.toml"),
            dir.path().join("journal.jsonl"),
        )
    };
    let rewind = Rewind::new(config).unwrap();
    let client = rewind.client("boston").unwrap().clone();
    let vpgs = tokio::spawn(async move { client.vpgs().await }).await;
    server.abort();
    assert!(vpgs.expect("no panic").unwrap().is_empty());
}

#[tokio::test]
async fn reads_are_retried_through_connection_refused_until_the_zvm_answers() {
    let env = TestEnv::start(5).await;
    // A port that nobody listens on yet; a simulator of the same seed opens it a moment after the
    // first call.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let url = format!("http://{addr}");
    let rewind = env.rewind_with(|mut c| {
        c.sites[0] = env.boston_at(&url);
        c
    });
    let opener = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let options = zvm_sim::Options {
            listen: addr,
            ..zvm_sim::Options::for_tests(5)
        };
        zvm_sim::start(options)
            .await
            .expect("the simulator opens the port")
    });
    let protection = rewind
        .find_protection("web-01")
        .await
        .expect("retried until the ZVM answered");
    assert_eq!(protection.vm.name, "web-01");
    drop(opener.await.unwrap());
}

#[tokio::test]
async fn reads_answered_503_are_retried_and_succeed() {
    let env = TestEnv::start(21).await;
    env.control
        .fault(serde_json::json!({"Method": "GET", "Path": "/v1/**", "Action": "Respond", "Status": 503,
            "Body": "unavailable", "Count": 2}))
        .await;
    let vpgs = env
        .rewind
        .client("boston")
        .unwrap()
        .vpgs()
        .await
        .expect("retried past two 503s");
    assert!(!vpgs.is_empty());
    assert_eq!(env.control.faults().await[0]["Fired"], 2, "both were met");
}

#[tokio::test]
async fn tls_trusts_a_pinned_certificate_refuses_an_unknown_one_at_once_saying_how_and_warns_of_insecure()
 {
    // The simulator serves HTTPS with a self-signed certificate of its own, for 127.0.0.1.
    let options = zvm_sim::Options {
        tls: true,
        ..zvm_sim::Options::for_tests(22)
    };
    let env = TestEnv::start_with(options, Sites::Boston).await;
    let https = env.sim.local().url.clone();
    assert!(https.starts_with("https://"), "{https}");
    let ca = env.dir.path().join("zvm-ca.pem");
    let pem = env
        .sim
        .local()
        .certificate_pem
        .as_ref()
        .expect("its certificate");
    std::fs::copy(pem, &ca).unwrap();

    let pinned = env.rewind_with(|mut c| {
        c.sites[0] = env.boston_at(&https);
        c.sites[0].ca_cert = Some(ca.clone());
        c
    });
    assert_eq!(
        pinned.find_protection("db-01").await.unwrap().vm.name,
        "db-01"
    );

    // An untrusted certificate is said so, with how to trust it, and is not retried: a read retry
    // budget of ten minutes would hold the answer back that long.
    let untrusted = env.rewind_with(|mut c| {
        c.sites[0] = env.boston_at(&https);
        c.http.read_retry = Duration::from_secs(600);
        c
    });
    let err = tokio::time::timeout(Duration::from_secs(60), untrusted.find_protection("db-01"))
        .await
        .expect("an untrusted certificate is not retried")
        .unwrap_err();
    assert!(matches!(err, RewindError::Untrusted { .. }), "{err:?}");
    assert_eq!(err.kind(), rewind_core::ErrorKind::Connection, "{err}");
    let message = err.to_string();
    for words in [
        "certificate",
        "nothing was sent",
        "ca_cert",
        "[sites.boston]",
        "ZVM_CA_CERT",
    ] {
        assert!(message.contains(words), "{words:?} in {message}");
    }

    let config = env.config_with(|mut c| {
        c.sites[0] = env.boston_at(&https);
        c.sites[0].insecure = true;
        c
    });
    assert!(
        config.warnings()[0].contains("boston"),
        "{:?}",
        config.warnings()
    );
    let insecure = Rewind::new(config).unwrap();
    assert_eq!(
        insecure.find_protection("db-01").await.unwrap().vm.name,
        "db-01"
    );
}

/// A log sink for one test: what the core logs, kept in memory.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn an_insecure_site_is_in_the_configurations_warnings_and_the_core_logs_no_copy_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut site =
        SiteConfig::with_client("boston", "https://zvm.example.com", "rewind", "x").unwrap();
    site.insecure = true;
    let config = rewind_core::Config {
        sites: vec![site],
        ..rewind_core::Config::new(
            dir.path().join("catalog.toml"),
            dir.path().join("journal.jsonl"),
        )
    };
    assert_eq!(config.warnings().len(), 1, "{:?}", config.warnings());
    let logs = Captured::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_max_level(tracing::Level::TRACE)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        Rewind::new(config).expect("a Rewind");
    });
    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        !logged.contains("verification"),
        "the front shows Config::warnings once; the core logged: {logged}"
    );
}

#[tokio::test]
async fn an_unreachable_site_is_a_connection_error_naming_it() {
    let env = TestEnv::start(6).await;
    let rewind = env.rewind_with(|mut c| {
        c.sites[0] = env.boston_at("http://127.0.0.1:1");
        c.http.read_retry = Duration::from_millis(200);
        c
    });
    let err = rewind.find_protection("web-01").await.unwrap_err();
    assert_eq!(err.kind(), rewind_core::ErrorKind::Connection);
    assert!(err.to_string().contains("boston"), "{err}");
}

#[tokio::test]
async fn find_protection_lists_every_vpg_of_web_01_with_its_sites_and_flr() {
    let env = TestEnv::start(7).await;
    let p = env.rewind.find_protection("WEB-01").await.unwrap();
    assert_eq!(p.vm.name, "web-01");
    let names: Vec<&str> = p.vpgs.iter().map(|v| v.vpg_name.as_str()).collect();
    assert_eq!(names, vec!["web-archive", "web-dr", "web-local"]);
    assert!(p.vpgs.iter().all(|v| v.protecting), "{}", p.summary());
    let archive = &p.vpgs[0];
    assert_eq!(
        (archive.status.code, archive.status.name.as_str()),
        (3, "RpoNotMeetingSLA")
    );
    let local = &p.vpgs[2];
    assert!(local.locally_replicated);
    assert_eq!(
        local.flr,
        FlrAvailability::Available {
            site: "boston".into()
        }
    );
    let dr = &p.vpgs[1];
    assert!(!dr.locally_replicated);
    assert_eq!(dr.recovery_site.name, "Denver");
    match &dr.flr {
        FlrAvailability::Unavailable { reason } => assert!(reason.contains("Denver"), "{reason}"),
        other => panic!("FLR of web-dr needs Denver: {other:?}"),
    }
    assert_eq!(dr.zvm_site, "boston");
}

#[tokio::test]
async fn with_both_sites_a_vpg_seen_twice_is_listed_once_and_flr_runs_at_its_recovery_site() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(8), Sites::Both).await;
    let p = env.rewind.find_protection("web-01").await.unwrap();
    assert_eq!(p.vpgs.len(), 3, "{}", p.summary());
    let dr = p.vpgs.iter().find(|v| v.vpg_name == "web-dr").unwrap();
    assert_eq!(
        dr.flr,
        FlrAvailability::Available {
            site: "denver".into()
        }
    );
    assert_eq!(dr.zvm_site, "boston", "the protected site's ZVM is called");
    let erp = env.rewind.find_protection("erp-01").await.unwrap();
    assert_eq!(erp.vpgs[0].zvm_site, "denver");
    assert_eq!(
        erp.vpgs[0].flr,
        FlrAvailability::Available {
            site: "boston".into()
        }
    );
}

#[tokio::test]
async fn host_names_and_vm_identifiers_resolve_to_the_same_vm() {
    let env = TestEnv::start(9).await;
    let by_name = env.rewind.find_protection("db-01").await.unwrap();
    let by_fqdn = env
        .rewind
        .find_protection("db-01.corp.example.com")
        .await
        .unwrap();
    let by_id = env.rewind.find_protection(&by_name.vm.id).await.unwrap();
    let rows = env.rewind.client("boston").unwrap().vms().await.unwrap();
    let ip = rows
        .iter()
        .find(|r| r.vm_name.as_deref() == Some("db-01"))
        .and_then(|r| r.ip_addresses().next().map(str::to_string))
        .expect("db-01 has an address");
    let by_ip = env.rewind.find_protection(&ip).await.unwrap();
    assert_eq!(by_fqdn.vm, by_name.vm);
    assert_eq!(by_id.vm, by_name.vm);
    assert_eq!(by_ip.vm, by_name.vm);
    assert_eq!(by_name.vpgs.len(), 1);
}

#[tokio::test]
async fn a_guard_is_recognised_afterwards_by_every_name_find_protection_takes_without_a_zvm() {
    let env = TestEnv::start(10).await;
    let found = env.rewind.find_protection("db-01").await.unwrap();
    assert!(
        !found.vm.ip_addresses.is_empty(),
        "the VM's addresses come with it: {:?}",
        found.vm
    );
    guarded(&env.rewind, "db-01", "c1").await;
    let record = journal_records(&env.rewind).pop().unwrap();
    assert_eq!(record.vm.ip_addresses, found.vm.ip_addresses);

    // The hook's question, answered from the journal alone: a Rewind whose only site is unreachable.
    let offline = env.rewind_with(|mut c| {
        c.sites[0].url = "http://127.0.0.1:9".parse().unwrap();
        c
    });
    let ip = found.vm.ip_addresses[0].clone();
    for vm in [
        "db-01",
        "DB-01",
        "db-01.corp.example.com",
        &found.vm.id,
        &ip,
    ] {
        let guard = offline.recent_guard(vm).unwrap();
        assert_eq!(
            guard.guarded().map(|r| r.change_id.as_str()),
            Some("c1"),
            "{vm} names the guarded VM"
        );
    }
    assert_eq!(
        offline.recent_guard("web-01").unwrap(),
        rewind_core::GuardLookup::NotGuarded
    );
}

/// A simulator of `seed` with both sites configured, and the error of looking `vm` up in it.
async fn refused_lookup(seed: u64, vm: &str) -> (TestEnv, RewindError) {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(seed), Sites::Both).await;
    let err = env.rewind.find_protection(vm).await.unwrap_err();
    (env, err)
}

#[tokio::test]
async fn an_ambiguous_name_lists_both_candidates_and_guards_nothing() {
    let (env, err) = refused_lookup(10, "build-agent").await;
    let RewindError::AmbiguousVm { candidates, .. } = &err else {
        panic!("expected ambiguous, got {err:?}");
    };
    assert_eq!(candidates.len(), 2);
    let mut vpgs: Vec<&str> = candidates
        .iter()
        .flat_map(|c| c.vpgs.iter().map(String::as_str))
        .collect();
    vpgs.sort();
    assert_eq!(vpgs, vec!["ci-boston", "ci-denver"]);
    let mut sites: Vec<&str> = candidates.iter().map(|c| c.site.as_str()).collect();
    sites.sort();
    assert_eq!(sites, vec!["Boston", "Denver"]);
    assert_ne!(candidates[0].vm_id, candidates[1].vm_id);
    let text = err.to_string();
    assert!(
        text.contains("ci-boston") && text.contains("ci-denver"),
        "{text}"
    );
    assert_eq!(err.kind(), rewind_core::ErrorKind::Refused);

    let guard = env
        .rewind
        .guard(request("build-agent", "chg-amb"), &NoProgress)
        .await;
    assert!(matches!(guard, Err(RewindError::AmbiguousVm { .. })));
    assert_eq!(env.control.insert_posts().await, 0);
}

#[tokio::test]
async fn an_unprotected_vm_differs_from_a_vm_that_does_not_exist() {
    let (env, err) = refused_lookup(11, "report-01").await;
    let RewindError::VmNotProtected { vm, .. } = &err else {
        panic!("expected not protected, got {err:?}");
    };
    assert_eq!(vm.vm_name, "report-01");
    assert_eq!(vm.site, "Boston");
    let err = env.rewind.find_protection("scratch-01").await.unwrap_err();
    assert!(matches!(err, RewindError::VmNotProtected { .. }), "{err:?}");
    let err = env.rewind.find_protection("no-such-vm").await.unwrap_err();
    assert!(matches!(err, RewindError::VmNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-vm"));
}

#[tokio::test]
async fn initializing_and_syncing_vpgs_are_not_protecting_and_say_why() {
    let env = TestEnv::start(12).await;
    let sql = env.rewind.find_protection("sql-01").await.unwrap();
    let init = sql.vpgs.iter().find(|v| v.vpg_name == "sql-init").unwrap();
    assert!(!init.protecting);
    assert_eq!(init.status.code, 0);
    assert!(init.reason.as_deref().unwrap().contains("Initializing (0)"));
    let files = env.rewind.find_protection("files-01").await.unwrap();
    let dr = files
        .vpgs
        .iter()
        .find(|v| v.vpg_name == "files-dr")
        .unwrap();
    assert!(!dr.protecting);
    assert!(
        dr.reason.as_deref().unwrap().contains("DeltaSync (6)"),
        "{:?}",
        dr.reason
    );
    let report = guarded(&env.rewind, "sql-01", "chg-sql").await;
    assert!(
        matches!(outcome_of(&report, "sql-init"), Outcome::Skipped { reason } if reason.contains("Initializing"))
    );
}

#[derive(Default)]
struct Recorder(Mutex<Vec<TaskProgress>>);

impl ProgressSink for Recorder {
    fn update(&self, p: &TaskProgress) {
        self.0.lock().unwrap().push(p.clone());
    }
}

#[tokio::test]
async fn guard_of_web_01_tags_every_protecting_vpg_reports_progress_is_listed_by_change_and_is_journaled()
 {
    let env = TestEnv::start(13).await;
    let progress = Recorder::default();
    let report = env
        .rewind
        .guard(request("web-01", "chg-web"), &progress)
        .await
        .unwrap();
    assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
    assert!(
        report
            .tag
            .starts_with("ai:claude-code | edit app.conf | vm=web-01 | change=chg-web | ")
    );
    for vpg in ["web-local", "web-dr", "web-archive"] {
        match outcome_of(&report, vpg) {
            Outcome::Tagged {
                task_id,
                task_state,
                ..
            } => {
                assert!(task_id.is_some());
                assert_eq!(task_state.as_ref().unwrap().code, 6);
            }
            other => panic!("{vpg}: {other:?}"),
        }
    }
    let stages: Vec<Stage> = progress.0.lock().unwrap().iter().map(|p| p.stage).collect();
    for s in [
        Stage::Inserting,
        Stage::Running,
        Stage::Listing,
        Stage::Done,
    ] {
        assert!(stages.contains(&s), "{s:?} in {stages:?}");
    }

    let tags = env
        .rewind
        .list_tags("web-01", Some("chg-web"))
        .await
        .unwrap();
    assert_eq!(tags.vpgs.len(), 3);
    for v in &tags.vpgs {
        assert_eq!(v.tags.len(), 1, "{}", tags.summary());
        assert_eq!(v.tags[0].tag, report.tag);
        assert_eq!(
            v.tags[0].checkpoint_id,
            checkpoint_of(outcome_of(&report, &v.vpg_name))
        );
    }
    let none = env
        .rewind
        .list_tags("web-01", Some("another-change"))
        .await
        .unwrap();
    assert!(none.vpgs.iter().all(|v| v.tags.is_empty()));
    // The tag itself names the change as well, as a recovery takes it.
    let by_tag = env
        .rewind
        .list_tags("web-01", Some(&report.tag))
        .await
        .unwrap();
    assert!(
        by_tag.vpgs.iter().all(|v| v.tags.len() == 1),
        "{}",
        by_tag.summary()
    );
    // A filter that could name no change is refused before anything is sent.
    let err = env
        .rewind
        .list_tags("web-01", Some("chg\nweb"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            RewindError::InvalidInput {
                field: "change",
                ..
            }
        ),
        "{err:?}"
    );

    let journal = env
        .rewind
        .journal()
        .read(&JournalFilter {
            vm: Some("web-01".into()),
            change_id: Some("chg-web".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(journal.records.len(), 1);
    let record = &journal.records[0];
    assert_eq!(record.verdict, JournalVerdict::Guarded);
    assert_eq!(record.vpgs.len(), 3);
    assert!(
        record
            .vpgs
            .iter()
            .all(|v| v.task_id.is_some() && v.checkpoint_id.is_some())
    );
    assert!(
        record
            .vpgs
            .iter()
            .all(|v| v.tag.as_deref() == Some(report.tag.as_str()))
    );
}

#[tokio::test]
async fn a_vm_in_three_vpgs_with_one_resyncing_gets_two_tags_and_the_report_names_the_syncing_vpg()
{
    let env = TestEnv::start(14).await;
    let archive = env.vpg_id("web-archive").await;
    env.control.resync(&archive, 600).await;
    let report = guarded(&env.rewind, "web-01", "chg-resync").await;
    let tagged = report
        .vpgs
        .iter()
        .filter(|v| matches!(v.outcome, Outcome::Tagged { .. }))
        .count();
    assert_eq!(tagged, 2);
    match outcome_of(&report, "web-archive") {
        Outcome::Skipped { reason } => assert!(reason.contains("sync"), "{reason}"),
        other => panic!("web-archive must be skipped: {other:?}"),
    }
    assert!(report.summary().contains("web-archive"));
    let inserts = env.insert_tasks().await;
    assert_eq!(inserts.len(), 2);
    assert!(inserts.iter().all(|(_, vpg, _)| *vpg != archive));
}

#[tokio::test]
async fn concurrent_guards_of_vms_sharing_a_vpg_are_both_guarded_without_a_failed_insert() {
    let env = TestEnv::start(15).await;
    let (a, b) = tokio::join!(
        env.rewind.guard(request("app-01", "chg-a"), &NoProgress),
        env.rewind.guard(request("app-02", "chg-b"), &NoProgress),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.verdict, Verdict::Guarded, "{}", a.summary());
    assert_eq!(b.verdict, Verdict::Guarded, "{}", b.summary());
    assert_ne!(
        checkpoint_of(outcome_of(&a, "app-tier")),
        checkpoint_of(outcome_of(&b, "app-tier"))
    );
    let inserts = env.insert_tasks().await;
    assert_eq!(inserts.len(), 2, "{inserts:?}");
    assert!(
        inserts.iter().all(|(_, _, state)| *state == 6),
        "no failed insert: {inserts:?}"
    );
}

/// A simulator of `seed` whose first insert meets the fault rule's `action`.
async fn with_insert_fault(seed: u64, action: &str) -> TestEnv {
    let env = TestEnv::start(seed).await;
    env.control
        .fault(serde_json::json!({
            "Method": "POST", "Path": "/v1/vpgs/*/checkpoints", "Action": action, "Count": 1
        }))
        .await;
    env
}

#[tokio::test]
async fn another_clients_insert_that_fails_ours_is_waited_for_and_ours_retried() {
    // Another client's insert into the VPG goes in just before ours.
    let env = with_insert_fault(16, "InsertAsAnotherClient").await;
    let report = guarded(&env.rewind, "app-01", "chg-b2b").await;
    let vpg = report
        .vpgs
        .iter()
        .find(|v| v.vpg_name == "app-tier")
        .unwrap();
    assert!(
        vpg.notes.iter().any(|n| matches!(
            n,
            GuardNote::BackToBack {
                culprit: Culprit::AnotherClient { .. },
                retry: 1,
                ..
            }
        )),
        "{:?}",
        vpg.notes
    );
    let inserts = env.insert_tasks().await;
    let failed = inserts.iter().filter(|(_, _, s)| *s == 4).count();
    let completed = inserts.iter().filter(|(_, _, s)| *s == 6).count();
    assert_eq!((failed, completed), (1, 2), "{inserts:?}");
}

#[tokio::test]
async fn a_lost_insert_answer_causes_no_second_insert() {
    // The insert is applied, and its answer never comes: the client's timeout ends the wait.
    let env = with_insert_fault(17, "WithholdResponse").await;
    let rewind = env.rewind_with(|mut c| {
        c.http.request_timeout = Duration::from_millis(700);
        c
    });
    let report = guarded(&rewind, "db-01", "chg-lost").await;
    let vpg = &report.vpgs[0];
    assert!(
        vpg.notes.iter().any(|n| matches!(
            n,
            GuardNote::OutcomeUnknown { what } if what.starts_with("no answer to the insert came back (")
        )),
        "{:?}",
        vpg.notes
    );
    assert!(
        matches!(
            &vpg.outcome,
            Outcome::Tagged {
                task_id: Some(_),
                ..
            }
        ),
        "{:?}",
        vpg.outcome
    );
    assert_eq!(
        env.control.insert_posts().await,
        1,
        "exactly one insert reached the ZVM"
    );
    assert_eq!(env.insert_tasks().await.len(), 1);
}

/// A simulator whose tasks take `task_ms`, and a Rewind whose guards wait `deadline_ms` for theirs.
async fn slow_tasks(task_ms: u64, deadline_ms: u64) -> (TestEnv, Rewind) {
    let env = TestEnv::start(18).await;
    env.control.timing(task_ms, 20).await;
    let rewind = env.rewind_with(|mut c| {
        c.guard.deadline = Duration::from_millis(deadline_ms);
        c
    });
    (env, rewind)
}

#[tokio::test]
async fn a_deadline_returns_the_running_task_ids_instead_of_dropping_them() {
    let (env, rewind) = slow_tasks(8_000, 3_000).await;
    let report = guard(&rewind, "db-01", "chg-slow").await;
    assert_eq!(
        report.verdict,
        Verdict::StillRunning,
        "{}",
        report.summary()
    );
    let running = report.running_task_ids();
    assert_eq!(running.len(), 1);
    let inserts = env.insert_tasks().await;
    assert_eq!(inserts.len(), 1);
    assert_eq!(inserts[0].0, running[0]);
    assert_eq!(inserts[0].2, 1, "the task was left running");
}

#[tokio::test]
async fn an_insert_left_running_at_a_deadline_is_waited_for_by_the_next_guard_of_its_vpg() {
    let (env, rewind) = slow_tasks(1_500, 1_000).await;
    let first = guard(&rewind, "db-01", "chg-slow-1").await;
    assert_eq!(first.verdict, Verdict::StillRunning, "{}", first.summary());
    let left = first.running_task_ids()[0].to_string();
    // The next guard of the same VPG in this process must not insert while that task runs: the
    // second insert would fail by the back-to-back rule.
    let second = guard(&rewind, "db-01", "chg-slow-2").await;
    let notes: Vec<&GuardNote> = second.vpgs.iter().flat_map(|v| v.notes.iter()).collect();
    assert!(
        notes.iter().any(|n| matches!(
            n,
            GuardNote::WaitedForRunning {
                task_id,
                whose: RunningInsert::EarlierGuardOfThisProcess,
            } if *task_id == left
        )),
        "{}",
        second.summary()
    );
    env.control.advance(60).await;
    let inserts = env.insert_tasks().await;
    assert!(
        inserts.iter().all(|(_, _, state)| *state != 4),
        "no insert failed: {inserts:?}"
    );
}

#[tokio::test]
async fn an_insert_the_zvm_refuses_is_an_error_outcome_of_kind_refused() {
    let env = TestEnv::start(25).await;
    env.control
        .fault(serde_json::json!({
            "Method": "POST", "Path": "/v1/vpgs/*/checkpoints", "Action": "Respond", "Status": 403
        }))
        .await;
    let report = guard(&env.rewind, "db-01", "c1").await;
    assert_eq!(report.verdict, Verdict::NotGuarded, "{}", report.summary());
    match outcome_of(&report, "web-dr") {
        Outcome::Error { problem } => {
            let (kind, message) = (problem.kind(), problem.to_string());
            assert_eq!(kind, rewind_core::ErrorKind::Refused, "{message}");
            assert!(message.contains("403"), "{message}");
        }
        other => panic!("expected an error outcome, got {other:?}"),
    }
    assert_eq!(report.error_kind(), Some(rewind_core::ErrorKind::Refused));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["vpgs"][0]["kind"], "refused", "{json}");
}

#[tokio::test]
async fn a_pipe_in_the_action_is_refused_before_anything_is_sent() {
    let env = TestEnv::start(19).await;
    let mut req = request("web-01", "chg-pipe");
    req.action = "edit | drop".into();
    let err = env.rewind.guard(req, &NoProgress).await.unwrap_err();
    assert!(
        matches!(
            err,
            RewindError::InvalidInput {
                field: "action",
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.kind(), rewind_core::ErrorKind::Usage);
    assert_eq!(env.control.insert_posts().await, 0);
}

#[tokio::test]
async fn no_secret_reaches_an_error_a_report_or_the_journal() {
    let env = TestEnv::start_with(zvm_sim::Options::for_tests(20), Sites::Both).await;
    let report = guard(&env.rewind, "web-01", "chg-secret").await;
    guard(&env.rewind, "files-01", "chg-secret").await;
    let ambiguous = env
        .rewind
        .guard(request("build-agent", "chg-secret"), &NoProgress)
        .await
        .unwrap_err();
    let journal = std::fs::read_to_string(env.rewind.journal().path()).unwrap();
    let everything = format!(
        "{journal}\n{}\n{}\n{ambiguous}\n{ambiguous:?}\n{:?}",
        serde_json::to_string(&report).unwrap(),
        report.summary(),
        env.rewind
    );
    for secret in [CLIENT_SECRET, "access_token", "Bearer ", "eyJ"] {
        assert!(!everything.contains(secret), "{secret} leaked");
    }
    // Two guards journaled (each its intent, task and verdict lines), the ambiguous one not at all.
    let records = journal_records(&env.rewind);
    assert_eq!(records.len(), 2, "{records:?}");
}

#[tokio::test]
async fn a_guard_again_of_a_change_whose_vm_gained_a_vpg_journals_it_then_covers_it() {
    let env = TestEnv::start(301).await;
    guarded(&env.rewind, "db-01", "grows").await;

    // Someone adds db-01 to app-tier through Zerto's own API.
    let zerto = common::Site::service(env.control.http(), env.control.base()).await;
    let vpg = env.vpg_id("app-tier").await;
    let vm = zerto.get_ok("/v1/vms?vmName=db-01").await[0]["VmIdentifier"].clone();
    let (_, doc) = zerto
        .post(
            "/v1/vpgSettings",
            &serde_json::json!({"vpgIdentifier": vpg}),
        )
        .await;
    let doc = format!("/v1/vpgSettings/{}", doc.as_str().unwrap());
    zerto
        .post(
            &format!("{doc}/vms"),
            &serde_json::json!({"vmIdentifier": vm}),
        )
        .await;
    let (_, task) = zerto
        .post(&format!("{doc}/commit"), &serde_json::json!({}))
        .await;
    zerto.wait_task(task.as_str().unwrap()).await;

    let again = guard(&env.rewind, "db-01", "grows").await;
    let said: Vec<String> = again.notes.iter().map(ToString::to_string).collect();
    assert!(
        said.iter()
            .any(|n| n.contains("app-tier began protecting db-01")),
        "the guard says what changed: {said:?}"
    );
    let records = journal_records(&env.rewind);
    let changed = records
        .iter()
        .position(|r| r.verdict == JournalVerdict::ProtectionChanged)
        .expect("a protection_changed record");
    let verdict = records
        .iter()
        .rposition(|r| r.verdict == JournalVerdict::Guarded)
        .unwrap();
    assert!(
        changed < verdict,
        "journaled before the new guard's verdict"
    );
    assert!(
        env.rewind
            .recent_guard("db-01")
            .unwrap()
            .guarded()
            .is_some(),
        "the new guard covers the VM"
    );
}
