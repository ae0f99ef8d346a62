//! TOML read into serde types, with errors that never quote the file: the configuration and the
//! catalog may hold a secret on the very line that is wrong, so a message names the key (a dotted
//! path such as `guard.deadline_secs`), its line, and for a value of the wrong type what it is and
//! what is expected, and says nothing of the value itself.
//!
//! [`tables`] lists the tables a type reads, from serde's own description of the type, so a message
//! that says what a file takes cannot fall behind the type.

use std::cell::Cell;

use serde::de::value::Error as ProbeError;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};

/// Reads TOML `text` into `T`, or says in one line what is wrong, where, and never the value.
pub(crate) fn parse_toml<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let document = toml::Deserializer::parse(text).map_err(|e| problem(text, None, &e))?;
    serde_path_to_error::deserialize(document).map_err(|e| {
        let key = e.path().to_string();
        let key = (key != ".").then_some(key);
        problem(text, key.as_deref(), e.inner())
    })
}

/// One line for a TOML error at `key`.
fn problem(text: &str, key: Option<&str>, e: &toml::de::Error) -> String {
    let line = e
        .span()
        .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
    // The parser's message may go on to quote the offending line: only its first line is kept.
    let message = e.message().lines().next().unwrap_or("invalid TOML");
    // serde's "missing field `url`" is said of the table; the key it means is one level down.
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        let key = key.map_or_else(|| field.to_owned(), |table| format!("{table}.{field}"));
        return match line {
            Some(line) => format!("`{key}` is required: set it in the table at line {line}"),
            None => format!("`{key}` is required"),
        };
    }
    let place = match (key, line) {
        (Some(key), Some(line)) => format!("`{key}` (line {line})"),
        (Some(key), None) => format!("`{key}`"),
        (None, Some(line)) => format!("line {line}"),
        (None, None) => "the file".into(),
    };
    // serde's "invalid type: string \"soon\", expected f64" quotes the value, which may be a secret's.
    if let Some((found, expected)) = message
        .strip_prefix("invalid type: ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        let (found, expected) = (kind(found), kind(expected));
        return format!("{place} is {found}, but {expected} is expected");
    }
    if let Some((_, expected)) = message
        .strip_prefix("invalid value: ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        return format!("{place} is out of range: {} is expected", kind(expected));
    }
    // This crate's own refusals of a value are worded to follow the key: "is not a number of ...".
    match message.starts_with("is ") {
        true => format!("{place} {message}"),
        false => format!("{place}: {message}"),
    }
}

/// A serde type or value description in TOML's words, without the value: `string "soon"` is a
/// string, `f64` a number, `u32` a whole number from 0 to 4294967295, a map a table.
fn kind(serde: &str) -> &'static str {
    let kind = serde.split(['"', '`']).next().unwrap_or(serde).trim();
    match kind {
        "string" | "a string" | "path string" | "a borrowed string" | "char" | "character" => {
            "a string"
        }
        "f32" | "f64" | "floating point" => "a number",
        "u8" => "a whole number from 0 to 255",
        "u16" => "a whole number from 0 to 65535",
        "u32" => "a whole number from 0 to 4294967295",
        "u64" | "usize" => "a whole number from 0 to 18446744073709551615",
        "u128" | "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "integer" => "a whole number",
        "a boolean" | "boolean" => "true or false",
        "sequence" | "a sequence" => "an array",
        "map" | "a map" => "a table",
        k if k.starts_with("struct ") => "a table",
        "unit value" | "option" => "nothing",
        _ => "another type",
    }
}

/// The top-level keys and every table a file read as `T` may hold, as TOML writes them:
/// `catalog`, `[guard]`, `[hook.team]`, `[sites.<name>]` for a table of tables, and
/// `[[gateway.upstream]]` for an array of tables (the tables inside one written as `[each.deeper]`,
/// each entry's own).
pub(crate) fn tables<T: DeserializeOwned>() -> Vec<String> {
    let mut out = Vec::new();
    walk::<T>(&mut Vec::new(), &mut out);
    out
}

