//! The VMs a call's input mentions: the name, identifier or an address of a VM the journal knows,
//! as a whole word anywhere in the input's strings.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::audit_journal::JournalVm;

/// Every VM of `namings`, each as it was last named, by identifier.
pub(super) fn known(namings: &[(DateTime<Utc>, JournalVm)]) -> Vec<JournalVm> {
    let mut named: Vec<&(DateTime<Utc>, JournalVm)> = namings.iter().collect();
    named.sort_by_key(|(time, _)| *time);
    let mut newest: BTreeMap<&str, &JournalVm> = BTreeMap::new();
    for (_, vm) in named {
        newest.insert(&vm.id, vm);
    }
    newest.into_values().cloned().collect()
}

/// A VM of the journal that the tool input mentions, with the words of the input it answers to.
#[derive(Debug)]
pub(super) struct Mentioned<'a> {
    pub(super) vm: &'a JournalVm,
    /// Its name, identifier or addresses (lowercase) that the input holds as whole words.
    words: Vec<String>,
}

/// The VMs of `known` (by identifier) whose name, identifier or one of whose IP addresses appears
/// in the tool input as a whole word.
pub(super) fn mentioned_vms<'a>(
    known: &'a [JournalVm],
    input: &Value,
) -> BTreeMap<String, Mentioned<'a>> {
    let mut texts = Vec::new();
    strings(input, &mut texts);
    let vms: BTreeMap<String, &JournalVm> = known.iter().map(|vm| (vm.id.clone(), vm)).collect();
    vms.into_iter()
        .filter_map(|(id, vm)| {
            let words: Vec<String> = [vm.name.as_str(), vm.id.as_str()]
                .into_iter()
                .chain(vm.ip_addresses.iter().map(String::as_str))
                .filter(|w| texts.iter().any(|t| mentions(t, w)))
                .map(str::to_lowercase)
                .collect();
            (!words.is_empty()).then_some((id, Mentioned { vm, words }))
        })
        .collect()
}

/// A word of the input that more than one mentioned VM answers to, with those VMs.
pub(super) fn shared_word(
    mentioned: &BTreeMap<String, Mentioned<'_>>,
) -> Option<(String, Vec<JournalVm>)> {
    let mut by_word: BTreeMap<&str, Vec<&JournalVm>> = BTreeMap::new();
    for m in mentioned.values() {
        for w in &m.words {
            by_word.entry(w.as_str()).or_default().push(m.vm);
        }
    }
    by_word
        .into_iter()
        .find(|(_, vms)| vms.len() > 1)
        .map(|(w, vms)| (w.to_string(), vms.into_iter().cloned().collect()))
}

/// Every string in a JSON value, object keys excluded.
fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Whether `text` holds `word` (case-insensitive) with no name character on either side, so `web-01`
/// is found in `ssh web-01.example.com` but not in `web-010` or `web-01-old`.
fn mentions(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    let word = word.to_lowercase();
    let name_char = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    text.match_indices(&word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(name_char) && !after.is_some_and(name_char)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_vm_name_is_found_only_as_a_whole_word() {
        for (text, found) in [
            ("ssh web-01.example.com 'systemctl restart'", true),
            ("WEB-01", true),
            ("edit /etc/hosts on web-01", true),
            ("ssh web-010", false),
            ("ssh web-01-old", false),
            ("ssh myweb-01", false),
        ] {
            assert_eq!(mentions(text, "web-01"), found, "{text:?}");
        }
    }

    #[test]
    fn strings_are_collected_from_nested_input() {
        let v = json!({"a": "x", "b": [{"c": "y"}, 3], "d": {"e": "z"}});
        let mut out = Vec::new();
        strings(&v, &mut out);
        out.sort();
        assert_eq!(out, vec!["x", "y", "z"]);
    }
}
