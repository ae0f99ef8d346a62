//! The HTTP kit both faces of a site share: the `/v1` and Keycloak handlers (`api`) and the `/_sim`
//! control API (`control`) import it, and the router's assembly (`app`) puts them together over it.
//!
//! - [`error`]: `ApiError`, the refusal shaped as a ZVM shapes it, and the bound on echoed text;
//! - [`extract`]: the query ([`Params`]) and body ([`JsonBody`]) extractors that bind keys
//!   case-insensitively, as ASP.NET does, and [`required`], the one answer to a value a request
//!   must give and does not;
//! - [`site`]: what a handler of one site holds ([`SiteCtx`], [`ViewCtx`]) and the request's own
//!   URL ([`BaseUrl`]);
//! - [`marks`]: what one layer leaves on a response for another (the task started, the fault
//!   rules that fired, a path no route matched), and which paths the layers leave alone.

pub(crate) mod error;
pub(crate) mod extract;
mod marks;
mod site;

pub(crate) use error::ApiError;
pub(crate) use extract::{JsonBody, Params, required};
pub(crate) use marks::{FaultsApplied, StartedTask, Unmatched, is_control_path};
pub(crate) use site::{BaseUrl, Scheme, SiteCtx, ViewCtx};
