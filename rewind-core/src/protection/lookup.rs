//! The lookup: every configured site asked at once for the query's rows and its inventory, the
//! answers merged into exactly one VM and its VPGs, or a hard stop that lists what was found.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::answer::SiteAnswer;
use super::model::{FlrAvailability, Protection, VpgProtection};
use super::not_found::not_found_anywhere;
use super::note::ProtectionNote;
use super::query::{matching, row_matches, validate_query};
use super::rule::not_protecting_reason;
use crate::codes::Code;
use crate::error::{Candidate, RewindError, SiteDown};
use crate::vm::{SiteRef, VmQuery, VmRef};
use crate::zvm::wire::{Link, VmRow};
use crate::zvm::{Site, ZvmClient};

fn link_id(link: &Option<Link>) -> String {
    link.as_ref()
        .and_then(|l| l.identifier.clone())
        .unwrap_or_default()
}

/// The client of the site configured as `name`, among `configured`; a name that is not configured
/// is refused, listing those that are.
pub(crate) fn site_client<'a>(
    configured: &'a [Arc<Site>],
    name: &str,
) -> Result<&'a Arc<ZvmClient>, RewindError> {
    configured
        .iter()
        .find(|c| c.name() == name)
        .map(|s| s.client())
        .ok_or_else(|| RewindError::UnknownSite {
            name: name.to_string(),
            configured: configured
                .iter()
                .map(|c| c.name().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Resolves `query` at the sites of `clients`; `left_out` names the configured sites the caller
/// chose not to ask. A site that cannot answer stops a lookup by name (another VM of that name may be
/// there), and not one by identifier that a site which answered knows.
pub(crate) async fn find_protection(
    clients: &[Arc<Site>],
    left_out: &[String],
    query: &str,
) -> Result<Protection, RewindError> {
    let query = validate_query(query)?;
    let matcher = VmQuery::new(query);
    let (answers, down) = ask_every_site(clients, &matcher).await?;
    let sites = Sites { answers: &answers };
    let groups = sites.protected_matches(&matcher);
    let mut notes = Vec::new();
    let unprotected = sites.unprotected_matches(&matcher, &groups, &mut notes);
    if groups.len() + unprotected.len() > 1 {
        let mut candidates: Vec<Candidate> =
            groups.values().map(|rows| candidate_of(rows)).collect();
        candidates.extend(unprotected.into_values());
        return Err(RewindError::AmbiguousVm {
            query: query.to_string(),
            candidates,
        });
    }
    if !down.is_empty() {
        let by_identifier = groups
            .keys()
            .next()
            .is_some_and(|id| id.eq_ignore_ascii_case(query));
        if !by_identifier {
            let mut found: Vec<Candidate> =
                groups.values().map(|rows| candidate_of(rows)).collect();
            found.extend(unprotected.values().cloned());
            return Err(sites_down(query, down, &answers, found));
        }
        notes.push(ProtectionNote::FoundWithoutThem {
            down: down
                .iter()
                .map(|(site, e)| format!("{site} ({})", e.in_brief()))
                .collect(),
        });
    }
    let Some(rows) = groups.into_values().next() else {
        if let Some(vm) = unprotected.into_values().next() {
            return Err(RewindError::VmNotProtected {
                query: query.to_string(),
                vm,
            });
        }
        return not_found_anywhere(&answers, &matcher, query).await;
    };
    let mut vpgs: Vec<VpgProtection> = sites
        .once_each(&rows)
        .into_iter()
        .map(|(i, row)| sites.vpg_protection(i, row))
        .collect();
    vpgs.sort_by(|a, b| a.vpg_name.cmp(&b.vpg_name).then(a.vpg_id.cmp(&b.vpg_id)));
    let answered: Vec<String> = answers.iter().map(|a| a.site.name().to_owned()).collect();
    if !left_out.is_empty() {
        notes.push(ProtectionNote::OnlyAsked {
            asked: answered.clone(),
            left_out: left_out.to_vec(),
        });
    }
    let asked = (!left_out.is_empty() || !down.is_empty()).then_some(answered);
    Ok(Protection {
        query: query.to_string(),
        vm: sites.vm_ref(&rows),
        vpgs,
        asked,
        notes,
    })
}

/// The error of a lookup by name that sites could not answer. When none answered, the first
/// site's own error, which names its fix (with every site down there is no way on to offer).
fn sites_down(
    query: &str,
    mut down: Vec<(String, RewindError)>,
    answers: &[SiteAnswer],
    found: Vec<Candidate>,
) -> RewindError {
    if answers.is_empty() {
        return down.remove(0).1;
    }
    RewindError::SitesDown {
        query: query.to_string(),
        down: down
            .into_iter()
            .map(|(site, error)| SiteDown {
                site,
                error: Box::new(error),
            })
            .collect(),
        answered: answers.iter().map(|a| a.site.name().to_owned()).collect(),
        found,
    }
}

/// Asks every site of `clients` for its own site, the rows the query matches and its site's
/// inventory, at once; then reads by identifier, at every site that answered, the rows of the VMs
/// that an inventory or a kept listing matched and no filter returned. The sites that could not
/// answer come back apart, each with its error.
async fn ask_every_site(
    clients: &[Arc<Site>],
    matcher: &VmQuery,
) -> Result<(Vec<SiteAnswer>, Vec<(String, RewindError)>), RewindError> {
    // A site lists the rows of its own VMs and of the peers' VMs it recovers: the VMs of every
    // configured site estimate what a whole listing holds.
    let vms: usize = clients.iter().map(|c| c.vms_seen()).sum();
    let asked = futures::future::join_all(clients.iter().map(|c| ask_site(c, matcher, vms))).await;
    let mut answers = Vec::new();
    let mut listed = Vec::new();
    let mut down = Vec::new();
    for (client, answer) in clients.iter().zip(asked) {
        match answer {
            Ok((answer, ids)) => {
                answers.push(answer);
                listed.push(ids);
            }
            Err(e) => down.push((client.name().to_owned(), e)),
        }
    }
    let unread = without_rows(&answers, listed.into_iter().flatten(), matcher);
    if !unread.is_empty() {
        futures::future::try_join_all(answers.iter_mut().map(|a| a.read_rows_of(&unread, matcher)))
            .await?;
    }
    Ok((answers, down))
}

/// One configured ZVM's answer, and the identifiers its kept listing matched (for a query that no
/// filter takes).
async fn ask_site(
    c: &Arc<Site>,
    matcher: &VmQuery,
    listing_size: usize,
) -> Result<(SiteAnswer, Vec<String>), RewindError> {
    let local = c.local_site().await?;
    let site_id = local.site_identifier.clone().unwrap_or_default();
    let site_name = local
        .site_name
        .clone()
        .unwrap_or_else(|| c.name().to_string());
    let (found, inventory) = tokio::join!(
        filtered_or_listed(c, matcher, listing_size),
        c.site_vms_kept(&site_id)
    );
    let (rows, listed) = found?;
    let answer = SiteAnswer {
        site: c.clone(),
        site_id,
        site_name,
        rows,
        inventory,
    };
    Ok((answer, listed))
}

/// The rows the query's filters keep, read now (or, when many lookups are in flight, taken from one
/// whole listing they share, read now too); or, for a query that no filter takes, the identifiers of
/// the VMs it matches in the kept listing.
async fn filtered_or_listed(
    c: &Arc<Site>,
    matcher: &VmQuery,
    listing_size: usize,
) -> Result<(Vec<VmRow>, Vec<String>), RewindError> {
    let Some(filters) = matcher.filters() else {
        let listing = c.vms_kept().await?;
        let mut ids: Vec<String> = Vec::new();
        for id in listing
            .iter()
            .filter(|r| row_matches(matcher, r))
            .filter_map(|r| r.vm_identifier.clone())
        {
            if !ids.iter().any(|known| known.eq_ignore_ascii_case(&id)) {
                ids.push(id);
            }
        }
        return Ok((Vec::new(), ids));
    };
    let _in_flight = c.lookup_begins();
    let mut rows = Vec::new();
    if c.whole_listing_is_cheaper(listing_size) {
        add_matching(&mut rows, &c.all_vms().await?, matcher);
        return Ok((rows, Vec::new()));
    }
    let answers =
        futures::future::try_join_all(filters.iter().map(|(f, v)| c.vms_where(f, v))).await?;
    for answer in &answers {
        add_matching(&mut rows, answer, matcher);
    }
    Ok((rows, Vec::new()))
}

/// Adds the rows of `answer` the query matches to `rows`, each (VM, VPG) once: the same row can come
/// back from two filters, or from a filter and a read by identifier.
fn add_matching(rows: &mut Vec<VmRow>, answer: &[VmRow], matcher: &VmQuery) {
    let same = |a: &VmRow, b: &VmRow| {
        let eq = |x: &Option<String>, y: &Option<String>| {
            x.as_deref()
                .unwrap_or_default()
                .eq_ignore_ascii_case(y.as_deref().unwrap_or_default())
        };
        eq(&a.vm_identifier, &b.vm_identifier)
            && eq(&a.vpg_identifier, &b.vpg_identifier)
            && link_id(&a.link).eq_ignore_ascii_case(&link_id(&b.link))
    };
    for row in answer.iter().filter(|r| row_matches(matcher, r)) {
        if !rows.iter().any(|known| same(known, row)) {
            rows.push(row.clone());
        }
    }
}

/// The identifiers that a kept listing (`listed`) or an inventory matched, and whose rows no site's
/// filters returned, each once.
fn without_rows(
    answers: &[SiteAnswer],
    listed: impl Iterator<Item = String>,
    matcher: &VmQuery,
) -> Vec<String> {
    let in_inventories = answers.iter().flat_map(|a| match &a.inventory {
        Ok(inventory) => matching(inventory, matcher)
            .filter_map(|v| v.vm_identifier.clone())
            .collect(),
        Err(_) => Vec::new(),
    });
    let has_rows = |id: &str| {
        answers.iter().flat_map(|a| &a.rows).any(|r| {
            r.vm_identifier
                .as_deref()
                .is_some_and(|known| known.eq_ignore_ascii_case(id))
        })
    };
    let mut unread: Vec<String> = Vec::new();
    for id in listed.chain(in_inventories) {
        if !has_rows(&id) && !unread.iter().any(|known| known.eq_ignore_ascii_case(&id)) {
            unread.push(id);
        }
    }
    unread
}

impl SiteAnswer {
    /// Reads, now, the rows of these VMs at this site (`vmIdentifier`), and adds those the query
    /// still matches.
    async fn read_rows_of(&mut self, ids: &[String], matcher: &VmQuery) -> Result<(), RewindError> {
        let client = &self.site;
        let answers = futures::future::try_join_all(
            ids.iter().map(|id| client.vms_where("vmIdentifier", id)),
        )
        .await?;
        for answer in &answers {
            add_matching(&mut self.rows, answer, matcher);
        }
        Ok(())
    }
}

/// The rows of one VM: each with the index of the site answer it came from.
type Rows<'a> = Vec<(usize, &'a VmRow)>;

/// What every configured site answered.
struct Sites<'a> {
    answers: &'a [SiteAnswer],
}

impl<'a> Sites<'a> {
    /// The answer of the configured site whose identifier is `site_id`.
    fn configured(&self, site_id: &str) -> Option<&'a SiteAnswer> {
        self.answers
            .iter()
            .find(|a| !site_id.is_empty() && a.site_id.eq_ignore_ascii_case(site_id))
    }

    /// A site as a VPG names it, with the configured site that reaches its ZVM.
    fn site_ref(&self, id: String, name: Option<String>) -> SiteRef {
        SiteRef {
            configured_as: self.configured(&id).map(|a| a.site.name().to_string()),
            name: name
                .or_else(|| self.configured(&id).map(|a| a.site_name.clone()))
                .unwrap_or_default(),
            id,
        }
    }

    /// The protected VMs' rows the query matches, grouped by VM identifier (a BTreeMap, so that the
    /// order is stable).
    fn protected_matches(&self, matcher: &VmQuery) -> BTreeMap<String, Rows<'a>> {
        let mut groups: BTreeMap<String, Rows<'a>> = BTreeMap::new();
        for (i, a) in self.answers.iter().enumerate() {
            for row in a.rows.iter().filter(|r| row_matches(matcher, r)) {
                let key = row.vm_identifier.clone().unwrap_or_default().to_lowercase();
                groups.entry(key).or_default().push((i, row));
            }
        }
        groups
    }

    /// The VMs of the sites' inventories the query matches that no VPG protects; a site whose
    /// inventory could not be read is named in `notes`.
    fn unprotected_matches(
        &self,
        matcher: &VmQuery,
        protected: &BTreeMap<String, Rows<'a>>,
        notes: &mut Vec<ProtectionNote>,
    ) -> BTreeMap<String, Candidate> {
        let mut unprotected: BTreeMap<String, Candidate> = BTreeMap::new();
        for a in self.answers {
            let inventory = match &a.inventory {
                Ok(inventory) => inventory,
                Err(e) => {
                    notes.push(ProtectionNote::InventoryUnreadable {
                        site: a.site.name().to_string(),
                        error: e.to_string(),
                    });
                    continue;
                }
            };
            for vm in matching(inventory, matcher) {
                let id = vm.vm_identifier.clone().unwrap_or_default();
                if !protected.contains_key(&id.to_lowercase()) {
                    unprotected
                        .entry(id.to_lowercase())
                        .or_insert_with(|| Candidate {
                            vm_id: id,
                            vm_name: vm.vm_name.clone().unwrap_or_default(),
                            site: a.site_name.clone(),
                            vpgs: Vec::new(),
                        });
                }
            }
        }
        unprotected
    }

    /// One row per VPG: a VPG seen from both its sites is kept once, preferring the row of the ZVM
    /// rewind will call for it (the protected site's), whose status is first-hand.
    fn once_each(&self, rows: &Rows<'a>) -> Vec<(usize, &'a VmRow)> {
        let mut vpgs: BTreeMap<String, (usize, &'a VmRow)> = BTreeMap::new();
        for (i, row) in rows {
            let key = row
                .vpg_identifier
                .clone()
                .or_else(|| link_id(&row.link).into())
                .unwrap_or_default()
                .to_lowercase();
            let from_protected = self.answers[*i]
                .site_id
                .eq_ignore_ascii_case(&link_id(&row.protected_site));
            if from_protected || !vpgs.contains_key(&key) {
                vpgs.insert(key, (*i, row));
            }
        }
        vpgs.into_values().collect()
    }

    /// The VM the rows are of, with every address any of them lists.
    fn vm_ref(&self, rows: &Rows<'a>) -> VmRef {
        let first = rows[0].1;
        let mut ip_addresses: Vec<String> = Vec::new();
        for a in rows.iter().flat_map(|(_, r)| r.ip_addresses()) {
            if !ip_addresses.iter().any(|known| known == a) {
                ip_addresses.push(a.to_string());
            }
        }
        VmRef {
            id: first.vm_identifier.clone().unwrap_or_default(),
            name: first.vm_name.clone().unwrap_or_default(),
            site: self.site_ref(
                link_id(&first.protected_site),
                first.protected_site_name.clone(),
            ),
            ip_addresses,
        }
    }

    /// One VPG of the VM, from the row site answer `i` gave: whether it is protecting, its sites,
    /// which ZVM rewind calls for it, and whether FLR can run for it.
    fn vpg_protection(&self, i: usize, row: &VmRow) -> VpgProtection {
        let status = Code::vpg_status(row.status.unwrap_or(-1));
        let substatus = Code::vpg_substatus(row.sub_status.unwrap_or(-1));
        let reason = not_protecting_reason(&status, &substatus);
        let protected_site = self.site_ref(
            link_id(&row.protected_site),
            row.protected_site_name.clone(),
        );
        let recovery_site =
            self.site_ref(link_id(&row.recovery_site), row.recovery_site_name.clone());
        let locally_replicated = !protected_site.id.is_empty()
            && protected_site.id.eq_ignore_ascii_case(&recovery_site.id);
        let zvm_site = protected_site
            .configured_as
            .clone()
            .or_else(|| recovery_site.configured_as.clone())
            .unwrap_or_else(|| self.answers[i].site.name().to_string());
        let flr = flr_availability(self.answers, row, &recovery_site);
        VpgProtection {
            vpg_id: row
                .vpg_identifier
                .clone()
                .unwrap_or_else(|| link_id(&row.link)),
            vpg_name: row.vpg_name.clone().unwrap_or_default(),
            protecting: reason.is_none(),
            status,
            substatus,
            reason,
            protected_site,
            recovery_site,
            locally_replicated,
            flr,
            zvm_site,
        }
    }
}

