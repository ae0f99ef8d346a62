//! Request extractors that bind as ASP.NET binds: query keys and values, and JSON body keys, are
//! matched case-insensitively, and enumerations accept a number or a name. There is one extractor
//! for queries ([`Params`]) and one for bodies ([`JsonBody`]); handlers ask them for typed values and
//! get a 400 with a message that names the parameter when a value does not fit.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Query, Request};
use axum::http::header;
use axum::http::request::Parts;
use chrono::{DateTime, NaiveDate, NaiveDateTime};
use serde_json::{Map, Value};

use super::error::ApiError;
use crate::enums::EnumTable;
use crate::world::clock::SimTime;

/// `value`, which the request must give under `name`; when it does not, the one answer every
/// handler gives a missing value: 400 "`name` is required: `what`." (`what` says what the value
/// names or how to send it).
pub(crate) fn required<T>(value: Option<T>, name: &str, what: &str) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::BadRequest(format!("{name} is required: {what}.")))
}

/// The query string, keys lowercased.
#[derive(Debug, Clone, Default)]
pub(crate) struct Params {
    pairs: Vec<(String, String)>,
}

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        Params::from_uri(&parts.uri)
    }
}

/// The `startDate` and `endDate` bounds of a checkpoint list (`/checkpoints`, `/pointsInTime`),
/// each optional; 400 naming the parameter when a date cannot be read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DateWindow {
    /// `startDate`.
    pub from: Option<SimTime>,
    /// `endDate`.
    pub to: Option<SimTime>,
}

impl<S: Send + Sync> FromRequestParts<S> for DateWindow {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let params = Params::from_uri(&parts.uri)?;
        Ok(DateWindow {
            from: params.date("startDate")?,
            to: params.date("endDate")?,
        })
    }
}

impl Params {
    /// The query of `uri`, keys lowercased; 400 when it cannot be read.
    pub(crate) fn from_uri(uri: &axum::http::Uri) -> Result<Params, ApiError> {
        let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(uri)
            .map_err(|e| ApiError::BadRequest(format!("The query string is not valid: {e}")))?;
        Ok(Params {
            pairs: pairs
                .into_iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v))
                .collect(),
        })
    }

    /// The keys given, lowercased, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.pairs.iter().map(|(k, _)| k.as_str())
    }

    /// The value of `key` (any case), if given and not empty. ASP.NET binds `status=` as absent.
    pub fn text(&self, key: &str) -> Option<&str> {
        let key = key.to_ascii_lowercase();
        self.pairs
            .iter()
            .find(|(k, v)| *k == key && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }

    /// Whether a filter `key` lets `value` through: it is not given, or it names `value` exactly,
    /// whatever the case.
    pub fn matches(&self, key: &str, value: &str) -> bool {
        self.text(key)
            .is_none_or(|wanted| wanted.eq_ignore_ascii_case(value))
    }

    /// An enumeration given as a number or a name.
    pub fn enumeration(&self, key: &str, table: &EnumTable) -> Result<Option<u8>, ApiError> {
        self.text(key)
            .map(|raw| {
                table.parse(raw).map_err(|e| {
                    ApiError::BadRequest(format!("The query parameter {key} is not valid: {e}"))
                })
            })
            .transpose()
    }

    /// A date-time in any of the formats the ZVM accepts.
    pub fn date(&self, key: &str) -> Result<Option<SimTime>, ApiError> {
        self.text(key)
            .map(|raw| {
                parse_date(raw).ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "The query parameter {key} is not a date: '{raw}'. Use ISO 8601 UTC such as \
                         2026-01-01T10:30:00.000Z, 2026-01-01T10:30Z or 2026-01-01."
                    ))
                })
            })
            .transpose()
    }

    /// A number.
    pub fn number<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, ApiError> {
        self.text(key)
            .map(|raw| {
                raw.trim().parse::<T>().map_err(|_| {
                    ApiError::BadRequest(format!(
                        "The query parameter {key} is not a number: '{raw}'"
                    ))
                })
            })
            .transpose()
    }

    /// `true` or `false`, any case.
    pub fn boolean(&self, key: &str) -> Result<Option<bool>, ApiError> {
        self.text(key)
            .map(|raw| match raw.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(ApiError::BadRequest(format!(
                    "The query parameter {key} is not true or false: '{raw}'"
                ))),
            })
            .transpose()
    }
}

