//! The `zvm_response` fuzz target's corpus (fuzz/corpus/zvm_response) replayed as an ordinary test:
//! every file goes through the same entry point, must not panic, and garbage is never taken for a
//! model.

use rewind_core::fuzzing::{check, decode_zvm_response};
use zvm_sim::test_kit::Corpus;

#[test]
fn every_zvm_response_of_the_corpus_decodes_without_panic_and_garbage_is_no_model() {
    Corpus::of("zvm_response").replay(|bytes| check(bytes, &decode_zvm_response(bytes)));
}

#[test]
fn the_corpus_seeds_decode_as_the_models_they_are() {
    let corpus = Corpus::of("zvm_response");
    let get = |name: &str| decode_zvm_response(corpus.seed(name));
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
