//! rewind-mcp driven as a real MCP client drives it: the built binary as a stdio child process or an
//! HTTP server, rmcp's client, a fresh seeded simulator per test.
//!
//! - `listing`: the tools with their annotations and schemas and the instructions, as checked in
//!   (`tests/fixtures/tools.json`); the prompt; a clean stdout.
//! - `rewind_loop`: find, guard, list tags, journal; the errors a tool answers with; bad arguments.
//! - `bad_input`: bad arguments to every tool, refused as usage errors that change nothing.
//! - `attacks`: the team server against a careful attacker (docs/mcp.md's threat model).
//! - `asking`: check_tool's three classes, the human asked (yes, no, remember) on both protocol
//!   generations, and the client that cannot be asked.
//! - `recovery`: a file recovered from its tag, a failover test and a clone; their arguments.
//! - `gateway`: `--gateway` in front of an upstream of the test's own: names, schemas, the guard
//!   before every mutating call, unknown tools asked about, a child's bare environment.
//! - `http`: the same server over streamable HTTP, and its Host guard.
//! - `logging`: stderr at the default level carries no third-party log line.
//! - `machine`: identical guard calls at once, a catalog lock held elsewhere, an unwritable journal.
//! - `secrets`: at trace level, no password, client secret or token reaches stderr or a result.
//! - `sign_in`: `[http.auth]`: tokens refused with 401, roles, the person journaled behind a guard.
//! - `tasks`: guards as MCP tasks: followed, listed, cancelled, and scoped to their caller.
//! - `approvals`: on a team server, a restore an agent proposes held for another person's approval
//!   and run once; denials, four eyes, roles, expiry and a restart; a hook's held call.
//! - `keep`: keeping a change's tags past the journal only on the human's yes, on both protocol
//!   generations.

mod approvals;
mod asking;
mod attacks;
mod bad_input;
mod gateway;
mod helper;
mod http;
mod keep;
mod listing;
mod logging;
mod machine;
mod metrics;
mod pages;
mod recovery;
mod replicas;
mod restore;
mod rewind_loop;
mod secrets;
mod sign_in;
mod tasks;
