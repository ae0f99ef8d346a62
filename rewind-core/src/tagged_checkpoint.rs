//! The tagged checkpoint: a named bookmark in a VPG's journal, whose name, the tag, carries the agent
//! and its intent: `ai:<agent> | <action> | vm=<vm> | change=<change id> | <UTC time>`. Here are the
//! tag's parts, building a tag after checking each part, reading one back, and the tag list of a VM
//! (every tagged checkpoint of each of its VPGs, or those of one change).

use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use crate::error::RewindError;
use crate::protection::{Protection, VpgProtection};
use crate::vm::VmRef;
use crate::way_back::{JournaledTag, KeptSet, TagState, VpgHistory};
use crate::zvm::{Site, ZvmClient};

/// The longest agent name in a tag.
pub const MAX_AGENT: usize = 30;
/// The longest action in a tag.
pub const MAX_ACTION: usize = 60;
/// The longest VM name in a tag (vSphere's own limit).
pub const MAX_VM: usize = 80;
/// The longest change id in a tag.
pub const MAX_CHANGE_ID: usize = 40;

/// The parts of a tag, as built or as read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TagParts {
    /// The agent.
    pub agent: String,
    /// The action.
    pub action: String,
    /// The VM's name.
    pub vm: String,
    /// The change id.
    pub change_id: String,
    /// When the guard began (UTC), as written in the tag.
    pub time: String,
}

/// Checks one part of a tag: not empty, no `|`, no control character, bounded length.
pub fn check_part<'a>(
    field: &'static str,
    value: &'a str,
    max: usize,
) -> Result<&'a str, RewindError> {
    let v = value.trim();
    let problem = if v.is_empty() {
        Some("it is empty".to_string())
    } else if v.contains('|') {
        Some("it contains `|`, which separates the parts of a tag; leave it out or use another character".to_string())
    } else if v.chars().any(char::is_control) {
        Some(
            "it contains a control character (such as a newline or tab); give it on one line"
                .to_string(),
        )
    } else if v.chars().count() > max {
        Some(format!(
            "it is {} characters long and a tag allows {max}; shorten it",
            v.chars().count()
        ))
    } else {
        None
    };
    match problem {
        Some(problem) => Err(RewindError::InvalidInput { field, problem }),
        None => Ok(v),
    }
}

/// Builds the tag `ai:<agent> | <action> | vm=<vm> | change=<id> | <utc>` after checking every part.
pub fn build_tag(
    agent: &str,
    action: &str,
    vm: &str,
    change_id: &str,
    at: DateTime<Utc>,
) -> Result<String, RewindError> {
    let agent = check_part("agent", agent, MAX_AGENT)?;
    let action = check_part("action", action, MAX_ACTION)?;
    let vm = check_part("vm", vm, MAX_VM)?;
    let change_id = check_part("change_id", change_id, MAX_CHANGE_ID)?;
    Ok(format!(
        "ai:{agent} | {action} | vm={vm} | change={change_id} | {}",
        at.to_rfc3339_opts(SecondsFormat::Secs, true)
    ))
}

/// Reads a tag written by [`build_tag`]; `None` for any other tag.
pub fn parse_tag(tag: &str) -> Option<TagParts> {
    let parts: Vec<&str> = tag.split(" | ").collect();
    let [agent, action, vm, change, time] = parts.as_slice() else {
        return None;
    };
    Some(TagParts {
        agent: agent.strip_prefix("ai:")?.to_string(),
        action: action.to_string(),
        vm: vm.strip_prefix("vm=")?.to_string(),
        change_id: change.strip_prefix("change=")?.to_string(),
        time: time.to_string(),
    })
}

/// One tagged checkpoint of a VPG.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TaggedCheckpoint {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// Its time (the ZVM's clock).
    pub timestamp: Option<DateTime<Utc>>,
    /// Its tag.
    pub tag: String,
    /// The tag's parts when rewind wrote it.
    pub parts: Option<TagParts>,
    /// Whether it can still be recovered from, and until when; or what became of it.
    #[serde(flatten)]
    pub state: TagState,
    /// The retention set a keep copied its checkpoint into, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<KeptSet>,
}

impl TaggedCheckpoint {
    /// Whether this checkpoint belongs to `change`: a change id its tag names, or the tag exactly (a
    /// tag that rewind did not write has no change id, so the whole tag is how a human names it).
    pub fn is_of_change(&self, change: &str) -> bool {
        let wanted = change.trim();
        self.tag.trim() == wanted || self.parts.as_ref().is_some_and(|p| p.change_id == wanted)
    }
}

