//! Progress of a guard or a recovery as MCP progress notifications, for a client that sent a progress
//! token.
//!
//! rewind-core reports progress synchronously from its waiting code ([`ProgressSink`]); a notification
//! is an async send to the client. The sink therefore only puts each update on a channel, and one task
//! per call forwards them, so a slow client never slows the waiting on Zerto tasks.
//!
//! [`detached`] runs a call's work (a guard, a recovery) on a task of its own, with that sink, and
//! counts it in the server's [`InFlight`](crate::in_flight::InFlight), which the server waits on
//! before the process ends.

use std::future::Future;
use std::sync::Arc;

use rewind_core::{NoProgress, ProgressSink, Stage, TaskProgress};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext, RoleServer};
use tokio::sync::mpsc;

use crate::in_flight::InFlight;

/// Runs `work` on a task of its own, counted in `in_flight`, with a sink that reports its progress to
/// the client when the call asked for progress, and waits for it.
///
/// The work does not run inside the call's future because a call the client cancels, or a connection
/// that drops, would drop it half-way: a guard's inserts already sent would no longer be read until
/// their tasks end, an FLR session would stay mounted, and neither would reach the journal. On its own
/// task it finishes whatever becomes of the call, and the server waits for it before exiting.
///
/// A call running as an MCP task ([`crate::tasks`]; its `task`) reports its progress as the task's
/// status message instead: its request was answered with the task's handle.
pub async fn detached<T, F, Fut>(
    in_flight: &InFlight,
    task: Option<rmcp::task_manager::TaskContext>,
    ctx: &RequestContext<RoleServer>,
    work: F,
) -> Result<T, tokio::task::JoinError>
where
    T: Send + 'static,
    F: FnOnce(Arc<dyn ProgressSink>) -> Fut + Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    let token = ctx.meta.get_progress_token();
    let peer = ctx.peer.clone();
    // Counted before the task starts, so that a session ending right now still waits for it.
    in_flight
        .spawn(async move {
            if let Some(task) = task {
                return work(Arc::new(TaskStatus(task))).await;
            }
            match token {
                Some(token) => {
                    let (sink, forward) = Notifier::start(peer, token);
                    // The sink is dropped with the work's future, which ends the forwarding task once
                    // every update is sent: progress goes out before the result.
                    let out = work(Arc::new(sink)).await;
                    let _ = forward.await;
                    out
                }
                None => work(Arc::new(NoProgress)).await,
            }
        })
        .await
}

/// A [`ProgressSink`] that forwards each update to the client as a progress notification.
#[derive(Debug)]
pub struct Notifier {
    updates: mpsc::UnboundedSender<TaskProgress>,
}

impl Notifier {
    /// A sink whose updates reach `peer` under `token`, and the task that sends them; the task ends
    /// when the sink is dropped.
    pub fn start(
        peer: Peer<RoleServer>,
        token: ProgressToken,
    ) -> (Notifier, tokio::task::JoinHandle<()>) {
        let (updates, mut rx) = mpsc::unbounded_channel::<TaskProgress>();
        let forward = tokio::spawn(async move {
            // MCP wants progress to grow with every notification, even without a known total.
            let mut sent = 0u32;
            while let Some(p) = rx.recv().await {
                sent += 1;
                let param = ProgressNotificationParam::new(token.clone(), f64::from(sent))
                    .with_message(describe(&p));
                // A client that went away, or a protocol that does not carry notifications here, only
                // loses the progress; the guard goes on.
                if let Err(e) = peer.notify_progress(param).await {
                    tracing::debug!("a progress notification was not sent: {e}");
                }
            }
        });
        (Notifier { updates }, forward)
    }
}

impl ProgressSink for Notifier {
    fn update(&self, progress: &TaskProgress) {
        let _ = self.updates.send(progress.clone());
    }
}

/// A [`ProgressSink`] that writes each update as an MCP task's status message.
struct TaskStatus(rmcp::task_manager::TaskContext);

impl ProgressSink for TaskStatus {
    fn update(&self, progress: &TaskProgress) {
        self.0.set_status_message(describe(progress));
    }
}

/// One update in words: "web-dr: task 123 running 40% (1.2 s)", the time as the CLI's progress line
/// gives it ([`rewind_core::progress::elapsed_text`]).
fn describe(p: &TaskProgress) -> String {
    let stage = match p.stage {
        Stage::Queued => "queued",
        Stage::Inserting => "inserting a tagged checkpoint",
        Stage::Running => "running",
        Stage::Listing => "completed, waiting until listed",
        Stage::Done => "done",
    };
    let task = p
        .task_id
        .as_deref()
        .map(|t| format!(" task {t}"))
        .unwrap_or_default();
    let percent = p.progress.map(|n| format!(" {n}%")).unwrap_or_default();
    format!(
        "{}:{task} {stage}{percent} ({})",
        p.vpg_name,
        rewind_core::progress::elapsed_text(p.elapsed.as_millis() as u64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rewind_core::Code;
    use std::time::Duration;

    #[test]
    fn an_update_names_the_vpg_its_task_stage_progress_and_time() {
        let update = |elapsed_ms| TaskProgress {
            site: "boston".into(),
            vpg_id: "id-web-dr".into(),
            vpg_name: "web-dr".into(),
            task_id: Some("123".into()),
            task_type: "InsertTaggedCP".into(),
            stage: Stage::Running,
            state: Some(Code::task_state(1)),
            progress: Some(40),
            elapsed: Duration::from_millis(elapsed_ms),
        };
        assert_eq!(
            describe(&update(1200)),
            "web-dr: task 123 running 40% (1.2 s)"
        );
        assert_eq!(
            describe(&update(850)),
            "web-dr: task 123 running 40% (850 ms)"
        );
    }
}
