//! The `hook_stdin` fuzz target's corpus (fuzz/corpus/hook_stdin) replayed as an ordinary test: every
//! file goes through the same entry point (the hook's decision with no ZVM, an empty catalog and an
//! empty journal), must not panic, malformed input is denied and nothing but a read-only tool is
//! allowed.

use rewind_cli::hook::Permission;
use rewind_cli::hook::fuzzing::{check, decide_without_zvm};
use zvm_sim::test_kit::Corpus;

/// A corpus file as the hook reads its standard input.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn every_hook_input_of_the_corpus_is_decided_without_panic_and_garbage_is_denied() {
    Corpus::of("hook_stdin").replay(|bytes| {
        let input = text(bytes);
        check(&input, &decide_without_zvm(&input));
    });
}

#[test]
fn the_corpus_seeds_get_the_decisions_the_hook_promises() {
    let corpus = Corpus::of("hook_stdin");
    let decide = |name: &str| decide_without_zvm(&text(corpus.seed(name))).permission;
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
