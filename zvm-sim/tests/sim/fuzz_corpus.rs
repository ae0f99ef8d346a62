//! The `sim_request` fuzz target's corpus (fuzz/corpus/sim_request) replayed as an ordinary test:
//! every file goes through the same entry point (query, content type, body), must not panic, and no
//! body that is not a JSON object is accepted.

use std::path::PathBuf;

use zvm_sim::fuzzing::{check, parse_request_bytes};

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/sim_request");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {} is readable: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_request_of_the_corpus_parses_without_panic_and_only_json_objects_are_bodies() {
    let files = corpus();
    assert!(
        files.len() >= 10,
        "the corpus has its seeds: {}",
        files.len()
    );
    for (name, bytes) in &files {
        let parsed = parse_request_bytes(bytes);
        let replayed = std::panic::catch_unwind(|| check(bytes, &parsed));
        assert!(replayed.is_ok(), "corpus file {name} was taken for valid");
    }
}

#[test]
fn the_corpus_seeds_are_read_as_a_zvm_would_read_them() {
    let files = corpus();
    let get = |name: &str| {
        let (_, bytes) = files
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("seed {name} is in the corpus"));
        parse_request_bytes(bytes)
    };
    let ok = get("query_and_body");
    assert!(ok.query_read);
    assert_eq!(ok.body, Some(Ok(vec!["checkpointname".to_string()])));
    assert!(matches!(get("duplicate_keys").body, Some(Err(e)) if e.contains("twice")));
    assert!(matches!(get("not_json_type").body, Some(Err(_))));
    assert!(matches!(get("array_body").body, Some(Err(_))));
}
