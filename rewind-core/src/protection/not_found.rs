//! A query no site answers: the names it may have meant, and the refusal that lists them.

use std::collections::{BTreeMap, HashSet};

use super::answer::SiteAnswer;
use super::model::Protection;
use super::query::site_vm_matches;
use crate::error::{Candidate, RewindError};
use crate::vm::VmQuery;

/// Nothing protected and nothing in the configured sites' own inventories matched: look at every site
/// each ZVM knows (peers included) before saying that no such VM exists.
/// The names of VMs at the sites nearest `query`, a typo or two from it, three at most:
/// from the sites' inventories and their listings of protected VMs (read whole, on this path only).
async fn near_names(answers: &[SiteAnswer], query: &str) -> Vec<String> {
    let wanted = query.to_lowercase();
    // A short name is one typo from many others; a long one may take two.
    let most = if wanted.chars().count() >= 8 { 2 } else { 1 };
    let mut near: BTreeMap<(usize, String), ()> = BTreeMap::new();
    let mut consider = |name: &str| {
        let distance = strsim::damerau_levenshtein(&wanted, &name.to_lowercase());
        if distance > 0 && distance <= most {
            near.insert((distance, name.to_owned()), ());
        }
    };
    for a in answers {
        if let Ok(inventory) = &a.inventory {
            inventory.names().for_each(&mut consider);
        }
        if let Ok(listing) = a.site.vms_kept().await {
            listing
                .iter()
                .filter_map(|r| r.vm_name.as_deref())
                .for_each(&mut consider);
        }
    }
    // The nearest only: a name one typo away is what was meant, not one two typos away.
    let nearest = near.keys().next().map(|(d, _)| *d);
    let mut names: Vec<String> = Vec::new();
    for (_, name) in near.into_keys().filter(|(d, _)| Some(*d) == nearest) {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
            names.push(name);
        }
    }
    names.truncate(3);
    names
}

pub(super) async fn not_found_anywhere(
    answers: &[SiteAnswer],
    matcher: &VmQuery,
    query: &str,
) -> Result<Protection, RewindError> {
    let mut seen: HashSet<String> = answers.iter().map(|a| a.site_id.to_lowercase()).collect();
    let mut found: BTreeMap<String, Candidate> = BTreeMap::new();
    for a in answers {
        let Ok(sites) = a.site.client().virtualization_sites().await else {
            continue;
        };
        for s in sites {
            let Some(id) = s.site_identifier.clone() else {
                continue;
            };
            if !seen.insert(id.to_lowercase()) {
                continue;
            }
            let Ok(vms) = a.site.site_vms(&id).await else {
                continue;
            };
            for vm in vms.iter().filter(|v| site_vm_matches(matcher, v)) {
                let vm_id = vm.vm_identifier.clone().unwrap_or_default();
                found
                    .entry(vm_id.to_lowercase())
                    .or_insert_with(|| Candidate {
                        vm_id,
                        vm_name: vm.vm_name.clone().unwrap_or_default(),
                        site: s
                            .virtualization_site_name
                            .clone()
                            .unwrap_or_else(|| id.clone()),
                        vpgs: Vec::new(),
                    });
            }
        }
    }
    let mut found: Vec<Candidate> = found.into_values().collect();
    match found.len() {
        0 => Err(RewindError::VmNotFound {
            query: query.to_string(),
            sites: answers
                .iter()
                .map(|a| format!("{} ({})", a.site.name(), a.site_name))
                .collect::<Vec<_>>()
                .join(", "),
            near: near_names(answers, query).await,
        }),
        1 => Err(RewindError::VmNotProtected {
            query: query.to_string(),
            vm: found.remove(0),
        }),
        _ => Err(RewindError::AmbiguousVm {
            query: query.to_string(),
            candidates: found,
        }),
    }
}
