//! The reference pages made from the code, so that they cannot drift from it: `docs/exit-codes.md`
//! from [`crate::exit::CODES`] (which `--help` is made from too), and the `--json` results of
//! `docs/json.md` and `docs/json-schemas.json` from each result type's JSON Schema. The test
//! `tests/reference.rs` fails when a checked-in page differs from what this makes;
//! `REWIND_WRITE_DOCS=1 cargo test -p rewind-cli --test reference` writes them.

use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

use crate::exit::CODES;

/// `docs/exit-codes.md`, whole.
pub fn exit_codes_page() -> String {
    let mut out = String::from(
        "# Exit codes of `rewind`\n\n<!-- Made from rewind-cli/src/exit.rs (CODES) by src/reference.rs; `rewind --help` shows the same codes, shorter. -->\n\n| code | meaning |\n|---|---|\n",
    );
    for c in CODES {
        out.push_str(&format!("| {} | {} |\n", c.code, c.meaning));
    }
    out.push_str(
        "\nEach code but 0 and 130 comes from one mapping of the core's error kinds (`usage` 2,\n`refused` 3, `task_failed` 4, `connection` 5, `still_running` 6, `internal` 1), the `kind` of\n`--json`'s `error`.\n",
    );
    out
}

/// Where the generated part of `docs/json.md` starts; what is above it is written by hand.
pub const JSON_MARK: &str =
    "<!-- Below: made from the result types by rewind-cli/src/reference.rs; do not edit. -->";

/// Each command of `--json` with its result type's schema: a reference into the generator's
/// definitions, which every command shares.
fn results(g: &mut SchemaGenerator) -> Vec<(&'static str, Schema)> {
    vec![
        ("find", g.subschema_for::<rewind_core::Protection>()),
        ("guard", g.subschema_for::<rewind_core::GuardReport>()),
        ("tags", g.subschema_for::<rewind_core::TagList>()),
        (
            "tags --expiring",
            g.subschema_for::<rewind_core::audit_journal::Expiring>(),
        ),
        ("keep", g.subschema_for::<rewind_core::KeepReport>()),
        (
            "done",
            g.subschema_for::<rewind_core::audit_journal::Closed>(),
        ),
        ("diff", g.subschema_for::<rewind_core::DiffReport>()),
        (
            "journal --timeline",
            g.subschema_for::<rewind_core::audit_journal::Timeline>(),
        ),
        (
            "recover file",
            g.subschema_for::<rewind_core::RecoverFileReport>(),
        ),
        (
            "recover file --dry-run",
            g.subschema_for::<rewind_core::RecoveryPlan>(),
        ),
        (
            "restore vm, restore commit, restore rollback",
            g.subschema_for::<rewind_core::RecoveryTaskReport>(),
        ),
        (
            "restore status",
            g.subschema_for::<rewind_core::RestoreStatus>(),
        ),
        (
            "recover test, recover clone",
            g.subschema_for::<rewind_core::RecoveryTaskReport>(),
        ),
        (
            "check-tool",
            g.subschema_for::<rewind_core::Classification>(),
        ),
        (
            "catalog list",
            g.subschema_for::<rewind_core::catalog::CatalogListing>(),
        ),
        (
            "catalog add-mutating, add-read-only, remove",
            g.subschema_for::<crate::commands::tools::CatalogChanged>(),
        ),
        (
            "journal",
            g.subschema_for::<rewind_core::audit_journal::JournalRead>(),
        ),
        (
            "journal archive",
            g.subschema_for::<rewind_core::audit_journal::Archived>(),
        ),
        (
            "journal export --to",
            g.subschema_for::<crate::commands::journal::Exported>(),
        ),
        (
            "journal import",
            g.subschema_for::<rewind_core::audit_journal::Imported>(),
        ),
        ("sites", g.subschema_for::<Vec<rewind_core::SiteStatus>>()),
        (
            "trust",
            g.subschema_for::<crate::commands::trust::Trusted>(),
        ),
        (
            "doctor",
            g.subschema_for::<rewind_core::doctor::Diagnosis>(),
        ),
        (
            "capture",
            g.subschema_for::<crate::commands::capture::Captured>(),
        ),
        (
            "parity",
            g.subschema_for::<crate::commands::parity::ParityReport>(),
        ),
        (
            "hook install",
            g.subschema_for::<crate::hook::install::Installed>(),
        ),
        #[cfg(feature = "demo")]
        ("demo", g.subschema_for::<crate::demo::DemoResult>()),
        (
            "error (every command that fails)",
            g.subschema_for::<rewind_core::ErrorReport>(),
        ),
    ]
}

