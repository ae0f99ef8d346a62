//! find_protection: resolve a VM name, host name or vmIdentifier to exactly one VM and every VPG it is
//! in, across every configured site, and the protecting-VPG rule.
//!
//! Every configured ZVM is asked at once for the rows of `/v1/vms` (one per VM and VPG) that the
//! query's filters keep (`vmName`, and for a dotted query `vmIdentifier` and the host name's first
//! label), and for its own site's inventory (`/v1/virtualizationsites/{site}/vms`), so that a lookup
//! costs what one VM's rows cost, not what the site's thousands of VMs do. Rows are matched by VM name
//! (case-insensitive), vmIdentifier, host name (an FQDN whose first label is the VM name) or IP
//! address, and grouped by VM identifier; a VPG seen from both its sites is kept once. The inventory
//! makes two more answers possible: a VM that exists but is protected by nothing, and a name shared by
//! a protected and an unprotected VM (which is ambiguous, not a match).
//!
//! What no filter answers is looked up in what the client keeps for a bounded time (see
//! [`crate::LookupSettings`]): an IP address, or a name in letters other than ASCII, in the site's
//! whole listing; a VM matched in an inventory or in such a listing has its rows read again by
//! identifier. The rows an answer gives, and so what a guard tags, are always read by this lookup.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use crate::codes::Code;
use crate::error::{Candidate, RewindError, SiteDown};
pub use crate::vm::{SiteRef, VmQuery, VmRef};
use crate::zvm::inventory::Inventory;
use crate::zvm::wire::{Link, SiteVm, VmRow};
use crate::zvm::{Site, ZvmClient};

/// The substatuses that are a sync: a VPG in one of them is not protecting.
pub const SYNC_SUBSTATUSES: [i64; 8] = [1, 3, 4, 6, 11, 12, 13, 23];

/// The substatuses of a VPG whose replication is paused (by a person, or by the system): it writes
/// no checkpoint, so it is not protecting.
pub const PAUSED_SUBSTATUSES: [i64; 2] = [25, 26];

/// Why a VPG with this status and substatus is not protecting, or `None` when it is protecting.
///
/// Protecting: status MeetingSLA (1), NotMeetingSLA (2), RpoNotMeetingSLA (3) or HistoryNotMeetingSLA
/// (4), and a substatus that is not a sync or a pause.
pub fn not_protecting_reason(status: &Code, substatus: &Code) -> Option<String> {
    match status.code {
        1..=4 if PAUSED_SUBSTATUSES.contains(&substatus.code) => Some(format!(
            "the VPG's replication is paused ({substatus}): it writes no checkpoint, so no tag can be taken; resume it in Zerto, then guard again"
        )),
        1..=4 if SYNC_SUBSTATUSES.contains(&substatus.code) => Some(format!(
            "the VPG is syncing ({substatus}); a sync removes checkpoints and a tag taken now is not a point to go back to; guard again when the sync is over"
        )),
        1..=4 => None,
        0 => Some(format!(
            "the VPG is {status} ({substatus}): it is still being created and has no journal to tag yet"
        )),
        _ => Some(format!(
            "the VPG is {status} ({substatus}), not protecting; only VPGs that are MeetingSLA, NotMeetingSLA, RpoNotMeetingSLA or HistoryNotMeetingSLA are tagged"
        )),
    }
}

/// Whether FLR can run for this VM in this VPG from a configured ZVM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FlrAvailability {
    /// FLR can run through the ZVM configured under `site` (the VPG's recovery site).
    Available {
        /// The configured site name.
        site: String,
    },
    /// FLR cannot run from here.
    Unavailable {
        /// Why, and what would make it possible.
        reason: String,
    },
}

/// One VPG that a VM is in.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VpgProtection {
    /// The VPG's identifier.
    pub vpg_id: String,
    /// The VPG's name.
    pub vpg_name: String,
    /// Its status.
    pub status: Code,
    /// Its substatus.
    pub substatus: Code,
    /// Whether it is protecting (and so will be tagged by a guard).
    pub protecting: bool,
    /// Why it is not protecting.
    pub reason: Option<String>,
    /// Where the VM runs.
    pub protected_site: SiteRef,
    /// Where the journal is and recovery happens.
    pub recovery_site: SiteRef,
    /// Protected site and recovery site are the same.
    pub locally_replicated: bool,
    /// Whether FLR can run from a configured ZVM.
    pub flr: FlrAvailability,
    /// The configured site whose ZVM rewind calls for this VPG: the protected site's if configured,
    /// else the recovery site's.
    pub zvm_site: String,
}

