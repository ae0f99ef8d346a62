//! Answers read as the ZVM wrote them, unmodelled: for the capture (which models what it reads
//! itself), the parity report, and probes of what an account may read.

use serde::de::DeserializeOwned;

use crate::error::RewindError;
use crate::zvm::client::ZvmClient;

impl ZvmClient {
    /// `GET path`, read as `T` (an absent or `null` body as `T`'s default): for the capture, which
    /// models the answers it reads itself.
    pub(crate) async fn read_json<T: DeserializeOwned + Default>(
        &self,
        path: &str,
    ) -> Result<T, RewindError> {
        Ok(self
            .get_json::<Option<T>>(path, &[])
            .await?
            .unwrap_or_default())
    }

    /// `GET /v1/vms` as the ZVM wrote it, for the parity report.
    pub async fn vms_value(&self) -> Result<serde_json::Value, RewindError> {
        self.read_json("/v1/vms").await
    }

    /// `GET /v1/vpgs` as JSON, unmodelled: for the parity comparison.
    pub async fn vpgs_value(&self) -> Result<serde_json::Value, RewindError> {
        self.read_json("/v1/vpgs").await
    }

    /// Whether `GET path` answers 200 (what it answers is not read further): a harmless probe of
    /// what this account may read.
    pub async fn can_read(&self, path: &str) -> Result<(), RewindError> {
        self.get_json::<serde_json::Value>(path, &[])
            .await
            .map(|_| ())
    }
}
