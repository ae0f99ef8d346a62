//! MCP on stdin and stdout: one client, the host that started this process.

use rmcp::ServiceExt;

use crate::error::ServeError;
use crate::server::RewindServer;

/// Serves MCP on stdin and stdout with `server` until the client closes them, then waits for the
/// guards and recoveries still running (their Zerto tasks read to the end, an FLR session unmounted,
/// the journal written) before returning. Nothing else may write to stdout.
pub async fn serve_stdio(server: RewindServer) -> Result<(), ServeError> {
    let in_flight = server.in_flight();
    // Boxed: the session's start holds the whole handler's state.
    let service = Box::pin(server.serve(rmcp::transport::stdio()))
        .await
        .map_err(|e| ServeError::Start(e.to_string()))?;
    let ended = service.waiting().await;
    in_flight.settle().await;
    ended.map_err(|e| ServeError::Session(e.to_string()))?;
    Ok(())
}
