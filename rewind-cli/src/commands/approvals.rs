//! `rewind approvals list|show|approve|deny`: the calls held for a person's approval. With
//! `[hook.team]`, those of the team server, through its API (`/v1/approvals`) with the user's own
//! access token, as the hook reaches it; without, those of this machine's store (a stdio gateway's),
//! decided as the person at this machine.

use rewind_core::approvals::{HeldCall, HeldCalls};
use rewind_core::config::TeamServer;
use rewind_core::{Config, ErrorKind, Person};
use serde_json::Value;

use crate::cli::ApprovalsCommand;
use crate::context::block_on;
use crate::exit::CliError;
use crate::hook::reach::{self, Tried};
use crate::output::{Reply, Table};

/// Runs `command` against the team server of `config`'s `[hook.team]`, else this machine's store.
pub fn approvals(config: &Config, command: &ApprovalsCommand) -> Result<Reply, CliError> {
    match &config.hook.team {
        Some(server) => block_on(on_team(server, command)),
        None => {
            let journal = rewind_core::AuditJournal::of(config)?;
            locally(&HeldCalls::of(config, &journal), command)
        }
    }
}

fn locally(store: &HeldCalls, command: &ApprovalsCommand) -> Result<Reply, CliError> {
    let refused =
        |e: rewind_core::approvals::ApprovalError| CliError::new(kind_of(&e), e.to_string());
    match command {
        ApprovalsCommand::List => listed(store.list().map_err(refused)?),
        ApprovalsCommand::Show { id } => {
            let (call, arguments) = store.get(id).map_err(refused)?;
            shown(call, arguments)
        }
        ApprovalsCommand::Approve { id, comment } | ApprovalsCommand::Deny { id, comment } => {
            let approve = matches!(command, ApprovalsCommand::Approve { .. });
            let me = Person::local().ok_or_else(|| {
                CliError::new(
                    ErrorKind::Usage,
                    "the person at this machine cannot be told (no user name): nothing was decided",
                )
            })?;
            decided(
                store
                    .decide(id, &me, approve, comment.clone())
                    .map_err(refused)?,
            )
        }
    }
}

fn kind_of(e: &rewind_core::approvals::ApprovalError) -> ErrorKind {
    use rewind_core::approvals::ApprovalError as E;
    match e {
        E::NotFound(_) | E::LongComment(_) => ErrorKind::Usage,
        E::NotHeld { .. } | E::FourEyes { .. } | E::TooMany { .. } => ErrorKind::Refused,
        E::Store { .. } => ErrorKind::Internal,
    }
}

async fn on_team(server: &TeamServer, command: &ApprovalsCommand) -> Result<Reply, CliError> {
    let (method, path, body) = match command {
        ApprovalsCommand::List => (reqwest::Method::GET, "v1/approvals".to_owned(), None),
        ApprovalsCommand::Show { id } => (reqwest::Method::GET, format!("v1/approvals/{id}"), None),
        ApprovalsCommand::Approve { id, comment } => (
            reqwest::Method::POST,
            format!("v1/approvals/{id}/approve"),
            Some(comment),
        ),
        ApprovalsCommand::Deny { id, comment } => (
            reqwest::Method::POST,
            format!("v1/approvals/{id}/deny"),
            Some(comment),
        ),
    };
    let answer = ask(
        server,
        method,
        &path,
        body.map(|c| serde_json::json!({ "comment": c })),
    )
    .await?;
    match command {
        ApprovalsCommand::List => {
            let calls: Vec<HeldCall> =
                serde_json::from_value(answer["approvals"].clone()).map_err(unreadable)?;
            listed(calls)
        }
        ApprovalsCommand::Show { .. } => {
            let arguments = answer.get("arguments").cloned().unwrap_or(Value::Null);
            shown(
                serde_json::from_value(answer).map_err(unreadable)?,
                arguments,
            )
        }
        _ => decided(serde_json::from_value(answer).map_err(unreadable)?),
    }
}

