//! The guards the hook judges a mutating call by: this machine's audit journal and, with
//! `[hook.team]`, the recent guards of the team server this machine's agent guards through.
//!
//! A guard made by a team server is journaled on the server, so the hook asks it
//! (`GET <url>/v1/guards?within_secs=<window>`, with `&vm=<reference>` when the call names its VM by
//! an argument) with the user's own access token: from `token_command`, else `$REWIND_TEAM_TOKEN`.
//! The records are fetched once per call, only for a mutating tool, and judged together with the
//! local ones ([`rewind_core::hook::judge`]): two VMs of one name, one in each journal, are still
//! told apart. A server that does not answer within `timeout_secs`, refuses the token or answers
//! something unreadable makes the hook fail closed; it never falls back to the local journal alone,
//! which could miss a VM of the same name.

use std::time::Duration;

use rewind_core::audit_journal::JournalError;
use rewind_core::config::{TEAM_TOKEN_ENV, TeamServer};
use rewind_core::hook::{Allowed, Decision, Denied, GuardRecords, GuardSource, Sources, Wanted};
use rewind_core::{AuditJournal, JournalRecord};
use serde::Deserialize;

/// Why the guards cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum GuardsError {
    /// This machine's journal.
    #[error("{0}")]
    Journal(#[from] JournalError),
    /// The team server.
    #[error("the team server {url}: {why}")]
    Team {
        /// The server's base URL.
        url: String,
        /// What went wrong and what to do.
        why: String,
    },
}

impl GuardsError {
    /// Which guards could not be read.
    pub fn which(&self) -> GuardSource {
        match self {
            GuardsError::Journal(_) => GuardSource::Journal,
            GuardsError::Team { .. } => GuardSource::TeamServer,
        }
    }
}

/// This machine's journal and, when configured, a team server's recent guards.
#[derive(Debug)]
pub struct Guards<'a> {
    local: &'a AuditJournal,
    team: Option<&'a TeamServer>,
    window: Duration,
}

impl<'a> Guards<'a> {
    /// The guards of `local` and, if given, `team`'s, within `window`.
    pub fn new(local: &'a AuditJournal, team: Option<&'a TeamServer>, window: Duration) -> Self {
        Guards {
            local,
            team,
            window,
        }
    }

    /// The guards a judgement needs: for a VM reference, the journal's namings that may answer to
    /// it and the team server's guards of it alone; else every naming and all the team server's
    /// guards; with the journal's records of the window either way. The team server is asked once.
    pub fn read(&self, wanted: &Wanted) -> Result<GuardRecords, GuardsError> {
        let (mut namings, team) = match wanted {
            Wanted::Vm(vm) => {
                let team = self.team_records(Some(vm))?;
                (self.local.namings_of(Some(vm))?, team)
            }
            Wanted::All => {
                let namings = self.local.namings()?;
                (namings, self.team_records(None)?)
            }
        };
        let mut records = self.local.recent(self.window)?;
        namings.extend(team.iter().map(|r| (r.time, r.vm.clone())));
        records.extend(team);
        Ok(GuardRecords {
            namings,
            records,
            sources: match self.team {
                None => Sources::Journal,
                Some(_) => Sources::JournalAndTeamServer,
            },
        })
    }

    /// The team server's records of `vm` (all of them for `None`); none without a team server.
    fn team_records(&self, vm: Option<&str>) -> Result<Vec<JournalRecord>, GuardsError> {
        let Some(team) = self.team else {
            return Ok(Vec::new());
        };
        fetch(team, self.window, vm).map_err(|why| GuardsError::Team {
            url: team.url.to_string(),
            why,
        })
    }
}

/// The answer of `GET /v1/guards`.
#[derive(Deserialize)]
struct GuardsView {
    records: Vec<JournalRecord>,
}

