//! Starting and stopping: `shutdown` finishes even while clients keep connections open, and a
//! dropped simulator stops serving.

use std::time::Duration;

use zvm_sim::test_kit::spawn;

async fn refused(url: &str) -> bool {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let give_up = tokio::time::Instant::now() + zvm_sim::test_kit::DEADLINE;
    loop {
        if client
            .get(format!("{url}/_sim/clock"))
            .send()
            .await
            .is_err()
        {
            return true;
        }
        if tokio::time::Instant::now() >= give_up {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn shutdown_finishes_while_a_client_keeps_its_connection_open() {
    let t = spawn(21).await;
    let boston = t.boston().await;
    boston.get_ok("/v1/vpgs").await;
    let url = t.boston_url().to_owned();
    tokio::time::timeout(zvm_sim::test_kit::DEADLINE, t.sim.shutdown())
        .await
        .expect("shutdown finishes with an idle keep-alive connection open");
    assert!(refused(&url).await, "Boston still answers after shutdown");
}

#[tokio::test]
async fn dropping_the_simulator_stops_both_sites() {
    let t = spawn(21).await;
    let urls = [t.boston_url().to_owned(), t.denver_url().to_owned()];
    drop(t);
    for url in urls {
        assert!(refused(&url).await, "{url} still answers after the drop");
    }
}
