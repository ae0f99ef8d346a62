//! How a ZVM's answer is read: its body into a wire model, an answer that is one object or a list
//! of them, and the task identifier a write answers with. The fuzz targets reach these through
//! [`crate::fuzzing`], as the client reaches them.

use serde::de::DeserializeOwned;

use super::error::CallError;

/// Turns a ZVM answer's body into a wire model: the one decoding step of every read and of the
/// writes that answer with a model (the fuzz targets reach it through [`crate::fuzzing`]).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CallError> {
    serde_json::from_slice(bytes).map_err(|e| CallError::Decode {
        detail: e.to_string(),
    })
}

/// An answer that is one object, or an array of them (SW10 and older docs disagree for some GETs).
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrMany<T> {
    Many(Vec<T>),
    One(T),
}

impl<T> OneOrMany<T> {
    pub(crate) fn first(self) -> Option<T> {
        match self {
            OneOrMany::Many(v) => v.into_iter().next(),
            OneOrMany::One(t) => Some(t),
        }
    }
}

/// Reads a task identifier from a write's answer: a JSON string (the appliance's way), a JSON object
/// with `TaskIdentifier`, or bare text.
pub(crate) fn task_id_from_body(text: &str) -> Option<String> {
    let text = text.trim();
    let id = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Object(o)) => o
            .get("TaskIdentifier")
            .and_then(|v| v.as_str())
            .map(str::to_string)?,
        Ok(_) => return None,
        Err(_) => text.to_string(),
    };
    let id = id.trim().to_string();
    (!id.is_empty() && !id.contains(char::is_whitespace)).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_id_is_read_from_a_json_string_an_object_or_bare_text() {
        assert_eq!(task_id_from_body("\"a.b\"").as_deref(), Some("a.b"));
        assert_eq!(
            task_id_from_body("{\"TaskIdentifier\": \"x.y\"}").as_deref(),
            Some("x.y")
        );
        assert_eq!(task_id_from_body("abc.def\n").as_deref(), Some("abc.def"));
        assert_eq!(task_id_from_body("\"\"").as_deref(), None);
        assert_eq!(task_id_from_body("<html> oops </html>").as_deref(), None);
    }
}
