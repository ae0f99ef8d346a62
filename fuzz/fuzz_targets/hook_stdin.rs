//! The PreToolUse hook's stdin: parsed and decided with a configuration of no site (so no ZVM), an
//! empty catalog and an empty journal.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    let decision = rewind_cli::hook::fuzzing::decide_without_zvm(&input);
    rewind_cli::hook::fuzzing::check(&input, &decision);
});
