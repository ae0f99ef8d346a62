//! One call of an upstream's tool, judged by the tool catalog (the server being the upstream's
//! name; the tool's annotations are never trusted):
//!
//! - read-only: forwarded;
//! - mutating: the VM it changes resolved (the catalog entry's `vm_arg`, else the upstream's `vm`),
//!   the VM guarded for the call's change exactly as `zerto_guard_before_mutate` guards it (or the
//!   change's `guarded` record of this window found), the call journaled, and only then forwarded;
//!   held for a person's approval first when `[approvals] require` names its catalog entry;
//! - unknown: put to the human through the client's form, and held for a person's approval
//!   ([`crate::held`]) where nobody answered it. Never forwarded silently.
//!
//! Whatever stops a mutating call before it is sent (a VM not resolved, a guard not `guarded`, a
//! Zerto or a journal that cannot be reached, a cancel during the guard) leaves the upstream
//! uncalled, and the tool error says why and what to do next. A call once sent is never sent
//! again: not retried, hedged or mirrored.

use rewind_core::audit_journal::{JournalOutcome, JournalRecord, JournalVerdict, JournalVm};
use rewind_core::forwarded::ForwardedCall;
use rewind_core::{Classification, GuardReport, GuardRequest, Outcome, Rewind, ToolClass, Verdict};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, MetaObject,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::change::{self, Change, GUARD_META};
use super::question;
use super::send::{Delivery, send};
use super::served::Served;
use crate::form::FormRound;
use crate::held::{self, Gate, Proposal, Shape};
use crate::in_flight::InFlight;
use crate::local_files::on_files;
use crate::{progress, roles};

/// What a forwarded call runs on: the facade (acting for the caller when signed in) and the work in
/// flight that the server waits for before it exits.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) rewind: Rewind,
    pub(crate) in_flight: InFlight,
}

/// A call of the upstream tool `served`: judged, guarded when it must be, forwarded or refused.
pub async fn call(
    caller: &Caller,
    served: Served,
    mut request: CallToolRequestParams,
    ctx: RequestContext<RoleServer>,
) -> CallToolResponse {
    let round = FormRound::of(&mut request);
    let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
    let class = match classify(caller, &served, &arguments).await {
        Ok(class) => class,
        Err(refusal) => return refusal.into(),
    };
    let config = caller.rewind.config();
    if let Some(refusal) = roles::upstream_class_refusal(config, class.class, &request.name, &ctx) {
        return refusal.into();
    }
    let name = format!("{}__{}", served.slot.upstream.name, served.tool);
    let required = config
        .approvals
        .requires(&served.slot.upstream.name, &served.tool);
    let held = Call {
        served: &served,
        class: &class,
        arguments: &arguments,
        ctx: &ctx,
    };
    match class.class {
        ToolClass::ReadOnly => forwarded(send(&served, request, &ctx).await, &served).into(),
        ToolClass::Mutating if required => {
            let what = format!(
                "{name} changes a VM, and [approvals] require names it: approving lets it run once, after a guard of its VM."
            );
            on_approval(caller, held, request, what).await.into()
        }
        ToolClass::Mutating => guarded(caller, &served, request, &class, &arguments, &ctx)
            .await
            .into(),
        ToolClass::Unknown => match question::ask(&served, &class, &ctx, &round).await {
            question::Answer::GuardFirst => {
                guarded(caller, &served, request, &class, &arguments, &ctx)
                    .await
                    .into()
            }
            question::Answer::NoCheckpoint => {
                let mut answer = forwarded(send(&served, request, &ctx).await, &served);
                unguarded_note(&mut answer);
                answer.into()
            }
            question::Answer::Unanswered(why) => {
                let what = format!(
                    "Nobody has said whether {name} changes a VM, and the agent's human could not be asked ({why}). Approving lets it run once: after a guard of its VM when one is named, else as it is (Zerto cannot rewind it then)."
                );
                on_approval(caller, held, request, what).await.into()
            }
            question::Answer::AskThroughClient(form) => (*form).into(),
        },
    }
}

/// A call as its handling sees it.
#[derive(Clone, Copy)]
struct Call<'c> {
    served: &'c Served,
    class: &'c Classification,
    arguments: &'c Value,
    ctx: &'c RequestContext<RoleServer>,
}

