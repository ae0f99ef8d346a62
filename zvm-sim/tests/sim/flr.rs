//! File-level restore over the real calls: mount a checkpoint, follow the mount task, browse,
//! download (one file's bytes, or a zip), unmount; only at the VPG's recovery site; refused to the
//! Operator role; and what a ZVM answers for missing paths, sessions still mounting and
//! checkpoints outside the journal.
//!
//! Every test freezes the clock, so tasks end only when a test advances it.

use std::io::Read;

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, TestSim, frozen_with_vpg, spawn_frozen, texts};

use crate::expect::{control_ok, expect_ended, expect_refused, expect_string};

pub const APP_CONF: &str = "sda1/etc/app/app.conf";

/// A fresh frozen simulator, Boston (as admin), web-local's identifier, web-01's, and a tag `name`
/// inserted into web-local, completed and listed.
async fn web_01_tagged(seed: u64, name: &str) -> (TestSim, Site, String, String, String) {
    let t = spawn_frozen(seed).await;
    let boston = t.boston().await;
    let vpg = boston.vpg_id("web-local").await;
    let vm = boston.vm_id("web-01", "web-local").await;
    let checkpoint = boston.tag(&t.control, &vpg, name).await;
    (t, boston, vpg, vm, checkpoint)
}

/// A mounted FLR session of `vm` in `vpg` at `checkpoint`, on `site`.
async fn mount(t: &TestSim, site: &Site, vpg: &str, vm: &str, checkpoint: &str) -> String {
    let session = expect_string(site.start_flr(vpg, vm, checkpoint).await, "a session id");
    t.control.advance(1.0).await;
    assert_eq!(
        session_status(site, &session).await,
        "MountCompletedSuccessfully"
    );
    session
}

async fn session_status(site: &Site, session: &str) -> String {
    let sessions = site.get_ok(&format!("/v1/flrs/{session}")).await;
    sessions[0]["FlrSessionStatus"]
        .as_str()
        .expect("FlrSessionStatus")
        .to_owned()
}

/// The task of this type that lists the session under `RelatedEntities.FlrSessions`, found the way
/// a client finds it: through `GET /v1/tasks`.
async fn session_task(site: &Site, session: &str, kind: &str) -> Value {
    let tasks = site.get_ok(&format!("/v1/tasks?type={kind}")).await;
    tasks
        .as_array()
        .unwrap()
        .iter()
        .find(|task| {
            task["RelatedEntities"]["FlrSessions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|link| link["identifier"] == session)
        })
        .unwrap_or_else(|| panic!("a {kind} task lists session {session}: {tasks}"))
        .clone()
}

async fn browse(site: &Site, session: &str, path: &str) -> (StatusCode, Value) {
    site.post(
        &format!("/v1/flrs/{session}/browse"),
        &json!({ "Path": path }),
    )
    .await
}

async fn download_url(site: &Site, session: &str, paths: &[&str]) -> String {
    let body = json!({ "PathList": paths });
    let answer = site
        .post(&format!("/v1/flrs/{session}/download"), &body)
        .await;
    expect_string(answer, "a download URL")
}

fn zip_entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    (0..archive.len())
        .map(|i| {
            let mut entry = archive.by_index(i).unwrap();
            let mut content = Vec::new();
            entry.read_to_end(&mut content).unwrap();
            (entry.name().unwrap().into_owned(), content)
        })
        .collect()
}

/// A mounted session of web-01 browses as the guest's disks: its partitions at the root, then
/// folders and files, each file with the size it had at the checkpoint.
async fn expect_browsable(site: &Site, session: &str, size_at_checkpoint: usize) {
    let (status, root) = browse(site, session, "").await;
    assert_eq!(status, StatusCode::OK, "{root}");
    let partitions: Vec<&str> = texts(&root["PathItems"], "Path");
    assert_eq!(partitions, ["sda1", "sdb1"]);
    assert!(
        root["PathItems"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["Type"] == "Partition")
    );
    let (_, folder) = browse(site, session, "sda1/etc/app").await;
    assert_eq!(folder["MainPathItem"]["Type"], "Folder");
    let item = &folder["PathItems"][0];
    assert_eq!(item["Path"], APP_CONF);
    assert_eq!(item["Type"], "File");
    assert_eq!(item["IsBrowsable"], false);
    assert_eq!(item["DownloadInformation"]["IsDownloadable"], true);
    assert_eq!(item["SizeInBytes"], size_at_checkpoint);
}

