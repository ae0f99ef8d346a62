//! Parity: where a simulator's answers differ in shape from a real appliance's. The same fixed set
//! of read-only endpoints is read from both (the simulator serving a capture of the appliance), and
//! each answer is reduced to its shape: for every field path, the JSON types it takes, the format
//! of its strings (a GUID, `<guid>.vm-N`, a date-time, a decimal...) and, for the enumerations of
//! VPGs and VMs, the values it takes. Two shapes are compared path by path, and each difference is
//! one line: a field only one side has (or has in another casing), another type, another
//! identifier format, an enumeration value only one side uses.
//!
//! Values themselves (names, sizes, times) are not compared: the simulator serves the appliance's
//! inventory with its own identifiers and figures. An empty list on either side says nothing of
//! its elements, so they are not compared. An endpoint one side could not read is one line
//! (`unread`), and is compared on neither side.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::error::RewindError;
use crate::zvm::ZvmClient;

/// The endpoints read, in order. `{site}` is each side's own site, `{vpg}` and `{vm}` the VPG and
/// VM of the same name on both sides.
pub const ENDPOINTS: [&str; 17] = [
    "/v1/localsite",
    "/v1/peersites",
    "/v1/virtualizationsites",
    "/v1/virtualizationsites/{site}/vms",
    "/v1/virtualizationsites/{site}/hosts",
    "/v1/virtualizationsites/{site}/datastores",
    "/v1/vpgs",
    "/v1/vpgs/{vpg}",
    "/v1/vpgs/{vpg}/checkpoints",
    "/v1/vms",
    "/v1/vms/{vm}",
    "/v1/tasks",
    "/v1/vpgs/statuses",
    "/v1/vras",
    "/v1/datastores",
    "/v1/alerts",
    "/v1/events",
];

/// Fields whose values are an enumeration, compared value by value.
const ENUMERATIONS: [&str; 3] = ["Status", "SubStatus", "Priority"];

/// The shape of one field path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldShape {
    /// The JSON types seen: `null`, `boolean`, `integer`, `number`, `string`, `array`, `object`.
    pub types: BTreeSet<&'static str>,
    /// The formats of its strings.
    pub formats: BTreeSet<&'static str>,
    /// Its values, when it is an enumeration.
    pub values: BTreeSet<String>,
}

/// Every field path of a set of answers: `GET /v1/vpgs [] .Status`.
pub type Shape = BTreeMap<String, FieldShape>;

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Difference {
    /// The field path, e.g. `GET /v1/vpgs [].VpgName`.
    pub path: String,
    /// `missing`, `extra`, `casing`, `type`, `format` or `enum`.
    pub kind: String,
    /// What differs, naming both sides.
    pub detail: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.path, self.kind, self.detail)
    }
}

/// The shape of `answers`, `(endpoint, answer)` pairs.
pub fn shape(answers: &[(String, Value)]) -> Shape {
    let mut shape = Shape::new();
    for (endpoint, answer) in answers {
        walk(&format!("GET {endpoint} "), answer, &mut shape);
    }
    shape
}

fn walk(path: &str, value: &Value, shape: &mut Shape) {
    let field = shape.entry(path.to_owned()).or_default();
    field.types.insert(json_type(value));
    if let Value::String(text) = value {
        field.formats.insert(format_of(text));
    }
    let leaf = path.rsplit('.').next().unwrap_or_default();
    if ENUMERATIONS.contains(&leaf) && (value.is_i64() || value.is_string()) {
        field.values.insert(value.to_string());
    }
    match value {
        Value::Array(items) => items
            .iter()
            .for_each(|item| walk(&format!("{path}[]"), item, shape)),
        Value::Object(map) => map
            .iter()
            .for_each(|(key, item)| walk(&format!("{path}.{key}"), item, shape)),
        _ => {}
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What kind of string this is, as identifiers and times are written.
pub fn format_of(text: &str) -> &'static str {
    if let Some((head, _)) = text.split_once('?') {
        return match format_of(head) {
            "guid.moref" => "guid.moref?query",
            "guid" => "guid?query",
            _ => "text?query",
        };
    }
    let guid = |s: &str| {
        let parts: Vec<&str> = s.split('-').collect();
        parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
            && parts
                .iter()
                .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
    };
    // A vCenter managed object reference: `vm-12`, `host-13`, `datastore-20`.
    let moref = |s: &str| {
        s.split_once('-').is_some_and(|(kind, n)| {
            !kind.is_empty()
                && kind.chars().all(|c| c.is_ascii_lowercase())
                && !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit())
        })
    };
    if text.is_empty() {
        "empty"
    } else if guid(text) {
        "guid"
    } else if let Some((_, tail)) = text.split_once('.').filter(|(h, _)| guid(h)) {
        if guid(tail) {
            "guid.guid"
        } else if moref(tail) {
            "guid.moref"
        } else {
            "guid.other"
        }
    } else if text.chars().all(|c| c.is_ascii_digit()) {
        "decimal"
    } else if chrono::DateTime::parse_from_rfc3339(text).is_ok() {
        "date-time"
    } else if text.starts_with("http://") || text.starts_with("https://") {
        "url"
    } else {
        "text"
    }
}