/// A VM and every VPG it is in.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Protection {
    /// The query as given.
    pub query: String,
    /// The VM it resolved to.
    pub vm: VmRef,
    /// Every VPG the VM is in, protecting or not, by name.
    pub vpgs: Vec<VpgProtection>,
    /// The configured sites whose ZVMs answered, when not every configured site did (some were left
    /// out with `--site`, or could not answer a lookup by identifier): a VM of the same name, or a
    /// VPG that only another site lists, would not be seen. Absent when every site answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked: Option<Vec<String>>,
    /// Things the answer could not check (e.g. a site's inventory that could not be read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<ProtectionNote>,
}

/// Something a find_protection answer could not check. It reads (and serializes) as one sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtectionNote {
    /// A site's inventory could not be read, so an unprotected VM of the same name there would not
    /// have been seen (and the answer may miss an ambiguity).
    InventoryUnreadable {
        /// The configured site.
        site: String,
        /// Why it could not be read.
        error: String,
    },
    /// Only some configured sites were asked, as the caller chose (`--site`).
    OnlyAsked {
        /// The sites asked.
        asked: Vec<String>,
        /// The configured sites left out.
        left_out: Vec<String>,
    },
    /// Some sites could not answer; the VM was found by its identifier at the others.
    FoundWithoutThem {
        /// The sites that could not answer, each with what it met.
        down: Vec<String>,
    },
    /// The VM's VPGs differ from those its newest guard saw (journaled as `protection_changed`).
    ProtectionChanged {
        /// What changed, and what it means for the guard.
        said: String,
    },
    /// The VM's VPGs could not be compared with its newest guard's: the journal could not be read
    /// or written.
    NotCompared {
        /// Why.
        error: String,
    },
}

impl std::fmt::Display for ProtectionNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtectionNote::InventoryUnreadable { site, error } => write!(
                f,
                "the inventory of site {site} could not be read, so an unprotected VM of the same name there would not be seen: {error}"
            ),
            ProtectionNote::OnlyAsked { asked, left_out } => write!(
                f,
                "only {} was asked (--site): a VM of the same name, or a VPG only {} lists, would not be seen",
                asked.join(" and "),
                left_out.join(" and ")
            ),
            ProtectionNote::FoundWithoutThem { down } => write!(
                f,
                "{} could not be asked; the VM was found by its identifier without it, and a VPG only it lists would not be seen",
                down.join(", ")
            ),
            ProtectionNote::ProtectionChanged { said } => {
                write!(f, "protection changed since the VM's guard: {said}")
            }
            ProtectionNote::NotCompared { error } => write!(
                f,
                "the VM's VPGs could not be compared with its last guard's, so a VPG added since would not be said: {error}"
            ),
        }
    }
}

serialize_as_text!(ProtectionNote);

/// What `journal` says of `vm`, now in `vpgs`, against its newest guard: the note of a
/// difference, journaled (`protection_changed`, by `agent` for `person`) the first time it is seen;
/// `None` when there is none.
pub(crate) fn compared_with_guard(
    journal: &crate::audit_journal::AuditJournal,
    vm: &crate::audit_journal::JournalVm,
    vpgs: &[VpgProtection],
    agent: &str,
    person: Option<&crate::audit_journal::Person>,
) -> Option<ProtectionNote> {
    let now: Vec<crate::audit_journal::VpgNow> = vpgs
        .iter()
        .map(|v| crate::audit_journal::VpgNow {
            id: v.vpg_id.clone(),
            name: v.vpg_name.clone(),
        })
        .collect();
    match journal.note_protection(vm, &now, agent, person, chrono::Utc::now()) {
        Ok(record) => record.map(|r| ProtectionNote::ProtectionChanged {
            said: r.notes.join("; "),
        }),
        Err(e) => Some(ProtectionNote::NotCompared {
            error: e.to_string(),
        }),
    }
}