/// A call a person must approve: held, or run once on its approval, after a guard of its VM when
/// one is named, else sent as it is.
async fn on_approval(
    caller: &Caller,
    call: Call<'_>,
    request: CallToolRequestParams,
    what: String,
) -> CallToolResult {
    let up = &call.served.slot.upstream;
    let vm = vm_of(call.served, call.class).ok();
    let proposal = Proposal {
        server: up.name.clone(),
        tool: call.served.tool.clone(),
        vm: vm.clone(),
        arguments: call.arguments.clone(),
        what,
    };
    let held = match held::gate(&caller.rewind, call.ctx, proposal, Shape::Text).await {
        Gate::Run(held) => held,
        Gate::Answer(answer) => return answer,
    };
    let approved = Caller {
        rewind: held::approved(&caller.rewind, &held),
        in_flight: caller.in_flight.clone(),
    };
    let result = match vm {
        Some(_) => {
            let Call {
                served,
                class,
                arguments,
                ctx,
            } = call;
            guarded(&approved, served, request, class, arguments, ctx).await
        }
        None => {
            let mut answer = forwarded(send(call.served, request, call.ctx).await, call.served);
            unguarded_note(&mut answer);
            answer
        }
    };
    held::ended(&caller.rewind, &held, &result).await;
    result
}

/// The catalog's class of the call; a catalog that cannot be read refuses it (fail closed).
async fn classify(
    caller: &Caller,
    served: &Served,
    arguments: &Value,
) -> Result<Classification, CallToolResult> {
    let (upstream, tool) = (served.slot.upstream.name.clone(), served.tool.clone());
    let args = arguments.clone();
    on_files(&caller.rewind, move |r| {
        r.catalog().classify_call(&upstream, &tool, &args)
    })
    .await
    .map_err(|e| {
        refused(format!(
            "{}__{} was not called: the tool catalog could not be read ({e}), and a tool the catalog cannot classify is not safe. Ask the human to fix the catalog (rewind catalog list shows what is wrong).",
            served.slot.upstream.name, served.tool
        ))
    })
}

/// A mutating call: the VM resolved, guarded for the call's change, the call journaled, then sent.
async fn guarded(
    caller: &Caller,
    served: &Served,
    request: CallToolRequestParams,
    class: &Classification,
    arguments: &Value,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let vm = match vm_of(served, class) {
        Ok(vm) => vm,
        Err(refusal) => return refusal,
    };
    let window = caller.rewind.config().hook.window;
    // rmcp hands a request's `_meta` to the handler in its context.
    let meta = request.meta.clone().unwrap_or_else(|| ctx.meta.clone());
    let change = change::of_call(
        &meta,
        &served.slot.upstream.name,
        &vm,
        window,
        chrono::Utc::now(),
    );
    let agent = crate::peer::agent(ctx);
    let evidence = match evidence(caller, served, &vm, &change, &agent, ctx).await {
        Ok(evidence) => evidence,
        Err(refusal) => return refusal,
    };
    if ctx.ct.is_cancelled() {
        return refused(format!(
            "the call was cancelled during its guard; {} was not called. The guard's inserts already sent were left to end.",
            served.slot.upstream.name
        ));
    }
    let digest = match arguments_digest(caller, arguments).await {
        Ok(digest) => digest,
        Err(refusal) => return refusal,
    };
    let call = ForwardedCall {
        upstream: served.slot.upstream.name.clone(),
        tool: served.tool.clone(),
        arguments_hmac: digest,
        agent,
        person: caller.rewind.person().cloned(),
        change_id: change.id.clone(),
        vm: evidence.vm.clone(),
        approved_by: caller.rewind.approval().cloned(),
    };
    if let Err(refusal) = journal(caller, &call, JournalVerdict::Started, None).await {
        return refusal;
    }
    let sent = send(served, request, ctx).await;
    let end = match &sent {
        Delivery::Answered(r) if r.is_error == Some(true) => JournalVerdict::Failed,
        Delivery::Answered(_) => JournalVerdict::Completed,
        Delivery::Undelivered(_) => JournalVerdict::Failed,
        Delivery::Cancelled | Delivery::Lost(_) => JournalVerdict::MayHaveRun,
    };
    // The line before the call is on disk: a failure to write its end leaves `started`, which is
    // read as a call that may have run, and the answer below still says what happened.
    let _ = journal(caller, &call, end, ended_note(&sent)).await;
    let mut answer = forwarded(sent, served);
    with_guard(&mut answer, &change, &evidence);
    answer
}

