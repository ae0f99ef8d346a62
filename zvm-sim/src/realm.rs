//! The Keycloak realm's signing key, and the OpenID documents that publish it: what an `id_token`
//! is signed with (RS256, as Keycloak's default realm key), the JWKS at Keycloak's `certs` path and
//! the realm's OpenID configuration, so that a client can check what it was given.
//!
//! The key signs every access token (and `id_token`) the sites issue. It is made when first needed
//! and is the process's: every simulator in a process (and both of its sites) signs with it, so a
//! test run makes one 2048-bit RSA key, not one per simulator; a restored state keeps it, a new
//! process has another, as a new realm would.
//!
//! The control API can change one simulator's realm as an administrator or an attacker would
//! ([`RealmControl`]): rotate to a new key (both published, the new one signing), withdraw a key
//! from the JWKS, and make the OpenID configuration name another issuer or JWKS. A reset undoes it.

use std::sync::{Arc, OnceLock};

use aws_lc_rs::rsa::{KeyPair, KeySize};
use aws_lc_rs::signature::{KeyPair as _, RSA_PKCS1_SHA256};
use aws_lc_rs::{digest, rand::SystemRandom};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::decisions::REALM;

/// A realm's RS256 key.
#[derive(Debug)]
pub(crate) struct RealmKey {
    pair: KeyPair,
    kid: String,
}

/// Why nothing could be signed: the crypto library refused (it never does for a key it made).
#[derive(Debug, thiserror::Error)]
#[error("the realm key could not {0}")]
pub(crate) struct SigningError(&'static str);

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

impl RealmKey {
    fn generate() -> Result<RealmKey, SigningError> {
        let pair = KeyPair::generate(KeySize::Rsa2048).map_err(|_| SigningError("be made"))?;
        let modulus = pair.public_key().modulus();
        let thumb = digest::digest(&digest::SHA256, modulus.big_endian_without_leading_zero());
        let kid = b64(thumb.as_ref());
        Ok(RealmKey { pair, kid })
    }

    /// A compact JWT of `claims`, signed RS256 under this key's `kid`.
    pub fn sign(&self, claims: &Value) -> Result<String, SigningError> {
        let header = json!({"alg": "RS256", "typ": "JWT", "kid": self.kid});
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let mut signature = vec![0; self.pair.public_modulus_len()];
        self.pair
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                input.as_bytes(),
                &mut signature,
            )
            .map_err(|_| SigningError("sign"))?;
        Ok(format!("{input}.{}", b64(&signature)))
    }

    /// The key's id, as its tokens' headers and the JWKS name it.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key as one entry of a JWKS, Keycloak's shape.
    pub fn jwk(&self) -> Value {
        let public = self.pair.public_key();
        json!({
            "kid": self.kid,
            "kty": "RSA",
            "alg": "RS256",
            "use": "sig",
            "n": b64(public.modulus().big_endian_without_leading_zero()),
            "e": b64(public.exponent().big_endian_without_leading_zero()),
        })
    }
}

/// The process's realm key, made on first use.
static REALM_KEY: OnceLock<Arc<RealmKey>> = OnceLock::new();

/// The realm key, made now if it was not yet.
pub(crate) fn realm_key() -> Result<&'static Arc<RealmKey>, SigningError> {
    if let Some(key) = REALM_KEY.get() {
        return Ok(key);
    }
    let made = Arc::new(RealmKey::generate()?);
    // Two first uses at once: one key wins, and both use it.
    let _ = REALM_KEY.set(made);
    REALM_KEY.get().ok_or(SigningError("be kept"))
}

/// What the control API changed in one simulator's realm.
#[derive(Debug, Default)]
pub(crate) struct RealmControl {
    /// Keys made by rotation, oldest first; the newest one still published signs.
    added: Vec<Arc<RealmKey>>,
    /// The ids of keys no longer in the JWKS.
    withdrawn: Vec<String>,
    /// The `issuer` the OpenID configuration names instead of the realm's own.
    pub issuer: Option<String>,
    /// The `jwks_uri` the OpenID configuration names instead of the realm's own.
    pub jwks_uri: Option<String>,
}

impl RealmControl {
    /// Every key of the realm, the process's first, and whether it is published.
    pub fn keys(&self) -> Result<Vec<(Arc<RealmKey>, bool)>, SigningError> {
        let mut all = vec![realm_key()?.clone()];
        all.extend(self.added.iter().cloned());
        Ok(all
            .into_iter()
            .map(|k| {
                let published = !self.withdrawn.contains(&k.kid);
                (k, published)
            })
            .collect())
    }

    /// The key tokens are signed with: the newest published one, else the newest of all (its
    /// tokens then verify with no published key, as a realm whose JWKS lost its key).
    pub fn signing(&self) -> Result<Arc<RealmKey>, SigningError> {
        let keys = self.keys()?;
        let newest_published = keys.iter().rev().find(|(_, published)| *published);
        let (key, _) = newest_published
            .or(keys.last())
            .ok_or(SigningError("be found"))?;
        Ok(key.clone())
    }

