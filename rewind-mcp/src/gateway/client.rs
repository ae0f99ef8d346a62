//! The gateway as a client of one upstream: what the upstream sends back while a call is open
//! (progress, a question for the human) finds the client call it belongs to, and a changed tool
//! list wakes the gateway to list it again.
//!
//! Progress: each forwarded call is sent with a progress token of the gateway's own; [`Relay`] maps
//! it to the open call, whose handler sends each update on under the client's token (rmcp handles
//! each notification on a task of its own, so the handler also takes in what is still on its way
//! when the answer comes, before it answers).
//!
//! A question (`elicitation/create`): rmcp sends a server's request to its client only from the
//! task of the client request that caused it, and that origin does not cross a spawned task. So the
//! question is not asked from here: it is handed to the forwarded call whose handler is waiting
//! ([`Relay::open`]), which asks its client from its own task and hands the answer back. With no
//! call, or more than one, of the upstream open, the question cannot be tied to one person's call
//! and is declined, and the log says so: nobody's yes is given for them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use tokio::sync::{mpsc, oneshot};

/// A question an upstream asks during a forwarded call, and where its answer goes.
#[derive(Debug)]
pub struct Question {
    /// What the upstream asked.
    pub params: ElicitRequestParams,
    /// The client's answer.
    pub answer: oneshot::Sender<ElicitResult>,
}

/// Where an upstream's progress and questions go: the forwarded calls now open.
#[derive(Debug, Clone, Default)]
pub struct Relay(Arc<Mutex<Open>>);

#[derive(Debug, Default)]
struct Open {
    /// Each open call's progress channel, by the gateway's progress token.
    progress: HashMap<ProgressToken, mpsc::UnboundedSender<ProgressNotificationParam>>,
    /// Each open call's question channel, by the gateway's progress token.
    questions: HashMap<ProgressToken, mpsc::Sender<Question>>,
}

/// One forwarded call open at its upstream; it leaves the relay when dropped.
#[derive(Debug)]
pub struct OpenCall {
    relay: Relay,
    token: ProgressToken,
    /// The upstream's questions for this call's client.
    pub questions: mpsc::Receiver<Question>,
    /// The upstream's progress updates of this call.
    pub progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
}

impl Drop for OpenCall {
    fn drop(&mut self) {
        let mut open = self.relay.lock();
        open.progress.remove(&self.token);
        open.questions.remove(&self.token);
    }
}

impl Relay {
    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Opens the call sent under the gateway's `token`: its progress and its questions go to the
    /// returned receivers.
    pub fn open(&self, token: ProgressToken) -> OpenCall {
        let (questions, asked) = mpsc::channel(1);
        let (progress, updates) = mpsc::unbounded_channel();
        let mut open = self.lock();
        open.progress.insert(token.clone(), progress);
        open.questions.insert(token.clone(), questions);
        OpenCall {
            relay: self.clone(),
            token,
            questions: asked,
            progress: updates,
        }
    }

    /// The one open call a question can go to; `None` with none or several open.
    fn only_call(&self) -> Option<mpsc::Sender<Question>> {
        let open = self.lock();
        match open.questions.values().collect::<Vec<_>>()[..] {
            [only] => Some(only.clone()),
            _ => None,
        }
    }
}

/// The gateway's client of one upstream.
#[derive(Debug, Clone)]
pub struct UpstreamClient {
    /// The upstream's name, for the log.
    pub name: String,
    /// Its open calls.
    pub relay: Relay,
    /// Woken when the upstream says its tools changed.
    pub changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for UpstreamClient {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let open = self.relay.lock();
        if let Some(call) = open.progress.get(&params.progress_token) {
            // A call already answered has dropped its receiver: the update has nowhere to go.
            let _ = call.send(params);
        }
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let declined = ElicitResult::new(ElicitationAction::Decline);
        let Some(call) = self.relay.only_call() else {
            tracing::warn!(
                upstream = %self.name,
                "the upstream asked a question while no single call of it was open; declined, since it cannot be tied to one client's call"
            );
            return Ok(declined);
        };
        let (answer, reply) = oneshot::channel();
        if call.send(Question { params, answer }).await.is_err() {
            return Ok(declined);
        }
        Ok(reply.await.unwrap_or(declined))
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("zerto-rewind-gateway", env!("CARGO_PKG_VERSION")),
        )
    }
}