/// Asks `team` for its guards of the last `window` (of `vm` only, when given), all within its
/// timeout.
fn fetch(
    team: &TeamServer,
    window: Duration,
    vm: Option<&str>,
) -> Result<Vec<JournalRecord>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the hook's HTTP client: {e}"))?;
    runtime.block_on(async {
        tokio::time::timeout(team.timeout, ask(team, window, vm))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "it did not answer within {} s (hook.team.timeout_secs); check that it runs and this machine reaches it",
                    team.timeout.as_secs_f64()
                ))
            })
    })
}

async fn ask(
    team: &TeamServer,
    window: Duration,
    vm: Option<&str>,
) -> Result<Vec<JournalRecord>, String> {
    let token = token(team).await?;
    let url = team
        .url
        .join("v1/guards")
        .map_err(|e| format!("its URL cannot take the path v1/guards: {e}"))?;
    let answer = client(team)?
        .get(url)
        .query(&[("within_secs", window.as_secs().to_string())])
        .query(&vm.map(|vm| ("vm", vm)).into_iter().collect::<Vec<_>>())
        .bearer_auth(token.trim())
        .send()
        .await
        .map_err(|e| format!("{e}; check that it runs and this machine reaches it"))?;
    let status = answer.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return Err(format!(
            "it refused the access token (401{}); sign in again so that the token command (or ${TEAM_TOKEN_ENV}) gives a fresh one",
            challenge_reason(&answer)
        ));
    }
    if !status.is_success() {
        let said: serde_json::Value = answer.json().await.unwrap_or_default();
        return Err(format!(
            "it answered {status}{}",
            said["error"]
                .as_str()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ));
    }
    let view: GuardsView = answer.json().await.map_err(|e| {
        format!("its answer is not the guards a team server gives ({e}); is the URL a rewind-mcp?")
    })?;
    Ok(view.records)
}

/// The `error_description` of a 401's challenge, which never holds the token.
fn challenge_reason(answer: &reqwest::Response) -> String {
    answer
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split("error_description=\"").nth(1))
        .and_then(|v| v.split('"').next())
        .map(|why| format!(": {why}"))
        .unwrap_or_default()
}

pub(crate) fn client(team: &TeamServer) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder().timeout(team.timeout);
    if let Some(path) = &team.ca_cert {
        let certs = rewind_core::trust::pinned_certificates(path)
            .map_err(|why| format!("its CA certificate: {why}; fix hook.team.ca_cert"))?;
        builder = builder.tls_certs_only(certs);
    }
    builder
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// The user's access token: the token command's output, else `$REWIND_TEAM_TOKEN`.
pub(crate) async fn token(team: &TeamServer) -> Result<String, String> {
    let Some(command) = &team.token_command else {
        return std::env::var(TEAM_TOKEN_ENV)
            .ok()
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| {
                format!(
                    "no access token: set hook.team.token_command to a command that prints one, or export {TEAM_TOKEN_ENV}"
                )
            });
    };
    let program = &command[0];
    let run = tokio::process::Command::new(program)
        .args(&command[1..])
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("its token command {program:?} could not run: {e}"))?;
    if !run.status.success() {
        // Its stderr is the command's to explain, cut short; its stdout may hold a token and is
        // never shown.
        let said: String = String::from_utf8_lossy(&run.stderr)
            .trim()
            .chars()
            .take(300)
            .collect();
        return Err(format!(
            "its token command {program:?} failed ({}): {said}",
            run.status
        ));
    }
    let token = String::from_utf8(run.stdout)
        .map_err(|_| format!("its token command {program:?} printed something not UTF-8"))?;
    if token.trim().is_empty() {
        return Err(format!("its token command {program:?} printed no token"));
    }
    Ok(token)
}

/// The team server's answer to `POST /v1/held`.
#[derive(Debug, Deserialize)]
struct HeldView {
    approval_id: String,
    state: String,
    url: String,
    expires: String,
    #[serde(default)]
    decided_by: Option<String>,
    #[serde(default)]
    comment: Option<String>,
    #[serde(default)]
    allow: bool,
}

