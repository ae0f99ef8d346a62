//! The `hook_stdin` fuzz target's corpus (fuzz/corpus/hook_stdin) replayed as an ordinary test: every
//! file goes through the same entry point (the hook's decision with no ZVM, an empty catalog and an
//! empty journal), must not panic, malformed input is denied and nothing but a read-only tool is
//! allowed.

use std::path::PathBuf;

use rewind_cli::hook::Permission;
use rewind_cli::hook::fuzzing::{check, decide_without_zvm};

fn corpus() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/hook_stdin");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {} is readable: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            (name, String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_hook_input_of_the_corpus_is_decided_without_panic_and_garbage_is_denied() {
    let files = corpus();
    assert!(
        files.len() >= 10,
        "the corpus has its seeds: {}",
        files.len()
    );
    for (name, input) in &files {
        let decision = decide_without_zvm(input);
        let replayed = std::panic::catch_unwind(|| check(input, &decision));
        assert!(replayed.is_ok(), "corpus file {name}: {}", decision.reason);
    }
}

#[test]
fn the_corpus_seeds_get_the_decisions_the_hook_promises() {
    let files = corpus();
    let decide = |name: &str| {
        let (_, input) = files
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("seed {name} is in the corpus"));
        decide_without_zvm(input).permission
    };
    assert_eq!(decide("read"), Permission::Allow);
    assert_eq!(decide("bash"), Permission::Ask);
    // Each host's own shape: the decision before it is put in the host's terms.
    assert_eq!(decide("vscode_read"), Permission::Allow);
    assert_eq!(decide("copilot_cli_bash"), Permission::Ask);
    assert_eq!(decide("codex_bash"), Permission::Ask);
    assert_eq!(decide("gemini_mcp"), Permission::Ask);
    assert_eq!(decide("cursor_shell"), Permission::Ask);
    assert_eq!(decide("copilot_cli_args_not_json"), Permission::Deny);
    assert_eq!(decide("not_json"), Permission::Deny);
    assert_eq!(decide("other_event"), Permission::Deny);
    assert_eq!(decide("control_char_tool"), Permission::Deny);
}