/// Where `simulated` differs from `real`, path by path.
pub fn compare(real: &Shape, simulated: &Shape) -> Vec<Difference> {
    let mut out = Vec::new();
    let lowered: BTreeMap<String, &String> =
        simulated.keys().map(|k| (k.to_lowercase(), k)).collect();
    let real_lowered: BTreeSet<String> = real.keys().map(|k| k.to_lowercase()).collect();
    for (path, field) in real {
        if !compared(path, real, simulated) || absent_above(path, simulated) {
            continue;
        }
        match simulated.get(path) {
            Some(other) => out.extend(field_differences(path, field, other)),
            None => match lowered.get(&path.to_lowercase()) {
                Some(cased) => out.push(diff(
                    path,
                    "casing",
                    format!(
                        "the appliance writes {}, the simulator {}",
                        leaf(path),
                        leaf(cased)
                    ),
                )),
                None => out.push(diff(
                    path,
                    "missing",
                    "the appliance answers it; the simulator does not",
                )),
            },
        }
    }
    for path in simulated.keys() {
        let new = !real.contains_key(path) && !real_lowered.contains(&path.to_lowercase());
        if new && compared(path, simulated, real) && !absent_above(path, real) {
            out.push(diff(
                path,
                "extra",
                "the simulator answers it; the appliance does not",
            ));
        }
    }
    out
}

/// The path one step up: `... [].Link` for `... [].Link.href`, `... ` for `... []`.
fn parent(path: &str) -> Option<&str> {
    if let Some(list) = path.strip_suffix("[]") {
        return Some(list);
    }
    let cut = path.rfind('.')?;
    Some(&path[..cut])
}

/// Whether the field above `path` is itself missing from `shape` (then only it is reported).
fn absent_above(path: &str, shape: &Shape) -> bool {
    parent(path).is_some_and(|up| {
        up.contains('.')
            && !shape.contains_key(up)
            && !shape.keys().any(|k| k.eq_ignore_ascii_case(up))
    })
}

/// A path is compared when every list above it has elements on both sides (an empty list tells
/// nothing of its elements).
fn compared(path: &str, one: &Shape, other: &Shape) -> bool {
    let mut at = 0;
    while let Some(found) = path[at..].find("[]") {
        let list = &path[..at + found];
        let elements = format!("{list}[]");
        let has = |shape: &Shape| shape.keys().any(|k| k.starts_with(&elements));
        let present_in_other =
            other.contains_key(list) || other.keys().any(|k| k.eq_ignore_ascii_case(list));
        if present_in_other && (!has(one) || !has(other)) {
            return false;
        }
        at += found + 2;
    }
    true
}

