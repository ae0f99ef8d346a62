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
use rewind_core::hook::{GuardRecords, GuardSource, Sources, Wanted};
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

fn client(team: &TeamServer) -> Result<reqwest::Client, String> {
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
async fn token(team: &TeamServer) -> Result<String, String> {
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