impl Protection {
    /// What a lookup says of a VM in no VPG (`vm`, as [`RewindError::VmNotProtected`] names it):
    /// for listing the tags its guards left where it no longer is.
    pub fn of_no_vpg(query: &str, vm: &Candidate) -> Protection {
        Protection {
            query: query.to_owned(),
            vm: VmRef {
                id: vm.vm_id.clone(),
                name: vm.vm_name.clone(),
                site: crate::vm::SiteRef {
                    id: String::new(),
                    name: vm.site.clone(),
                    configured_as: None,
                },
                ip_addresses: Vec::new(),
            },
            vpgs: Vec::new(),
            asked: None,
            notes: Vec::new(),
        }
    }

    /// The protecting VPGs.
    pub fn protecting(&self) -> impl Iterator<Item = &VpgProtection> {
        self.vpgs.iter().filter(|v| v.protecting)
    }

    /// One line for humans: the VM, where it runs, how many VPGs it is in and how many protect it.
    pub fn headline(&self) -> String {
        format!(
            "{} ({}) at {}: {} VPG(s), {} protecting",
            self.vm.name,
            self.vm.id,
            self.vm.site,
            self.vpgs.len(),
            self.protecting().count()
        )
    }

    /// The headline, then one line per VPG and the notes.
    pub fn summary(&self) -> String {
        let mut out = self.headline();
        for v in &self.vpgs {
            out.push_str(&format!(
                "\n  {} {} -> {}: {} / {}: {}",
                v.vpg_name,
                v.protected_site,
                v.recovery_site,
                v.status,
                v.substatus,
                match &v.reason {
                    None => "protecting".to_string(),
                    Some(r) => format!("not protecting, {r}"),
                }
            ));
        }
        for n in &self.notes {
            out.push_str(&format!("\n  note: {n}"));
        }
        out
    }
}

/// Checks a VM query before anything is sent.
pub fn validate_query(query: &str) -> Result<&str, RewindError> {
    let q = query.trim();
    if q.is_empty() {
        return Err(RewindError::InvalidInput {
            field: "vm",
            problem: "it is empty; give a VM name, host name, IP address or vmIdentifier".into(),
        });
    }
    if q.chars().count() > 255 {
        return Err(RewindError::InvalidInput {
            field: "vm",
            problem: "it is longer than 255 characters; give a VM name, host name or vmIdentifier"
                .into(),
        });
    }
    if q.chars().any(char::is_control) {
        return Err(RewindError::InvalidInput {
            field: "vm",
            problem: "it contains a control character; give the VM's name as Zerto shows it".into(),
        });
    }
    Ok(q)
}

/// Whether a row of `/v1/vms` is a VM `query` means.
fn row_matches(query: &VmQuery, row: &VmRow) -> bool {
    query.matches(
        row.vm_identifier.as_deref(),
        row.vm_name.as_deref(),
        row.ip_addresses(),
    )
}

/// The VMs of a site's inventory that `query` means.
fn matching<'a>(inventory: &'a Inventory, query: &VmQuery) -> impl Iterator<Item = &'a SiteVm> {
    let candidates = inventory.with_keys(query.keys());
    candidates
        .into_iter()
        .filter(move |v| site_vm_matches(query, v))
}

/// Whether a VM of a site's inventory is one `query` means.
fn site_vm_matches(query: &VmQuery, vm: &SiteVm) -> bool {
    query.matches(vm.vm_identifier.as_deref(), vm.vm_name.as_deref(), [])
}

/// What one configured site contributed.
struct SiteAnswer {
    site: Arc<Site>,
    site_id: String,
    site_name: String,
    /// The rows (read by this lookup) of the VMs the query matches.
    rows: Vec<VmRow>,
    /// The site's inventory as kept, or why it could not be read.
    inventory: Result<Arc<Inventory>, RewindError>,
}

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

