//! features: the harness of the Gherkin acceptance suite. The feature files live in `specs/`, the
//! runner and the step definitions in `tests/acceptance.rs` and `tests/steps/`; this library is what
//! the steps stand on:
//!
//! - [`world`]: [`RewindWorld`], one per scenario: a fresh seeded simulator, a temporary home, the
//!   configuration, and the fronts (the `rewind` binary, and `rewind-mcp` behind an MCP client).
//! - [`answer`]: what either front answered, in one shape.
//! - [`mcp`]: the agent's MCP client and the [`mcp::Human`] who answers the server's questions.
//! - [`sim`]: the simulator's `/_sim` control API, the ground truth (tasks, calls, guest files).
//! - [`real`]: the `@real-zvm` mode, from `ZVM_URL` and credentials.
//! - [`bins`]: finding and building the two binaries before anything runs.

pub mod answer;
pub mod bins;
pub mod mcp;
pub mod real;
pub mod sim;
pub mod world;

pub use answer::Answer;
pub use world::RewindWorld;

/// How long one answer of a front (a `rewind` run, an MCP tool call) may take before the step fails.
/// Far beyond any deadline of the fronts themselves (a guard's is 60 s by default, a few seconds in
/// the scenarios that set one), so that only a front that hangs reaches it: the step then fails
/// naming the command instead of holding the whole suite up for ever.
pub const FRONT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);

/// Splits a command line the way a shell would for the simple cases a scenario writes: words
/// separated by spaces, double-quoted words kept whole (without their quotes).
pub fn split_command(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    assert!(!quoted, "an unclosed quote in {line:?}");
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::split_command;

    #[test]
    fn quoted_words_stay_whole_and_empty_quotes_are_a_word() {
        assert_eq!(
            split_command(r#"guard web-01 --action "edit app.conf"  --summary """#),
            [
                "guard",
                "web-01",
                "--action",
                "edit app.conf",
                "--summary",
                ""
            ]
        );
    }
}
