//! How the hook and `rewind approvals` reach a team server (`[hook.team]`): the user's access token
//! (its token command's output, else `$REWIND_TEAM_TOKEN`), an HTTP client trusting `ca_cert`, and
//! each of the server's URLs in turn (its replicas, where no load balancer stands in front of
//! them), all within `timeout_secs`: each URL gets the time left divided by the URLs left. A URL
//! that cannot be reached, is late or answers with a server error gives way to the next; one that
//! answers and refuses (the token, a role, the request) is the answer, as the others would refuse
//! too.

use std::future::Future;
use std::time::Instant;

use reqwest::Url;
use rewind_core::config::{TEAM_TOKEN_ENV, TeamServer};

/// Why one URL gave no answer to go by.
#[derive(Debug)]
pub(crate) enum Tried {
    /// It could not be reached, or answered with a server error: the next URL is tried.
    Unreachable(String),
    /// It answered and refused: the other URLs would too.
    Refused(String),
}

impl Tried {
    /// A request that could not be sent or answered.
    pub(crate) fn sending(e: reqwest::Error) -> Tried {
        Tried::Unreachable(e.to_string())
    }

    /// An answer of `status` that is no success, with what its body `said`.
    pub(crate) fn answered(status: reqwest::StatusCode, said: &serde_json::Value) -> Tried {
        let why = format!(
            "it answered {status}{}",
            said["error"]
                .as_str()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        );
        match status.is_server_error() {
            true => Tried::Unreachable(why),
            false => Tried::Refused(why),
        }
    }
}

/// The team server's URLs, as messages name them.
pub(crate) fn named(team: &TeamServer) -> String {
    let urls: Vec<String> = team.urls.iter().map(Url::to_string).collect();
    urls.join(", ")
}

/// `ask` of each of `team`'s URLs in order, with the client and the user's token, each within the
/// time left divided by the URLs left: the first answer, or why none could be had.
pub(crate) async fn each_url<T, Fut>(
    team: &TeamServer,
    mut ask: impl FnMut(Url, reqwest::Client, String) -> Fut,
) -> Result<T, String>
where
    Fut: Future<Output = Result<T, Tried>>,
{
    let started = Instant::now();
    let token = tokio::time::timeout(team.timeout, token(team))
        .await
        .map_err(|_| late(team.timeout))??;
    let client = client(team)?;
    let count = team.urls.len();
    let at = |url: &Url, why: String| match count {
        1 => why,
        _ => format!("{url}: {why}"),
    };
    let mut unreachable = Vec::new();
    for (i, url) in team.urls.iter().enumerate() {
        let share = team.timeout.saturating_sub(started.elapsed()) / (count - i) as u32;
        let asked = ask(url.clone(), client.clone(), token.trim().to_owned());
        match tokio::time::timeout(share, asked).await {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(Tried::Refused(why))) => return Err(at(url, why)),
            Ok(Err(Tried::Unreachable(why))) => unreachable.push(at(url, why)),
            Err(_) => unreachable.push(at(url, late(share))),
        }
    }
    Err(format!(
        "{}; check that it runs and this machine reaches it",
        unreachable.join("; ")
    ))
}

fn late(within: std::time::Duration) -> String {
    format!(
        "it did not answer within {:.1} s (hook.team.timeout_secs)",
        within.as_secs_f64()
    )
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