/// How an ambiguous answer lists one protected VM: its rows' VPGs, by name.
fn candidate_of(rows: &Rows<'_>) -> Candidate {
    let (_, first) = rows[0];
    let mut vpgs: Vec<String> = rows
        .iter()
        .filter_map(|(_, r)| r.vpg_name.clone())
        .collect();
    vpgs.sort();
    vpgs.dedup();
    Candidate {
        vm_id: first.vm_identifier.clone().unwrap_or_default(),
        vm_name: first.vm_name.clone().unwrap_or_default(),
        site: first
            .protected_site_name
            .clone()
            .unwrap_or_else(|| link_id(&first.protected_site)),
        vpgs,
    }
}

/// FLR runs at the VPG's recovery site, through that site's ZVM.
fn flr_availability(answers: &[SiteAnswer], row: &VmRow, recovery: &SiteRef) -> FlrAvailability {
    let Some(site) = &recovery.configured_as else {
        return FlrAvailability::Unavailable {
            reason: format!(
                "FLR runs at the VPG's recovery site {recovery}, and its ZVM is not configured; add it as a site to recover files from this VPG"
            ),
        };
    };
    // The recovery site's own row says whether its ZVM can run FLR for this VM.
    let flag = answers
        .iter()
        .find(|a| a.site.name() == site)
        .and_then(|a| {
            a.rows.iter().find(|r| {
                r.vm_identifier == row.vm_identifier && r.vpg_identifier == row.vpg_identifier
            })
        })
        .and_then(|r| r.enabled_actions.as_ref())
        .and_then(|e| e.is_flr_enabled);
    match flag {
        Some(false) => FlrAvailability::Unavailable {
            reason: format!(
                "the ZVM of the recovery site {recovery} says FLR is not enabled for this VM in this VPG"
            ),
        },
        _ => FlrAvailability::Available { site: site.clone() },
    }
}