/// The VM a mutating call changes: the argument the catalog entry names, else the upstream's one
/// VM; a call that names none is refused.
fn vm_of(served: &Served, class: &Classification) -> Result<String, CallToolResult> {
    let up = &served.slot.upstream;
    let name = format!("{}__{}", up.name, served.tool);
    match (&class.vm_arg, &class.vm, &up.vm) {
        (Some(_), Some(vm), _) => Ok(vm.clone()),
        (Some(arg), None, _) => Err(refused(format!(
            "{name} was not called: it changes a VM, which its argument {arg} names, and the call has no {arg} (or it is not text). Call it again with {arg} set to the VM's name."
        ))),
        (None, _, Some(vm)) => Ok(vm.clone()),
        (None, _, None) => Err(refused(format!(
            "{name} was not called: it changes a VM, and nothing says which: the catalog entry names no vm_arg and upstream {} names no vm. Ask the human to say which argument holds the VM (rewind catalog add-mutating {} {} --vm-arg ARG) or to set vm in its [[gateway.upstream]].",
            up.name, up.name, served.tool
        ))),
    }
}

/// What guards the call: the change's `guarded` record of this window, or a new guard that ended
/// `guarded`.
async fn evidence(
    caller: &Caller,
    served: &Served,
    vm: &str,
    change: &Change,
    agent: &str,
    ctx: &RequestContext<RoleServer>,
) -> Result<Evidence, CallToolResult> {
    let (query, id, since) = (vm.to_owned(), change.id.clone(), change.since);
    let found = on_files(&caller.rewind, move |r| {
        r.journal()
            .guarded_in_change(&query, &id, since)
            .map_err(|e| e.to_string())
    })
    .await;
    // A journal that cannot be read here leaves the guard to decide, which reads it too.
    if let Ok(Some(record)) = found {
        return Ok(Evidence::reused(&record));
    }
    let request = GuardRequest {
        vm: vm.to_owned(),
        agent: agent.to_owned(),
        action: format!("gateway {}", served.slot.upstream.name),
        change_id: change.id.clone(),
    };
    let rewind = caller.rewind.clone();
    let guard = progress::detached(&caller.in_flight, None, ctx, move |sink| async move {
        rewind.guard(request, &*sink).await
    })
    .await;
    let name = format!("{}__{}", served.slot.upstream.name, served.tool);
    match guard {
        Ok(Ok(report)) if report.verdict == Verdict::Guarded && report.journal_error.is_none() => {
            Ok(Evidence::guarded(&report))
        }
        Ok(Ok(report)) => Err(refused(not_guarded(&name, &report))),
        Ok(Err(e)) => Err(refused(format!(
            "{name} was not called: the guard of {vm} could not run: {e}. {}",
            e.report()
                .hint
                .unwrap_or_else(|| "Fix that, then make the call again.".to_owned())
        ))),
        Err(e) => Err(refused(format!(
            "{name} was not called: the guard of {vm} stopped unexpectedly ({e}). Check zerto_list_tags before trying again."
        ))),
    }
}

/// Why a guard that did not end `guarded` leaves the call unmade, and what to do.
fn not_guarded(name: &str, report: &GuardReport) -> String {
    let why = match (&report.journal_error, report.verdict) {
        (Some(journal), _) => journal.clone(),
        (None, Verdict::StillRunning) => format!(
            "Zerto task(s) {} are still running",
            report.running_task_ids().join(", ")
        ),
        (None, _) if report.problems().is_empty() => {
            format!(
                "no VPG of {} is protecting, so nothing could be tagged",
                report.vm.name
            )
        }
        (None, _) => report.problems().join("; "),
    };
    format!(
        "{name} was not called: {}. {why}. Zerto could not pin a way back for this change, so the gateway did not make it; tell the human, and make the call again once zerto_find_protection shows every VPG of {} protecting.",
        report.headline(),
        report.vm.name
    )
}

/// The tags that guard a call, for its result's `_meta`.
#[derive(Debug, Clone)]
struct Evidence {
    vm: JournalVm,
    tags: Vec<Value>,
    reused: bool,
}

