//! The recovery-scripts folders (issue 34): a script uploaded as SW10's `multipart/form-data`,
//! listed, found by a search, downloaded byte for byte, replaced only when asked, and folders made
//! and deleted as a ZVM would; and the paths a vSphere site answers with nothing (vCD, org VDCs, a
//! public cloud's keys, billing).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use zvm_sim::test_kit::{Site, spawn_frozen};

use crate::expect::expect_refused;

const SCRIPTS: &str = "/v1/recoveryScripts/repository";

/// Uploads `content` as `name` into the folder `path`, as a browser form or `requests` sends it.
async fn upload(site: &Site, path: &str, name: &str, content: &str, overwrite: bool) -> StatusCode {
    let boundary = "zvm-sim-test-boundary";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n{content}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n{path}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"overwriteExisting\"\r\n\r\n{overwrite}\r\n\
         --{boundary}--\r\n"
    );
    let response = site
        .http
        .post(format!("{}{SCRIPTS}/files", site.base))
        .bearer_auth(&site.token)
        .header(
            "Content-Type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .expect("the upload is answered");
    response.status()
}

fn names(items: &Value) -> Vec<(String, i64)> {
    items["Items"]
        .as_array()
        .expect("Items")
        .iter()
        .map(|i| {
            (
                i["Name"].as_str().unwrap().to_owned(),
                i["Type"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_script_is_uploaded_listed_downloaded_replaced_only_when_asked_and_deleted() {
    let t = spawn_frozen(91).await;
    let boston = t.boston().await;
    let (status, _) = boston
        .post(&format!("{SCRIPTS}/folders"), &json!({"path": "pre/web"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        upload(
            &boston,
            "pre/web",
            "before.ps1",
            "Stop-Service w3svc",
            false
        )
        .await,
        StatusCode::OK
    );
    assert_eq!(
        upload(&boston, "pre", "notes.txt", "read me", false).await,
        StatusCode::OK
    );

    let root = boston.get_ok(&format!("{SCRIPTS}/items")).await;
    assert_eq!(names(&root), [("pre".to_owned(), 1)], "{root}");
    let pre = boston.get_ok(&format!("{SCRIPTS}/items?path=pre")).await;
    assert_eq!(
        names(&pre),
        [("web".to_owned(), 1), ("notes.txt".to_owned(), 2)],
        "folders first"
    );
    let found = boston
        .get_ok(&format!("{SCRIPTS}/items?path=pre/web&search=*.PS1"))
        .await;
    assert_eq!(found["Items"][0]["Path"], "pre/web/before.ps1", "{found}");

    let download = |path: &'static str| {
        let request = boston
            .http
            .get(format!("{}{SCRIPTS}/files?path={path}", boston.base))
            .bearer_auth(&boston.token);
        async move {
            request
                .send()
                .await
                .expect("answered")
                .text()
                .await
                .unwrap()
        }
    };
    assert_eq!(download("pre/web/before.ps1").await, "Stop-Service w3svc");
    assert_eq!(
        upload(&boston, "pre/web", "before.ps1", "changed", false).await,
        StatusCode::CONFLICT
    );
    assert_eq!(
        download("pre/web/before.ps1").await,
        "Stop-Service w3svc",
        "kept"
    );
    assert_eq!(
        upload(&boston, "pre/web", "before.ps1", "changed", true).await,
        StatusCode::OK
    );
    assert_eq!(download("pre/web/before.ps1").await, "changed");

    expect_refused(
        boston.get(&format!("{SCRIPTS}/items?path=../../etc")).await,
        StatusCode::BAD_REQUEST,
        &["leaves the scripts folder"],
    );
    expect_refused(
        boston.delete(&format!("{SCRIPTS}/folders?path=pre")).await,
        StatusCode::CONFLICT,
        &["not empty", "deleteIfNotEmpty"],
    );
    let (status, _) = boston
        .delete(&format!("{SCRIPTS}/files?path=pre/notes.txt"))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = boston
        .delete(&format!("{SCRIPTS}/folders?path=pre&deleteIfNotEmpty=true"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&boston.get_ok(&format!("{SCRIPTS}/items")).await), []);
    assert_eq!(
        boston
            .get(&format!("{SCRIPTS}/files?path=pre/web/before.ps1"))
            .await
            .0,
        StatusCode::NOT_FOUND
    );

    // The output folder: nothing runs, so it holds only what a client made there; the peer's
    // folders are its own.
    let output = "/v1/recoveryScripts/output";
    assert_eq!(names(&boston.get_ok(&format!("{output}/items")).await), []);
    let (status, _) = boston
        .post(&format!("{output}/folders"), &json!({"path": "runs"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        names(&boston.get_ok(&format!("{output}/items")).await),
        [("runs".to_owned(), 1)]
    );
    let denver = t.denver().await;
    assert_eq!(names(&denver.get_ok(&format!("{output}/items")).await), []);
}

#[tokio::test]
async fn a_vsphere_site_answers_the_vcd_org_vdc_key_vault_and_billing_paths_with_nothing() {
    let t = spawn_frozen(92).await;
    let boston = t.boston().await;
    let site = boston.get_ok("/v1/localsite").await["SiteIdentifier"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(boston.get_ok("/v1/vcd/vmsWithoutMorefId").await, json!([]));
    assert_eq!(boston.get_ok("/v1/vcd/validOrgVdcs").await, json!([]));
    for path in [
        format!("/v1/virtualizationsites/{site}/orgvdcs/org-1/networks"),
        format!("/v1/virtualizationsites/{site}/orgvdcs/org-1/storagepolicies"),
        format!("/v1/virtualizationsites/{site}/publiccloud/encryptionkeys/key-1"),
    ] {
        expect_refused(
            boston.get(&path).await,
            StatusCode::NOT_FOUND,
            &["vSphere site"],
        );
    }
    expect_refused(
        boston
            .get("/v1/virtualizationsites/no-such-site/orgvdcs/org-1/networks")
            .await,
        StatusCode::NOT_FOUND,
        &["no virtualization site"],
    );
    let (status, _) = boston
        .request(Method::POST, "/v1/localsite/billing/sendUsage", None)
        .await;
    assert_eq!(status, StatusCode::OK);
}
