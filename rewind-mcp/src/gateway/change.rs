//! The change a forwarded mutating call is made under, and who makes it.
//!
//! The change id is the client's, when it gives one in the call's `_meta` under [`CHANGE_META`];
//! else the gateway's own for the upstream, the VM and the hook window the call falls in:
//! `gw-<upstream>-<vm>-<window start, UTC>`. Windows start at whole multiples of the hook's
//! window since the Unix epoch, so every call of one upstream on one VM within a window shares one
//! change, and one guard: the first call guards, the later ones find its `guarded` record and go
//! on without asking Zerto again. A VM whose name does not fit the change id's 40 characters is
//! written as a digest of its name.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use rewind_core::tagged_checkpoint::MAX_CHANGE_ID;
use rmcp::model::RequestMetaObject;
use sha2::{Digest, Sha256};

/// The `_meta` key under which a client names the change of its call.
pub const CHANGE_META: &str = "io.zerto-rewind/change";

/// The `_meta` key of a result that says what guarded the call.
pub const GUARD_META: &str = "io.zerto-rewind/guard";

/// The change a call is made under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its id.
    pub id: String,
    /// Whether the client named it (else the gateway made it for the window).
    pub named_by_client: bool,
    /// When the window it belongs to began: a guard older than this is not reused.
    pub since: DateTime<Utc>,
}

/// The change of a call of `upstream` on `vm` at `now`, for hook windows of `window`.
pub fn of_call(
    meta: &RequestMetaObject,
    upstream: &str,
    vm: &str,
    window: Duration,
    now: DateTime<Utc>,
) -> Change {
    let start = window_start(now, window);
    match meta.get(CHANGE_META).and_then(|v| v.as_str()) {
        Some(id) if !id.trim().is_empty() => Change {
            id: id.trim().to_owned(),
            named_by_client: true,
            // A change the client names is reused for a whole window back from now.
            since: now - chrono::Duration::from_std(window).unwrap_or_default(),
        },
        _ => Change {
            id: gateway_id(upstream, vm, start),
            named_by_client: false,
            since: start,
        },
    }
}

/// When the window that holds `now` began: a whole multiple of `window` since the epoch.
pub fn window_start(now: DateTime<Utc>, window: Duration) -> DateTime<Utc> {
    let secs = window.as_secs().max(1) as i64;
    let start = now.timestamp().div_euclid(secs) * secs;
    Utc.timestamp_opt(start, 0).single().unwrap_or(now)
}

/// `gw-<upstream>-<vm>-<start>`, the VM as a digest when its name would not fit.
fn gateway_id(upstream: &str, vm: &str, start: DateTime<Utc>) -> String {
    let when = start.format("%Y%m%dT%H%MZ");
    let vm_part: String = vm
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let id = format!("gw-{upstream}-{vm_part}-{when}");
    if id.chars().count() <= MAX_CHANGE_ID {
        return id;
    }
    let digest = hex::encode(&Sha256::digest(vm.as_bytes())[..4]);
    format!("gw-{upstream}-{digest}-{when}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn calls_of_one_upstream_on_one_vm_within_a_window_share_one_change_and_the_next_window_has_its_own()
     {
        let window = Duration::from_secs(15 * 60);
        let none = RequestMetaObject::default();
        let a = of_call(&none, "fs", "web-01", window, at("2026-12-07T10:01:00Z"));
        let b = of_call(&none, "fs", "web-01", window, at("2026-12-07T10:14:59Z"));
        let c = of_call(&none, "fs", "web-01", window, at("2026-12-07T10:15:00Z"));
        assert_eq!(a.id, "gw-fs-web-01-20261207T1000Z");
        assert_eq!(a, b);
        assert_eq!(c.id, "gw-fs-web-01-20261207T1015Z");
        assert_eq!(c.since, at("2026-12-07T10:15:00Z"));
        let other = of_call(&none, "fs", "db-01", window, at("2026-12-07T10:01:00Z"));
        assert_ne!(other.id, a.id);
    }

    #[test]
    fn a_change_the_client_names_is_its_own_and_a_long_vm_name_still_fits() {
        let window = Duration::from_secs(900);
        let mut meta = RequestMetaObject::default();
        meta.insert(CHANGE_META.into(), serde_json::json!("upgrade-nginx-1"));
        let named = of_call(&meta, "fs", "web-01", window, at("2026-12-07T10:01:00Z"));
        assert_eq!(named.id, "upgrade-nginx-1");
        assert!(named.named_by_client);
        let none = RequestMetaObject::default();
        let long_vm = "a-rather-long-virtual-machine-name.example.com";
        let long = of_call(&none, "guests", long_vm, window, at("2026-12-07T10:01:00Z"));
        assert!(long.id.chars().count() <= MAX_CHANGE_ID, "{}", long.id);
        assert!(long.id.starts_with("gw-guests-") && long.id.ends_with("-20261207T1000Z"));
        let other = of_call(
            &none,
            "guests",
            &format!("{long_vm}x"),
            window,
            at("2026-12-07T10:01:00Z"),
        );
        assert_ne!(long.id, other.id, "two long names are two changes");
    }
}