impl Evidence {
    fn guarded(report: &GuardReport) -> Evidence {
        let tags = report
            .vpgs
            .iter()
            .filter_map(|v| match &v.outcome {
                Outcome::Tagged { checkpoint_id, .. } => Some(json!({
                    "vpg": v.vpg_name, "tag": report.tag, "checkpoint_id": checkpoint_id,
                })),
                _ => None,
            })
            .collect();
        Evidence {
            vm: JournalVm::from(&report.vm),
            tags,
            reused: false,
        }
    }

    fn reused(record: &JournalRecord) -> Evidence {
        let tags = record
            .vpgs
            .iter()
            .filter(|v| v.outcome == JournalOutcome::Tagged)
            .map(|v| json!({"vpg": v.vpg_name, "tag": v.tag, "checkpoint_id": v.checkpoint_id}))
            .collect();
        Evidence {
            vm: record.vm.clone(),
            tags,
            reused: true,
        }
    }
}

/// The server's digest of the call's arguments; a key that cannot be kept refuses the call.
async fn arguments_digest(caller: &Caller, arguments: &Value) -> Result<String, CallToolResult> {
    let args = arguments.clone();
    on_files(&caller.rewind, move |r| {
        r.journal().arguments_key().map(|key| key.digest(&args))
    })
    .await
    .map_err(|e| {
        refused(format!(
            "the call was not made: the key that journals its arguments could not be kept beside the journal ({e}); fix the journal's folder, then make the call again"
        ))
    })
}

/// Writes `call`'s line with `verdict` to the journal; a journal that cannot be written refuses
/// the call before it is sent.
async fn journal(
    caller: &Caller,
    call: &ForwardedCall,
    verdict: JournalVerdict,
    note: Option<String>,
) -> Result<(), CallToolResult> {
    let mut line = call.line(verdict);
    line.notes.extend(note);
    let journal = caller.rewind.journal();
    // The line before the call is synced: it accounts for the call whatever becomes of the
    // process. The end only saves a reader the look: lost, it leaves `started`, read as a call that
    // may have run.
    let written = match line.verdict {
        JournalVerdict::Started => journal.append_off_runtime(line).await,
        _ => journal.append_unsynced(line).await,
    };
    written.map_err(|e| {
            refused(format!(
                "{}__{} was not called: the audit journal could not be written ({e}); fix it, then make the call again",
                call.upstream, call.tool
            ))
        })
}

/// What the journal notes of a call's end beside its verdict.
fn ended_note(sent: &Delivery) -> Option<String> {
    match sent {
        Delivery::Answered(_) => None,
        Delivery::Undelivered(why) => Some(format!("not sent: {why}")),
        Delivery::Cancelled => Some("cancelled by the client after it was sent".to_owned()),
        Delivery::Lost(why) => Some(format!("its answer was lost: {why}")),
    }
}

/// The answer the client gets of a call sent (or not) to the upstream.
fn forwarded(sent: Delivery, served: &Served) -> CallToolResult {
    let up = &served.slot.upstream.name;
    match sent {
        Delivery::Answered(result) => result,
        Delivery::Undelivered(why) => refused(format!(
            "{up}__{} was not called: upstream {up} could not be reached ({why}); the gateway tries it again by itself, make the call later",
            served.tool
        )),
        Delivery::Cancelled => refused(format!(
            "the call of {up}__{} was cancelled after it was sent; the upstream was told, and it may have run. The journal says so; check before making it again.",
            served.tool
        )),
        Delivery::Lost(why) => refused(format!(
            "{up}__{} was sent, and its answer was lost ({why}); it may have run. It is not sent again: check what it would have changed before making the call again.",
            served.tool
        )),
    }
}

/// Adds what guarded the call to the result's `_meta`, beside the upstream's own.
fn with_guard(answer: &mut CallToolResult, change: &Change, evidence: &Evidence) {
    let guard = json!({
        "change_id": change.id,
        "vm": evidence.vm.name,
        "tags": evidence.tags,
        "reused": evidence.reused,
    });
    answer
        .meta
        .get_or_insert_with(MetaObject::new)
        .insert(GUARD_META.to_owned(), guard);
}

/// Marks a result the human let run without a checkpoint.
fn unguarded_note(answer: &mut CallToolResult) {
    answer.meta.get_or_insert_with(MetaObject::new).insert(
        GUARD_META.to_owned(),
        json!({"unguarded": "the human said no checkpoint"}),
    );
}

/// A call refused before its upstream was called: a tool error, text only.
pub fn refused(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}