/// The tagged checkpoints of one VPG.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VpgTags {
    /// The VPG.
    pub vpg_id: String,
    /// Its name.
    pub vpg_name: String,
    /// The configured site whose ZVM was asked.
    pub site: String,
    /// Its tagged checkpoints, oldest first.
    pub tags: Vec<TaggedCheckpoint>,
    /// Why the VPG's checkpoints could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The time of the oldest checkpoint its journal holds: no point before it can be recovered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_reaches_back_to: Option<DateTime<Utc>>,
    /// When the list was read, on the ZVM's clock where it said (its journal's earliest checkpoint
    /// plus the history it holds), else this machine's: how long each tag has left counts from it.
    pub read_at: DateTime<Utc>,
}

/// The tagged checkpoints of a VM across all its VPGs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TagList {
    /// The VM.
    pub vm: VmRef,
    /// The change id asked for, if any.
    pub change_id: Option<String>,
    /// Every VPG of the VM.
    pub vpgs: Vec<VpgTags>,
}

impl TagList {
    /// The time of the newest tag listed, in any VPG.
    pub fn newest(&self) -> Option<DateTime<Utc>> {
        self.vpgs
            .iter()
            .flat_map(|v| v.tags.iter())
            .filter_map(|t| t.timestamp)
            .max()
    }

    /// One line for humans: how many tagged checkpoints (of the change, when one was asked for) in how
    /// many of the VM's VPGs, and which VPGs could not be read.
    pub fn headline(&self) -> String {
        let listed = |v: &&VpgTags| v.tags.iter().filter(|t| t.state.is_recoverable()).count();
        let count: usize = self.vpgs.iter().map(|v| listed(&v)).sum();
        let with = self.vpgs.iter().filter(|v| listed(v) > 0).count();
        let of = self
            .change_id
            .as_deref()
            .map(|c| format!(" of change {c}"))
            .unwrap_or_default();
        let mut line = format!(
            "{} ({}): {count} tagged checkpoint(s){of} in {with} of {} VPG(s)",
            self.vm.name,
            self.vm.id,
            self.vpgs.len()
        );
        let unread: Vec<&str> = self
            .vpgs
            .iter()
            .filter(|v| v.error.is_some())
            .map(|v| v.vpg_name.as_str())
            .collect();
        let gone = self
            .vpgs
            .iter()
            .flat_map(|v| &v.tags)
            .filter(|t| !t.state.is_recoverable())
            .count();
        if gone > 0 {
            line.push_str(&format!(
                "; {gone} more journaled by a guard but not recoverable from (each says why)"
            ));
        }
        if !unread.is_empty() {
            line.push_str(&format!("; could not read {}", unread.join(", ")));
        }
        line
    }

    /// The headline, then each VPG with its tagged checkpoints.
    pub fn summary(&self) -> String {
        let mut out = self.headline();
        for v in &self.vpgs {
            out.push_str(&format!("\n  {} ({} tag(s))", v.vpg_name, v.tags.len()));
            if let Some(e) = &v.error {
                out.push_str(&format!(": ERROR {e}"));
            }
            for t in &v.tags {
                let when = t.timestamp.map(|t| t.to_rfc3339()).unwrap_or_default();
                out.push_str(&format!(
                    "\n    {} {} {}: {}",
                    t.checkpoint_id,
                    when,
                    t.tag,
                    t.state.describe(v.read_at)
                ));
            }
        }
        out
    }
}

/// Lists the tagged checkpoints of the VM of `protection`, keeping only those of `change_id` (a change
/// id or a tag exactly) when given, each with its state: the VPG's listed tags with how long each
/// lasts, and the tags that guards journaled (`journaled`) but the VPG no longer lists, with what
/// became of them.
pub(crate) async fn list_tags(
    sites: &[Arc<Site>],
    protection: &Protection,
    change_id: Option<&str>,
    journaled: &[JournaledTag],
) -> TagList {
    let of_change = |tag: &str| {
        change_id.is_none_or(|id| {
            let wanted = id.trim();
            tag.trim() == wanted || parse_tag(tag).is_some_and(|p| p.change_id == wanted)
        })
    };
    let listed = futures::future::join_all(protection.vpgs.iter().map(|v| async move {
        let mine: Vec<&JournaledTag> = journaled
            .iter()
            .filter(|j| j.vpg_id == v.vpg_id && of_change(&j.tag))
            .collect();
        let mut out = match sites.iter().find(|c| c.name() == v.zvm_site) {
            Some(site) => vpg_tags(site.client(), v, &mine, &of_change).await,
            None => VpgTags {
                vpg_id: v.vpg_id.clone(),
                vpg_name: v.vpg_name.clone(),
                site: v.zvm_site.clone(),
                tags: Vec::new(),
                error: Some(format!("the site {} is not configured", v.zvm_site)),
                journal_reaches_back_to: None,
                read_at: Utc::now(),
            },
        };
        if let Some(e) = out.error.clone() {
            let now = Utc::now();
            out.tags = mine
                .iter()
                .map(|j| journaled_checkpoint(j, TagState::unknown(j, &e, now)))
                .collect();
        }
        out
    }))
    .await;
    let gone = gone_vpgs(sites, protection, journaled, &of_change).await;
    TagList {
        vm: protection.vm.clone(),
        change_id: change_id.map(|c| c.trim().to_string()),
        vpgs: listed.into_iter().chain(gone).collect(),
    }
}

