//! Fault rules and their seeded decisions.
//!
//! A rule matches requests by method, path pattern and (optionally) site, fires with a
//! probability, at most `count` times if a count is given, and does one thing: answer with a
//! status and body instead of the handler, add latency, let the handler run and then drop the
//! connection without an answer, keep it silent, or cut its answer off halfway, revoke every token
//! of the site, or have another client insert a tagged checkpoint into the VPG first. A rule may
//! wait for another: it matches nothing until that one has fired.
//!
//! **Decisions do not depend on how concurrent requests interleave.** A shared random stream
//! would hand its numbers out in arrival order, so two runs of the same concurrent load would see
//! different faults. Instead each decision is a hash of the seed, the rule, the request's identity
//! (site, method, path and query) and that identity's own occurrence number under that rule (the
//! 1st, 2nd, ... request with this identity). Requests with different identities never affect each
//! other's decisions; only requests with the same identity share a counter, and they are
//! indistinguishable. The one exception is `count`: when more requests would fire than the count
//! allows, which of them fire depends on their arrival order.
//!
//! **Path patterns** are `/`-separated and matched case-insensitively against the request's path
//! (never its query): `*` matches exactly one segment, `**` any number of segments (zero
//! included), and `*` inside a segment any run of characters in it (`*.json`). So
//! `/v1/vpgs/*/checkpoints` matches every VPG's checkpoints, `/v1/**` every `/v1` call, and
//! `/auth/**` the token endpoint.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use super::ids::SiteRole;

/// What a rule does when it fires.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all_fields = "PascalCase")]
pub enum FaultAction {
    /// Answers with this status, body and headers; the handler does not run.
    Respond {
        /// The HTTP status.
        status: u16,
        /// The body: a JSON value (a string is sent as text), or the default for the status.
        body: Option<serde_json::Value>,
        /// Extra headers, such as `Retry-After`.
        headers: Vec<(String, String)>,
    },
    /// Waits this long (real time) before the request goes on.
    Latency {
        /// Milliseconds.
        millis: u64,
    },
    /// The handler runs and its effect stays; the connection is then closed without an answer.
    LoseResponse,
    /// The handler runs and its effect stays; then no answer comes and the connection stays open
    /// and silent, so the client's own timeout ends the wait (at most
    /// [`crate::decisions::WITHHOLD_FOR`], after which the connection is closed).
    WithholdResponse,
    /// The handler runs and its effect stays; its status, headers and the first half of its body
    /// are sent, with the whole body's length announced, then the connection drops.
    CutResponse,
    /// Every access and refresh token of the site that received the request is revoked; the
    /// request then goes on (and meets a 401 if it carried one of them).
    RevokeTokens,
    /// Another client inserts a tagged checkpoint into the same VPG just before the request runs;
    /// the request then goes on (and its insert meets the back-to-back rule). It acts on tagged
    /// checkpoint inserts only, so a rule with it matches nothing else.
    InsertAsAnotherClient,
}

impl FaultAction {
    /// Which kind of action it is.
    pub fn kind(&self) -> FaultKind {
        match self {
            FaultAction::Respond { .. } => FaultKind::Respond,
            FaultAction::Latency { .. } => FaultKind::Latency,
            FaultAction::LoseResponse => FaultKind::LoseResponse,
            FaultAction::WithholdResponse => FaultKind::WithholdResponse,
            FaultAction::CutResponse => FaultKind::CutResponse,
            FaultAction::RevokeTokens => FaultKind::RevokeTokens,
            FaultAction::InsertAsAnotherClient => FaultKind::InsertAsAnotherClient,
        }
    }

    /// Whether the action can act on this request at all: another client's insert needs an insert
    /// to go before (`POST /v1/vpgs/{id}/checkpoints`); every other action acts on any request.
    fn acts_on(&self, method: &str, path: &str) -> bool {
        match self {
            FaultAction::InsertAsAnotherClient => inserted_vpg(method, path).is_some(),
            _ => true,
        }
    }
}

