//! The gateway (`rewind-mcp --gateway`): the tools of upstream MCP servers served beside rewind's
//! own, each call of a mutating one guarded before it is forwarded. It is the guard for clients
//! that run no hook (Claude Desktop, claude.ai, ChatGPT, agents on an MCP SDK): there the guard is
//! not advice the model may skip, since the upstream is reached only through the gateway.
//!
//! - [`served`]: the upstreams kept reached, their tools listed and served;
//! - [`upstream`]: reaching one (a child over stdio, bare environment; or streamable HTTP with the
//!   gateway's own credential), and [`client`], the gateway as its client (progress, questions and
//!   changed lists passed on);
//! - [`names`]: `<upstream>__<tool>`, and the names left out;
//! - [`forward`]: one call judged by the catalog, guarded, journaled, sent; [`change`]: the change it
//!   is made under and who makes it; [`question`]: an unknown tool put to the human; [`send`]: the
//!   call sent once and followed to its end.
//!
//! docs/gateway.md is the guide and the threat model.

pub(crate) mod change;
pub(crate) mod client;
pub(crate) mod forward;
pub(crate) mod names;
pub(crate) mod question;
pub(crate) mod send;
pub(crate) mod served;
pub(crate) mod upstream;

pub use change::{CHANGE_META, GUARD_META};
pub use names::JOIN;
pub use served::Gateway;