/// Schemas of what the commands print: a field they may leave out is not required.
fn generator() -> SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
}

/// The generated part of `docs/json.md`: a table of each command's result, in a compact form of its
/// schema (`?` marks a field that may be absent; `a | b` the forms a value takes).
pub fn json_results() -> String {
    let mut out = format!("{JSON_MARK}\n\n| command | `result` |\n|---|---|\n");
    let mut g = generator();
    let results = results(&mut g);
    let defs: Map<String, Value> = g.definitions().clone().into_iter().collect();
    for (name, schema) in results {
        let shown = shape(&schema.to_value(), &defs, 0).replace('|', "\\|");
        out.push_str(&format!("| `{name}` | `{shown}` |\n"));
    }
    out.push_str("\nThe whole JSON Schema of each (draft 2020-12) is in [json-schemas.json](json-schemas.json).\n");
    out
}

/// `docs/json-schemas.json`: one JSON Schema document whose `$defs` hold every type, and whose
/// `commands` name each command's result among them.
pub fn json_schemas() -> String {
    let mut g = generator();
    let commands: Map<String, Value> = results(&mut g)
        .into_iter()
        .map(|(name, schema)| (name.to_string(), schema.to_value()))
        .collect();
    let defs: Map<String, Value> = g.definitions().clone().into_iter().collect();
    let all = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "The results of rewind --json, by command",
        "commands": commands,
        "$defs": defs,
    });
    let mut text = serde_json::to_string_pretty(&all).unwrap_or_default();
    text.push('\n');
    text
}

/// How deep a shape goes before it says `{...}`.
const MAX_DEPTH: usize = 6;

/// A schema, compactly: `{a, b?: [..], c: "x" | "y"}`; a scalar is the empty string (its name says
/// enough in a table).
fn shape(schema: &Value, defs: &Map<String, Value>, depth: usize) -> String {
    if depth > MAX_DEPTH {
        return "{...}".into();
    }
    if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
        let key = name.rsplit('/').next().unwrap_or_default();
        return defs
            .get(key)
            .map_or_else(String::new, |d| shape(d, defs, depth));
    }
    if let Some(c) = schema.get("const") {
        return c.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    let forms = ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array))
        .map(|forms| {
            forms
                .iter()
                .filter(|f| f.get("type").and_then(Value::as_str) != Some("null"))
                .map(|f| shape(f, defs, depth))
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" | ")
        });
    let own = match kind(schema) {
        Some("object") if schema.get("properties").is_some() => object(schema, defs, depth),
        Some("array") => {
            let items = schema.get("items").map(|i| shape(i, defs, depth));
            match items.as_deref() {
                Some("") | None => {
                    format!("[{}]", schema.get("items").and_then(kind).unwrap_or("..."))
                }
                Some(s) => format!("[{s}]"),
            }
        }
        _ => String::new(),
    };
    match (own.is_empty(), forms) {
        // Fields of its own, and one of several forms besides (a flattened enum).
        (false, Some(forms)) if !forms.is_empty() => format!("{own} & ({forms})"),
        (true, Some(forms)) => forms,
        _ => own,
    }
}

/// A schema's type, the non-null one of a nullable type.
fn kind(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    }
}

fn object(schema: &Value, defs: &Map<String, Value>, depth: usize) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "{...}".into();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = props
        .iter()
        .map(|(name, sub)| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            match shape(sub, defs, depth + 1) {
                s if s.is_empty() => format!("{name}{optional}"),
                s => format!("{name}{optional}: {s}"),
            }
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}