/// The VPG identifier of a tagged checkpoint insert, `POST /v1/vpgs/{id}/checkpoints` (matched
/// case-insensitively, as the router matches `/v1` paths); `None` for any other request.
pub fn inserted_vpg<'a>(method: &str, path: &'a str) -> Option<&'a str> {
    if !method.eq_ignore_ascii_case("POST") {
        return None;
    }
    let mut segments = path.trim_start_matches('/').split('/');
    let v1 = segments.next()?;
    let vpgs = segments.next()?;
    let vpg = segments.next()?;
    let checkpoints = segments.next()?;
    let whole = segments.next().is_none();
    (whole
        && v1.eq_ignore_ascii_case("v1")
        && vpgs.eq_ignore_ascii_case("vpgs")
        && checkpoints.eq_ignore_ascii_case("checkpoints")
        && !vpg.is_empty())
    .then_some(vpg)
}

/// The kinds of fault action, named as rules and the call log spell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FaultKind {
    /// See [`FaultAction::Respond`].
    Respond,
    /// See [`FaultAction::Latency`].
    Latency,
    /// See [`FaultAction::LoseResponse`].
    LoseResponse,
    /// See [`FaultAction::WithholdResponse`].
    WithholdResponse,
    /// See [`FaultAction::CutResponse`].
    CutResponse,
    /// See [`FaultAction::RevokeTokens`].
    RevokeTokens,
    /// See [`FaultAction::InsertAsAnotherClient`].
    InsertAsAnotherClient,
}

impl FaultKind {
    /// Every kind, in the order the control API lists them.
    pub const ALL: [FaultKind; 7] = [
        FaultKind::Respond,
        FaultKind::Latency,
        FaultKind::LoseResponse,
        FaultKind::WithholdResponse,
        FaultKind::CutResponse,
        FaultKind::RevokeTokens,
        FaultKind::InsertAsAnotherClient,
    ];

    /// The name, as rules and the call log spell it: `Respond`, `Latency`, `LoseResponse`, ...
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Respond => "Respond",
            FaultKind::Latency => "Latency",
            FaultKind::LoseResponse => "LoseResponse",
            FaultKind::WithholdResponse => "WithholdResponse",
            FaultKind::CutResponse => "CutResponse",
            FaultKind::RevokeTokens => "RevokeTokens",
            FaultKind::InsertAsAnotherClient => "InsertAsAnotherClient",
        }
    }
}

/// A path pattern (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern {
    text: String,
    segments: Vec<String>,
}

/// A pattern that cannot be one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a path pattern: start it with '/', e.g. /v1/vpgs/*/checkpoints ('*' is one \
     segment, '**' any number of segments)"
)]
pub struct PatternError(pub String);

impl Serialize for PathPattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for PathPattern {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        PathPattern::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl PathPattern {
    /// Parses a pattern.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PatternError(text.to_owned()));
        };
        Ok(PathPattern {
            text: text.to_owned(),
            segments: rest.split('/').map(str::to_ascii_lowercase).collect(),
        })
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `path` (no query) matches.
    pub fn matches(&self, path: &str) -> bool {
        let lowered = path.to_ascii_lowercase();
        let path: Vec<&str> = lowered.trim_start_matches('/').split('/').collect();
        let pattern: Vec<&str> = self.segments.iter().map(String::as_str).collect();
        segments_match(&pattern, &path)
    }
}

fn segments_match(pattern: &[&str], path: &[&str]) -> bool {
    wildcard_match(
        pattern,
        path,
        |segment| *segment == "**",
        |segment, text| glob(segment.as_bytes(), text.as_bytes()),
    )
}

/// `*` matches any run of bytes; everything else matches itself.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    wildcard_match(pattern, text, |b| *b == b'*', |b, t| b == t)
}

