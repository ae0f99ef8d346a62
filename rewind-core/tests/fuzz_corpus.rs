//! The `zvm_response` fuzz target's corpus (fuzz/corpus/zvm_response) replayed as an ordinary test:
//! every file goes through the same entry point, must not panic, and garbage is never taken for a
//! model.

use std::path::PathBuf;

use rewind_core::fuzzing::{check, decode_zvm_response};

fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/zvm_response");
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {} is readable: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_zvm_response_of_the_corpus_decodes_without_panic_and_garbage_is_no_model() {
    let files = corpus();
    assert!(
        files.len() >= 10,
        "the corpus has its seeds: {}",
        files.len()
    );
    for (path, bytes) in &files {
        let decoded = decode_zvm_response(bytes);
        let replayed = std::panic::catch_unwind(|| check(bytes, &decoded));
        assert!(
            replayed.is_ok(),
            "corpus file {} was taken for valid",
            path.display()
        );
    }
}

#[test]
fn the_corpus_seeds_decode_as_the_models_they_are() {
    let seeds: Vec<(String, Vec<u8>)> = corpus()
        .into_iter()
        .map(|(p, b)| (p.file_name().unwrap().to_string_lossy().into_owned(), b))
        .collect();
    let get = |name: &str| {
        let (_, bytes) = seeds
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("seed {name} is in the corpus"));
        decode_zvm_response(bytes)
    };
    assert!(get("task").accepted.contains(&"Task"));
    assert!(get("vms_list").accepted.contains(&"VmRow[]"));
    assert!(get("flr_listing").accepted.contains(&"FlrListing"));
    assert_eq!(
        get("task_id_string").task_id.as_deref(),
        Some("0f8f4eea-0dfc.e6a6e281")
    );
    assert!(get("garbage_html").accepted.is_empty());
    assert!(get("garbage_truncated").accepted.is_empty());
    assert!(get("scalar_number").accepted.is_empty());
}
