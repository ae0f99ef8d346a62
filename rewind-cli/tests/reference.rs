//! The reference pages made from the code are the ones checked in: `docs/exit-codes.md`, the
//! generated part of `docs/json.md`, and `docs/json-schemas.json`. When a result type or an exit
//! code changes, `REWIND_WRITE_DOCS=1 cargo test -p rewind-cli --test reference` writes them anew.

use std::path::PathBuf;

use rewind_cli::reference::{JSON_MARK, exit_codes_page, json_results, json_schemas};

fn docs(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name)
}

/// Checks that `name` holds `made`, or writes it when asked to.
fn holds(name: &str, made: &str) {
    let path = docs(name);
    if std::env::var_os("REWIND_WRITE_DOCS").is_some() {
        std::fs::write(&path, made).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == made,
        "docs/{name} is stale: the code now makes another page; run `REWIND_WRITE_DOCS=1 cargo test -p rewind-cli --test reference` and commit it"
    );
}

#[test]
fn the_exit_code_page_is_the_one_the_code_makes() {
    holds("exit-codes.md", &exit_codes_page());
}

#[test]
fn the_json_results_and_their_schemas_are_the_ones_the_code_makes() {
    let page = std::fs::read_to_string(docs("json.md")).unwrap();
    let by_hand = page.split(JSON_MARK).next().unwrap_or_default();
    holds("json.md", &format!("{by_hand}{}", json_results()));
    holds("json-schemas.json", &json_schemas());
}