/// Parses the date formats ASP.NET and the ZVM docs accept: RFC 3339 (with `Z` or an offset),
/// `yyyy-MM-ddTHH:mm:ss.fff`, `...ss`, `...mm`, `...HH` (with or without a trailing `Z`, read as
/// UTC), `yyyy-MM-dd`, `yyyy-MM`, `yyyy`, and milliseconds since the Unix epoch.
pub(crate) fn parse_date(raw: &str) -> Option<SimTime> {
    let text = raw.trim();
    if text.len() >= 8 && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<i64>().ok().map(SimTime::from_millis);
    }
    // A '+' of an offset arrives as a space when the client did not encode it.
    let restored = match text.rfind(' ') {
        Some(position) if text.len() - position == 6 => {
            format!("{}+{}", &text[..position], &text[position + 1..])
        }
        _ => text.to_owned(),
    };
    let text = restored.replacen(' ', "T", 1);
    if let Ok(at) = DateTime::parse_from_rfc3339(&text) {
        return Some(SimTime::from_datetime(at.to_utc()));
    }
    let naive = text.strip_suffix('Z').unwrap_or(&text);
    for (suffix, format) in [
        ("", "%Y-%m-%dT%H:%M:%S%.f"),
        ("", "%Y-%m-%dT%H:%M"),
        (":00", "%Y-%m-%dT%H:%M"),
    ] {
        if let Ok(at) = NaiveDateTime::parse_from_str(&format!("{naive}{suffix}"), format) {
            return Some(SimTime::from_datetime(at.and_utc()));
        }
    }
    for suffix in ["", "-01", "-01-01"] {
        if let Ok(day) = NaiveDate::parse_from_str(&format!("{naive}{suffix}"), "%Y-%m-%d") {
            return Some(SimTime::from_datetime(day.and_hms_opt(0, 0, 0)?.and_utc()));
        }
    }
    None
}

/// A JSON object body, keys lowercased. It refuses a body that is not JSON (415 without a JSON
/// content type, 400 when it does not parse or is not an object).
#[derive(Debug, Clone, Default)]
pub(crate) struct JsonBody {
    fields: Map<String, Value>,
    /// For a nested object, its key and a dot (`Jflr.`), so messages name the field in full.
    context: String,
}

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let (content_type, bytes) = present_body(request, state).await?;
        JsonBody::parse(&content_type, &bytes)
    }
}

/// A JSON object body kept as sent, its keys' case and all: for documents a client writes and reads
/// back whole. Refused as [`JsonBody`] refuses a body.
pub(crate) struct JsonDocument(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonDocument {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let (content_type, bytes) = present_body(request, state).await?;
        JsonDocument::parse(&content_type, &bytes)
    }
}

/// An absent body, or a JSON `null`, is `None`, as for [`JsonBody`].
impl<S: Send + Sync> OptionalFromRequest<S> for JsonDocument {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Option<Self>, ApiError> {
        match optional_body(request, state).await? {
            Some((content_type, bytes)) => JsonDocument::parse(&content_type, &bytes).map(Some),
            None => Ok(None),
        }
    }
}

impl JsonDocument {
    /// A body checked as [`JsonBody::parse`] checks it, then kept as sent.
    fn parse(content_type: &str, bytes: &[u8]) -> Result<JsonDocument, ApiError> {
        JsonBody::parse(content_type, bytes)?;
        let value = serde_json::from_slice(bytes).map_err(|e| {
            ApiError::BadRequest(format!("The request body is not valid JSON: {e}"))
        })?;
        Ok(JsonDocument(value))
    }
}

/// An absent body, or a JSON `null`, is `None` (ASP.NET binds both to a null body); a present one
/// must be a JSON object. For calls whose fields are all optional, so `curl -X POST` works
/// without `-d`.
impl<S: Send + Sync> OptionalFromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Option<Self>, ApiError> {
        match optional_body(request, state).await? {
            Some((content_type, bytes)) => JsonBody::parse(&content_type, &bytes).map(Some),
            None => Ok(None),
        }
    }
}

