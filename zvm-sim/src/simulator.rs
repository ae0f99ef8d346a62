//! A running simulator: [`start`] binds both sites and serves them in the background, [`run`] does
//! the same until a shutdown future resolves (the binary), and [`Simulator`] is what started.

use std::future::Future;

use crate::error::StartError;
use crate::options::Options;
use crate::serve::{self, SiteEndpoint};
use crate::shared::SimState;
use crate::tls;
use crate::world::SiteRole;
use crate::world::state::StateError;

/// A running simulator. Dropping it stops both sites at once; [`Simulator::shutdown`] stops them
/// gracefully and waits for them to finish.
#[derive(Debug)]
pub struct Simulator {
    local: SiteEndpoint,
    peer: SiteEndpoint,
    state: SimState,
    servers: Vec<serve::ServedSite>,
    state_file: Option<std::path::PathBuf>,
    /// Kept for its lifetime: a temporary certificate folder is removed when the simulator goes.
    _certificates: Option<tls::CertificateFolder>,
}

impl Simulator {
    /// The local site (Boston in the default world).
    pub fn local(&self) -> &SiteEndpoint {
        &self.local
    }

    /// The peer site (Denver in the default world).
    pub fn peer(&self) -> &SiteEndpoint {
        &self.peer
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.state.seed()
    }

    /// The shared state, to build extra routers on the same world.
    pub fn state(&self) -> &SimState {
        &self.state
    }

    /// Writes the whole world to the state file of the options, if they name one.
    pub fn save_state(&self) -> Result<(), StateError> {
        match &self.state_file {
            Some(path) => self.state.save(path),
            None => Ok(()),
        }
    }

    /// Stops both sites, waits until they have finished serving, then writes the state file if
    /// the options name one (a failure to write it is logged; [`Simulator::shutdown_saving`]
    /// returns it instead).
    pub async fn shutdown(self) {
        if let Err(error) = self.shutdown_saving().await {
            tracing::error!(%error, "the state could not be saved");
        }
    }

    /// Like [`Simulator::shutdown`], with the failure to write the state file returned, so a
    /// caller can say the run's state was lost (the binary exits with an error).
    pub async fn shutdown_saving(mut self) -> Result<(), StateError> {
        for server in std::mem::take(&mut self.servers) {
            server.shutdown().await;
        }
        self.save_state()?;
        if let Some(path) = &self.state_file {
            tracing::info!(path = %path.display(), "state saved");
        }
        Ok(())
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        for server in &self.servers {
            server.abort();
        }
    }
}

/// Binds both sites and serves them in the background.
pub async fn start(options: Options) -> Result<Simulator, StartError> {
    let state = SimState::new(&options)?;
    let certificates = if options.tls {
        Some(tls::CertificateFolder::open(options.tls_dir.as_deref())?)
    } else {
        None
    };
    let mut servers = Vec::with_capacity(2);
    for (site, addr) in [
        (SiteRole::Local, options.listen),
        (SiteRole::Peer, options.peer_listen),
    ] {
        let tls = match &certificates {
            Some(folder) => Some(folder.site(&state.site_name(site), addr).await?),
            None => None,
        };
        servers.push(serve::serve_site(&state, site, addr, tls).await?);
    }
    Ok(Simulator {
        local: servers[0].endpoint.clone(),
        peer: servers[1].endpoint.clone(),
        state,
        servers,
        state_file: options.state_file,
        _certificates: certificates,
    })
}

/// What the binary runs: starts both sites, prints the seed and one `<site> listening on
/// http://ADDR` line per site to stdout (with TLS, `https://` and then one `<site> certificate
/// PATH` line per site), serves until `shutdown` resolves, then stops and writes the state file
/// if the options name one ([`StartError::NotSaved`] if it cannot).
pub async fn run(
    options: Options,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), StartError> {
    let simulator = start(options).await?;
    print_banner(&simulator);
    shutdown.await;
    simulator
        .shutdown_saving()
        .await
        .map_err(StartError::NotSaved)
}

/// The binary's documented start-up lines, read by people and scripts. A closed stdout (a
/// script that read what it needed and went away) must not stop the simulator, so write errors
/// are ignored rather than panicking as `println!` would.
fn print_banner(simulator: &Simulator) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let seed = simulator.seed();
    let _ = writeln!(out, "zvm-sim seed {seed} (run again with --seed {seed})");
    for site in [simulator.local(), simulator.peer()] {
        let _ = writeln!(out, "{} listening on {}", site.name, site.url);
    }
    for site in [simulator.local(), simulator.peer()] {
        if let Some(pem) = &site.certificate_pem {
            let _ = writeln!(out, "{} certificate {}", site.name, pem.display());
        }
    }
    let _ = out.flush();
}