fn walk<T: DeserializeOwned>(path: &mut Vec<&'static str>, out: &mut Vec<String>) {
    let Some(Shape::Table(fields)) = shape::<T>(path) else {
        return;
    };
    for field in fields {
        path.push(field);
        match shape::<T>(path) {
            Some(Shape::Table(_)) => {
                out.push(format!("[{}]", path.join(".")));
                walk::<T>(path, out);
            }
            Some(Shape::Tables) => {
                path.push("<name>");
                let of_tables = matches!(shape::<T>(path), Some(Shape::Table(_)));
                path.pop();
                if of_tables {
                    out.push(format!("[{}.<name>]", path.join(".")));
                    path.push("<name>");
                    walk::<T>(path, out);
                    path.pop();
                } else {
                    // A table of values (an environment): one table, its keys the user's.
                    out.push(format!("[{}]", path.join(".")));
                }
            }
            Some(Shape::Array) => {
                path.push(EACH);
                if let Some(Shape::Table(_)) = shape::<T>(path) {
                    path.pop();
                    out.push(format!("[[{}]]", path.join(".")));
                    path.push(EACH);
                    let at = out.len();
                    walk::<T>(path, out);
                    for table in &mut out[at..] {
                        *table = table.replace(&format!(".{EACH}"), "");
                    }
                } else if path.len() == 2 {
                    out.push(field.to_string());
                }
                path.pop();
            }
            Some(Shape::Value) | None if path.len() == 1 => out.push(field.to_string()),
            Some(Shape::Value) | None => {}
        }
        path.pop();
    }
}

/// What `T` reads at `path`: a table with these keys, a table of tables, or a value.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Table(&'static [&'static str]),
    Tables,
    /// An array: of tables when its entry (the path's [`EACH`]) is one.
    Array,
    Value,
}

/// The path's step into an array's entry.
const EACH: &str = "<each>";

/// Asks `T`'s `Deserialize` what it reads at `path`, by walking down one key per level and noting
/// what it asks for there. The walk always ends in an error: no value is ever made.
fn shape<T: DeserializeOwned>(path: &[&'static str]) -> Option<Shape> {
    let found = Cell::new(None);
    let _ = T::deserialize(Probe {
        path,
        found: &found,
    });
    found.get()
}

/// A deserializer that holds no data: it answers a struct or a map with the next key of its path,
/// and notes what is asked for once the path is walked.
#[derive(Clone, Copy)]
struct Probe<'a> {
    path: &'a [&'static str],
    found: &'a Cell<Option<Shape>>,
}

impl<'de> Probe<'_> {
    fn enter<V: Visitor<'de>>(self, here: Shape, visitor: V) -> Result<V::Value, ProbeError> {
        match self.path.split_first() {
            None => self.end(here),
            Some((key, rest)) => visitor.visit_map(Entry {
                key: Some(key),
                value: Probe { path: rest, ..self },
            }),
        }
    }

    fn end<V>(self, here: Shape) -> Result<V, ProbeError> {
        if self.path.is_empty() {
            self.found.set(Some(here));
        }
        Err(de::Error::custom("only the shape is read"))
    }
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = ProbeError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ProbeError> {
        self.end(Shape::Value)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.enter(Shape::Table(fields), visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        self.enter(Shape::Tables, visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        match self.path.split_first() {
            None => self.end(Shape::Array),
            Some((&EACH, rest)) => visitor.visit_seq(One(Some(Probe { path: rest, ..self }))),
            Some(_) => Err(de::Error::custom("only the shape is read")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct tuple tuple_struct enum identifier ignored_any
    }
}

/// An array of one entry, the probe one level down.
struct One<'a>(Option<Probe<'a>>);

impl<'de> de::SeqAccess<'de> for One<'_> {
    type Error = ProbeError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, ProbeError> {
        self.0
            .take()
            .map(|probe| seed.deserialize(probe))
            .transpose()
    }
}

/// A table of one key, whose value is the probe one level down.
struct Entry<'a> {
    key: Option<&'static str>,
    value: Probe<'a>,
}

impl<'de> MapAccess<'de> for Entry<'_> {
    type Error = ProbeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ProbeError> {
        self.key
            .take()
            .map(|key| seed.deserialize(key.into_deserializer()))
            .transpose()
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, ProbeError> {
        seed.deserialize(self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Top {
        name: Option<String>,
        #[serde(default)]
        inner: Inner,
        #[serde(default)]
        many: BTreeMap<String, Inner>,
        #[serde(default)]
        each: Vec<Inner>,
        #[serde(default)]
        words: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
    }

    #[derive(Deserialize, Default)]
    #[allow(dead_code)]
    struct Inner {
        #[serde(default)]
        count: u32,
        deeper: Option<Deeper>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Deeper {
        #[serde(rename = "flag_on")]
        flag: bool,
    }

    #[test]
    fn the_tables_of_a_type_are_read_from_its_deserialize() {
        assert_eq!(
            tables::<Top>(),
            [
                "name",
                "[inner]",
                "[inner.deeper]",
                "[many.<name>]",
                "[many.<name>.deeper]",
                "[[each]]",
                "[each.deeper]",
                "words",
                "[env]"
            ]
        );
    }

    #[test]
    fn a_missing_key_is_named_under_its_table() {
        let said = parse_toml::<Top>("[inner.deeper]\n").err().unwrap();
        assert_eq!(
            said,
            "`inner.deeper.flag_on` is required: set it in the table at line 1"
        );
    }
}
