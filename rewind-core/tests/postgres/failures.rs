//! Replicas under failure, on a journal in PostgreSQL: the database restarted as a crash would
//! while guards run, one replica's connection cut by a proxy, and sixteen agents through two
//! replicas at VMs that share VPGs. The simulator's tasks are the ground truth: no change has two
//! tagged checkpoints in one VPG, no insert of ours failed because of another of ours, every guard
//! answered `guarded` is in the journal as such, and no attempt is left running once the faults stop.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rewind_core::audit_journal::{JournalFilter, JournalVerdict};
use rewind_core::{GuardReport, NoProgress, Rewind, RewindError, Verdict};
use zvm_sim::test_kit::{Postgres, state_of};

use super::place::in_database;
use crate::common::{TestEnv, request};

/// VMs of the default world; app-01..03 share app-tier, web-01 and db-01 share web-dr.
const VMS: &[&str] = &["web-01", "db-01", "app-01", "app-02", "app-03", "sql-01"];

/// What the ground truth and the journal must say once the faults are over.
async fn check(env: &TestEnv, reader: &Rewind, acknowledged: &[GuardReport]) {
    let inserts = env.control.inserts(None).await;
    let failed: Vec<_> = inserts.iter().filter(|t| state_of(t) == 4).collect();
    assert!(
        failed.is_empty(),
        "no insert of ours failed because of another: {failed:?}"
    );
    let mut per_change_and_vpg: BTreeMap<(String, String), usize> = BTreeMap::new();
    for t in inserts.iter().filter(|t| state_of(t) == 6) {
        let name = t["CheckpointName"].as_str().unwrap_or_default();
        let parts = rewind_core::tagged_checkpoint::parse_tag(name).expect("a tag of ours");
        let vpg = t["VpgName"].as_str().unwrap_or_default().to_owned();
        *per_change_and_vpg
            .entry((parts.change_id, vpg))
            .or_default() += 1;
    }
    let doubled: Vec<_> = per_change_and_vpg.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubled.is_empty(), "doubled tags: {doubled:?}");
    let records = reader
        .journal()
        .read(&JournalFilter::default())
        .expect("the journal reads")
        .records;
    for report in acknowledged {
        assert!(
            records.iter().any(|r| r.verdict == JournalVerdict::Guarded
                && r.attempt
                    .as_ref()
                    .is_some_and(|a| a.id == report.attempt_id)),
            "the guarded {} of {} is in the journal",
            report.change_id,
            report.vm.name
        );
    }
    let running: Vec<_> = records
        .iter()
        .filter(|r| r.verdict == JournalVerdict::Running)
        .collect();
    assert!(running.is_empty(), "no attempt left running: {running:?}");
}

/// Guards `vm` for `change` through `rewind` until it is guarded (the faults over), a minute at most.
async fn guarded_in_the_end(rewind: &Rewind, vm: &str, change: &str) -> GuardReport {
    for _ in 0..6 {
        match rewind.guard(request(vm, change), &NoProgress).await {
            Ok(r) if r.verdict == Verdict::Guarded => return r,
            _ => tokio::time::sleep(Duration::from_secs(2)).await,
        }
    }
    panic!("{vm} for {change} was not guarded once the faults were over");
}

/// The guarded reports among `outcomes`.
fn acknowledged(outcomes: Vec<Result<GuardReport, RewindError>>) -> Vec<GuardReport> {
    outcomes
        .into_iter()
        .filter_map(Result::ok)
        .filter(|r| r.verdict == Verdict::Guarded)
        .collect()
}