    /// Makes a new key, which signs from now on; the others stay published.
    pub fn rotate(&mut self) -> Result<String, SigningError> {
        let key = Arc::new(RealmKey::generate()?);
        let kid = key.kid.clone();
        self.added.push(key);
        Ok(kid)
    }

    /// Takes key `kid` out of the JWKS; `false` when the realm has no such key.
    pub fn withdraw(&mut self, kid: &str) -> Result<bool, SigningError> {
        if !self.keys()?.iter().any(|(k, _)| k.kid == kid) {
            return Ok(false);
        }
        if !self.withdrawn.iter().any(|w| w == kid) {
            self.withdrawn.push(kid.to_owned());
        }
        Ok(true)
    }

    /// The JWKS: every published key.
    pub fn jwks(&self) -> Result<Value, SigningError> {
        let keys: Vec<Value> = self
            .keys()?
            .into_iter()
            .filter(|(_, published)| *published)
            .map(|(k, _)| k.jwk())
            .collect();
        Ok(json!({ "keys": keys }))
    }

    /// The OpenID configuration under `base`, with the overrides.
    pub fn openid_configuration(&self, base: &str) -> Value {
        let mut document = openid_configuration(base);
        if let Some(issuer) = &self.issuer {
            document["issuer"] = json!(issuer);
        }
        if let Some(jwks_uri) = &self.jwks_uri {
            document["jwks_uri"] = json!(jwks_uri);
        }
        document
    }
}

/// The `jti` of a compact JWT this realm issued: what the sites keep their access tokens by. `None`
/// for what is not a JWT (an opaque token of a state saved before tokens were signed).
pub(crate) fn jwt_id(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims["jti"].as_str().map(str::to_owned)
}

/// The realm's issuer, as Keycloak names it: its URL under the base the client used.
pub(crate) fn issuer(base: &str) -> String {
    format!("{base}/auth/realms/{REALM}")
}

/// `at_hash`: the left half of the access token's SHA-256, base64url (OpenID Connect Core 3.1.3.6).
pub(crate) fn at_hash(access_token: &str) -> String {
    let hash = digest::digest(&digest::SHA256, access_token.as_bytes());
    b64(&hash.as_ref()[..16])
}

/// `GET /auth/realms/{realm}/.well-known/openid-configuration`: what this realm offers.
pub(crate) fn openid_configuration(base: &str) -> Value {
    let issuer = issuer(base);
    let oidc = format!("{issuer}/protocol/openid-connect");
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{oidc}/auth"),
        "token_endpoint": format!("{oidc}/token"),
        "jwks_uri": format!("{oidc}/certs"),
        "grant_types_supported": [
            "authorization_code",
            "password",
            "client_credentials",
            "refresh_token"
        ],
        "code_challenge_methods_supported": ["S256"],
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid", "profile", "email"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "claims_supported": ["sub", "iss", "aud", "exp", "iat", "preferred_username", "email"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::signature::{RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents};
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    #[test]
    fn a_signed_jwt_verifies_with_the_published_key_and_names_its_kid() {
        let key = realm_key().unwrap();
        assert!(Arc::ptr_eq(key, realm_key().unwrap()), "made once");
        let jwt = key.sign(&json!({"sub": "admin"})).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        let jwk = &key.jwk();
        assert_eq!(header["kid"], jwk["kid"]);
        let component = |name: &str| URL_SAFE_NO_PAD.decode(jwk[name].as_str().unwrap()).unwrap();
        let public = RsaPublicKeyComponents {
            n: component("n"),
            e: component("e"),
        };
        let signed = format!("{}.{}", parts[0], parts[1]);
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        public
            .verify(&RSA_PKCS1_2048_8192_SHA256, signed.as_bytes(), &signature)
            .expect("the signature verifies");
        let forged = format!("{}.{}", parts[0], b64(br#"{"sub":"root"}"#));
        assert!(
            public
                .verify(&RSA_PKCS1_2048_8192_SHA256, forged.as_bytes(), &signature)
                .is_err()
        );
    }

    #[test]
    fn a_jwts_id_is_read_from_its_claims_and_anything_else_has_none() {
        let jwt = realm_key().unwrap().sign(&json!({"jti": "abc"})).unwrap();
        assert_eq!(jwt_id(&jwt).as_deref(), Some("abc"));
        assert_eq!(jwt_id("0123456789abcdef"), None);
        assert_eq!(jwt_id("a.b.c"), None);
    }

    #[test]
    fn at_hash_is_the_left_half_of_the_tokens_sha_256() {
        // OpenID Connect Core's example: the access token "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y"
        // has at_hash "77QmUPtjPfzWtF2AnpK9RQ".
        assert_eq!(
            at_hash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y"),
            "77QmUPtjPfzWtF2AnpK9RQ"
        );
    }
}