/// Whether `text` matches `pattern`, where a star matches any run of items (none included) and
/// every other pattern item matches one item for which `matches` holds. A request's path decides
/// the work while the world is locked, so this is the greedy matcher that only ever goes back to
/// the last star, in at most `pattern.len() × text.len()` steps, rather than a recursion that tries
/// every split and takes exponential time on a pattern of many stars.
fn wildcard_match<P, T>(
    pattern: &[P],
    text: &[T],
    is_star: impl Fn(&P) -> bool,
    matches: impl Fn(&P, &T) -> bool,
) -> bool {
    let (mut p, mut t) = (0, 0);
    // After the last star seen: where the pattern goes on, and the first text item not yet given
    // to the star.
    let mut last_star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(item) if is_star(item) => {
                p += 1;
                last_star = Some((p, t));
            }
            Some(item) if matches(item, &text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match last_star {
                // The star takes one more item and the rest of the pattern is tried after it.
                Some((after_star, taken)) => {
                    p = after_star;
                    t = taken + 1;
                    last_star = Some((after_star, t));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(is_star)
}

/// One rule.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FaultRule {
    /// Its identifier, from 1.
    pub id: u64,
    /// The rule as it was asked for; flattened, so a saved rule keeps its keys side by side.
    #[serde(flatten)]
    pub asked: NewRule,
    /// Matching requests so far.
    pub matched: u64,
    /// Firings so far.
    pub fired: u64,
    /// Whether the rule it waits for ([`NewRule::after`]) has fired; it stays armed even if that
    /// rule is removed later. Always true for a rule that waits for none.
    pub armed: bool,
    /// Per request identity: how many matching requests with it this rule has seen.
    pub occurrences: HashMap<String, u64>,
}

/// A rule as it is asked for, before it gets its identifier and its counts.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct NewRule {
    /// An HTTP method (uppercase), or `None` for any.
    pub method: Option<String>,
    /// The path pattern.
    pub path: PathPattern,
    /// Only requests to this site, or `None` for both.
    pub site: Option<SiteRole>,
    /// The chance it fires on a matching request, 0..=1.
    pub probability: f64,
    /// At most this many firings, if given.
    pub count: Option<u64>,
    /// The identifier of an older rule this one waits for: it matches nothing until that one has
    /// fired (a lost mount, then the sessions that cannot be read).
    pub after: Option<u64>,
    /// What it does.
    pub action: FaultAction,
    /// When it is forgotten (simulated time), if it is: a fault that lasts a while.
    #[serde(default)]
    pub expires: Option<crate::world::clock::SimTime>,
}

impl NewRule {
    fn applies_to(&self, site: SiteRole, method: &str, path: &str) -> bool {
        self.site.is_none_or(|s| s == site)
            && self
                .method
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && self.path.matches(path)
            && self.action.acts_on(method, path)
    }
}

/// A rule that fired on a request, for the call log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FaultNote {
    /// The rule's identifier.
    pub rule: u64,
    /// Its action's kind.
    pub action: FaultKind,
}

/// What the rules decided for one request.
#[derive(Debug, Clone, Default)]
pub struct Decision {
    /// The latency of every firing `Latency` rule, added up (ms).
    pub latency_ms: u64,
    /// The first firing rule of another kind, if any.
    pub action: Option<FaultAction>,
    /// Every rule that fired.
    pub notes: Vec<FaultNote>,
}

/// Every rule, and the seed of their decisions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Faults {
    seed: u64,
    /// The rules, oldest first.
    pub rules: Vec<FaultRule>,
    next_id: u64,
}

impl Faults {
    /// No rules.
    pub fn new(seed: u64) -> Self {
        Faults {
            seed,
            rules: Vec::new(),
            next_id: 1,
        }
    }

    /// Forgets the rules whose time expired at `now`.
    pub fn forget_expired(&mut self, now: crate::world::clock::SimTime) {
        self.rules
            .retain(|r| r.asked.expires.is_none_or(|at| at > now));
    }