/// The VPGs guards tagged that the VM is no longer in, each with its journaled tags (of the change
/// asked) and what became of the VPG: a tag is never dropped from the list because its VPG went.
async fn gone_vpgs(
    sites: &[Arc<Site>],
    protection: &Protection,
    journaled: &[JournaledTag],
    of_change: &impl Fn(&str) -> bool,
) -> Vec<VpgTags> {
    let mut gone: Vec<(&JournaledTag, Vec<&JournaledTag>)> = Vec::new();
    let elsewhere = journaled
        .iter()
        .filter(|j| of_change(&j.tag) && !protection.vpgs.iter().any(|v| v.vpg_id == j.vpg_id));
    for j in elsewhere {
        match gone.iter_mut().find(|(first, _)| first.vpg_id == j.vpg_id) {
            Some((_, tags)) => tags.push(j),
            None => gone.push((j, vec![j])),
        }
    }
    let mut out = Vec::with_capacity(gone.len());
    for (first, tags) in gone {
        let now = Utc::now();
        let why = why_gone(sites, protection, first).await;
        let state = |j: &JournaledTag| match &why {
            Ok(why) => TagState::gone(j, why, now),
            Err(why) => TagState::unknown(j, why, now),
        };
        out.push(VpgTags {
            vpg_id: first.vpg_id.clone(),
            vpg_name: first.vpg_name.clone(),
            site: sites
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(" and "),
            tags: tags
                .iter()
                .map(|j| journaled_checkpoint(j, state(j)))
                .collect(),
            error: None,
            journal_reaches_back_to: None,
            read_at: now,
        });
    }
    out
}

/// Why the VM is no longer in the VPG of `tag`, from every site's VPG listing; `Err` when that
/// cannot be told (a site was not asked, or could not list its VPGs).
async fn why_gone(
    sites: &[Arc<Site>],
    protection: &Protection,
    tag: &JournaledTag,
) -> Result<String, String> {
    let (vm, vpg) = (&protection.vm.name, &tag.vpg_name);
    if protection.asked.is_some() {
        return Err(format!(
            "{vm} is no longer in VPG {vpg}, and not every configured site was asked where it went"
        ));
    }
    let listings = futures::future::join_all(sites.iter().map(|s| s.client().vpgs())).await;
    let mut listed = false;
    for listing in listings {
        let vpgs = listing.map_err(|e| format!("{vm} is no longer in VPG {vpg}: {e}"))?;
        listed |= vpgs
            .iter()
            .any(|v| v.vpg_identifier.as_deref() == Some(tag.vpg_id.as_str()));
    }
    Ok(match listed {
        true => format!(
            "{vm} was taken out of VPG {vpg} after the guard; the VPG keeps its journal, but Zerto recovers only the VMs it protects"
        ),
        false => format!(
            "VPG {vpg} was deleted in Zerto after the guard, with its journal and this checkpoint"
        ),
    })
}

/// One VPG's tags: those it lists, with how long each lasts, then those of `journaled` it does not
/// list, with what became of them.
async fn vpg_tags(
    client: &ZvmClient,
    v: &VpgProtection,
    journaled: &[&JournaledTag],
    of_change: &impl Fn(&str) -> bool,
) -> VpgTags {
    let mut out = VpgTags {
        vpg_id: v.vpg_id.clone(),
        vpg_name: v.vpg_name.clone(),
        site: v.zvm_site.clone(),
        tags: Vec::new(),
        error: None,
        journal_reaches_back_to: None,
        read_at: Utc::now(),
    };
    let (listed, history) = tokio::join!(
        client.checkpoints(&v.vpg_id, None),
        client.vpg_history(&v.vpg_id)
    );
    let listed = match listed {
        Ok(listed) => listed,
        Err(e) => {
            out.error = Some(e.to_string());
            return out;
        }
    };
    let history = history.ok();
    out.journal_reaches_back_to = history.as_ref().and_then(|h| h.earliest);
    if let Some(now) = history.as_ref().and_then(VpgHistory::zvm_now) {
        out.read_at = now;
    }
    let mut tags: Vec<TaggedCheckpoint> = listed
        .into_iter()
        .filter_map(|c| {
            let tag = c.tag.filter(|t| !t.is_empty() && of_change(t))?;
            let checkpoint_id = c.checkpoint_identifier.unwrap_or_default();
            let kept = journaled
                .iter()
                .find(|j| j.checkpoint_id == checkpoint_id)
                .and_then(|j| j.kept.clone());
            Some(TaggedCheckpoint {
                checkpoint_id,
                timestamp: c.time_stamp,
                parts: parse_tag(&tag),
                state: TagState::listed(c.time_stamp, history.as_ref()),
                kept,
                tag,
            })
        })
        .collect();
    let unlisted: Vec<&JournaledTag> = journaled
        .iter()
        .copied()
        .filter(|j| {
            !tags
                .iter()
                .any(|t| t.checkpoint_id == j.checkpoint_id || t.tag == j.tag)
        })
        .collect();
    tags.extend(unlisted_tags(client, &v.vpg_id, &unlisted, history.as_ref()).await);
    tags.sort_by_key(|t| t.timestamp);
    out.tags = tags;
    out
}

