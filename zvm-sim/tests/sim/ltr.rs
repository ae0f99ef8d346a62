//! Extended Journal Copy (Zerto's long-term retention, `/v1/ltr`): a repository at the recovery
//! site Denver keeps web-dr's retention sets and not web-archive's; a manual run from a checkpoint
//! writes a full retention set with an expiry, or fails naming why; a set outlives its checkpoint,
//! shows among a VM's points in time, mounts for FLR (`Bflr`) with the files of its moment, and
//! expires. Every test freezes the clock.

use reqwest::StatusCode;
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, TestSim, frozen_with_vpg, spawn_frozen, spawn_with, texts};

use crate::expect::{expect_ended, expect_refused, expect_string};

const APP_CONF: &str = "sda1/etc/app/app.conf";
const DAY: f64 = 24.0 * 60.0 * 60.0;

/// The sorted keys of a JSON object.
fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap_or_else(|| panic!("an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

fn sorted(mut names: Vec<&str>) -> Vec<&str> {
    names.sort_unstable();
    names
}

/// The health of the VPG named `name` at a site.
async fn health_of(site: &Site, name: &str) -> Value {
    let health = site.get_ok("/v1/ltr/health/vpgs").await;
    let vpgs = health["Vpgs"].as_array().expect("Vpgs");
    vpgs.iter()
        .find(|v| v["VpgName"] == name)
        .unwrap_or_else(|| panic!("{name} in {health}"))
        .clone()
}

/// A frozen simulator with web-dr tagged `tag` and a completed manual run of that tag; Boston,
/// web-dr's identifier, the tag's checkpoint and the retention set's identifier.
async fn web_dr_copied(seed: u64, tag: &str) -> (TestSim, Site, String, String, String) {
    let (t, boston, vpg) = frozen_with_vpg(seed, "web-dr").await;
    let checkpoint = boston.tag(&t.control, &vpg, tag).await;
    let task = boston.start_retention(&vpg, Some(&checkpoint)).await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&task).await, 6);
    let sets = boston.retention_sets(&vpg).await;
    assert_eq!(sets.len(), 1, "{sets:?}");
    let set = sets[0]["RetentionSetIdentifier"]
        .as_str()
        .unwrap()
        .to_owned();
    (t, boston, vpg, checkpoint, set)
}