async fn not_found_anywhere(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(s: i64, ss: i64) -> Option<String> {
        not_protecting_reason(&Code::vpg_status(s), &Code::vpg_substatus(ss))
    }

    #[test]
    fn statuses_one_to_four_without_a_sync_are_protecting() {
        for s in 1..=4 {
            assert_eq!(reason(s, 0), None);
            assert_eq!(reason(s, 5), None, "RecoveryPossible is not a sync");
        }
    }

    #[test]
    fn a_sync_substatus_is_not_protecting_and_the_reason_names_it() {
        for ss in SYNC_SUBSTATUSES {
            let r = reason(2, ss).unwrap();
            assert!(r.contains(&Code::vpg_substatus(ss).name), "{r}");
            assert!(r.contains(&format!("({ss})")), "{r}");
        }
    }

    #[test]
    fn a_paused_vpg_is_not_protecting_and_the_reason_says_to_resume_it() {
        for ss in PAUSED_SUBSTATUSES {
            let r = reason(1, ss).unwrap();
            assert!(r.contains(&Code::vpg_substatus(ss).name), "{r}");
            assert!(r.contains("resume"), "{r}");
        }
    }

    #[test]
    fn initializing_and_failing_over_are_not_protecting() {
        assert!(reason(0, 1).unwrap().contains("Initializing (0)"));
        let failing_over = reason(5, 0).unwrap();
        assert!(failing_over.contains("FailingOver (5)"));
        assert!(
            failing_over.contains("RpoNotMeetingSLA or HistoryNotMeetingSLA are tagged"),
            "the reason names every protecting status: {failing_over}"
        );
        assert!(reason(-1, -1).unwrap().contains("Unknown(-1)"));
    }

    #[test]
    fn host_names_match_by_first_label_and_ips_by_address() {
        let row: VmRow = serde_json::from_str(
            r#"{"VmIdentifier":"s.vm-1","VmName":"Web-01","VmNetworkInformation":{"NetworkAdapters":[{"IpAddresses":["10.1.2.3"]}]}}"#,
        )
        .unwrap();
        assert!(row_matches(&VmQuery::new("web-01"), &row));
        assert!(row_matches(&VmQuery::new("WEB-01.corp.example.com"), &row));
        assert!(row_matches(&VmQuery::new("s.vm-1"), &row));
        assert!(row_matches(&VmQuery::new("10.1.2.3"), &row));
        assert!(!row_matches(&VmQuery::new("10.1.2.4"), &row));
        assert!(!row_matches(&VmQuery::new("web-0"), &row));
        assert!(!row_matches(&VmQuery::new("web-01x.corp"), &row));
    }

    fn named(name: &str) -> VmRow {
        serde_json::from_value(serde_json::json!({ "VmIdentifier": "s.vm-7", "VmName": name }))
            .unwrap()
    }

    #[test]
    fn a_non_ascii_name_matches_whatever_its_case() {
        let row = named("Ärzte-Öffentlich-01");
        for query in [
            "ärzte-öffentlich-01",
            "ÄRZTE-ÖFFENTLICH-01",
            "Ärzte-öffentlich-01.praxis.example",
        ] {
            assert!(row_matches(&VmQuery::new(query), &row), "{query}");
        }
        assert!(!row_matches(&VmQuery::new("arzte-offentlich-01"), &row));
        // A final capital sigma lowercases to ς, as the name's own lowercase has it.
        let greek = named("ΚΌΣΜΟΣ");
        assert!(row_matches(&VmQuery::new("κόσμος"), &greek));
        assert!(row_matches(&VmQuery::new("ΚΌΣΜΟΣ"), &greek));
        assert!(!row_matches(&VmQuery::new("κόσμ"), &greek));
        // The Kelvin sign lowercases to an ASCII k.
        assert!(row_matches(
            &VmQuery::new("kube-01"),
            &named("\u{212A}ube-01")
        ));
        assert!(row_matches(
            &VmQuery::new("\u{212A}UBE-01"),
            &named("kube-01")
        ));
    }

    #[test]
    fn queries_are_checked_before_anything_is_sent() {
        assert!(matches!(
            validate_query("  "),
            Err(RewindError::InvalidInput { field: "vm", .. })
        ));
        assert!(matches!(
            validate_query("a\nb"),
            Err(RewindError::InvalidInput { field: "vm", .. })
        ));
        assert_eq!(validate_query(" web-01 ").unwrap(), "web-01");
    }
}