#[tokio::test]
async fn a_file_changed_after_a_checkpoint_comes_back_from_flr_with_its_old_bytes() {
    let (t, boston, vpg, vm, checkpoint) = web_01_tagged(31, "before-change").await;
    // A tag changes no guest file: these are the bytes at the checkpoint.
    let original = t.control.file(&vm, APP_CONF).await;
    t.control.advance(1.0).await;
    t.control
        .put_file(&vm, APP_CONF, b"listen = 0.0.0.0:9999\n")
        .await;

    // Keys in any case, as clients send them.
    let any_case = json!({"jflr": {"vpgIdentifier": vpg, "vmidentifier": vm,
                                   "CheckpointIdentifier": checkpoint}});
    let session = expect_string(boston.post("/v1/flrs", &any_case).await, "a session");
    let (guid, site) = session.split_once('.').unwrap();
    assert_eq!(guid.len(), 36);
    assert_eq!(site, t.sim.local().site_identifier);
    assert_eq!(session_status(&boston, &session).await, "MountInProgress");
    let mount_task = session_task(&boston, &session, "FlrJournalMount").await;
    assert_eq!(mount_task["Status"]["State"], 1);
    assert_eq!(mount_task["RelatedEntities"]["Vpgs"][0]["identifier"], vpg);

    t.control.advance(1.0).await;
    let task_id = mount_task["TaskIdentifier"].as_str().unwrap();
    assert_eq!(boston.task(task_id).await["Status"]["State"], 6);
    let sessions = boston.get_ok(&format!("/v1/flrs?vmIdentifier={vm}")).await;
    let info = &sessions[0];
    assert_eq!(info["FlrSessionStatus"], "MountCompletedSuccessfully");
    assert_eq!(info["FlrSessionType"], "jflr");
    assert_eq!(info["CheckpointIdentifier"], checkpoint);
    assert_eq!(info["VpgIdentifier"], vpg);
    assert!(info["MountTime"].is_string());

    expect_browsable(&boston, &session, original.len()).await;

    let url = download_url(&boston, &session, &[APP_CONF]).await;
    assert!(url.starts_with(t.boston_url()), "{url}");
    let response = boston.fetch(&url).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "application/octet-stream"
    );
    assert_eq!(response.bytes().await.unwrap().to_vec(), original);
    assert_eq!(
        t.control.file(&vm, APP_CONF).await,
        b"listen = 0.0.0.0:9999\n",
        "the guest keeps its new content"
    );

    let (status, unmount) = boston.delete(&format!("/v1/flrs/{session}")).await;
    assert_eq!(status, StatusCode::OK, "{unmount}");
    let unmount_task = session_task(&boston, &session, "FlrJournalUnmount").await;
    assert_eq!(unmount_task["TaskIdentifier"], unmount);
    assert_eq!(session_status(&boston, &session).await, "UnmountInProgress");
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(unmount.as_str().unwrap()).await, 6);
    let (status, _) = boston.get(&format!("/v1/flrs/{session}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(boston.fetch(&url).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn flr_runs_only_at_the_recovery_site_and_says_which_one_it_is() {
    let (t, boston, vpg) = frozen_with_vpg(32, "web-dr").await;
    let vm = boston.vm_id("db-01", "web-dr").await;
    let checkpoint = boston.tag(&t.control, &vpg, "remote").await;
    let denver = t.denver().await;

    let row = boston.get_ok("/v1/vms?vmName=db-01").await;
    assert_eq!(row[0]["EnabledActions"]["IsFlrEnabled"], false);
    let row = denver.get_ok("/v1/vms?vmName=db-01").await;
    assert_eq!(row[0]["EnabledActions"]["IsFlrEnabled"], true);

    let body = json!({"Jflr": {"VpgIdentifier": vpg, "VmIdentifier": vm,
                               "CheckpointIdentifier": checkpoint}});
    let refused = boston.post("/v1/flrs", &body).await;
    let words = ["recovery site Denver", "web-dr"];
    expect_refused(refused, StatusCode::BAD_REQUEST, &words);

    let session = mount(&t, &denver, &vpg, &vm, &checkpoint).await;
    assert!(session.ends_with(&t.sim.peer().site_identifier));
    let (status, _) = boston.get(&format!("/v1/flrs/{session}")).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "each ZVM lists its own sessions"
    );
    let url = download_url(&denver, &session, &["sda1/etc/hostname"]).await;
    assert_eq!(denver.fetch(&url).await.bytes().await.unwrap(), "db-01\n");
}