/// A body that must be given: its content type and bytes, or the refusal of an empty one.
async fn present_body<S: Send + Sync>(
    request: Request,
    state: &S,
) -> Result<(String, Bytes), ApiError> {
    let (content_type, bytes) = read_body(request, state).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::BadRequest(
            "The request body is empty: send a JSON object.".to_owned(),
        ));
    }
    Ok((content_type, bytes))
}

/// A body that may be left out: `None` when it is empty or a JSON `null`.
async fn optional_body<S: Send + Sync>(
    request: Request,
    state: &S,
) -> Result<Option<(String, Bytes)>, ApiError> {
    let (content_type, bytes) = read_body(request, state).await?;
    let absent = bytes.iter().all(u8::is_ascii_whitespace)
        || (bytes.trim_ascii() == b"null" && is_json(&content_type));
    Ok((!absent).then_some((content_type, bytes)))
}

async fn read_body<S: Send + Sync>(
    request: Request,
    state: &S,
) -> Result<(String, Bytes), ApiError> {
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = Bytes::from_request(request, state)
        .await
        .map_err(|e| ApiError::BadRequest(format!("The request body could not be read: {e}")))?;
    Ok((content_type, bytes))
}

fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence == "text/json" || essence.ends_with("+json")
}

impl JsonBody {
    /// A body of `content_type` as a JSON object, keys lowercased (what the extractor does once the
    /// body is read).
    pub(crate) fn parse(content_type: &str, bytes: &[u8]) -> Result<JsonBody, ApiError> {
        if !is_json(content_type) {
            return Err(ApiError::UnsupportedMediaType(format!(
                "The request body must be JSON: send it with Content-Type: application/json \
                 (got '{content_type}')."
            )));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            ApiError::BadRequest(format!("The request body is not valid JSON: {e}"))
        })?;
        let Value::Object(object) = value else {
            return Err(ApiError::BadRequest(
                "The request body must be a JSON object, such as {\"CheckpointName\": \"...\"}."
                    .to_owned(),
            ));
        };
        JsonBody::from_object(object, String::new())
    }

    /// A body of these fields, as if they had come as a JSON object (a page's form).
    pub(crate) fn from_fields(fields: Map<String, Value>) -> Result<JsonBody, ApiError> {
        JsonBody::from_object(fields, String::new())
    }

    fn from_object(object: Map<String, Value>, context: String) -> Result<JsonBody, ApiError> {
        let mut fields = Map::new();
        for (key, value) in object {
            if fields.insert(key.to_ascii_lowercase(), value).is_some() {
                return Err(ApiError::BadRequest(format!(
                    "The request body has the key {context}{key} twice (keys are matched \
                     case-insensitively)."
                )));
            }
        }
        Ok(JsonBody { fields, context })
    }

    /// The full name of a field, for messages.
    fn name(&self, key: &str) -> String {
        format!("{}{key}", self.context)
    }

    /// A nested object, if given, with its keys matched case-insensitively too.
    pub fn object(&self, key: &str) -> Result<Option<JsonBody>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(object)) => {
                JsonBody::from_object(object.clone(), format!("{}.", self.name(key))).map(Some)
            }
            Some(other) => Err(ApiError::BadRequest(format!(
                "{} must be a JSON object; the body has {other}.",
                self.name(key)
            ))),
        }
    }

    /// The keys given, lowercased.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().map(String::as_str)
    }

    /// A field's JSON value, if given (and not null).
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }

    /// Whether a field is given (and not null).
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// A list of strings, if given.
    pub fn string_list(&self, key: &str) -> Result<Option<Vec<String>>, ApiError> {
        let wrong = |other: &Value| {
            ApiError::BadRequest(format!(
                "{} must be a list of strings; the body has {other}.",
                self.name(key)
            ))
        };
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned).ok_or_else(|| wrong(item)))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(wrong(other)),
        }
    }

    /// `true` or `false`, if given.
    pub fn boolean(&self, key: &str) -> Result<Option<bool>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(ApiError::BadRequest(format!(
                "{} must be true or false; the body has {other}.",
                self.name(key)
            ))),
        }
    }

    /// An identifier given as a string or a number (checkpoint identifiers are decimal counters,
    /// and some clients send them as numbers), if given.
    pub fn identifier(&self, key: &str) -> Result<Option<String>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(ApiError::BadRequest(format!(
                "{} must be a string; the body has {other}.",
                self.name(key)
            ))),
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.fields
            .get(&key.to_ascii_lowercase())
            .filter(|v| !v.is_null())
    }

    /// A string field, if given.
    pub fn text(&self, key: &str) -> Result<Option<&str>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(ApiError::BadRequest(format!(
                "{} must be a string; the body has {other}.",
                self.name(key)
            ))),
        }
    }

    /// A string field that must be given and not blank.
    pub fn required_text(&self, key: &str) -> Result<&str, ApiError> {
        let given = self.text(key)?.filter(|s| !s.trim().is_empty());
        let example = format!("send {{\"{key}\": \"...\"}} with a non-empty value");
        required(given, &self.name(key), &example)
    }

    /// A number field, if given.
    pub fn number(&self, key: &str) -> Result<Option<f64>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "{} is out of range: send a smaller number.",
                    self.name(key)
                ))
            }),
            Some(other) => Err(ApiError::BadRequest(format!(
                "{} must be a number; the body has {other}.",
                self.name(key)
            ))),
        }
    }

    /// A whole number from `least` to `most`, if given; 400 naming the key otherwise.
    pub fn whole_number(&self, key: &str, least: u64, most: f64) -> Result<Option<u64>, ApiError> {
        self.number(key)?
            .map(|n| {
                if n >= least as f64 && n.fract() == 0.0 && n <= most {
                    Ok(n as u64)
                } else {
                    Err(ApiError::BadRequest(format!(
                        "{key} must be a whole number of {least} or more (got {n})."
                    )))
                }
            })
            .transpose()
    }

    /// An enumeration field, given as a number or a name.
    pub fn enumeration(&self, key: &str, table: &EnumTable) -> Result<Option<u8>, ApiError> {
        let raw = match self.get(key) {
            None => return Ok(None),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => {
                return Err(ApiError::BadRequest(format!(
                    "{} must be a number or a name; the body has {other}.",
                    self.name(key)
                )));
            }
        };
        table
            .parse(&raw)
            .map(Some)
            .map_err(|e| ApiError::BadRequest(format!("{} is not valid: {e}", self.name(key))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(raw: &str) -> String {
        parse_date(raw)
            .map(SimTime::to_wire)
            .unwrap_or_else(|| "none".to_owned())
    }

    #[test]
    fn every_documented_date_format_parses_as_utc() {
        assert_eq!(date("2026-03-04T05:06:07.089Z"), "2026-03-04T05:06:07.089Z");
        assert_eq!(date("2026-03-04T05:06:07Z"), "2026-03-04T05:06:07.000Z");
        assert_eq!(date("2026-03-04T05:06Z"), "2026-03-04T05:06:00.000Z");
        assert_eq!(date("2026-03-04T05Z"), "2026-03-04T05:00:00.000Z");
        assert_eq!(date("2026-03-04T05:06:07"), "2026-03-04T05:06:07.000Z");
        assert_eq!(date("2026-03-04"), "2026-03-04T00:00:00.000Z");
        assert_eq!(date("2026-03"), "2026-03-01T00:00:00.000Z");
        assert_eq!(date("2026"), "2026-01-01T00:00:00.000Z");
        assert_eq!(
            date("2026-03-04T07:06:07+02:00"),
            "2026-03-04T05:06:07.000Z"
        );
        assert_eq!(
            date("2026-03-04T07:06:07 02:00"),
            "2026-03-04T05:06:07.000Z"
        );
        assert_eq!(date("1767225600000"), "2026-01-01T00:00:00.000Z");
        assert_eq!(date("yesterday"), "none");
    }

    #[test]
    fn json_content_types_are_recognised() {
        assert!(is_json("application/json"));
        assert!(is_json("Application/JSON; charset=utf-8"));
        assert!(is_json("application/merge-patch+json"));
        assert!(!is_json("application/x-www-form-urlencoded"));
        assert!(!is_json(""));
    }
}
