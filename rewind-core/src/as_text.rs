//! Typed notes and reasons written as their sentences: the one macro that serializes a type as its
//! `Display` text. Declared first in `lib.rs` with `#[macro_use]`, so that every module can use it.

/// Serializes each type named, a typed note or reason, as its `Display` text, with the JSON Schema of
/// a string: the `--json` output and the published schemas read as they did when notes were strings,
/// while the code and its tests match the variants.
macro_rules! serialize_as_text {
    ($($t:ty),+ $(,)?) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl schemars::JsonSchema for $t {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> std::borrow::Cow<'static, str> {
                <String as schemars::JsonSchema>::schema_name()
            }

            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                <String as schemars::JsonSchema>::json_schema(generator)
            }
        }
    )+};
}
