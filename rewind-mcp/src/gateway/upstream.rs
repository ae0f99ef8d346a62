//! Reaching one upstream: a child process over stdio whose environment is bare but for `PATH`,
//! `HOME`, `LANG` and its own `env` (never the gateway's ZVM credentials, whatever the gateway's
//! environment holds), or a streamable HTTP server reached with the gateway's own credential (never
//! the client's token).

use std::process::Stdio;

use rewind_core::config::{Reach, Upstream, UpstreamCredential};
use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

use super::client::UpstreamClient;

/// The variables of the gateway's environment a child upstream gets.
pub const PASSED_ON: [&str; 3] = ["PATH", "HOME", "LANG"];

/// A running connection to an upstream.
pub type Connection = RunningService<RoleClient, UpstreamClient>;

/// Connects to `upstream`, started or reached as its configuration says, or says why not in a
/// sentence that names it.
pub async fn connect(upstream: &Upstream, client: UpstreamClient) -> Result<Connection, String> {
    let why = |e: &dyn std::fmt::Display| {
        format!(
            "upstream {} ({}) could not be reached: {e}",
            upstream.name,
            upstream.reached_at()
        )
    };
    match &upstream.reach {
        Reach::Child { .. } => {
            let child = child(upstream).map_err(|e| why(&e))?;
            client.serve(child).await.map_err(|e| why(&e))
        }
        Reach::Http { .. } => {
            let transport = http(upstream).await.map_err(|e| why(&e))?;
            client.serve(transport).await.map_err(|e| why(&e))
        }
    }
}

/// The child process of an upstream run as a command, its stderr the gateway's.
fn child(upstream: &Upstream) -> Result<TokioChildProcess, String> {
    let Reach::Child { command, args, env } = &upstream.reach else {
        unreachable!("child() is called for a command's upstream only")
    };
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).env_clear();
    for key in PASSED_ON {
        if let Some(value) = std::env::var_os(key) {
            cmd.env(key, value);
        }
    }
    for (key, value) in env {
        cmd.env(key, value.expose());
    }
    let (child, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{command} did not start ({e})"))?;
    Ok(child)
}

/// The streamable HTTP transport of an upstream reached by URL.
async fn http(
    upstream: &Upstream,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let Reach::Http {
        url,
        ca_cert,
        credential,
    } = &upstream.reach
    else {
        unreachable!("http() is called for a URL's upstream only")
    };
    let mut builder = reqwest::Client::builder();
    if let Some(path) = ca_cert {
        let certs = rewind_core::trust::pinned_certificates(path)
            .map_err(|why| format!("its CA certificate: {why}; fix its ca_cert"))?;
        builder = builder.tls_certs_only(certs);
    }
    let http = builder
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let token = match credential {
        None => None,
        Some(UpstreamCredential::BearerEnv(name)) => Some(from_env(name, "bearer_env")?),
        Some(UpstreamCredential::ClientCredentials {
            token_url,
            client_id,
            secret_env,
        }) => {
            let secret = from_env(secret_env, "client_secret_env")?;
            Some(client_token(&http, token_url, client_id, &secret).await?)
        }
    };
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    Ok(StreamableHttpClientTransport::with_client(http, config))
}

/// The value of the environment variable `name`, which the key `key` names.
fn from_env(name: &str, key: &str) -> Result<String, String> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| {
            format!("its {key} names ${name}, which is not set in the gateway's environment")
        })
}

/// An access token for `client_id` from `token_url` (OAuth client credentials).
async fn client_token(
    http: &reqwest::Client,
    token_url: &url::Url,
    client_id: &str,
    secret: &str,
) -> Result<String, String> {
    #[derive(serde::Deserialize)]
    struct Token {
        access_token: String,
    }
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", client_id),
        ("client_secret", secret),
    ];
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let response = http
        .post(token_url.clone())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("its token endpoint did not answer ({})", e.without_url()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!(
            "its token endpoint refused the client {client_id} (HTTP {status}); check client_id and the secret in its client_secret_env"
        ));
    }
    response
        .json::<Token>()
        .await
        .map(|t| t.access_token)
        .map_err(|_| "its token endpoint answered without an access_token".to_owned())
}
