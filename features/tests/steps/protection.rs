//! Find protection: which VM a name means, and every VPG it is in.

use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use features::RewindWorld;
use serde_json::Value;

use super::fronts::result;
use super::words::names;

/// The substatuses that are a sync (CONTEXT.md), written out here rather than taken from rewind-core,
/// so a change of the core's rule cannot change what the suite expects.
const SYNC_SUBSTATUSES: [i64; 8] = [1, 3, 4, 6, 11, 12, 13, 23];
/// ReplicationPausedUserInitiated and ReplicationPausedSystemInitiated.
const PAUSED_SUBSTATUSES: [i64; 2] = [25, 26];

/// A data table's rows after its header, as (header, cell) maps.
pub fn rows(step: &Step) -> Vec<Vec<(String, String)>> {
    let table = step.table.as_ref().expect("the step has a table");
    let header = &table.rows[0];
    table.rows[1..]
        .iter()
        .map(|row| {
            header
                .iter()
                .cloned()
                .zip(row.iter().map(|c| c.trim().to_string()))
                .collect()
        })
        .collect()
}

/// One cell of a row, by its header.
pub fn cell<'a>(row: &'a [(String, String)], header: &str) -> &'a str {
    row.iter()
        .find(|(h, _)| h == header)
        .map(|(_, c)| c.as_str())
        .unwrap_or_else(|| panic!("the table has no column {header:?}"))
}

fn yes_no(word: &str) -> bool {
    match word {
        "yes" => true,
        "no" => false,
        other => panic!("yes or no, not {other:?}"),
    }
}

/// The names of the VPGs in a result.
pub fn vpg_names(result: &Value) -> Vec<String> {
    result["vpgs"]
        .as_array()
        .expect("the result lists VPGs")
        .iter()
        .map(|v| v["vpg_name"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[then(expr = "the VM found is {string} at site {string}")]
async fn vm_found(world: &mut RewindWorld, vm: String, site: String) {
    let r = result(world);
    assert_eq!(r["vm"]["name"], vm.as_str(), "{r}");
    assert_eq!(r["vm"]["site"]["name"], site.as_str(), "{r}");
}

#[then("its VPGs are:")]
async fn vpgs_are(world: &mut RewindWorld, step: &Step) {
    let r = result(world);
    let expected = rows(step);
    let mut want: Vec<String> = expected
        .iter()
        .map(|row| cell(row, "VPG").to_string())
        .collect();
    let mut got = vpg_names(r);
    want.sort();
    got.sort();
    assert_eq!(got, want, "exactly these VPGs: {r}");
    for row in expected {
        let vpg = world.last().vpg(cell(&row, "VPG"));
        assert_eq!(
            vpg["protecting"],
            yes_no(cell(&row, "protecting")),
            "protecting: {vpg}"
        );
        assert_eq!(
            vpg["recovery_site"]["name"],
            cell(&row, "recovery site"),
            "recovery site: {vpg}"
        );
        assert_eq!(
            vpg["locally_replicated"],
            yes_no(cell(&row, "locally replicated")),
            "locally replicated: {vpg}"
        );
        if vpg["protecting"] == true {
            assert!(
                vpg["reason"].is_null(),
                "a protecting VPG has no reason: {vpg}"
            );
        } else {
            assert!(
                vpg["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "a VPG that is not protecting says why: {vpg}"
            );
        }
    }
}

#[then(expr = "VPG {string} is not protecting because {string}")]
async fn not_protecting(world: &mut RewindWorld, vpg: String, why: String) {
    let v = world.last().vpg(&vpg);
    assert_eq!(v["protecting"], false, "{v}");
    assert!(
        v["reason"].as_str().is_some_and(|r| r.contains(&why)),
        "the reason says {why:?}: {v}"
    );
}

#[then("each VPG's protecting flag follows the rule on its status and substatus")]
async fn protecting_rule(world: &mut RewindWorld) {
    let r = result(world);
    let vpgs = r["vpgs"].as_array().expect("VPGs");
    assert!(!vpgs.is_empty(), "no VPG to judge: {r}");
    for v in vpgs {
        let status = v["status"]["code"].as_i64().expect("a status code");
        let substatus = v["substatus"]["code"].as_i64().expect("a substatus code");
        let protecting = (1..=4).contains(&status)
            && !SYNC_SUBSTATUSES.contains(&substatus)
            && !PAUSED_SUBSTATUSES.contains(&substatus);
        assert_eq!(
            v["protecting"],
            protecting,
            "status {status} / substatus {substatus} is {}protecting: {v}",
            if protecting { "" } else { "not " }
        );
    }
}

#[given(expr = "the operator has looked up {string}")]
async fn looked_up(world: &mut RewindWorld, vm: String) {
    let answer = world
        .rewind(vec!["--json".into(), "find".into(), vm.clone()], None)
        .await;
    assert!(answer.ok, "{vm} is found: {answer:#?}");
}

#[when("the operator looks it up again by its vmIdentifier")]
async fn by_identifier(world: &mut RewindWorld) {
    let id = result(world)["vm"]["id"]
        .as_str()
        .expect("the VM's identifier")
        .to_string();
    world
        .rewind(vec!["--json".into(), "find".into(), id], None)
        .await;
}

#[then(expr = "VPGs {string} are listed")]
async fn vpgs_listed(world: &mut RewindWorld, list: String) {
    let mut got = vpg_names(result(world));
    let mut want = names(&list);
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[then("the refusal lists these candidates:")]
async fn candidates_table(world: &mut RewindWorld, step: &Step) {
    let answer = world.last();
    let candidates = answer.error.as_ref().expect("an error")["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("the refusal lists candidates: {answer:#?}"))
        .clone();
    let expected = rows(step);
    assert_eq!(candidates.len(), expected.len(), "{candidates:#?}");
    for row in expected {
        let found = candidates.iter().any(|c| {
            c["vm_name"] == cell(&row, "VM")
                && c["site"] == cell(&row, "site")
                && c["vpgs"] == serde_json::json!(names(cell(&row, "VPGs")))
                && c["vm_id"].as_str().is_some_and(|id| !id.is_empty())
        });
        assert!(found, "no candidate like {row:?} in {candidates:#?}");
    }
}

#[then(expr = "the refusal lists {int} candidates")]
async fn candidates_count(world: &mut RewindWorld, count: usize) {
    let answer = world.last();
    let candidates = answer.error.as_ref().expect("an error")["candidates"]
        .as_array()
        .map(Vec::len);
    assert_eq!(candidates, Some(count), "{answer:#?}");
}

#[then("the journal has no record")]
async fn journal_empty(world: &mut RewindWorld) {
    let records = world.journal();
    assert!(records.is_empty(), "journal records: {records:#?}");
}
