//! The `hook_stdin` fuzz target's corpus (fuzz/corpus/hook_stdin) replayed as an ordinary test: every
//! file goes through the same entry point (the hook's decision with no ZVM, an empty catalog and an
//! empty journal), must not panic, malformed input is denied and nothing but a read-only tool is
//! allowed.

use rewind_cli::hook::Decision;
use rewind_cli::hook::fuzzing::{check, decide_without_zvm};
use rewind_core::hook::{Allowed, Failure, Question};
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
    let decide = |name: &str| decide_without_zvm(&text(corpus.seed(name)));
    let read_only = |d: Decision| matches!(d, Decision::Allow(Allowed::ReadOnly { .. }));
    let unknown = |d: Decision| matches!(d, Decision::Ask(Question::UnknownTool { .. }));
    assert!(read_only(decide("read")));
    assert!(unknown(decide("bash")));
    // Each host's own shape: the decision before it is put in the host's terms.
    assert!(read_only(decide("vscode_read")));
    for seed in [
        "copilot_cli_bash",
        "codex_bash",
        "gemini_mcp",
        "cursor_shell",
    ] {
        assert!(unknown(decide(seed)), "{seed}");
    }
    // Input that is JSON but not what the host sends, and input that is not JSON at all.
    for seed in ["copilot_cli_args_not_json", "other_event"] {
        let d = decide(seed);
        assert!(
            matches!(d, Decision::FailClosed(Failure::HostInput { .. })),
            "{seed}: {d:?}"
        );
    }
    assert!(matches!(
        decide("not_json"),
        Decision::FailClosed(Failure::NotHookInput { .. })
    ));
    assert!(matches!(
        decide("control_char_tool"),
        Decision::FailClosed(Failure::Catalog { .. })
    ));
}