#[tokio::test]
async fn a_database_restarted_during_guards_loses_nothing_acknowledged_and_doubles_no_tag() {
    let server = Postgres::start();
    let url = server.fresh_database();
    let env = TestEnv::start(921).await;
    let replicas = [
        env.rewind_with(in_database(&url)),
        env.rewind_with(in_database(&url)),
    ];
    let runs = VMS.iter().enumerate().map(|(i, vm)| {
        let rewind = replicas[i % 2].clone();
        let change = format!("restart-{i}");
        async move { rewind.guard(request(vm, &change), &NoProgress).await }
    });
    let all = futures::future::join_all(runs);
    let crash = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        server.stop_immediately();
        tokio::time::sleep(Duration::from_secs(1)).await;
        server.up();
    };
    let (outcomes, ()) = tokio::join!(all, crash);
    let mut guarded = acknowledged(outcomes);
    for (i, vm) in VMS.iter().enumerate() {
        let change = format!("restart-{i}");
        if !guarded.iter().any(|r| r.change_id == change) {
            guarded.push(guarded_in_the_end(&replicas[(i + 1) % 2], vm, &change).await);
        }
    }
    check(&env, &replicas[0], &guarded).await;
}

/// A TCP proxy on a loopback port to `target`, whose connections can all be cut at once.
struct Proxy {
    port: u16,
    cut: Arc<AtomicBool>,
    links: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Proxy {
    async fn to(target: u16) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let links: Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>> = Arc::default();
        let (is_cut, kept) = (cut.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if is_cut.load(Ordering::SeqCst) {
                    continue;
                }
                let link = tokio::spawn(async move {
                    if let Ok(mut outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", target)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                kept.lock().unwrap().push(link.abort_handle());
            }
        });
        Proxy { port, cut, links }
    }

    /// Drops every connection through it, and every new one.
    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }
}

#[tokio::test]
async fn a_replica_cut_off_from_the_database_stops_and_the_other_takes_its_change_over() {
    let server = Postgres::shared();
    let url = server.fresh_database();
    let proxy = Proxy::to(server.port()).await;
    let through_proxy = url.replace(
        &format!(":{}/", server.port()),
        &format!(":{}/", proxy.port),
    );
    let env = TestEnv::start(922).await;
    // The cut replica's looks for running inserts take 9 s: its leases run out meanwhile.
    env.control
        .fault(serde_json::json!({"Method": "GET", "Path": "/v1/tasks",
            "Action": "Latency", "LatencyMs": 9000, "Count": 3}))
        .await;
    let cut_off = env.rewind_with(in_database(&through_proxy));
    let other = env.rewind_with(in_database(&url));
    let first = tokio::spawn({
        let rewind = cut_off.clone();
        async move { rewind.guard(request("web-01", "cut-1"), &NoProgress).await }
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    proxy.cut();
    let second = guarded_in_the_end(&other, "web-01", "cut-1").await;
    let first = first.await.unwrap();
    match &first {
        Ok(report) => assert_ne!(report.verdict, Verdict::Guarded, "{}", report.summary()),
        Err(e) => assert!(e.to_string().contains("PostgreSQL"), "{e}"),
    }
    check(&env, &other, &[second]).await;
}

#[tokio::test]
async fn sixteen_agents_through_two_replicas_at_vms_sharing_vpgs_double_nothing() {
    let env = TestEnv::start(923).await;
    let url = Postgres::shared().fresh_database();
    let replicas = [
        env.rewind_with(in_database(&url)),
        env.rewind_with(in_database(&url)),
    ];
    // Sixteen agents: each pair of agents k and k + 8 runs the same change on one VM through the
    // two replicas (a retried call reaching the other replica); the VMs share VPGs.
    let runs = (0..16).map(|k| {
        let rewind = replicas[k % 2].clone();
        let vm = VMS[(k % 8) % VMS.len()];
        let change = format!("agents-{}", k % 8);
        async move { rewind.guard(request(vm, &change), &NoProgress).await }
    });
    let outcomes = futures::future::join_all(runs).await;
    for outcome in &outcomes {
        let report = outcome.as_ref().expect("every guard runs");
        assert_eq!(report.verdict, Verdict::Guarded, "{}", report.summary());
    }
    check(&env, &replicas[1], &acknowledged(outcomes)).await;
}
