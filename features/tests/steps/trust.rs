//! Trusting the appliance's certificate: HTTPS with each site's own self-signed certificate.

use cucumber::{given, then};
use features::RewindWorld;
use features::world::Trust;

use super::fronts::result;

#[given("Zerto serves HTTPS with a self-signed certificate per site")]
async fn serves_https(world: &mut RewindWorld) {
    world.before_start("HTTPS");
    world.tls = true;
}

#[given("rewind trusts each site's own certificate")]
async fn trusts_site_certificate(world: &mut RewindWorld) {
    world.reconfigure(|w| w.trust = Trust::SiteCertificate);
}

#[given("rewind trusts only the platform's certificate authorities")]
async fn trusts_platform(world: &mut RewindWorld) {
    world.reconfigure(|w| w.trust = Trust::Platform);
}

#[given("rewind is told to skip certificate verification")]
async fn insecure(world: &mut RewindWorld) {
    world.reconfigure(|w| w.trust = Trust::Insecure);
}

#[then("every site is reached over HTTPS")]
async fn over_https(world: &mut RewindWorld) {
    for site in result(world).as_array().expect("sites") {
        assert!(
            site["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("https://")),
            "{site}"
        );
    }
}

#[then("Zerto received no request at all")]
async fn no_request(world: &mut RewindWorld) {
    let calls = world.sim().await.calls().await;
    assert!(calls.is_empty(), "Zerto received: {calls:#?}");
}
