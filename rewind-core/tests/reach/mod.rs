//! Part of the world down or mistyped: a port nothing listens on, a host that does not exist, TLS
//! to a plain-HTTP server, a URL with a path. Each is named as what it is, with the URL actually
//! asked and the setting to fix, in one line, without the read budget's long wait.

use std::time::Duration;

use rewind_core::RewindError;
use rewind_core::error::Unreached;

use crate::common::TestEnv;

/// The error of finding web-01 with Boston's URL replaced by `url`.
async fn finding_at(env: &TestEnv, url: &str) -> RewindError {
    let rewind = env.rewind_with(|mut c| {
        c.sites[0] = env.boston_at(url);
        c
    });
    rewind.find_protection("web-01").await.unwrap_err()
}

/// One line, at most about 300 characters, ending with what to do.
fn one_short_line(err: &RewindError) -> String {
    let said = err.to_string();
    assert!(!said.contains('\n'), "{said}");
    assert!(
        said.chars().count() <= 320,
        "{} characters: {said}",
        said.len()
    );
    said
}

#[tokio::test]
async fn a_port_nothing_listens_on_is_said_as_such_with_the_url_asked() {
    let env = TestEnv::start(301).await;
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", free.local_addr().unwrap().port());
    drop(free);
    let err = finding_at(&env, &url).await;
    let RewindError::Unreachable {
        cause: Unreached::Refused,
        url: asked,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert!(asked.starts_with(&url), "{asked}");
    let said = one_short_line(&err);
    assert!(said.starts_with("nothing listens at"), "{said}");
    assert!(said.contains("[sites.boston] url"), "{said}");
}

#[tokio::test]
async fn a_host_that_does_not_exist_is_said_as_such() {
    let env = TestEnv::start(302).await;
    let err = finding_at(&env, "https://zvm.no-such-place.invalid").await;
    assert!(
        matches!(
            err,
            RewindError::Unreachable {
                cause: Unreached::NoSuchHost,
                ..
            }
        ),
        "{err:?}"
    );
    let said = one_short_line(&err);
    assert!(
        said.contains("no such host zvm.no-such-place.invalid"),
        "{said}"
    );
    assert!(said.contains("spelling"), "{said}");
}

#[tokio::test]
async fn https_to_the_plain_simulator_says_it_speaks_plain_http() {
    let env = TestEnv::start(303).await;
    let https = env.sim.local().url.replace("http://", "https://");
    let err = finding_at(&env, &https).await;
    assert!(
        matches!(
            err,
            RewindError::Unreachable {
                cause: Unreached::PlainHttp,
                ..
            }
        ),
        "{err:?}"
    );
    let said = one_short_line(&err);
    assert!(said.contains("use http://"), "{said}");
}

#[tokio::test]
async fn a_url_with_a_path_is_not_blamed_on_the_credentials() {
    let env = TestEnv::start(304).await;
    let err = finding_at(&env, &format!("{}/v1", env.sim.local().url)).await;
    let RewindError::NotTokenEndpoint { url, status, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*status, 404);
    assert!(url.contains("/v1/auth/realms/zerto"), "{url}");
    let said = one_short_line(&err);
    assert!(said.contains("base URL"), "{said}");
    assert!(!said.contains("secret"), "{said}");
}

#[tokio::test]
async fn credentials_from_the_environment_are_named_as_set_there() {
    let env = TestEnv::start(305).await;
    let url = env.sim.local().url.clone();
    let vars = |name: &str| match name {
        "ZVM_URL" => Some(url.clone()),
        "ZVM_CLIENT_ID" => Some("rewind".to_owned()),
        "ZVM_CLIENT_SECRET" => Some("not-the-secret".to_owned()),
        _ => None,
    };
    let config = rewind_core::Config::load_with_env(None, &vars).unwrap();
    let rewind = rewind_core::Rewind::new(config).unwrap();
    let err = rewind.find_protection("web-01").await.unwrap_err();
    assert!(matches!(err, RewindError::Auth { .. }), "{err:?}");
    let said = one_short_line(&err);
    assert!(
        said.ends_with("check ZVM_CLIENT_ID and ZVM_CLIENT_SECRET"),
        "{said}"
    );

    let half = |name: &str| match name {
        "ZVM_URL" => Some(url.clone()),
        "ZVM_CLIENT_ID" => Some("rewind".to_owned()),
        _ => None,
    };
    let refused = rewind_core::Config::load_with_env(None, &half).unwrap_err();
    assert!(
        refused.to_string().contains("ZVM_CLIENT_SECRET is not"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_refused_connection_is_tried_again_within_the_connect_budget_only() {
    let env = TestEnv::start(306).await;
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    // The ZVM comes back within the connect budget: the lookup goes through.
    let sim = env.sim.local().url.clone();
    let proxy = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let target = sim.trim_start_matches("http://").to_owned();
        loop {
            let (mut inbound, _) = listener.accept().await.unwrap();
            let target = target.clone();
            tokio::spawn(async move {
                let mut outbound = tokio::net::TcpStream::connect(target).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    let rewind = env.rewind_with(|mut c| {
        c.sites[0] = env.boston_at(&format!("http://127.0.0.1:{port}"));
        c.http.connect_retry = Duration::from_secs(5);
        c.http.read_retry = Duration::ZERO;
        c
    });
    let found = rewind.find_protection("web-01").await;
    proxy.abort();
    assert!(found.is_ok(), "{:?}", found.err());
}

/// A loopback URL nothing listens at.
fn dead_url() -> String {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}", free.local_addr().unwrap().port());
    drop(free);
    url
}

/// Both sites configured, Denver's ZVM dead.
async fn denver_down(seed: u64) -> (TestEnv, rewind_core::Rewind) {
    let env = TestEnv::start_with(
        zvm_sim::Options::for_tests(seed),
        crate::common::Sites::Both,
    )
    .await;
    let dead = dead_url();
    let rewind = env.rewind_with(|mut c| {
        c.sites[1] = rewind_core::SiteConfig::with_client(
            "denver",
            &dead,
            crate::common::CLIENT_ID,
            crate::common::CLIENT_SECRET,
        )
        .unwrap();
        c
    });
    (env, rewind)
}

#[tokio::test]
async fn a_dead_dr_site_stops_a_lookup_by_name_saying_the_ways_on() {
    let (_env, rewind) = denver_down(311).await;
    let err = rewind.find_protection("web-01").await.unwrap_err();
    let RewindError::SitesDown {
        down,
        answered,
        found,
        ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(down.len(), 1);
    assert_eq!(down[0].site, "denver");
    assert!(matches!(
        *down[0].error,
        RewindError::Unreachable {
            cause: Unreached::Refused,
            ..
        }
    ));
    assert_eq!(answered, &["boston"]);
    assert_eq!(found.len(), 1);
    let said = one_short_line(&err);
    assert!(said.contains("--site boston"), "{said}");
    assert!(said.contains(&found[0].vm_id), "{said}");
    assert!(said.contains("nothing listens"), "{said}");
}

#[tokio::test]
async fn with_site_boston_a_guard_goes_on_and_its_record_says_which_sites_were_asked() {
    let (env, rewind) = denver_down(312).await;
    let boston = rewind.only_sites(&["boston".to_owned()]).unwrap();
    let found = boston.find_protection("web-01").await.unwrap();
    assert_eq!(found.asked.as_deref(), Some(&["boston".to_owned()][..]));
    assert!(
        found.summary().contains("only boston was asked"),
        "{}",
        found.summary()
    );
    let report = boston
        .guard(
            crate::common::request("web-01", "down-1"),
            &rewind_core::NoProgress,
        )
        .await
        .unwrap();
    assert_eq!(report.verdict, rewind_core::Verdict::Guarded, "{report:?}");
    let read = env
        .rewind
        .journal()
        .read(&rewind_core::JournalFilter {
            change_id: Some("down-1".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        read.records[0].sites.as_deref(),
        Some(&["boston".to_owned()][..])
    );
    let refused = rewind.only_sites(&["paris".to_owned()]).unwrap_err();
    assert!(
        matches!(refused, RewindError::UnknownSite { .. }),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_vm_identifier_is_resolved_by_the_site_that_knows_it_while_another_is_down() {
    let (env, rewind) = denver_down(313).await;
    let id = env
        .rewind
        .find_protection("web-01")
        .await
        .unwrap()
        .vm
        .id
        .clone();
    let found = rewind.find_protection(&id).await.unwrap();
    assert_eq!(found.vm.name, "web-01");
    assert_eq!(found.vpgs.len(), 3, "Boston lists every VPG of its own VM");
    assert_eq!(found.asked.as_deref(), Some(&["boston".to_owned()][..]));
    assert!(found.summary().contains("denver"), "{}", found.summary());
}

#[tokio::test]
async fn a_mistyped_vm_name_is_answered_with_the_names_near_it() {
    let env = TestEnv::start(314).await;
    for typed in ["web01", "wbe-01", "WEB-O1"] {
        let err = env.rewind.find_protection(typed).await.unwrap_err();
        let RewindError::VmNotFound { near, .. } = &err else {
            panic!("{typed}: {err:?}");
        };
        assert_eq!(near, &["web-01"], "{typed}");
        assert!(
            one_short_line(&err).ends_with("did you mean web-01?"),
            "{err}"
        );
    }
    let err = env
        .rewind
        .find_protection("nothing-like-it")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("check the spelling"), "{err}");
}
