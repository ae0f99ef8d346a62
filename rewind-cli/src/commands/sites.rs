//! `rewind sites`: each configured ZVM, read now.

use rewind_core::{ErrorKind, Rewind, SiteStatus};

use crate::exit::CliError;
use crate::output::{Reply, Table};

/// The result is the core's list of `SiteStatus`. Any site that cannot be reached makes the command
/// exit with the connection code, after printing every site; no site configured at all is the core's
/// `NoSites` error (usage).
pub async fn sites(rewind: &Rewind) -> Result<Reply, CliError> {
    rewind.config().require_sites()?;
    let sites = rewind.sites().await;
    let reply = Reply::new(&sites, sites_text(&sites))?;
    let down: Vec<String> = sites
        .iter()
        .filter(|s| !s.reachable)
        .map(|s| {
            format!(
                "site {} ({}) is not reachable: {}",
                s.name,
                s.url,
                s.error.as_deref().unwrap_or("no answer")
            )
        })
        .collect();
    Ok(if down.is_empty() {
        reply
    } else {
        reply.failed(ErrorKind::Connection, down.join("; "))
    })
}

fn sites_text(sites: &[SiteStatus]) -> String {
    let mut t = Table::new(&[
        "SITE",
        "URL",
        "REACHABLE",
        "VERSION",
        "LOCAL SITE",
        "SITE ID",
    ]);
    for s in sites {
        let mut url = s.url.clone();
        if s.insecure {
            url.push_str(" (TLS verification OFF)");
        }
        t.row(vec![
            s.name.clone(),
            url,
            if s.reachable { "yes" } else { "NO" }.into(),
            s.version.clone().unwrap_or_default(),
            s.site_name.clone().unwrap_or_default(),
            s.site_id.clone().unwrap_or_default(),
        ]);
    }
    let mut out = t.render();
    for s in sites.iter().filter(|s| !s.reachable) {
        if let Some(e) = &s.error {
            out.push_str(&format!("{}: {e}\n", s.name));
        }
    }
    out
}
