//! Task-duration jitter: `Options::task_jitter` 0 gives every task exactly its nominal duration;
//! otherwise durations vary within the jitter, drawn from the seed.

use chrono::DateTime;
use zvm_sim::Options;
use zvm_sim::test_kit::{TestSim, spawn_with};

/// Tagged inserts run on a frozen clock, one at a time.
const INSERTS: usize = 8;

/// A frozen simulator with this seed and jitter (50 ms tasks, as `for_tests`).
async fn frozen(seed: u64, task_jitter: f64) -> TestSim {
    spawn_with(Options {
        time_scale: 0.0,
        task_jitter,
        ..Options::for_tests(seed)
    })
    .await
}

/// Runs `INSERTS` inserts into web-dr, each after the previous one ended, and returns each task's
/// identifier and duration in milliseconds (Completed − Started), from `/_sim/tasks`.
async fn insert_durations(t: &TestSim) -> Vec<(String, i64)> {
    let boston = t.boston().await;
    let web_dr = boston.vpg_id("web-dr").await;
    for n in 0..INSERTS {
        boston.insert(&web_dr, &format!("tag-{n}")).await;
        t.control.advance(1.0).await;
    }
    let tasks = t.control.get("tasks").await;
    let tasks = tasks.as_array().expect("an array of tasks");
    assert_eq!(tasks.len(), INSERTS, "{tasks:?}");
    tasks
        .iter()
        .map(|task| {
            assert_eq!(task["State"], 6, "every insert completed: {task}");
            let at = |key: &str| {
                DateTime::parse_from_rfc3339(task[key].as_str().expect(key))
                    .unwrap_or_else(|e| panic!("{key} of {task}: {e}"))
            };
            let id = task["TaskIdentifier"].as_str().expect("an id").to_owned();
            (id, (at("Completed") - at("Started")).num_milliseconds())
        })
        .collect()
}

#[tokio::test]
async fn at_a_jitter_of_zero_every_task_runs_exactly_its_nominal_duration() {
    let durations = insert_durations(&frozen(7, 0.0).await).await;
    for (id, ms) in &durations {
        assert_eq!(*ms, 50, "task {id}");
    }
}

#[tokio::test]
async fn with_jitter_durations_vary_within_it_and_one_seed_gives_the_same_ones() {
    let first = insert_durations(&frozen(7, 0.2).await).await;
    let again = insert_durations(&frozen(7, 0.2).await).await;
    assert_eq!(first, again, "one seed, one sequence of durations");
    let ms: Vec<i64> = first.iter().map(|(_, ms)| *ms).collect();
    assert!(ms.iter().all(|ms| (40..=60).contains(ms)), "{ms:?}");
    assert!(ms.iter().any(|&d| d != ms[0]), "durations vary: {ms:?}");
    let other = insert_durations(&frozen(8, 0.2).await).await;
    let other: Vec<i64> = other.iter().map(|(_, ms)| *ms).collect();
    assert_ne!(ms, other, "another seed, other durations");
}

#[tokio::test]
async fn the_jitter_does_not_change_a_seeds_task_ids() {
    let exact = insert_durations(&frozen(7, 0.0).await).await;
    let jittered = insert_durations(&frozen(7, 0.2).await).await;
    let ids = |tasks: &[(String, i64)]| tasks.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&exact), ids(&jittered));
}