/// A call the hook would block (`blocked`), held on the team server for a person's approval; what
/// the hook answers: allowed once when a person approved this identical call, else a deny that
/// names the held call and where it is approved. A server that cannot hold it leaves it blocked,
/// saying why.
pub fn held(team: &TeamServer, call: HeldCall<'_>, blocked: Decision) -> Decision {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return not_held(
                blocked,
                &format!("cannot start the hook's HTTP client: {e}"),
            );
        }
    };
    let asked = runtime.block_on(async {
        tokio::time::timeout(team.timeout, hold(team, &call, &blocked))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "it did not answer within {} s",
                    team.timeout.as_secs_f64()
                ))
            })
    });
    match asked {
        Ok(view) => decision_of(view, &call, &blocked),
        Err(why) => not_held(blocked, &why),
    }
}

/// The call the hook holds.
#[derive(Debug)]
pub struct HeldCall<'a> {
    /// The host, as the agent.
    pub agent: &'a str,
    /// The catalog's server of the tool.
    pub server: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The VM the call changes, when the catalog names its argument.
    pub vm: Option<&'a str>,
    /// The call's arguments.
    pub arguments: &'a serde_json::Value,
}

async fn hold(
    team: &TeamServer,
    call: &HeldCall<'_>,
    blocked: &Decision,
) -> Result<HeldView, String> {
    let token = token(team).await?;
    let url = team
        .url
        .join("v1/held")
        .map_err(|e| format!("its URL cannot take the path v1/held: {e}"))?;
    let body = serde_json::json!({
        "server": call.server, "tool": call.tool, "vm": call.vm, "arguments": call.arguments,
        "agent": call.agent, "why": blocked.to_string(),
    });
    let answer = client(team)?
        .post(url)
        .bearer_auth(token.trim())
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("{e}; check that it runs and this machine reaches it"))?;
    let status = answer.status();
    if !status.is_success() {
        let said: serde_json::Value = answer.json().await.unwrap_or_default();
        return Err(format!(
            "it answered {status}: {}",
            said["error"].as_str().unwrap_or("no reason given")
        ));
    }
    answer
        .json()
        .await
        .map_err(|e| format!("its answer is not a held call ({e}); is the URL a rewind-mcp?"))
}

fn decision_of(view: HeldView, call: &HeldCall<'_>, blocked: &Decision) -> Decision {
    let (server, tool, id) = (call.server, call.tool, &view.approval_id);
    if view.allow {
        return Decision::Allow(Allowed::Approved {
            server: server.to_owned(),
            tool: tool.to_owned(),
            approval_id: id.clone(),
            by: view.decided_by.unwrap_or_else(|| "a person".to_owned()),
        });
    }
    let by = view.decided_by.as_deref().unwrap_or("a person");
    let message = match view.state.as_str() {
        "held" => format!(
            "{blocked} It is held on the team server as {id} for a person's approval: a person with the approve role approves or denies it at {} (before {}); once approved, make the identical call again and it is allowed once.",
            view.url, view.expires
        ),
        "denied" => format!(
            "{server}/{tool} was held as {id} and denied by {by}{}. Do not make the change; tell the human.",
            view.comment
                .as_deref()
                .map_or_else(String::new, |c| format!(": {c:?}"))
        ),
        _ => format!(
            "{server}/{tool} was already let through once on held call {id} ({}); it is not allowed again. A call with other arguments is held anew.",
            view.state
        ),
    };
    Decision::Deny(Denied::Held {
        approval_id: id.clone(),
        url: view.url,
        message,
    })
}

/// The blocked decision, saying why it could not be held for a person.
fn not_held(blocked: Decision, why: &str) -> Decision {
    let message =
        format!("{blocked} (The team server could not hold it for a person's approval: {why}.)");
    Decision::Deny(Denied::Held {
        approval_id: String::new(),
        url: String::new(),
        message,
    })
}
