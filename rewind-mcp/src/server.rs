//! The MCP server: [`RewindServer`], what every session shares, and its name. What it answers is
//! in [`crate::handler`], its tools in [`crate::tools`], its prompt in [`crate::prompt`].

use rewind_core::Rewind;

use crate::gateway::Gateway;
use crate::in_flight::InFlight;
use crate::tasks::{TaskCall, Tasks};

/// The name this server goes by: the one the tool catalog's built-in entries name this server's
/// read-only tools under ([`rewind_core::catalog::ZERTO_REWIND`]). Claude Code names the tools
/// `mcp__zerto-rewind__<tool>` when it is added under it, so the hook and the catalog agree.
pub const SERVER_NAME: &str = rewind_core::catalog::ZERTO_REWIND;

/// The MCP server: a thin front over one [`Rewind`], shared by every session (the per-VPG insert queue
/// inside it must be one per process, so two sessions never insert into one VPG at once).
#[derive(Debug, Clone)]
pub struct RewindServer {
    pub(crate) rewind: Rewind,
    /// The guards and recoveries running on tasks of their own, shared by every session: the server
    /// waits for them before the process ends.
    pub(crate) in_flight: InFlight,
    /// The MCP tasks of guards and recoveries, shared by every session.
    pub(crate) tasks: Tasks,
    /// For a call running as an MCP task: its status and its stop.
    pub(crate) call: TaskCall,
    /// Served over HTTP, to callers on other machines: answers say nothing of this machine's
    /// files (the journal's path).
    pub(crate) over_http: bool,
    /// With `--gateway`: the upstreams whose tools are served beside the server's own.
    pub(crate) gateway: Option<Gateway>,
}

impl RewindServer {
    /// A server over `rewind`.
    pub fn new(rewind: Rewind) -> Self {
        RewindServer {
            rewind,
            in_flight: InFlight::default(),
            tasks: Tasks::default(),
            call: TaskCall::default(),
            over_http: false,
            gateway: None,
        }
    }

    /// The same server, serving `gateway`'s upstream tools beside its own.
    pub fn with_gateway(self, gateway: Gateway) -> Self {
        RewindServer {
            gateway: Some(gateway),
            ..self
        }
    }

    /// The same server, served over HTTP.
    pub fn over_http(self) -> Self {
        RewindServer {
            over_http: true,
            ..self
        }
    }

    /// The same server for one call running as an MCP task.
    pub(crate) fn as_task(&self, call: TaskCall) -> Self {
        RewindServer {
            call,
            ..self.clone()
        }
    }

    /// The same server acting for `person` (one insert queue, one journal, one count of work in
    /// flight): what a signed-in call runs on, so its guards and recoveries journal who it was.
    pub(crate) fn acting_for(&self, person: rewind_core::Person) -> Self {
        RewindServer {
            rewind: self.rewind.acting_for(person),
            ..self.clone()
        }
    }

    /// The guards and recoveries still running, which [`InFlight::settle`] waits for.
    pub fn in_flight(&self) -> InFlight {
        self.in_flight.clone()
    }
}
