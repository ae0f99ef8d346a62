//! Steps that need a ZVM site and the control API together: a tagged checkpoint listed on a frozen
//! clock, and another client's insert. They live apart from both clients so that neither client
//! depends on the other.

use super::control::Control;
use super::site::Site;

impl Site {
    /// Inserts a tagged checkpoint, lets it complete and be listed (on a frozen clock), and
    /// returns its `CheckpointIdentifier`.
    pub async fn tag(&self, control: &Control, vpg_id: &str, name: &str) -> String {
        let task = self.insert(vpg_id, name).await;
        control.advance(1.0).await;
        assert_eq!(self.task(&task).await["Status"]["State"], 6);
        let tagged = self.tagged(vpg_id, name).await;
        tagged[0]["CheckpointIdentifier"]
            .as_str()
            .expect("a listed tag")
            .to_owned()
    }
}

impl Control {
    /// Inserts a tagged checkpoint into the VPG named `vpg` as another client would (a ZVM user,
    /// `admin`, through the site this control serves), and returns its task id.
    pub async fn insert_as_another_client(&self, vpg: &str, name: &str) -> String {
        let admin = Site::login(self.http(), self.base(), "admin", "admin").await;
        let vpg_id = self.vpg_id(vpg).await;
        admin.insert(&vpg_id, name).await
    }
}
