//! The two sites' pairing (`POST` and `DELETE /v1/peersites`). The simulator's sites start paired;
//! a pairing is undone only when no VPG replicates between them (a ZVM removes those VPGs with
//! the pairing; the simulator asks for them to be deleted first, so nothing disappears by side
//! effect), and made again with a token the peer generated (`POST /v1/peersites/generatetoken`),
//! naming the peer as its listing does.

use super::clock::SimTime;
use super::ids::SiteRole;
use super::model::World;
use super::refusal::Refusal;
use crate::decisions::PEER_PORT;

impl World {
    /// Whether the two sites are paired.
    pub fn paired(&self) -> bool {
        !self.sites[0].unpaired
    }

    /// `DELETE /v1/peersites/{id}` at `site`: unpairs it from its peer `peer_id`.
    pub fn unpair(&mut self, site: SiteRole, peer_id: &str) -> Result<(), Refusal> {
        let peer = site.other();
        if !self.paired() || !self.site(peer).id.eq_ignore_ascii_case(peer_id) {
            return Err(Refusal::NotFound(format!(
                "There is no peer site '{peer_id}' paired with site {}: list them with GET /v1/peersites.",
                self.site(site).name
            )));
        }
        let between: Vec<&str> = self
            .vpgs
            .iter()
            .filter(|v| !v.deleted && v.protected != v.recovery)
            .map(|v| v.name.as_str())
            .collect();
        if !between.is_empty() {
            return Err(Refusal::Conflict(format!(
                "{} VPG(s) replicate between {} and {} ({}): delete them first (DELETE /v1/vpgs/{{id}}); the simulator does not remove them with the pairing.",
                between.len(),
                self.site(site).name,
                self.site(peer).name,
                between.join(", ")
            )));
        }
        for s in &mut self.sites {
            s.unpaired = true;
        }
        Ok(())
    }

    /// `POST /v1/peersites` at `site` `{hostName, port, token}`: pairs it again with its peer, whose
    /// address and unexpired token these must be.
    pub fn pair(
        &mut self,
        site: SiteRole,
        host: &str,
        port: u16,
        token: &str,
        now: SimTime,
    ) -> Result<(), Refusal> {
        let peer = self.site(site.other());
        if self.paired() {
            return Err(Refusal::Conflict(format!(
                "Site {} is already paired with {}.",
                self.site(site).name,
                peer.name
            )));
        }
        if !peer.ip.eq_ignore_ascii_case(host.trim()) || port != PEER_PORT {
            return Err(Refusal::BadRequest(format!(
                "No ZVM to pair with answers at {host}:{port}: the peer site {} is at {}:{}.",
                peer.name, peer.ip, PEER_PORT
            )));
        }
        let valid = peer
            .pairing_token
            .as_ref()
            .is_some_and(|(t, until)| t == token.trim() && *until > now);
        if !valid {
            return Err(Refusal::BadRequest(format!(
                "The token is not one {} generated, or it expired: generate one there with POST /v1/peersites/generatetoken.",
                peer.name
            )));
        }
        for s in &mut self.sites {
            s.unpaired = false;
        }
        Ok(())
    }
}