#[tokio::test]
async fn the_operator_role_is_refused_flr_and_the_administrator_is_not() {
    let t = spawn_frozen(33).await;
    let boston = t.boston().await;
    let operator = Site::login(&t.http, t.boston_url(), "operator", "operator").await;
    let vpg = boston.vpg_id("web-local").await;
    let vm = boston.vm_id("web-01", "web-local").await;
    let checkpoint = boston.tag(&t.control, &vpg, "rbac").await;
    let body = json!({"Jflr": {"VpgIdentifier": vpg, "VmIdentifier": vm,
                               "CheckpointIdentifier": checkpoint}});

    let refused = operator.post("/v1/flrs", &body).await;
    let words = ["not authorized to perform file-level restore"];
    expect_refused(refused, StatusCode::FORBIDDEN, &words);
    let session = mount(&t, &boston, &vpg, &vm, &checkpoint).await;
    assert_eq!(operator.get("/v1/flrs").await.0, StatusCode::FORBIDDEN);
    assert_eq!(
        browse(&operator, &session, "").await.0,
        StatusCode::FORBIDDEN
    );
    let (status, _) = operator.delete(&format!("/v1/flrs/{session}")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // The Operator may still tag: only FLR is refused.
    let (status, _) = operator
        .post(
            &format!("/v1/vpgs/{vpg}/checkpoints"),
            &json!({"CheckpointName": "by operator"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn several_paths_or_a_folder_download_as_a_zip_of_the_files_at_the_checkpoint() {
    let (t, boston, vpg) = frozen_with_vpg(34, "sql-local").await;
    let vm = boston.vm_id("sql-01", "sql-local").await;
    let ini = "C:/ProgramData/App/app.ini";
    let original = t.control.file(&vm, ini).await;
    let checkpoint = boston.tag(&t.control, &vpg, "zip").await;
    t.control.advance(1.0).await;
    t.control.put_file(&vm, ini, b"changed").await;
    t.control
        .put_file(&vm, "D:/Data/new.csv", b"written after the checkpoint")
        .await;
    let session = mount(&t, &boston, &vpg, &vm, &checkpoint).await;

    let url = download_url(
        &boston,
        &session,
        &["c:/programdata/app/APP.INI", "D:/Data/README.txt"],
    )
    .await;
    let response = boston.fetch(&url).await;
    assert_eq!(response.headers()["content-type"], "application/zip");
    let entries = zip_entries(&response.bytes().await.unwrap());
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].0, ini, "entries are named by their guest paths");
    assert_eq!(entries[0].1, original);
    assert_eq!(entries[1].0, "D:/Data/README.txt");

    let url = download_url(&boston, &session, &["D:/Data"]).await;
    let entries = zip_entries(&boston.fetch(&url).await.bytes().await.unwrap());
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["D:/Data/customers.csv", "D:/Data/README.txt"]);
}

#[tokio::test]
async fn missing_paths_mounting_sessions_and_checkpoints_outside_the_journal_are_refused() {
    let (t, boston, vpg, vm, checkpoint) = web_01_tagged(35, "edges").await;

    let mount_body = |checkpoint: &str| {
        json!({"Jflr": {"VpgIdentifier": vpg, "VmIdentifier": vm,
                        "CheckpointIdentifier": checkpoint}})
    };
    let refused = boston.post("/v1/flrs", &mount_body("12345")).await;
    let words = ["is not in the journal of VPG 'web-local'"];
    expect_refused(refused, StatusCode::BAD_REQUEST, &words);
    let refused = boston.post("/v1/flrs", &json!({"Jflr": {}})).await;
    expect_refused(refused, StatusCode::BAD_REQUEST, &["Jflr.VpgIdentifier"]);
    let other_vm = boston.vm_id("app-01", "app-tier").await;
    let (status, _) = boston.start_flr(&vpg, &other_vm, &checkpoint).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the VM is not in the VPG");

    let (status, body) = boston.post("/v1/flrs", &mount_body(&checkpoint)).await;
    assert_eq!(status, StatusCode::OK);
    let session = body.as_str().unwrap().to_owned();
    let mounting = browse(&boston, &session, "").await;
    expect_refused(mounting, StatusCode::CONFLICT, &["MountInProgress"]);

    t.control.advance(1.0).await;
    let missing = browse(&boston, &session, "sda1/etc/nothing").await;
    expect_refused(missing, StatusCode::NOT_FOUND, &["sda1/etc/nothing"]);
    let (status, _) = browse(&boston, &session, "C:/Windows").await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "not a partition of this guest"
    );
    let (status, _) = boston
        .post(
            &format!("/v1/flrs/{session}/download"),
            &json!({"PathList": [APP_CONF, "sda1/etc/nothing"]}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, file) = browse(&boston, &session, APP_CONF).await;
    assert_eq!(file["MainPathItem"]["Type"], "File");
    assert_eq!(file["PathItems"], json!([]));

    let url = download_url(&boston, &session, &[APP_CONF]).await;
    let anonymous = t.http.get(&url).send().await.unwrap();
    assert_eq!(
        anonymous.status(),
        StatusCode::UNAUTHORIZED,
        "the URL needs a bearer"
    );
}

#[tokio::test]
async fn unmounting_a_session_still_mounting_stops_its_mount_task() {
    let (t, boston, vpg, vm, checkpoint) = web_01_tagged(36, "early").await;
    let session = expect_string(boston.start_flr(&vpg, &vm, &checkpoint).await, "a session");
    let (status, _) = boston.delete(&format!("/v1/flrs/{session}")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, again) = boston.delete(&format!("/v1/flrs/{session}")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    let mount_task = session_task(&boston, &session, "FlrJournalMount").await;
    assert_eq!(mount_task["Status"]["State"], 5, "Stopped");
    t.control.advance(1.0).await;
    assert_eq!(
        boston.get(&format!("/v1/flrs/{session}")).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_resync_during_the_mount_fails_it_and_the_session_shows_mount_failed() {
    let (t, boston, vpg, vm, checkpoint) = web_01_tagged(37, "lost").await;
    let session = expect_string(boston.start_flr(&vpg, &vm, &checkpoint).await, "a session");
    control_ok(&t, "vpgs/web-local/resync", json!({"Seconds": 10})).await;
    t.control.advance(1.0).await;
    assert_eq!(session_status(&boston, &session).await, "MountFailed");
    let task = session_task(&boston, &session, "FlrJournalMount").await;
    expect_ended(&task, 4, &["no longer in the journal"]);
    let (status, _) = browse(&boston, &session, "").await;
    assert_eq!(status, StatusCode::CONFLICT);
}

/// `(Path, SizeInBytes, LastWriteTime)` of each item a browse answered.
fn listed(answer: &Value) -> Vec<(String, Value, String)> {
    answer["PathItems"]
        .as_array()
        .expect("PathItems")
        .iter()
        .map(|i| {
            let text = |k: &str| i[k].as_str().unwrap_or_default().to_owned();
            (
                text("Path"),
                i["SizeInBytes"].clone(),
                text("LastWriteTime"),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_browse_answers_each_file_as_it_was_at_the_mounted_checkpoint_page_by_page() {
    let (t, boston, vpg, vm, before) = web_01_tagged(37, "before-tidy").await;
    t.control.advance(5.0).await;
    t.control
        .put_file(&vm, APP_CONF, b"listen = 0.0.0.0:9999\n")
        .await;
    t.control
        .put_file(&vm, "sda1/etc/app/extra.conf", b"debug = true\n")
        .await;
    t.control.delete_file(&vm, "sda1/etc/hostname").await;
    let after = boston.tag(&t.control, &vpg, "after-tidy").await;

    let at_tag = mount(&t, &boston, &vpg, &vm, &before).await;
    let (_, app_then) = browse(&boston, &at_tag, "sda1/etc/app").await;
    let (_, etc_then) = browse(&boston, &at_tag, "sda1/etc").await;
    let later = mount(&t, &boston, &vpg, &vm, &after).await;
    let (_, app_now) = browse(&boston, &later, "sda1/etc/app").await;
    let (_, etc_now) = browse(&boston, &later, "sda1/etc").await;

    let then = listed(&app_then);
    let now = listed(&app_now);
    assert_eq!(then.len(), 1, "extra.conf is not in the tag: {then:?}");
    assert_eq!(now.len(), 2, "{now:?}");
    let (conf_then, conf_now) = (&then[0], &now[0]);
    assert_eq!(conf_now.0, APP_CONF);
    assert_eq!(conf_now.1, json!(22), "the size written after the tag");
    assert_ne!(conf_then.1, conf_now.1);
    assert!(
        conf_then.2 < conf_now.2,
        "a later write time: {then:?} {now:?}"
    );
    assert!(app_now["PathItems"][0]["CreationTime"].is_string());
    let names = |v: &Value| texts(&v["PathItems"], "Path").join(" ");
    assert!(names(&etc_then).contains("sda1/etc/hostname"));
    assert!(
        !names(&etc_now).contains("hostname"),
        "deleted after the tag"
    );

    // Pages of one item walk the folder in order, and a page past the end is empty.
    let whole = listed(&etc_now);
    let mut paged = Vec::new();
    for number in 1..=whole.len() + 1 {
        let (status, page) = boston
            .post(
                &format!("/v1/flrs/{later}/browse"),
                &json!({"Path": "sda1/etc", "PageNumber": number, "PageSize": 1}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        paged.extend(listed(&page));
    }
    assert_eq!(paged, whole);
}
