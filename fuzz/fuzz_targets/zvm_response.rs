//! The client's decoding of a ZVM answer: every wire model rewind-core reads, alone and listed, and
//! what the client then reads of each (states, addresses, times, paths), plus the task id of a write.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let decoded = rewind_core::fuzzing::decode_zvm_response(data);
    rewind_core::fuzzing::check(data, &decoded);
});