    /// Adds a rule; returns its identifier.
    pub fn add(&mut self, rule: NewRule) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.rules.push(FaultRule {
            id,
            armed: rule.after.is_none(),
            asked: rule,
            matched: 0,
            fired: 0,
            occurrences: HashMap::new(),
        });
        id
    }

    /// Whether a rule with this identifier exists (what [`NewRule::after`] may name).
    pub fn contains(&self, id: u64) -> bool {
        self.rules.iter().any(|r| r.id == id)
    }

    /// Removes one rule; returns whether it existed.
    pub fn remove(&mut self, id: u64) -> bool {
        let before = self.rules.len();
        self.rules.retain(|r| r.id != id);
        self.rules.len() != before
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// Decides what happens to one request. Latency rules that fire add up; of the other rules,
    /// the first (oldest) that fires acts. Every matching rule counts the request, fired or not,
    /// so each rule's decisions stay independent of the others. A rule that waits for another is
    /// armed by that one's firing on an earlier request, never on this one.
    pub fn decide(
        &mut self,
        site: SiteRole,
        method: &str,
        path: &str,
        query: Option<&str>,
    ) -> Decision {
        let identity = format!(
            "{}|{}|{}|{}",
            site.index(),
            method.to_ascii_uppercase(),
            path.to_ascii_lowercase(),
            query.unwrap_or("")
        );
        let identity_hash = fnv1a(identity.as_bytes());
        let fired_before: Vec<u64> = self
            .rules
            .iter()
            .filter(|r| r.fired > 0)
            .map(|r| r.id)
            .collect();
        let mut decision = Decision::default();
        for rule in &mut self.rules {
            if !rule.armed {
                rule.armed = rule.asked.after.is_some_and(|a| fired_before.contains(&a));
            }
            if !rule.armed || !rule.asked.applies_to(site, method, path) {
                continue;
            }
            rule.matched += 1;
            let occurrence = rule.occurrences.entry(identity.clone()).or_insert(0);
            *occurrence += 1;
            let draw = unit(mix(&[self.seed, rule.id, identity_hash, *occurrence]));
            let exhausted = rule.asked.count.is_some_and(|count| rule.fired >= count);
            if draw >= rule.asked.probability || exhausted {
                continue;
            }
            match &rule.asked.action {
                FaultAction::Latency { millis } => decision.latency_ms += millis,
                _ if decision.action.is_some() => continue,
                other => decision.action = Some(other.clone()),
            }
            rule.fired += 1;
            decision.notes.push(FaultNote {
                rule: rule.id,
                action: rule.asked.action.kind(),
            });
        }
        decision
    }
}

/// FNV-1a, 64 bits: a stable hash of the request identity (std's hasher may change between
/// releases, and decisions must be the same in every build).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// SplitMix64's finaliser: spreads every input bit over the output.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn mix(parts: &[u64]) -> u64 {
    parts.iter().fold(0, |h, &part| splitmix(h ^ part))
}