#[tokio::test]
async fn a_repository_is_listed_at_its_own_site_and_health_tells_which_vpgs_have_one() {
    let t = spawn_frozen(40).await;
    let (boston, denver) = t.both_sites().await;
    let repositories = denver.get_ok("/v1/ltr/repositories").await;
    assert_eq!(texts(&repositories, "RepositoryName"), ["denver-ltr"]);
    let repository = &repositories[0];
    assert_eq!(repository["TotalCapacityGB"], 10_240);
    assert_eq!(repository["UsedCapacityGB"], 0);
    assert_eq!(repository["DefaultRepository"], true);
    assert_eq!(
        repository["Nfs"]["Path"],
        "nfs://backup.denver.example.internal/zerto/denver-ltr"
    );
    assert!(repository["S3-Compatible"].is_null());
    let id = repository["RepositoryIdentifier"].as_str().unwrap();
    assert_eq!(
        &denver.get_ok(&format!("/v1/ltr/repositories/{id}")).await,
        repository
    );
    assert!(
        boston
            .get_ok("/v1/ltr/repositories")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
    let (status, _) = boston.get(&format!("/v1/ltr/repositories/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let filtered = denver
        .get_ok("/v1/ltr/repositories?repositoryName=other")
        .await;
    assert!(filtered.as_array().unwrap().is_empty());

    let kept = health_of(&boston, "web-dr").await;
    assert_eq!(kept["RepositoryName"], "denver-ltr");
    assert_eq!(kept["RepositoryId"], id);
    assert_eq!(kept["RecoverySiteName"], "Denver");
    assert_eq!(kept["IsBackupEnabled"], true);
    assert_eq!(kept["VmsInVpg"], 2);
    let none = health_of(&boston, "web-archive").await;
    assert!(none["RepositoryId"].is_null() && none["RepositoryName"].is_null());
    assert_eq!(none["IsBackupEnabled"], false);
    assert_eq!(none["ManageRetentionSetsAvailability"]["IsEnabled"], false);
    let reason = none["ManageRetentionSetsAvailability"]["DisableReasonText"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("no Extended Journal Copy repository"),
        "{reason}"
    );
    // Each ZVM lists the VPGs it sees: Denver's own ci-denver is not Boston's.
    let names = |health: &Value| {
        let vpgs = health["Vpgs"].as_array().unwrap();
        vpgs.iter()
            .map(|v| v["VpgName"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(!names(&boston.get_ok("/v1/ltr/health/vpgs").await).contains(&"ci-denver".into()));
    assert!(names(&denver.get_ok("/v1/ltr/health/vpgs").await).contains(&"ci-denver".into()));
}

#[tokio::test]
async fn a_manual_run_from_a_tag_writes_a_full_retention_set_kept_for_thirty_days() {
    let (t, boston, vpg) = frozen_with_vpg(40, "web-dr").await;
    let checkpoint = boston.tag(&t.control, &vpg, "before-change").await;
    let tagged = boston.tagged(&vpg, "before-change").await;
    let task = boston.start_retention(&vpg, Some(&checkpoint)).await;
    let running = boston.task(&task).await;
    assert_eq!(running["Type"], "ManualRetention");
    assert_eq!(running["Status"]["State"], 1);
    assert!(
        boston.retention_sets(&vpg).await.is_empty(),
        "written when the run ends"
    );
    assert_eq!(
        health_of(&boston, "web-dr").await["IsAbortBackupEnabled"],
        true
    );
    t.control.advance(1.0).await;
    let done = boston.task(&task).await;
    assert_eq!(done["Status"]["State"], 6);

    let sets = boston.retention_sets(&vpg).await;
    let set = &sets[0];
    assert_eq!(
        keys(set),
        sorted(vec![
            "ActionType",
            "AggregatedSizeInKB",
            "BackupMethod",
            "ExpiryDate",
            "IsAppAware",
            "IsVpgExists",
            "NumberOfIncrementals",
            "PointInTime",
            "Repository",
            "RetentionSetActionsInformation",
            "RetentionSetIdentifier",
            "RetentionSetImmutability",
            "SizeInKB",
            "StatusType",
            "Vpg",
            "Zorg",
        ])
    );
    assert_eq!(set["Vpg"]["Name"], "web-dr");
    assert_eq!(set["Vpg"]["Identifier"], vpg.as_str());
    assert_eq!(set["Repository"]["Name"], "denver-ltr");
    assert_eq!(set["PointInTime"], tagged[0]["TimeStamp"]);
    assert_eq!(set["BackupMethod"], "Full");
    assert_eq!(set["NumberOfIncrementals"], 0);
    assert!(set["SizeInKB"].as_u64().unwrap() > 0);
    let completed = chrono::DateTime::parse_from_rfc3339(done["Completed"].as_str().unwrap());
    let expiry = chrono::DateTime::parse_from_rfc3339(set["ExpiryDate"].as_str().unwrap());
    assert_eq!(
        expiry.unwrap() - completed.unwrap(),
        chrono::TimeDelta::days(30),
        "kept 30 days from when it was written"
    );
    let id = set["RetentionSetIdentifier"].as_str().unwrap();
    let incrementals = boston
        .get_ok(&format!(
            "/v1/ltr/catalog/fullretentionsets/{id}/incrementals"
        ))
        .await;
    assert_eq!(incrementals, json!({"RetentionSets": []}));

    let recoverable = boston.get_ok("/v1/ltr/catalog/vms").await;
    let vms: Vec<&str> = recoverable["Vms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["Vm"]["Name"].as_str().unwrap())
        .collect();
    assert_eq!(sorted(vms), ["db-01", "web-01"]);
    let web_01 = boston.vm_id("web-01", "web-dr").await;
    let of_vm = boston
        .get_ok(&format!("/v1/ltr/catalog/vms/{web_01}/retentionsets"))
        .await;
    assert_eq!(of_vm["LtrVmIdentifier"], web_01.as_str());
    let listed = &of_vm["RetentionSets"][0];
    assert_eq!(listed["RetentionSetIdentifier"], id);
    assert_eq!(listed["TimeStamp"], tagged[0]["TimeStamp"]);
    assert_eq!(
        listed["RepositorySiteIdentifier"],
        t.sim.peer().site_identifier.as_str()
    );

    let health = health_of(&boston, "web-dr").await;
    assert_eq!(
        health["SuccessRate"],
        json!({"ExpectedRetentionSets": 1, "ActualSuccessfulRetentionSets": 1})
    );
    assert_eq!(health["DateOfLastRun"], running["Started"]);
    assert_eq!(health["TimeOfLastSuccessfulRun"], done["Completed"]);
    let events = boston
        .get_ok(&format!("/v1/events?vpgIdentifier={vpg}&eventType=51"))
        .await;
    assert_eq!(events.as_array().unwrap().len(), 1, "{events}");
    let truth = t.control.retention_sets_of("web-dr").await;
    assert_eq!(truth[0]["Tag"], "before-change");
    assert_eq!(truth[0]["CheckpointIdentifier"], checkpoint.as_str());
    assert_eq!(truth[0]["Site"], "Denver");
    let denver = t.denver().await;
    let used = denver.get_ok("/v1/ltr/repositories").await[0]["UsedCapacityGB"].clone();
    assert!(used.as_u64().unwrap() > 0, "{used}");
}

#[tokio::test]
async fn retentionstart_reads_its_checkpoint_in_any_casing_and_copies_the_latest_without_one() {
    let (t, boston, vpg) = frozen_with_vpg(40, "web-dr").await;
    let checkpoint = boston.tag(&t.control, &vpg, "cased").await;
    let path = format!("/v1/ltr/vpgs/{vpg}/retentionstart");
    let task = expect_string(
        boston
            .post(&path, &json!({"CheckpointId": checkpoint}))
            .await,
        "a task id",
    );
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&task).await, 6);
    let latest = boston
        .get_ok(&format!("/v1/vpgs/{vpg}/checkpoints/stats"))
        .await["Latest"]
        .clone();
    let task = boston.start_retention(&vpg, None).await;
    t.control.advance(1.0).await;
    assert_eq!(boston.task_state(&task).await, 6);
    let sets = t.control.retention_sets_of("web-dr").await;
    assert_eq!(sets.len(), 2);
    assert_eq!(sets[0]["Tag"], "cased");
    assert_eq!(
        sets[1]["CheckpointIdentifier"],
        latest["CheckpointIdentifier"]
    );
}

#[tokio::test]
async fn a_run_fails_naming_why_without_a_repository_or_with_a_checkpoint_not_in_the_journal() {
    let t = spawn_frozen(40).await;
    let boston = t.boston().await;
    let archive = boston.vpg_id("web-archive").await;
    let checkpoint = boston.tag(&t.control, &archive, "no-repository").await;
    let task = boston.start_retention(&archive, Some(&checkpoint)).await;
    t.control.advance(1.0).await;
    expect_ended(
        &boston.task(&task).await,
        4,
        &["web-archive", "no Extended Journal Copy repository"],
    );
    let health = health_of(&boston, "web-archive").await;
    assert_eq!(health["SuccessRate"]["ExpectedRetentionSets"], 1);
    assert_eq!(health["SuccessRate"]["ActualSuccessfulRetentionSets"], 0);
    assert_eq!(health["LtrVpgStatus"], 1);

    let dr = boston.vpg_id("web-dr").await;
    let task = boston.start_retention(&dr, Some("12345")).await;
    t.control.advance(1.0).await;
    expect_ended(
        &boston.task(&task).await,
        4,
        &["'12345'", "not in the journal", "web-dr"],
    );
    assert!(t.control.retention_sets().await.is_empty());
    let answer = boston
        .post(
            "/v1/ltr/vpgs/00000000-0000-0000-0000-000000000000/retentionstart",
            &json!({}),
        )
        .await;
    expect_refused(answer, StatusCode::NOT_FOUND, &[]);
}

#[tokio::test]
async fn a_second_run_fails_while_one_runs_and_an_abort_stops_the_running_one() {
    let (t, boston, vpg) = frozen_with_vpg(40, "web-dr").await;
    let first = boston.start_retention(&vpg, None).await;
    let second = boston.start_retention(&vpg, None).await;
    let abort = format!("/v1/ltr/vpgs/{vpg}/retentionabort");
    let (status, body) = boston.post(&abort, &Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.is_null(), "no body: {body}");
    expect_ended(&boston.task(&first).await, 5, &["aborted by admin"]);
    t.control.advance(1.0).await;
    expect_ended(&boston.task(&second).await, 4, &["already running", &first]);
    assert!(boston.retention_sets(&vpg).await.is_empty());
    let answer = boston.post(&abort, &Value::Null).await;
    expect_refused(
        answer,
        StatusCode::CONFLICT,
        &["web-dr", "nothing to abort"],
    );
}

#[tokio::test]
async fn a_checkpoint_that_leaves_the_journal_during_the_run_fails_it() {
    let (t, boston, vpg) = frozen_with_vpg(40, "web-dr").await;
    let checkpoint = boston.tag(&t.control, &vpg, "wiped").await;
    let task = boston.start_retention(&vpg, Some(&checkpoint)).await;
    t.control.resync("web-dr", 30).await;
    t.control.advance(1.0).await;
    expect_ended(
        &boston.task(&task).await,
        4,
        &["no longer in the journal", "web-dr"],
    );
    assert!(boston.retention_sets(&vpg).await.is_empty());
}

#[tokio::test]
async fn a_retention_set_outlives_its_checkpoint_and_is_gone_once_it_expires() {
    let (t, boston, vpg, _checkpoint, set) = web_dr_copied(41, "kept-long").await;
    t.control.resync("web-dr", 30).await;
    assert!(boston.tagged(&vpg, "kept-long").await.is_empty());
    assert_eq!(
        texts(
            &Value::from(boston.retention_sets(&vpg).await),
            "RetentionSetIdentifier"
        ),
        [set.as_str()]
    );

    // Written a few tens of milliseconds after 00:00:01 (now is 00:00:02); kept 30 days.
    t.control.advance(30.0 * DAY - 2.0).await;
    let boston = t.boston().await;
    assert_eq!(boston.retention_sets(&vpg).await.len(), 1);
    t.control.advance(2.0).await;
    let boston = t.boston().await;
    assert!(boston.retention_sets(&vpg).await.is_empty());
    assert!(t.control.retention_sets().await.is_empty());
    let recoverable = boston.get_ok("/v1/ltr/catalog/vms").await;
    assert_eq!(recoverable, json!({"Vms": []}));
    let (status, _) = boston
        .get(&format!(
            "/v1/ltr/catalog/fullretentionsets/{set}/incrementals"
        ))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn points_in_time_list_retention_sets_mountable_at_their_repositorys_site() {
    let (t, boston, vpg, _checkpoint, set) = web_dr_copied(42, "point").await;
    t.control.resync("web-dr", 30).await;
    let denver = t.denver().await;
    let web_01 = denver.vm_id("web-01", "web-dr").await;
    let path = format!("/v1/vms/{web_01}/pointsInTime?vpgIdentifier={vpg}");
    let points = denver.get_ok(&path).await;
    let points = points.as_array().unwrap();
    assert_eq!(
        points.len(),
        1,
        "the journal was wiped; the set remains: {points:?}"
    );
    let point = &points[0];
    assert!(point["Checkpoint"].is_null());
    assert_eq!(
        point["RetentionSet"]["RetentionSetIdentifier"],
        set.as_str()
    );
    assert_eq!(point["CanMount"], json!({"IsAllowed": true, "Reason": ""}));
    let at_boston = boston.get_ok(&path).await;
    assert_eq!(at_boston[0]["CanMount"]["IsAllowed"], false);
    let reason = at_boston[0]["CanMount"]["Reason"].as_str().unwrap();
    assert!(
        reason.contains("denver-ltr") && reason.contains("Denver"),
        "{reason}"
    );

    // Once the journal writes again, checkpoints and the set are one timeline, oldest first.
    t.control.advance(60.0).await;
    let denver = t.denver().await;
    let points = denver.get_ok(&path).await;
    assert!(!points[0]["RetentionSet"].is_null());
    assert!(!points[1]["Checkpoint"].is_null());
    let stats = denver
        .get_ok(&format!(
            "/v1/vms/{web_01}/pointsInTime/stats?vpgIdentifier={vpg}"
        ))
        .await;
    assert_eq!(
        stats["Earliest"]["RetentionSet"]["RetentionSetIdentifier"],
        set.as_str()
    );
    assert!(stats["Latest"]["RetentionSet"].is_null());
    assert!(!stats["Latest"]["Checkpoint"].is_null());
}

#[tokio::test]
async fn bflr_mounts_the_files_the_vm_had_at_the_sets_point_in_time() {
    let (t, _boston, vpg, _checkpoint, set) = web_dr_copied(43, "before-edit").await;
    let original = t.control.file("web-01", APP_CONF).await;
    t.control
        .put_file("web-01", APP_CONF, b"listen = 0.0.0.0:1")
        .await;
    t.control.resync("web-dr", 30).await;
    let denver = t.denver().await;
    let web_01 = denver.vm_id("web-01", "web-dr").await;
    let session = expect_string(denver.start_bflr(&vpg, &web_01, &set).await, "a session id");
    let sessions = denver.get_ok(&format!("/v1/flrs/{session}")).await;
    assert_eq!(sessions[0]["FlrSessionStatus"], "MountInProgress");
    t.control.advance(1.0).await;
    let sessions = denver.get_ok(&format!("/v1/flrs/{session}")).await;
    let shown = &sessions[0];
    assert_eq!(shown["FlrSessionStatus"], "MountCompletedSuccessfully");
    assert_eq!(shown["FlrSessionType"], "bflr");
    assert_eq!(shown["RetentionSetIdentifier"], set.as_str());
    assert!(shown["CheckpointIdentifier"].is_null());
    let repository = denver.get_ok("/v1/ltr/repositories").await[0]["RepositoryIdentifier"].clone();
    assert_eq!(shown["RepositoryIdentifier"], repository);
    let mounts = denver.get_ok("/v1/tasks?type=FlrBackupMount").await;
    assert_eq!(mounts[0]["Status"]["State"], 6);

    let url = expect_string(
        denver
            .post(
                &format!("/v1/flrs/{session}/download"),
                &json!({"PathList": [APP_CONF]}),
            )
            .await,
        "a download URL",
    );
    let bytes = denver.fetch(&url).await.bytes().await.unwrap();
    assert_eq!(
        bytes.as_ref(),
        original.as_slice(),
        "the file as it was at the set's moment"
    );
    let browse = denver
        .post(&format!("/v1/flrs/{session}/browse"), &json!({"Path": ""}))
        .await;
    assert_eq!(browse.0, StatusCode::OK);
    assert_eq!(texts(&browse.1["PathItems"], "Path"), ["sda1", "sdb1"]);

    let unmount = expect_string(
        denver.delete(&format!("/v1/flrs/{session}")).await,
        "a task id",
    );
    assert_eq!(denver.task(&unmount).await["Type"], "FlrBackupUnmount");
    t.control.advance(1.0).await;
    assert!(
        denver
            .get_ok("/v1/flrs")
            .await
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn bflr_is_refused_away_from_the_repository_or_for_what_the_set_does_not_hold() {
    let (t, boston, vpg, _checkpoint, set) = web_dr_copied(44, "refusals").await;
    let web_01 = boston.vm_id("web-01", "web-dr").await;
    let answer = boston.start_bflr(&vpg, &web_01, &set).await;
    expect_refused(
        answer,
        StatusCode::BAD_REQUEST,
        &["denver-ltr", "Denver", "Boston"],
    );
    let denver = t.denver().await;
    let erp = denver.vm_id("erp-01", "erp-dr").await;
    let answer = denver.start_bflr(&vpg, &erp, &set).await;
    expect_refused(
        answer,
        StatusCode::BAD_REQUEST,
        &["is not a VM of retention set"],
    );
    let answer = denver.start_bflr(&vpg, &web_01, "no-such-set").await;
    expect_refused(answer, StatusCode::BAD_REQUEST, &["no-such-set", "web-dr"]);
    let body = json!({"Bflr": {"VpgIdentifier": vpg, "VmIdentifier": web_01,
                               "RetentionSetIdentifier": set, "RepositoryIdentifier": "other"}});
    let answer = denver.post("/v1/flrs", &body).await;
    expect_refused(
        answer,
        StatusCode::BAD_REQUEST,
        &["RepositoryIdentifier 'other'"],
    );
    let body = json!({"Bflr": {"VpgIdentifier": vpg, "VmIdentifier": web_01}});
    let answer = denver.post("/v1/flrs", &body).await;
    expect_refused(
        answer,
        StatusCode::BAD_REQUEST,
        &["RetentionSetIdentifier is required"],
    );
    let answer = denver.post("/v1/flrs", &json!({})).await;
    expect_refused(
        answer,
        StatusCode::BAD_REQUEST,
        &["Jflr or Bflr is required"],
    );
}

#[tokio::test]
async fn saved_state_carries_repositories_and_retention_sets() {
    let (source, _boston, vpg, _checkpoint, set) = web_dr_copied(45, "saved").await;
    let saved = source.control.state().await;
    assert_eq!(saved["Format"], "zvm-sim-state/3");
    let target = spawn_with(zvm_sim::Options {
        time_scale: 0.0,
        ..zvm_sim::Options::for_tests(45)
    })
    .await;
    let response = target
        .http
        .put(format!("{}/_sim/state", target.boston_url()))
        .json(&saved)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let boston = target.boston().await;
    let sets = boston.retention_sets(&vpg).await;
    assert_eq!(
        texts(&Value::from(sets), "RetentionSetIdentifier"),
        [set.as_str()]
    );
    assert_eq!(
        health_of(&boston, "web-dr").await["SuccessRate"]["ActualSuccessfulRetentionSets"],
        1
    );
}

#[tokio::test]
async fn repositories_are_made_renamed_and_deleted_only_when_nothing_uses_them() {
    let t = spawn_frozen(95).await;
    let denver = t.denver().await;
    let (status, id) = denver
        .post(
            "/v1/ltr/repositories",
            &json!({"repositoryName": "offsite-2", "totalCapacityGB": 2048}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{id}");
    let id = id.as_str().expect("its identifier").to_owned();
    let made = denver.get_ok(&format!("/v1/ltr/repositories/{id}")).await;
    assert_eq!(made["RepositoryName"], "offsite-2", "{made}");
    expect_refused(
        denver
            .post(
                "/v1/ltr/repositories",
                &json!({"repositoryName": "OFFSITE-2"}),
            )
            .await,
        StatusCode::CONFLICT,
        &["already exists"],
    );
    let (status, _) = denver
        .request(
            reqwest::Method::PUT,
            &format!("/v1/ltr/repositories/{id}"),
            Some(&json!({"repositoryName": "offsite-3"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        denver.get_ok(&format!("/v1/ltr/repositories/{id}")).await["RepositoryName"],
        "offsite-3"
    );
    let (status, _) = denver.delete(&format!("/v1/ltr/repositories/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        denver.get(&format!("/v1/ltr/repositories/{id}")).await.0,
        StatusCode::NOT_FOUND
    );

    // The world file's repository keeps web-dr's copies: it stays.
    let listed = denver.get_ok("/v1/ltr/repositories").await;
    let kept = listed[0]["RepositoryIdentifier"]
        .as_str()
        .unwrap()
        .to_owned();
    expect_refused(
        denver.delete(&format!("/v1/ltr/repositories/{kept}")).await,
        StatusCode::CONFLICT,
        &["web-dr"],
    );
}

#[tokio::test]
async fn a_vm_is_restored_from_its_retention_set_beside_it_and_a_deleted_set_is_gone() {
    let (t, boston, vpg, _, set) = web_dr_copied(96, "before-restore").await;
    let vm = boston
        .get_ok(&format!("/v1/vms?vpgIdentifier={vpg}&vmName=web-01"))
        .await[0]["VmIdentifier"]
        .as_str()
        .unwrap()
        .to_owned();
    let settings = boston
        .get_ok(&format!(
            "/v1/ltr/catalog/vms/{vm}/retentionsets/{set}/settings"
        ))
        .await;
    assert_eq!(
        (
            settings["LtrVmIdentifier"].as_str(),
            settings["RetentionSetIdentifier"].as_str()
        ),
        (Some(vm.as_str()), Some(set.as_str()))
    );
    assert_eq!(
        settings["Volumes"].as_array().unwrap().len(),
        2,
        "{settings}"
    );

    let before = t.control.file("web-01", APP_CONF).await;
    t.control
        .put_file("web-01", APP_CONF, b"broken = true")
        .await;
    let (status, task) = boston
        .post(
            "/v1/ltr/restore/vm",
            &json!({"vmIdentifier": vm, "retentionSetIdentifier": set}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{task}");
    t.control.advance(1.0).await;
    let task = boston.wait_task(task.as_str().unwrap()).await;
    assert_eq!(
        (task["Type"].as_str(), task["Status"]["State"].as_i64()),
        (Some("RestoreVmFromRetentionSet"), Some(6)),
        "{task}"
    );
    assert_eq!(
        t.control.file("web-01-restored", APP_CONF).await,
        before,
        "the set's moment"
    );
    assert_eq!(
        t.control.file("web-01", APP_CONF).await,
        b"broken = true",
        "the VM untouched"
    );

    let (status, _) = boston
        .post(
            "/v1/ltr/catalog/deleteretentionsets",
            &json!({"retentionSetsToDelete": [{"fullRetentionSetIdentifier": set}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(boston.retention_sets(&vpg).await.is_empty(), "gone at once");
    expect_refused(
        boston
            .post(
                "/v1/ltr/catalog/deleteretentionsets",
                &json!({"retentionSetsToDelete": [{"fullRetentionSetIdentifier": set}]}),
            )
            .await,
        StatusCode::NOT_FOUND,
        &["no retention set"],
    );
}
