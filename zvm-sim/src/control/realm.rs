//! `/_sim/realm`: the Keycloak realm changed as its administrator, or someone who took the path to
//! it, would: a new signing key, a key taken out of the JWKS, an OpenID configuration naming another
//! issuer or another JWKS. A client that checks the realm's tokens is tested against each; a slow
//! or absent JWKS is a fault rule on `/auth/realms/zerto/protocol/openid-connect/certs`.

use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;

use crate::http::{ApiError, JsonBody, SiteCtx};
use crate::realm::{RealmControl, SigningError};

/// `GET /_sim/realm`: the realm's keys and what its OpenID configuration is made to name.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct RealmView {
    keys: Vec<KeyView>,
    issuer: Option<String>,
    jwks_uri: Option<String>,
}

/// One key of the realm.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
struct KeyView {
    kid: String,
    /// In the JWKS.
    published: bool,
    /// What new tokens are signed with.
    signing: bool,
}

fn view(realm: &RealmControl) -> Result<Json<RealmView>, ApiError> {
    let signing = realm.signing().map_err(broken)?;
    let keys = realm
        .keys()
        .map_err(broken)?
        .into_iter()
        .map(|(key, published)| KeyView {
            kid: key.kid().to_owned(),
            published,
            signing: key.kid() == signing.kid(),
        })
        .collect();
    Ok(Json(RealmView {
        keys,
        issuer: realm.issuer.clone(),
        jwks_uri: realm.jwks_uri.clone(),
    }))
}

fn broken(error: SigningError) -> ApiError {
    ApiError::Internal(format!("{error}; start the simulator again."))
}

/// `GET /_sim/realm`.
pub(crate) async fn show(State(ctx): State<SiteCtx>) -> Result<Json<RealmView>, ApiError> {
    view(&ctx.shared.realm())
}

/// `POST /_sim/realm/keys`: a new key signs every token from now on; the older ones stay in the
/// JWKS until withdrawn, as in a Keycloak key rotation.
pub(crate) async fn rotate(State(ctx): State<SiteCtx>) -> Result<Json<RealmView>, ApiError> {
    let mut realm = ctx.shared.realm();
    realm.rotate().map_err(broken)?;
    view(&realm)
}

/// `DELETE /_sim/realm/keys/{kid}`: the key leaves the JWKS; tokens it signed no longer verify
/// for a client that reads the JWKS again.
pub(crate) async fn withdraw(
    State(ctx): State<SiteCtx>,
    Path(kid): Path<String>,
) -> Result<Json<RealmView>, ApiError> {
    let mut realm = ctx.shared.realm();
    if !realm.withdraw(&kid).map_err(broken)? {
        return Err(ApiError::NotFound(format!(
            "The realm has no key {kid:?}; GET /_sim/realm lists its keys."
        )));
    }
    view(&realm)
}

/// `PUT /_sim/realm/discovery {"Issuer"?: URL, "JwksUri"?: URL}`: what the realm's OpenID
/// configuration names instead of its own issuer and JWKS; a field left out (or null) is the
/// realm's own again, so `{}` undoes both.
pub(crate) async fn discovery(
    State(ctx): State<SiteCtx>,
    body: JsonBody,
) -> Result<Json<RealmView>, ApiError> {
    let issuer = body.text("Issuer")?.map(str::to_owned);
    let jwks_uri = body.text("JwksUri")?.map(str::to_owned);
    let mut realm = ctx.shared.realm();
    realm.issuer = issuer;
    realm.jwks_uri = jwks_uri;
    view(&realm)
}
