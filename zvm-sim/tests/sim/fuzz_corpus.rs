//! The `sim_request` fuzz target's corpus (fuzz/corpus/sim_request) replayed as an ordinary test:
//! every file goes through the same entry point (query, content type, body), must not panic, and no
//! body that is not a JSON object is accepted.

use zvm_sim::fuzzing::{check, parse_request_bytes};
use zvm_sim::test_kit::Corpus;

#[test]
fn every_request_of_the_corpus_parses_without_panic_and_only_json_objects_are_bodies() {
    Corpus::of("sim_request").replay(|bytes| check(bytes, &parse_request_bytes(bytes)));
}

#[test]
fn the_corpus_seeds_are_read_as_a_zvm_would_read_them() {
    let corpus = Corpus::of("sim_request");
    let get = |name: &str| parse_request_bytes(corpus.seed(name));
    let ok = get("query_and_body");
    assert!(ok.query_read);
    assert_eq!(ok.body, Some(Ok(vec!["checkpointname".to_string()])));
    assert!(matches!(get("duplicate_keys").body, Some(Err(e)) if e.contains("twice")));
    assert!(matches!(get("not_json_type").body, Some(Err(_))));
    assert!(matches!(get("array_body").body, Some(Err(_))));
}
