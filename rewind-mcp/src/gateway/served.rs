//! What the gateway serves: each upstream kept reached (an upstream that cannot be reached, or
//! that ends, is named in one line, its tools absent until it is back; it is tried again with
//! backoff), its tools listed under their served names, and listed again when it says they
//! changed, each change told to the gateway's own clients both ways: a session begun with
//! `initialize` gets `notifications/tools/list_changed`, a 2026-07-28 client that listens
//! (`subscriptions/listen`) gets it on its subscription.

use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use rewind_core::config::{GatewaySettings, Upstream};
use rmcp::model::Tool;
use rmcp::service::{Peer, RoleClient, RoleServer, SubscriptionContext, SubscriptionSink};
use tokio::sync::{mpsc, oneshot};

use super::client::{Relay, UpstreamClient};
use super::names;
use super::upstream::{Connection, connect};

/// The first wait before an upstream is tried again, and the longest.
const BACKOFF: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(60));

/// The gateway: the upstreams and the tools they serve. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    upstreams: Vec<Arc<Slot>>,
    /// The gateway's sessions and subscriptions, told when the list changes.
    clients: Mutex<Vec<Listener>>,
}

/// One client to tell when the tools change.
#[derive(Debug, Clone)]
enum Listener {
    /// A session begun with `initialize` (up to protocol 2025-11-25).
    Session(Peer<RoleServer>),
    /// A 2026-07-28 client's `subscriptions/listen`, while it is open.
    Subscription(SubscriptionSink),
}

impl Listener {
    /// Tells it the tools changed; `false` when it is gone.
    async fn tell(&self) -> bool {
        match self {
            Listener::Session(peer) => peer.notify_tool_list_changed().await.is_ok(),
            Listener::Subscription(sink) => sink.notify_tool_list_changed().await.is_ok(),
        }
    }
}

/// One upstream and, while it is reached, its tools.
#[derive(Debug)]
pub struct Slot {
    /// Its configuration.
    pub upstream: Upstream,
    /// Its open calls.
    pub relay: Relay,
    /// Shared, so a call takes its upstream without copying every tool.
    live: RwLock<Option<Arc<Live>>>,
}

/// An upstream reached: its peer and its tools, by served name.
#[derive(Debug, Clone)]
struct Live {
    peer: Peer<RoleClient>,
    tools: Vec<(Tool, String)>,
}

/// One upstream tool a call names.
#[derive(Debug, Clone)]
pub struct Served {
    /// Its upstream.
    pub slot: Arc<Slot>,
    /// The upstream's own name of the tool.
    pub tool: String,
    /// The upstream, reached.
    pub peer: Peer<RoleClient>,
}

impl Gateway {
    /// Starts every upstream of `settings` and waits for each one's first attempt, so the tools
    /// of those reached are listed from the first `tools/list`.
    pub async fn start(settings: &GatewaySettings) -> Gateway {
        let inner = Arc::new(Inner {
            upstreams: settings
                .upstreams
                .iter()
                .map(|u| {
                    Arc::new(Slot {
                        upstream: u.clone(),
                        relay: Relay::default(),
                        live: RwLock::default(),
                    })
                })
                .collect(),
            clients: Mutex::default(),
        });
        let mut firsts = Vec::new();
        for slot in &inner.upstreams {
            let (tx, rx) = oneshot::channel();
            tokio::spawn(keep_reached(slot.clone(), Arc::downgrade(&inner), tx));
            firsts.push(rx);
        }
        for first in firsts {
            let _ = first.await;
        }
        Gateway { inner }
    }

