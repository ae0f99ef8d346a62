//! The server's log lines, on stderr: MCP session ids only as short hashes.
//!
//! A session id is what a client presents to use its session: whoever reads it in a log could try
//! it. rmcp logs them itself (`create new session`, its session span `streamable_http_session{id=..}`,
//! and the errors of closing one); those lines are rewritten here, each id replaced by
//! [`crate::sessions::short_hash`], so a line can still be matched to the others of its session.

use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::sessions::short_hash;

/// The span rmcp runs each session in, whose field `id` is the session id.
const SESSION_SPAN: &str = "streamable_http_session{id=";

/// A log format that writes what `inner` writes, with session ids hashed.
#[derive(Debug)]
pub struct HashSessionIds<F>(pub F);

impl<S, N, F> FormatEvent<S, N> for HashSessionIds<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        let from_rmcp = event.metadata().target().starts_with("rmcp");
        writer.write_str(&hash_session_ids(&line, from_rmcp))
    }
}

/// `line` with session ids hashed: every UUID in a line of rmcp's (rmcp names sessions by UUID),
/// and the id of rmcp's session span in any line.
pub fn hash_session_ids(line: &str, from_rmcp: bool) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = next_uuid(rest) {
        let in_span = rest[..at].ends_with(SESSION_SPAN);
        out.push_str(&rest[..at]);
        let id = &rest[at..at + UUID_LEN];
        if from_rmcp || in_span {
            out.push_str(&short_hash(id));
        } else {
            out.push_str(id);
        }
        rest = &rest[at + UUID_LEN..];
    }
    out.push_str(rest);
    out
}

/// The length of a UUID written out: 8-4-4-4-12 hex digits.
const UUID_LEN: usize = 36;

/// Where the next UUID in `text` starts.
fn next_uuid(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(UUID_LEN - 1)).find(|&i| {
        let boundary_before = i == 0 || !bytes[i - 1].is_ascii_hexdigit();
        let boundary_after = bytes
            .get(i + UUID_LEN)
            .is_none_or(|b| !b.is_ascii_hexdigit());
        boundary_before && boundary_after && is_uuid(&bytes[i..i + UUID_LEN])
    })
}

fn is_uuid(candidate: &[u8]) -> bool {
    candidate.iter().enumerate().all(|(i, b)| match i {
        8 | 13 | 18 | 23 => *b == b'-',
        _ => b.is_ascii_hexdigit(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f2b8c1e-6a4d-4c1b-9e7f-2a5d8c9b0e1f";

    #[test]
    fn rmcps_lines_carry_a_hash_where_the_session_id_was() {
        let line = format!("INFO rmcp::transport: create new session session_id={ID:?}");
        let hashed = hash_session_ids(&line, true);
        assert!(!hashed.contains(ID), "{hashed}");
        assert!(hashed.contains(&short_hash(ID)), "{hashed}");
    }

    #[test]
    fn a_line_of_ours_keeps_its_identifiers_but_not_the_session_span_id() {
        let vpg = "8d1e0a4c-2b7f-4e3a-9c5d-1f6b7a8e9d0c";
        let line = format!("{SESSION_SPAN}{ID}}}: rewind_mcp: guarded VPG {vpg}");
        let hashed = hash_session_ids(&line, false);
        assert!(!hashed.contains(ID), "{hashed}");
        assert!(hashed.contains(vpg), "{hashed}");
        assert_eq!(hash_session_ids("no id here", true), "no id here");
    }
}