/// What became of the journaled tags a VPG no longer lists, from its history and its events.
async fn unlisted_tags(
    client: &ZvmClient,
    vpg_id: &str,
    unlisted: &[&JournaledTag],
    history: Option<&VpgHistory>,
) -> Vec<TaggedCheckpoint> {
    let Some(since) = unlisted.iter().map(|j| j.time()).min() else {
        return Vec::new();
    };
    let now = Utc::now();
    let Some(history) = history else {
        let why = "the VPG lists it no longer, and how much history it keeps could not be read";
        return unlisted
            .iter()
            .map(|j| journaled_checkpoint(j, TagState::unknown(j, why, now)))
            .collect();
    };
    let wipes = client.wipes(vpg_id, since).await;
    unlisted
        .iter()
        .map(|j| journaled_checkpoint(j, TagState::unlisted(j, history, &wipes, now)))
        .collect()
}

/// A journaled tag, as a tag list shows it.
fn journaled_checkpoint(j: &JournaledTag, state: TagState) -> TaggedCheckpoint {
    TaggedCheckpoint {
        checkpoint_id: j.checkpoint_id.clone(),
        timestamp: j.checkpoint_time,
        tag: j.tag.clone(),
        parts: parse_tag(&j.tag),
        state,
        kept: j.kept.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 29, 12, 34, 56).unwrap()
    }

    #[test]
    fn tag_has_the_documented_shape_and_parses_back() {
        let tag = build_tag("claude-code", "upgrade nginx", "web-01", "chg-42", at()).unwrap();
        assert_eq!(
            tag,
            "ai:claude-code | upgrade nginx | vm=web-01 | change=chg-42 | 2026-11-29T12:34:56Z"
        );
        let p = parse_tag(&tag).unwrap();
        assert_eq!(p.agent, "claude-code");
        assert_eq!(p.action, "upgrade nginx");
        assert_eq!(p.vm, "web-01");
        assert_eq!(p.change_id, "chg-42");
        assert_eq!(p.time, "2026-11-29T12:34:56Z");
        assert!(parse_tag("nightly before patch").is_none());
    }

    #[test]
    fn a_pipe_in_any_part_is_rejected_naming_the_field() {
        for (field, args) in [
            ("agent", ["a|b", "x", "vm", "c"]),
            ("action", ["a", "x | y", "vm", "c"]),
            ("vm", ["a", "x", "v|m", "c"]),
            ("change_id", ["a", "x", "vm", "c|d"]),
        ] {
            let err = build_tag(args[0], args[1], args[2], args[3], at()).unwrap_err();
            match &err {
                RewindError::InvalidInput { field: f, problem } => {
                    assert_eq!(*f, field);
                    assert!(problem.contains('|'), "{problem}");
                }
                other => panic!("unexpected {other:?}"),
            }
            assert!(err.to_string().contains(field));
        }
    }

    #[test]
    fn control_characters_empty_parts_and_long_parts_are_rejected() {
        assert!(matches!(
            build_tag("a", "line\nbreak", "vm", "c", at()),
            Err(RewindError::InvalidInput {
                field: "action",
                ..
            })
        ));
        assert!(matches!(
            build_tag("a", "x", "vm", "\t", at()),
            Err(RewindError::InvalidInput {
                field: "change_id",
                ..
            })
        ));
        assert!(matches!(
            build_tag(" ", "x", "vm", "c", at()),
            Err(RewindError::InvalidInput { field: "agent", .. })
        ));
        let long = "x".repeat(MAX_ACTION + 1);
        let err = build_tag("a", &long, "vm", "c", at()).unwrap_err();
        assert!(
            err.to_string().contains(&format!("{}", MAX_ACTION)),
            "{err}"
        );
        let longest = build_tag(
            &"a".repeat(MAX_AGENT),
            &"b".repeat(MAX_ACTION),
            &"c".repeat(MAX_VM),
            &"d".repeat(MAX_CHANGE_ID),
            at(),
        )
        .unwrap();
        assert!(longest.chars().count() <= 255, "{}", longest.len());
    }
}
