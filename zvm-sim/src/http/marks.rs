//! What one layer or handler leaves on a response for another, as a response extension: the call
//! log, outermost, reads them all; and which paths the call log and the fault rules leave alone.

use crate::world::faults::FaultNote;

/// The task a response started, attached by the handler for the call log.
#[derive(Debug, Clone)]
pub(crate) struct StartedTask(pub String);

/// The fault rules that fired on a request, attached by the fault layer for the call log.
#[derive(Debug, Clone)]
pub(crate) struct FaultsApplied(pub Vec<FaultNote>);

/// Marks the answer to a request no route matched, for the call log and the metrics.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unmatched;

/// Whether a path belongs to the control API or is `/metrics`, which the call log and the fault
/// rules leave alone.
pub(crate) fn is_control_path(path: &str) -> bool {
    path == "/_sim" || path.starts_with("/_sim/") || path == "/metrics"
}