/// One request to the team server's API at each of its URLs in turn, within `[hook.team]
/// timeout_secs` for all.
async fn ask(
    server: &TeamServer,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Result<Value, CliError> {
    let answered = reach::each_url(server, |base, client, token| {
        let (method, body) = (method.clone(), body.clone());
        async move {
            let url = base
                .join(path)
                .map_err(|e| Tried::Refused(format!("its URL cannot take {path}: {e}")))?;
            let mut request = client.request(method, url).bearer_auth(token);
            if let Some(body) = body {
                request = request.json(&body);
            }
            let answer = request.send().await.map_err(Tried::sending)?;
            let status = answer.status();
            let said: Value = answer.json().await.unwrap_or_default();
            match status.is_server_error() {
                true => Err(Tried::answered(status, &said)),
                false => Ok((status, said)),
            }
        }
    })
    .await;
    let named = reach::named(server);
    let (status, said) = answered.map_err(|why| {
        CliError::new(
            ErrorKind::Connection,
            format!("the team server {named}: {why}"),
        )
    })?;
    if status.is_success() {
        return Ok(said);
    }
    let why = said["error"]
        .as_str()
        .unwrap_or("no reason given")
        .to_owned();
    let kind = match status.as_u16() {
        400 | 404 => ErrorKind::Usage,
        _ => ErrorKind::Refused,
    };
    Err(CliError::new(
        kind,
        format!("the team server {named} answered {status}: {why}"),
    ))
}

fn unreadable(e: serde_json::Error) -> CliError {
    CliError::new(
        ErrorKind::Connection,
        format!(
            "the team server's answer is not what a rewind-mcp gives ({e}); is [hook.team] url a rewind-mcp?"
        ),
    )
}

fn listed(calls: Vec<HeldCall>) -> Result<Reply, CliError> {
    let mut table = Table::new(&["CALL", "STATE", "TOOL", "SERVER", "VM", "FOR", "EXPIRES"]);
    for c in &calls {
        table.row(vec![
            c.id.clone(),
            c.state.to_string(),
            c.tool.clone(),
            c.server.clone(),
            c.vm.clone().unwrap_or_default(),
            c.requested_by().to_owned(),
            c.expires.format("%Y-%m-%d %H:%M UTC").to_string(),
        ]);
    }
    let human = match calls.is_empty() {
        true => "No call is held.\n".to_owned(),
        false => table.render(),
    };
    Reply::new(&calls, human)
}

fn shown(call: HeldCall, arguments: Value) -> Result<Reply, CliError> {
    let mut human = format!("{}\n{}\n", call.headline(), call.what);
    human.push_str(&format!(
        "expires {}\n",
        call.expires.format("%Y-%m-%d %H:%M:%S UTC")
    ));
    if let Some(d) = &call.decision {
        let comment = d
            .comment
            .as_deref()
            .map_or_else(String::new, |c| format!(": {c:?}"));
        human.push_str(&format!(
            "{} by {}{comment}\n",
            if d.approved { "approved" } else { "denied" },
            d.by
        ));
    }
    if call.run.is_some() {
        human.push_str(&format!("ran: {}\n", call.outcome()));
    }
    human.push_str(&format!(
        "arguments: {}\n",
        serde_json::to_string_pretty(&arguments).unwrap_or_default()
    ));
    let mut result = serde_json::to_value(&call).unwrap_or_default();
    result["arguments"] = arguments;
    Reply::new(&result, human)
}

fn decided(call: HeldCall) -> Result<Reply, CliError> {
    let next = match call.state {
        rewind_core::approvals::HeldState::Approved => format!(
            "The agent's identical call, made again before {}, runs once.",
            call.expires.format("%Y-%m-%d %H:%M UTC")
        ),
        _ => "The agent is told, with the comment, when it makes the call again.".to_owned(),
    };
    let human = format!("{}\n{next}\n", call.headline());
    Reply::new(&call, human)
}