/// A draw in [0, 1) from 53 bits of the hash.
fn unit(hash: u64) -> f64 {
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> PathPattern {
        PathPattern::parse(text).unwrap()
    }

    #[test]
    fn patterns_match_segments_wildcards_and_any_depth() {
        let checkpoints = pattern("/v1/vpgs/*/checkpoints");
        assert!(checkpoints.matches("/v1/vpgs/abc/checkpoints"));
        assert!(checkpoints.matches("/v1/VPGs/ABC/Checkpoints"));
        assert!(!checkpoints.matches("/v1/vpgs/abc/checkpoints/stats"));
        assert!(!checkpoints.matches("/v1/vpgs/checkpoints"));
        let v1 = pattern("/v1/**");
        assert!(v1.matches("/v1"));
        assert!(v1.matches("/v1/tasks/x"));
        assert!(!v1.matches("/auth/realms/zerto"));
        let middle = pattern("/v1/**/stats");
        assert!(middle.matches("/v1/vpgs/a/checkpoints/stats"));
        assert!(pattern("/v1/flrs/*/downloads/*").matches("/v1/flrs/s.x/downloads/ab"));
        assert!(pattern("/v1/vpgs/*-dr").matches("/v1/vpgs/web-dr"));
        assert!(!pattern("/v1/vpgs/*-dr").matches("/v1/vpgs/web-local"));
        assert!(PathPattern::parse("v1/vpgs").is_err());
    }

    /// The matcher as a plain recursion over every split: slow, obviously right.
    fn glob_by_recursion(pattern: &[u8], text: &[u8]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some((b'*', rest)) => {
                (0..=text.len()).any(|skip| glob_by_recursion(rest, &text[skip..]))
            }
            Some((c, rest)) => text
                .split_first()
                .is_some_and(|(t, text_rest)| t == c && glob_by_recursion(rest, text_rest)),
        }
    }

    #[test]
    fn the_greedy_matcher_agrees_with_trying_every_split() {
        let words = |alphabet: &[u8], longest: usize| {
            let mut all: Vec<Vec<u8>> = vec![Vec::new()];
            let mut last = all.clone();
            for _ in 0..longest {
                last = last
                    .iter()
                    .flat_map(|w| {
                        alphabet.iter().map(move |&c| {
                            let mut next = w.clone();
                            next.push(c);
                            next
                        })
                    })
                    .collect();
                all.extend(last.iter().cloned());
            }
            all
        };
        for pattern in words(b"a*b", 5) {
            for text in words(b"ab", 5) {
                assert_eq!(
                    glob(&pattern, &text),
                    glob_by_recursion(&pattern, &text),
                    "{:?} against {:?}",
                    String::from_utf8_lossy(&pattern),
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }

    #[test]
    fn a_pattern_of_many_stars_is_decided_without_trying_every_split() {
        // Tried split by split, each of these takes longer than any test run: C(60, 16) splits.
        let stars = format!("/v1/{}b", "*a".repeat(16));
        assert!(!pattern(&stars).matches(&format!("/v1/{}", "a".repeat(60))));
        assert!(pattern(&stars).matches(&format!("/v1/{}b", "a".repeat(60))));
        let deep = format!("/v1{}/stats", "/**".repeat(16));
        let path = format!("/v1{}", "/x".repeat(60));
        assert!(!pattern(&deep).matches(&path));
        assert!(pattern(&deep).matches(&format!("{path}/stats")));
    }

    fn rule(probability: f64, count: Option<u64>, action: FaultAction) -> NewRule {
        NewRule {
            method: Some("GET".to_owned()),
            path: pattern("/v1/**"),
            site: None,
            probability,
            count,
            after: None,
            action,
            expires: None,
        }
    }

    #[test]
    fn decisions_depend_on_identity_and_occurrence_not_on_order() {
        let mut a = Faults::new(7);
        let mut b = Faults::new(7);
        a.add(rule(0.5, None, FaultAction::LoseResponse));
        b.add(rule(0.5, None, FaultAction::LoseResponse));
        let paths: Vec<String> = (0..64).map(|i| format!("/v1/vpgs/{i}")).collect();
        let decide = |faults: &mut Faults, path: &str| {
            faults
                .decide(SiteRole::Local, "GET", path, None)
                .action
                .is_some()
        };
        let forward: Vec<bool> = paths.iter().map(|p| decide(&mut a, p)).collect();
        let mut backward: Vec<bool> = paths.iter().rev().map(|p| decide(&mut b, p)).collect();
        backward.reverse();
        assert_eq!(forward, backward);
        let fired = forward.iter().filter(|&&f| f).count();
        assert!((16..=48).contains(&fired), "about half fire: {fired}");
        let mut other_seed = Faults::new(8);
        other_seed.add(rule(0.5, None, FaultAction::LoseResponse));
        let other: Vec<bool> = paths.iter().map(|p| decide(&mut other_seed, p)).collect();
        assert_ne!(forward, other);
    }

    #[test]
    fn a_count_caps_the_firings_and_latency_adds_to_another_action() {
        let mut faults = Faults::new(1);
        faults.add(rule(1.0, Some(2), FaultAction::RevokeTokens));
        faults.add(rule(1.0, None, FaultAction::Latency { millis: 5 }));
        faults.add(rule(1.0, None, FaultAction::Latency { millis: 7 }));
        let decisions: Vec<Decision> = (0..3)
            .map(|_| faults.decide(SiteRole::Peer, "get", "/v1/vms", None))
            .collect();
        assert_eq!(decisions[0].action, Some(FaultAction::RevokeTokens));
        assert_eq!(decisions[0].latency_ms, 12);
        assert_eq!(decisions[0].notes.len(), 3);
        assert_eq!(decisions[2].action, None, "the count is spent");
        assert_eq!(faults.rules[0].fired, 2);
        assert_eq!(faults.rules[0].matched, 3);
        let post = faults.decide(SiteRole::Peer, "POST", "/v1/vms", None);
        assert!(post.notes.is_empty(), "the method must match");
    }

    #[test]
    fn a_rule_waiting_for_another_matches_nothing_until_that_one_fired_on_an_earlier_request() {
        let mut faults = Faults::new(3);
        let first = faults.add(NewRule {
            path: pattern("/v1/flrs"),
            method: Some("POST".to_owned()),
            ..rule(1.0, Some(1), FaultAction::WithholdResponse)
        });
        let respond = FaultAction::Respond {
            status: 500,
            body: None,
            headers: Vec::new(),
        };
        faults.add(NewRule {
            path: pattern("/v1/**"),
            method: None,
            after: Some(first),
            ..rule(1.0, None, respond.clone())
        });
        let read = |faults: &mut Faults| faults.decide(SiteRole::Local, "GET", "/v1/flrs", None);
        assert_eq!(read(&mut faults).action, None, "not armed yet");
        assert_eq!(faults.rules[1].matched, 0, "an unarmed rule counts nothing");
        let mount = faults.decide(SiteRole::Local, "POST", "/v1/flrs", None);
        assert_eq!(
            mount.action,
            Some(FaultAction::WithholdResponse),
            "armed only after it"
        );
        assert_eq!(read(&mut faults).action, Some(respond.clone()));
        faults.remove(first);
        assert_eq!(
            read(&mut faults).action,
            Some(respond),
            "it stays armed once the rule it waited for is gone"
        );
    }

    #[test]
    fn another_clients_insert_acts_on_tagged_checkpoint_inserts_only() {
        let mut faults = Faults::new(5);
        faults.add(NewRule {
            method: None,
            ..rule(1.0, None, FaultAction::InsertAsAnotherClient)
        });
        let fires = |faults: &mut Faults, method: &str, path: &str| {
            faults
                .decide(SiteRole::Local, method, path, None)
                .action
                .is_some()
        };
        assert!(fires(&mut faults, "POST", "/v1/vpgs/abc/checkpoints"));
        assert!(fires(&mut faults, "post", "/V1/VPGs/abc/Checkpoints"));
        assert!(!fires(&mut faults, "GET", "/v1/vpgs/abc/checkpoints"));
        assert!(!fires(
            &mut faults,
            "POST",
            "/v1/vpgs/abc/checkpoints/stats"
        ));
        assert!(!fires(&mut faults, "POST", "/v1/vpgs/abc/FailoverTest"));
        assert_eq!(faults.rules[0].matched, 2, "the others do not match it");
        assert_eq!(
            inserted_vpg("POST", "/v1/vpgs/abc/checkpoints"),
            Some("abc")
        );
    }
}
