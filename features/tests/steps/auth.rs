//! Authentication: token expiry, one session per user, many calls at once, wrong credentials. The
//! call log shows that each scenario really met what it is about (a refused token, one token fetch).

use cucumber::{given, then, when};
use features::RewindWorld;
use features::world::SignIn;
use serde_json::json;

#[given("Zerto allows one session per user")]
async fn session_limit(world: &mut RewindWorld) {
    world.before_start("one session per user");
    world.session_limit = true;
}

#[when(expr = "the agent finds the protection of {string} {int} times at the same moment")]
async fn many_finds(world: &mut RewindWorld, vm: String, times: usize) {
    let calls = (0..times)
        .map(|_| ("zerto_find_protection", json!({"vm": vm})))
        .collect();
    let answers = world.agent().await.call_at_once(calls).await;
    for answer in answers {
        world.keep(answer);
    }
}

#[then(expr = "all {int} answers succeed")]
async fn all_succeed(world: &mut RewindWorld, count: usize) {
    assert_eq!(world.answers.len(), count, "{count} answers");
    for a in &world.answers {
        assert!(a.ok, "{a:#?}");
        assert_eq!(a.result()["vm"]["name"], "web-01", "{a:#?}");
    }
}

#[given(expr = "rewind's client secret is {string}")]
async fn wrong_secret(world: &mut RewindWorld, secret: String) {
    world.reconfigure(|w| w.sign_in = SignIn::WrongSecret(secret));
}

#[then(expr = "the answer names a configured site that {string}")]
async fn names_site(world: &mut RewindWorld, words: String) {
    let message = world.last().error_message();
    assert!(
        ["site boston ", "site denver "]
            .iter()
            .any(|site| message.contains(site) && message.contains(&words)),
        "the message names the site that {words:?}: {message}"
    );
}
