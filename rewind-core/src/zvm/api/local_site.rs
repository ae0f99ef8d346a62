//! `/v1/localsite`: the site's own identity, read once and remembered by the client.

use crate::error::RewindError;
use crate::zvm::client::ZvmClient;
use crate::zvm::wire::LocalSite;

impl ZvmClient {
    /// `GET /v1/localsite`, read once and remembered.
    pub async fn local_site(&self) -> Result<&LocalSite, RewindError> {
        self.local.get_or_try_init(|| self.read_local_site()).await
    }

    /// `GET /v1/localsite` now (a status check), remembered if nothing was yet.
    pub async fn read_local_site(&self) -> Result<LocalSite, RewindError> {
        let site: LocalSite = self.get_json("/v1/localsite", &[]).await?;
        if site.site_identifier.is_none() {
            return Err(self.unexpected("GET /v1/localsite".into(), "it has no SiteIdentifier"));
        }
        let _ = self.local.set(site.clone());
        Ok(site)
    }

    /// This ZVM's site identifier (its local site's GUID).
    pub async fn site_identifier(&self) -> Result<String, RewindError> {
        Ok(self
            .local_site()
            .await?
            .site_identifier
            .clone()
            .unwrap_or_default())
    }
}