fn field_differences(path: &str, real: &FieldShape, simulated: &FieldShape) -> Vec<Difference> {
    let mut out = Vec::new();
    if real.types != simulated.types {
        out.push(diff(
            path,
            "type",
            format!(
                "the appliance answers {}, the simulator {}",
                joined(&real.types),
                joined(&simulated.types)
            ),
        ));
    }
    if real.formats != simulated.formats
        && !real.formats.is_empty()
        && !simulated.formats.is_empty()
    {
        out.push(diff(
            path,
            "format",
            format!(
                "the appliance writes {}, the simulator {}",
                joined(&real.formats),
                joined(&simulated.formats)
            ),
        ));
    }
    let only: Vec<&String> = real.values.difference(&simulated.values).collect();
    if !only.is_empty() && !simulated.values.is_empty() && real.types == simulated.types {
        out.push(diff(
            path,
            "enum",
            format!(
                "the appliance uses {}, which the simulator never does",
                only.iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    out
}

fn diff(path: &str, kind: &str, detail: impl Into<String>) -> Difference {
    Difference {
        path: path.to_owned(),
        kind: kind.to_owned(),
        detail: detail.into(),
    }
}

fn leaf(path: &str) -> &str {
    path.rsplit(['.', ' ']).next().unwrap_or(path)
}

fn joined<T: std::fmt::Display>(set: &BTreeSet<T>) -> String {
    set.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

/// What one side answered: each endpoint read, and each that could not be, with why.
#[derive(Debug, Default)]
pub struct Answers {
    /// `(endpoint, answer)`.
    pub read: Vec<(String, Value)>,
    /// `(endpoint, what failed)`.
    pub unread: Vec<(String, String)>,
}

/// Reads every endpoint from `client`; `{vpg}` and `{vm}` are those named `vpg_name` and
/// `vm_name` there, or, where it has none of those names (an anonymized capture), its own first.
pub async fn read_answers(
    client: &ZvmClient,
    vpg_name: Option<&str>,
    vm_name: Option<&str>,
) -> Result<Answers, RewindError> {
    let site = client.site_identifier().await?;
    let vpgs: Value = client.read_json("/v1/vpgs").await?;
    let vms: Value = client.read_json("/v1/vms").await?;
    let id_of = |list: &Value, key: &str, name: Option<&str>, id: &str| {
        let items = list.as_array()?;
        let named = items.iter().find(|i| name.is_some_and(|n| i[key] == n));
        named
            .or_else(|| items.first())
            .and_then(|i| i[id].as_str().map(str::to_owned))
    };
    let vpg = id_of(&vpgs, "VpgName", vpg_name, "VpgIdentifier");
    let vm = id_of(&vms, "VmName", vm_name, "VmIdentifier");
    let mut answers = Answers::default();
    for endpoint in ENDPOINTS {
        let lacks = |part: &str, id: &Option<String>| endpoint.contains(part) && id.is_none();
        if lacks("{vpg}", &vpg) || lacks("{vm}", &vm) {
            answers.unread.push((
                endpoint.to_owned(),
                "it has no VPG or VM to read it for".to_owned(),
            ));
            continue;
        }
        let path = endpoint
            .replace("{site}", &site)
            .replace("{vpg}", vpg.as_deref().unwrap_or_default())
            .replace(
                "{vm}",
                &format!(
                    "{}?vpgIdentifier={}",
                    vm.as_deref().unwrap_or_default(),
                    vpg.as_deref().unwrap_or_default()
                ),
            );
        match client.read_json::<Value>(&path).await {
            Ok(answer) => answers.read.push((endpoint.to_owned(), answer)),
            Err(e) => answers.unread.push((endpoint.to_owned(), e.to_string())),
        }
    }
    Ok(answers)
}

/// The endpoints one side could not read, as differences (`unread`), and the answers both read.
pub fn unread_differences(real: &Answers, simulated: &Answers) -> Vec<Difference> {
    let side = |who: &str, answers: &Answers| {
        answers
            .unread
            .iter()
            .map(|(endpoint, why)| {
                diff(
                    &format!("GET {endpoint} "),
                    "unread",
                    format!("the {who} could not be read: {why}"),
                )
            })
            .collect::<Vec<_>>()
    };
    let mut out = side("appliance", real);
    out.extend(side("simulator", simulated));
    out
}

/// The answers of the endpoints both sides read.
pub fn both_read(one: &Answers, other: &Answers) -> Vec<(String, Value)> {
    one.read
        .iter()
        .filter(|(endpoint, _)| other.read.iter().any(|(e, _)| e == endpoint))
        .cloned()
        .collect()
}

/// The VPG and the VM compared one by one: the first VPG by name that has a VM, and that VM.
pub fn sample(vms: &Value) -> (Option<String>, Option<String>) {
    let mut rows: Vec<(&str, &str)> = vms
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|r| Some((r["VpgName"].as_str()?, r["VmName"].as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    rows.sort_unstable();
    rows.first().map_or((None, None), |(vpg, vm)| {
        (Some((*vpg).to_owned()), Some((*vm).to_owned()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answers() -> Vec<(String, Value)> {
        vec![
            (
                "/v1/vpgs".to_owned(),
                json!([{"VpgIdentifier": "0b6f0e3c-6a8e-4c59-9d7f-1e2d3c4b5a69", "VpgName": "web", "Status": 1, "Link": {"href": "https://z/v1/vpgs/x", "identifier": "x"}}]),
            ),
            (
                "/v1/vms".to_owned(),
                json!([{"VmIdentifier": "0b6f0e3c-6a8e-4c59-9d7f-1e2d3c4b5a69.vm-12", "VmName": "web-01", "LastTest": "2026-01-01T00:00:00.000Z", "Status": 1}]),
            ),
            ("/v1/tasks".to_owned(), json!([])),
        ]
    }

    #[test]
    fn the_same_answers_have_no_difference() {
        assert_eq!(compare(&shape(&answers()), &shape(&answers())), []);
    }

    #[test]
    fn each_planted_difference_is_named_once_with_its_kind() {
        let mut planted = answers();
        let vpg = &mut planted[0].1[0];
        let name = vpg["VpgName"].take();
        vpg.as_object_mut().unwrap().remove("VpgName");
        vpg["vpgName"] = name;
        vpg["Status"] = json!("1");
        vpg.as_object_mut().unwrap().remove("Link");
        let vm = &mut planted[1].1[0];
        vm["VmIdentifier"] = json!("vm-12");
        vm["Status"] = json!(7);
        vm["Extra"] = json!(true);
        let found = compare(&shape(&answers()), &shape(&planted));
        let kinds: Vec<(&str, &str)> = found
            .iter()
            .map(|d| (d.path.as_str(), d.kind.as_str()))
            .collect();
        for expected in [
            ("GET /v1/vpgs [].VpgName", "casing"),
            ("GET /v1/vpgs [].Status", "type"),
            ("GET /v1/vpgs [].Link", "missing"),
            ("GET /v1/vms [].VmIdentifier", "format"),
            ("GET /v1/vms [].Status", "enum"),
            ("GET /v1/vms [].Extra", "extra"),
        ] {
            assert!(kinds.contains(&expected), "{expected:?} in {found:#?}");
        }
        assert_eq!(
            found.len(),
            6,
            "one line per planted difference: {found:#?}"
        );
    }

    #[test]
    fn an_empty_list_on_one_side_says_nothing_of_its_elements() {
        let mut other = answers();
        other[1].1 = json!([]);
        assert_eq!(compare(&shape(&answers()), &shape(&other)), []);
    }

    #[test]
    fn an_endpoint_one_side_could_not_read_is_one_line_and_compared_on_neither_side() {
        let real = Answers {
            read: answers(),
            unread: Vec::new(),
        };
        let simulated = Answers {
            read: answers()[1..].to_vec(),
            unread: vec![("/v1/vpgs".to_owned(), "HTTP 500".to_owned())],
        };
        let unread = unread_differences(&real, &simulated);
        assert_eq!(unread.len(), 1);
        assert_eq!(unread[0].kind, "unread");
        assert!(unread[0].detail.contains("simulator") && unread[0].detail.contains("HTTP 500"));
        let compared = compare(
            &shape(&both_read(&real, &simulated)),
            &shape(&both_read(&simulated, &real)),
        );
        assert_eq!(compared, [], "/v1/vpgs is compared on neither side");
    }

    #[test]
    fn identifiers_and_times_have_their_formats() {
        assert_eq!(format_of("0b6f0e3c-6a8e-4c59-9d7f-1e2d3c4b5a69"), "guid");
        assert_eq!(
            format_of("0b6f0e3c-6a8e-4c59-9d7f-1e2d3c4b5a69.vm-12"),
            "guid.moref"
        );
        assert_eq!(
            format_of("0b6f0e3c-6a8e-4c59-9d7f-1e2d3c4b5a69.0b6f0e3c-6a8e-4c59-9d7f-1e2d3c4b5a69"),
            "guid.guid"
        );
        assert_eq!(format_of("1234"), "decimal");
        assert_eq!(format_of("2026-01-01T00:00:00.000Z"), "date-time");
        assert_eq!(format_of("web-01"), "text");
        assert_eq!(
            format_of(
                "0b6f0e3c-6a8e-4c59-9d7f-1e2d3c4b5a69.vm-12?VpgIdentifier=0b6f0e3c-6a8e-4c59-9d7f-123456789012"
            ),
            "guid.moref?query",
            "a query is not part of the identifier's format"
        );
        assert_eq!(
            format_of("0b6f0e3c-6a8e-4c59-9d7f-1e2d3c4b5a69.naa.6000c29"),
            "guid.other"
        );
    }
}
