//! The simulator's request parsing: the first line is the query string of `GET /v1/vms`, the second
//! the content type, the rest the body, read by the case-insensitive query and JSON body extractors.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = zvm_sim::fuzzing::parse_request_bytes(data);
    zvm_sim::fuzzing::check(data, &parsed);
});
