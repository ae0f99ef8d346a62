//! Announcing a new held call to `[approvals] webhook`: a chat tool's incoming webhook reads the
//! `text` line; scripts read the fields. It names the call, never its arguments or a token; it is
//! bounded, and sent beside the call, never in its way.

use std::time::Duration;

use serde::Serialize;

use super::call::HeldCall;
use crate::secret::Secret;

/// How long one announcement may take.
pub const ANNOUNCE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the webhook receives.
#[derive(Debug, Clone, Serialize)]
pub struct Announcement {
    /// One line for a chat tool.
    pub text: String,
    /// The held call's id.
    pub id: String,
    /// Its tool, as its server names it.
    pub tool: String,
    /// Its server or upstream.
    pub server: String,
    /// The VM it changes, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vm: Option<String>,
    /// Who asked for it.
    pub requester: String,
    /// When it expires (RFC 3339).
    pub expires: String,
    /// Where a person approves or denies it.
    pub url: String,
}

impl Announcement {
    /// The announcement of `call`, approved or denied at `url`.
    pub fn of(call: &HeldCall, url: &str) -> Announcement {
        let vm = call
            .vm
            .as_deref()
            .map_or_else(String::new, |v| format!(" on VM {v}"));
        let expires = call
            .expires
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        Announcement {
            text: format!(
                "{} asks to run {} ({}){vm}: approve or deny it by {expires} at {url}",
                call.requested_by(),
                call.tool,
                call.server,
            ),
            id: call.id.clone(),
            tool: call.tool.clone(),
            server: call.server.clone(),
            vm: call.vm.clone(),
            requester: call.requested_by().to_owned(),
            expires,
            url: url.to_owned(),
        }
    }
}

/// POSTs `announcement` to the webhook at `url`, within [`ANNOUNCE_TIMEOUT`]. The error names the
/// webhook's host only: its URL is a secret.
pub async fn announce(url: &Secret, announcement: &Announcement) -> Result<(), String> {
    let host = url::Url::parse(url.expose())
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "the configured host".to_owned());
    let client = reqwest::Client::builder()
        .timeout(ANNOUNCE_TIMEOUT)
        .build()
        .map_err(|e| format!("the webhook client could not be built: {e}"))?;
    let sent = client.post(url.expose()).json(announcement).send().await;
    match sent.map(|r| r.status()) {
        Ok(status) if status.is_success() => Ok(()),
        Ok(status) => Err(format!("the webhook at {host} answered {status}")),
        Err(e) => Err(format!(
            "the webhook at {host} could not be reached: {}",
            crate::zvm::describe(&e.without_url())
        )),
    }
}