    /// Every tool the upstreams serve now, under its served name.
    pub(crate) fn tools(&self) -> Vec<Tool> {
        self.inner
            .upstreams
            .iter()
            .filter_map(|s| s.live())
            .flat_map(|l| {
                l.tools
                    .iter()
                    .map(|(tool, _)| tool.clone())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The upstream tool served as `name`, or why no call of it can be made now; `None` for a name
    /// no upstream's (rewind's own tools).
    pub(crate) fn find(&self, name: &str) -> Option<Result<Served, String>> {
        let (upstream, tool) = names::split(name)?;
        let slot = self
            .inner
            .upstreams
            .iter()
            .find(|s| s.upstream.name == upstream)?;
        let Some(live) = slot.live() else {
            return Some(Err(format!(
                "upstream {upstream} is not reached now, so {name} did not run. The gateway tries it again by itself; try the call later, or ask the human to look at the gateway's log."
            )));
        };
        let known = live.tools.iter().find(|(t, _)| t.name == name);
        Some(match known {
            Some((_, own)) => Ok(Served {
                slot: slot.clone(),
                tool: own.clone(),
                peer: live.peer.clone(),
            }),
            None => Err(format!(
                "upstream {upstream} serves no tool {tool}; list the tools again"
            )),
        })
    }

    /// Remembers `client`, a session that has just begun, to tell it when the tools change.
    pub(crate) fn tell(&self, client: Peer<RoleServer>) {
        lock(&self.inner.clients).push(Listener::Session(client));
    }

    /// Tells `subscription` when the tools change, until it ends.
    pub(crate) async fn listen(&self, subscription: &SubscriptionContext) {
        lock(&self.inner.clients).push(Listener::Subscription(subscription.sink().clone()));
        subscription.cancelled().await;
    }
}

impl Slot {
    fn live(&self) -> Option<Arc<Live>> {
        self.live
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn set(&self, live: Option<Arc<Live>>) {
        *self
            .live
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = live;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Keeps `slot`'s upstream reached for as long as the gateway lives: connects, lists, lists again
/// on each change, and after an end or a failure tries again with backoff. `first` is told after
/// the first attempt.
async fn keep_reached(slot: Arc<Slot>, gateway: Weak<Inner>, first: oneshot::Sender<()>) {
    let mut first = Some(first);
    let mut wait = BACKOFF.0;
    while gateway.strong_count() > 0 {
        let (changed, mut changes) = mpsc::unbounded_channel();
        let client = UpstreamClient {
            name: slot.upstream.name.clone(),
            relay: slot.relay.clone(),
            changed,
        };
        match connect(&slot.upstream, client).await {
            Ok(connection) => {
                wait = BACKOFF.0;
                let why = serve(&slot, &gateway, connection, &mut changes, &mut first).await;
                tracing::warn!(
                    "upstream {} ended ({why}); its tools are absent until it is back, tried again in {} s",
                    slot.upstream.name,
                    wait.as_secs()
                );
            }
            Err(why) => {
                tracing::warn!(
                    "{why}; its tools are absent, tried again in {} s",
                    wait.as_secs()
                );
                if let Some(first) = first.take() {
                    let _ = first.send(());
                }
            }
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(BACKOFF.1);
    }
}

/// Serves one connection until it ends: its tools listed, and listed again on each change.
/// Gives why it ended.
async fn serve(
    slot: &Slot,
    gateway: &Weak<Inner>,
    connection: Connection,
    changes: &mut mpsc::UnboundedReceiver<()>,
    first: &mut Option<oneshot::Sender<()>>,
) -> String {
    let peer = connection.peer().clone();
    let mut ended = Box::pin(connection.waiting());
    loop {
        if let Err(why) = list(slot, &peer).await {
            slot.set(None);
            return why;
        }
        if let Some(first) = first.take() {
            let _ = first.send(());
        }
        tell_clients(gateway).await;
        tokio::select! {
            quit = &mut ended => {
                slot.set(None);
                tell_clients(gateway).await;
                return match quit {
                    Ok(reason) => format!("{reason:?}"),
                    Err(e) => e.to_string(),
                };
            }
            more = changes.recv() => {
                if more.is_none() {
                    slot.set(None);
                    return "its client stopped".to_owned();
                }
            }
        }
    }
}

/// Lists `slot`'s tools, each under its served name; a tool whose name cannot be served is named
/// in one line and left out.
async fn list(slot: &Slot, peer: &Peer<RoleClient>) -> Result<(), String> {
    let name = &slot.upstream.name;
    let tools = peer
        .list_all_tools()
        .await
        .map_err(|e| format!("its tools could not be listed: {e}"))?;
    let mut served: Vec<(Tool, String)> = Vec::new();
    for mut tool in tools {
        let own = tool.name.to_string();
        match names::served(name, &own) {
            Ok(as_served) if served.iter().any(|(t, _)| t.name == as_served) => {
                tracing::warn!("{name}'s tool {own:?} is left out: it is listed twice");
            }
            Ok(as_served) => {
                tool.name = as_served.into();
                served.push((tool, own));
            }
            Err(why) => tracing::warn!("{why}"),
        }
    }
    tracing::info!("upstream {name}: {} tools served", served.len());
    slot.set(Some(Arc::new(Live {
        peer: peer.clone(),
        tools: served,
    })));
    Ok(())
}

/// Tells every session that the list changed; a session gone is forgotten.
async fn tell_clients(gateway: &Weak<Inner>) {
    let Some(inner) = gateway.upgrade() else {
        return;
    };
    let clients: Vec<Listener> = std::mem::take(&mut *lock(&inner.clients));
    let mut still = Vec::new();
    for client in clients {
        if client.tell().await {
            still.push(client);
        }
    }
    lock(&inner.clients).extend(still);
}
