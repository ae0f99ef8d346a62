//! The coverage matrix in `zvm-sim/README.md` is the router's own: made from the same table the
//! router is built from, so a route added, removed or described differently fails here until the
//! README says so. `ZVM_SIM_BLESS=1 cargo test -p zvm-sim --test sim coverage` rewrites it.

use std::path::Path;

const BEGIN: &str = "<!-- coverage: made by zvm_sim::coverage_matrix -->\n";
const END: &str = "<!-- coverage: end -->";

#[test]
fn the_readme_coverage_matrix_is_the_one_the_router_is_built_from() {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let text = std::fs::read_to_string(&readme).unwrap();
    let start = text
        .find(BEGIN)
        .expect("the README marks where the matrix begins")
        + BEGIN.len();
    let end = text[start..].find(END).expect("and where it ends") + start;
    let made = zvm_sim::coverage_matrix();
    if std::env::var_os("ZVM_SIM_BLESS").is_some() {
        std::fs::write(&readme, format!("{}{made}{}", &text[..start], &text[end..])).unwrap();
        return;
    }
    assert!(
        text[start..end] == made,
        "the README's coverage matrix differs from the router's; run ZVM_SIM_BLESS=1 cargo test \
         -p zvm-sim --test sim coverage and review the diff.\n--- README\n{}\n--- router\n{made}",
        &text[start..end]
    );
}

/// The `(verbs, path)` of each route the matrix lists as served.
fn listed() -> Vec<(String, String)> {
    zvm_sim::coverage_matrix()
        .lines()
        .skip(2)
        .filter(|row| !row.contains("| absent"))
        .filter_map(|row| row.strip_prefix("| `"))
        .filter_map(|row| row.split('`').next())
        .filter_map(|route| route.split_once(' '))
        .map(|(verbs, path)| (verbs.to_owned(), path.to_owned()))
        .collect()
}

#[test]
fn the_matrix_lists_each_route_once_and_says_how_much_it_covers() {
    let routes = listed();
    let mut paths: Vec<&str> = routes.iter().map(|(_, p)| p.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), routes.len(), "a route listed twice");
    assert!(routes.len() > 80, "{} routes", routes.len());
    let made = zvm_sim::coverage_matrix();
    for row in made.lines().skip(2) {
        assert!(
            ["| implemented", "| simplified", "| absent"]
                .iter()
                .any(|k| row.contains(k)),
            "{row}"
        );
    }
}

#[tokio::test]
async fn every_listed_get_without_an_identifier_answers_as_sw10_spells_it() {
    let t = zvm_sim::test_kit::spawn_frozen(18).await;
    let boston = t.boston().await;
    // A download names its file in the query: without it, there is nothing to answer.
    let needs_a_query =
        |path: &str| path.starts_with("/v1/recoveryScripts/") && path.ends_with("/files");
    let plain = listed().into_iter().filter(|(verbs, path)| {
        verbs.contains("GET")
            && path.starts_with("/v1")
            && !path.contains('{')
            && !needs_a_query(path)
    });
    let mut asked = 0;
    for (_, path) in plain {
        let (status, body) = boston.get(&path).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{path}: {body}");
        asked += 1;
    }
    assert!(asked >= 40, "{asked} routes asked");
}
