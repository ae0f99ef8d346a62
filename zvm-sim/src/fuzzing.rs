//! Entry points for the fuzz targets (`fuzz/` at the workspace root) and for the tests that replay
//! their corpora: the simulator's own case-insensitive query and JSON body extractors, reached as a
//! request reaches them. Not part of the library's API.

use axum::http::Uri;

use crate::enums::{TASK_STATE, TASK_TYPE, VPG_STATUS, VPG_SUBSTATUS};
use crate::http::extract::{JsonBody, Params};

/// What the extractors made of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedRequest {
    /// Whether the query reached the extractor (it was a valid URI) and was read.
    pub query_read: bool,
    /// The body as a JSON object, by its keys (lowercased), or why it was refused.
    pub body: Option<Result<Vec<String>, String>>,
}

/// Splits `data` as a fuzz input: the first line is the query string, the second the content type,
/// the rest the body; then runs [`parse_request`].
pub fn parse_request_bytes(data: &[u8]) -> ParsedRequest {
    let mut parts = data.splitn(3, |b| *b == b'\n');
    let query = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let content_type = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let body = parts.next().unwrap_or_default();
    parse_request(&query, &content_type, body)
}

/// Reads `query` as `GET /v1/vms?<query>` would be read, and `body` (with `content_type`) as a POST
/// body, asking each extractor for every key it got in every typed form a handler asks for.
pub fn parse_request(query: &str, content_type: &str, body: &[u8]) -> ParsedRequest {
    let mut out = ParsedRequest::default();
    // A URI the HTTP layer would refuse never reaches an extractor.
    if let Ok(uri) = format!("/v1/vms?{query}").parse::<Uri>()
        && let Ok(params) = Params::from_uri(&uri)
    {
        out.query_read = true;
        for key in params.keys() {
            let _ = params.text(key);
            let _ = params.date(key);
            let _ = params.number::<i64>(key);
            let _ = params.number::<f64>(key);
            let _ = params.number::<u32>(key);
            let _ = params.boolean(key);
            for table in [&VPG_STATUS, &VPG_SUBSTATUS, &TASK_STATE, &TASK_TYPE] {
                let _ = params.enumeration(key, table);
            }
        }
    }
    if !body.iter().all(u8::is_ascii_whitespace) {
        out.body = Some(
            JsonBody::parse(content_type, body)
                .map(|b| {
                    read_body(&b, 0);
                    b.keys().map(str::to_owned).collect()
                })
                .map_err(|e| format!("{e:?}")),
        );
    }
    out
}

/// Asks a body for every key in every typed form, nested objects included (to a bounded depth).
fn read_body(body: &JsonBody, depth: usize) {
    let keys: Vec<String> = body.keys().map(str::to_owned).collect();
    for key in &keys {
        let _ = body.value(key);
        let _ = body.has(key);
        let _ = body.text(key);
        let _ = body.required_text(key);
        let _ = body.number(key);
        let _ = body.boolean(key);
        let _ = body.identifier(key);
        let _ = body.string_list(key);
        for table in [&VPG_STATUS, &VPG_SUBSTATUS, &TASK_STATE, &TASK_TYPE] {
            let _ = body.enumeration(key, table);
        }
        if depth < 4
            && let Ok(Some(nested)) = body.object(key)
        {
            read_body(&nested, depth + 1);
        }
    }
}

/// Panics when the extractors took garbage for valid: a body accepted that is not a JSON object sent
/// as JSON, or whose keys differ only in case; or body keys that are not the lowercased keys sent.
/// The fuzz target and the corpus replay test both call it.
pub fn check(data: &[u8], parsed: &ParsedRequest) {
    let mut parts = data.splitn(3, |b| *b == b'\n');
    let _query = parts.next();
    let content_type = String::from_utf8_lossy(parts.next().unwrap_or_default()).to_lowercase();
    let body = parts.next().unwrap_or_default();
    if let Some(Ok(keys)) = &parsed.body {
        assert!(
            content_type.contains("json"),
            "a body sent as {content_type:?} was read as JSON"
        );
        let Ok(serde_json::Value::Object(object)) = serde_json::from_slice(body) else {
            panic!("a body that is not a JSON object was accepted: {keys:?}");
        };
        let mut sent: Vec<String> = object.keys().map(|k| k.to_ascii_lowercase()).collect();
        sent.sort();
        let before = sent.len();
        sent.dedup();
        assert_eq!(
            before,
            sent.len(),
            "keys that differ only in case were accepted"
        );
        let mut got = keys.clone();
        got.sort();
        assert_eq!(got, sent, "the body's keys");
    }
}
