//! Entry points for the fuzz targets (`fuzz/` at the workspace root) and for the tests that replay
//! their corpora: the client's own decoding of ZVM answers, reached as the client reaches it. Not part
//! of the library's API.

use crate::zvm::wire::{
    Checkpoint, ErrorBody, FlrListing, FlrSession, LocalSite, SiteVm, Task, TokenError,
    TokenResponse, VirtualizationSite, VmRow, Vpg, parse_time,
};
use crate::zvm::{OneOrMany, decode, task_id_from_body};

/// What [`decode_zvm_response`] made of one body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The wire models (single or listed) that accepted the body, by name.
    pub accepted: Vec<&'static str>,
    /// The task id a write's answer would yield.
    pub task_id: Option<String>,
}

/// Decodes `bytes` as every answer the client reads (each model alone and as a list, as the client
/// reads it), and reads what the client then reads of each model (states, addresses, times, paths),
/// so a body that makes the client panic makes this panic too.
pub fn decode_zvm_response(bytes: &[u8]) -> Decoded {
    let mut out = Decoded::default();
    macro_rules! model {
        ($t:ty, $name:literal, |$v:ident| $use:expr) => {
            if let Ok($v) = decode::<$t>(bytes) {
                out.accepted.push($name);
                std::hint::black_box($use);
            }
            if let Ok(list) = decode::<Option<Vec<$t>>>(bytes) {
                out.accepted.push(concat!($name, "[]"));
                for $v in list.unwrap_or_default() {
                    std::hint::black_box($use);
                }
            }
        };
    }
    model!(VmRow, "VmRow", |v| v.ip_addresses().count());
    model!(Vpg, "Vpg", |v| v.running_failover_test().map(str::len));
    model!(Checkpoint, "Checkpoint", |c| c
        .checkpoint_identifier
        .map(|i| i.len()));
    model!(Task, "Task", |t| (
        t.state(),
        t.progress(),
        t.is_insert(),
        t.concerns_vpg("vpg"),
        t.concerns_flr_session("s")
    ));
    model!(LocalSite, "LocalSite", |l| l
        .site_identifier
        .map(|i| i.len()));
    model!(VirtualizationSite, "VirtualizationSite", |s| s
        .site_identifier
        .map(|i| i.len()));
    model!(SiteVm, "SiteVm", |v| v.vm_identifier.map(|i| i.len()));
    model!(FlrSession, "FlrSession", |s| (
        s.is_mounted(),
        s.mount_failed()
    ));
    model!(FlrListing, "FlrListing", |l| l
        .path_items
        .iter()
        .map(|p| (
            p.name().len(),
            p.is_partition(),
            p.is_folder(),
            p.not_downloadable()
        ))
        .collect::<Vec<_>>());
    model!(TokenResponse, "TokenResponse", |t| t.expires_in);
    model!(TokenError, "TokenError", |t| t.error.map(|e| e.len()));
    model!(ErrorBody, "ErrorBody", |e| e.message.map(|m| m.len()));
    if let Ok(one) = decode::<OneOrMany<Vpg>>(bytes) {
        out.accepted.push("OneOrMany<Vpg>");
        let _ = one.first();
    }
    if let Ok(one) = decode::<OneOrMany<FlrSession>>(bytes) {
        out.accepted.push("OneOrMany<FlrSession>");
        let _ = one.first();
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = parse_time(text);
        out.task_id = task_id_from_body(text);
    }
    out
}

/// Panics when `decoded` took garbage for valid: bytes that are not JSON accepted as any model, or a
/// JSON scalar (number, string, boolean) accepted as an object model. The fuzz target and the corpus
/// replay test both call it.
///
/// "JSON" is JSON as the client reads it: a field the client does not read is skipped unread, so a
/// byte that is not UTF-8 or a number past a float's range inside such a field is tolerated (an
/// appliance's stray byte in a description must not stop a guard). Skipping is what serde's
/// `IgnoredAny` does, so that is the yardstick.
pub fn check(bytes: &[u8], decoded: &Decoded) {
    let text = String::from_utf8_lossy(bytes);
    if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_err() {
        assert!(
            decoded.accepted.is_empty(),
            "bytes that are not JSON were decoded as {:?}",
            decoded.accepted
        );
    } else if let Ok(
        serde_json::Value::Bool(_) | serde_json::Value::Number(_) | serde_json::Value::String(_),
    ) = serde_json::from_str::<serde_json::Value>(&text)
    {
        assert!(
            decoded.accepted.is_empty(),
            "a JSON scalar was decoded as {:?}",
            decoded.accepted
        );
    }
    if let Some(id) = &decoded.task_id {
        assert!(
            !id.is_empty() && !id.contains(char::is_whitespace),
            "task id {id:?}"
        );
    }
}
