//! Waiting for a Zerto task to end, and for a tagged checkpoint to be listed.
//!
//! Waiting is adaptive: the first poll comes quickly, or, once this client has learnt how long the
//! ZVM's inserts take, at the short end of that; when the task reports progress, its end is predicted
//! from it (capped by what was learnt, see [`predict_total`]) and the next poll is placed there; past
//! the predicted end, polls come quickly again and then back off. Without any prediction, the interval
//! is an eighth of the time already waited, and once the task has been read, no interval is longer than
//! the time already waited. Every wait is bounded by a deadline, and a deadline returns what is still
//! running instead of an error.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::port::InsertPort;
use super::wire::{Checkpoint, Task};
use crate::codes::{Code, is_terminal};
use crate::error::RewindError;
use crate::progress::{ProgressSink, Stage, TaskProgress};

pub use crate::codes::STATE_IN_PROGRESS;

/// The shortest polling floor a setting may give: short enough for the simulator's 50 ms tasks, long
/// enough not to spin. Tests and benches that run against the simulator set it.
pub const MIN_POLL: Duration = Duration::from_millis(2);

/// How a wait is paced: what was learnt of the thing waited for, and the shortest interval between
/// two polls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pace {
    /// The insert's duration (a task's wait) or the listing lag (a listing's wait), when learnt.
    pub(crate) learnt: Option<Duration>,
    /// The polling floor (`[guard] poll_floor_ms`).
    pub(crate) floor: Duration,
}

impl Pace {
    pub(crate) fn of(learnt: Option<Duration>, floor: Duration) -> Pace {
        Pace { learnt, floor }
    }
}
/// The longest interval between two polls.
pub const MAX_POLL: Duration = Duration::from_secs(1);

/// Where the first poll of a task goes, as a fraction of the duration learnt from earlier inserts. Task
/// durations vary (a ZVM's by far more than the simulator's ±20 %), so the first poll aims at the short
/// end: it either finds the task ended, or reads a progress late enough to predict the end within a few
/// percent, where the next poll goes. Aiming at the learnt duration itself finds short tasks late.
pub const FIRST_POLL_OF_LEARNT: f64 = 0.75;

/// The delay before the next poll.
///
/// `elapsed` is the time waited so far, `expected_total` the predicted total wait (if any), and
/// `past_polls` how many polls have already been made at or past that prediction.
///
/// Past the prediction, polls start at a 200th of the time waited (a task of 2 s is looked at every
/// 10 ms, one of 50 ms every 2) and grow by half each time: a long task is not read every 2 ms.
pub fn next_poll(
    elapsed: Duration,
    expected_total: Option<Duration>,
    past_polls: u32,
    floor: Duration,
) -> Duration {
    let fallback = (elapsed / 8).clamp(floor, MAX_POLL);
    match expected_total {
        Some(total) if total > elapsed + floor => (total - elapsed).min(MAX_POLL),
        Some(_) => (elapsed / 200)
            .clamp(floor, MAX_POLL)
            .mul_f64(1.5f64.powi(past_polls.min(20) as i32))
            .min(fallback.max(floor)),
        None => fallback,
    }
}

/// A look for a checkpoint that missed is followed after this fraction of the guard's time so far
/// (the insert's duration and the wait since it Completed): the checkpoint is seen at most 2.5 % of
/// the whole late, and a guard at an appliance's timings (D = 2 s, L = 0.5 s) looks three times, not
/// ten.
pub const LOOK_AGAIN_AFTER: u32 = 40;

/// The delay before the next look for a checkpoint, `elapsed` after the insert Completed, with the
/// listing lag `predicted` (if one was learnt) and the insert's duration `insert_took` (if known).
pub fn next_look(
    elapsed: Duration,
    predicted: Option<Duration>,
    insert_took: Option<Duration>,
    past_polls: u32,
    floor: Duration,
) -> Duration {
    match insert_took {
        Some(took) if predicted.is_none_or(|p| p <= elapsed + floor) => {
            ((took + elapsed) / LOOK_AGAIN_AFTER).clamp(floor, MAX_POLL)
        }
        _ => next_poll(elapsed, predicted, past_polls, floor),
    }
}

/// A task's total duration from its progress: a task at `p` % after `elapsed` is at most at `p + 1` %
/// (progress is an integer), so it needs at least `elapsed × 100 / (p + 1)` in all. This is a lower
/// bound only if the ZVM started the task when it was sent; see [`predict_total`].
pub fn predict_from_progress(elapsed: Duration, progress: u8) -> Option<Duration> {
    (1..100)
        .contains(&progress)
        .then(|| elapsed.mul_f64(100.0 / (f64::from(progress) + 1.0)))
}

/// The latest a task at `p` % after `elapsed` can end: its progress is at least `p` %, and it has run
/// for at most `elapsed` (counted from the send), so it needs at most `elapsed × 100 / p` in all,
/// however late the ZVM started it.
pub fn latest_from_progress(elapsed: Duration, progress: u8) -> Option<Duration> {
    (1..100)
        .contains(&progress)
        .then(|| elapsed.mul_f64(100.0 / f64::from(progress)))
}

/// The predicted total wait for a task, counted from when the write that started it was sent, after
/// `elapsed`, given its last reported `progress` (if it was read and reports one) and the insert
/// duration `learnt` from earlier inserts (if any).
///
/// Before the first reading, the first poll aims at [`FIRST_POLL_OF_LEARNT`] of the learnt duration.
/// After it, with a learnt duration, the next poll aims at the latest end that duration allows: the
/// rest of it after the progress read (progress is an integer, so a task at `p` % has at most
/// `100 − p` % to go), but never past the latest end the progress itself allows (a task faster than
/// learnt). Aiming at the earliest end instead (`elapsed × 100 / (p + 1)`) reads a task of 2 s a
/// few milliseconds before it ends, and then again and again: four reads where two do. With nothing
/// learnt, progress predicts the end ([`predict_from_progress`]); `elapsed` counts from the send, and
/// a busy ZVM or network starts the task later, so that prediction can overshoot (read at 1 % 60 ms
/// after its POST, a 50 ms task would be predicted to need 3 s), which [`wait_task`] bounds.
pub fn predict_total(
    elapsed: Duration,
    progress: Option<u8>,
    learnt: Option<Duration>,
) -> Option<Duration> {
    let Some(p) = progress else {
        return learnt.map(|d| d.mul_f64(FIRST_POLL_OF_LEARNT));
    };
    let Some(d) = learnt else {
        return predict_from_progress(elapsed, p);
    };
    let from_learnt = elapsed + d.mul_f64(f64::from(100u8.saturating_sub(p)) / 100.0);
    Some(match latest_from_progress(elapsed, p) {
        Some(latest) => latest.min(from_learnt),
        None => from_learnt,
    })
}

/// Who is being waited for, for progress updates.
pub(crate) struct Watch<'a> {
    pub(crate) sink: &'a dyn ProgressSink,
    pub(crate) site: &'a str,
    pub(crate) vpg_id: &'a str,
    pub(crate) vpg_name: &'a str,
    pub(crate) task_type: &'a str,
    pub(crate) began: Instant,
}

impl Watch<'_> {
    pub(crate) fn report(&self, stage: Stage, task_id: Option<&str>, task: Option<&Task>) {
        self.sink.update(&TaskProgress {
            site: self.site.to_string(),
            vpg_id: self.vpg_id.to_string(),
            vpg_name: self.vpg_name.to_string(),
            task_id: task_id.map(str::to_string),
            task_type: self.task_type.to_string(),
            stage,
            state: task.and_then(Task::state).map(Code::task_state),
            progress: task.and_then(Task::progress),
            elapsed: self.began.elapsed(),
        });
    }
}

/// How a wait for a task ended.
#[derive(Debug, Clone)]
pub(crate) enum TaskWait {
    /// The task is terminal (Failed, Stopped or Completed).
    Terminal(Task),
    /// The deadline came first; the last reading, if any.
    StillRunning(Option<Task>),
}

/// Polls `GET /v1/tasks/{id}` through the insert machine's `port` until the task is terminal or
/// `deadline` passes. `sent` is when the write that started it was sent, the origin of every
/// prediction.
pub(crate) async fn wait_task(
    port: &impl InsertPort,
    task_id: &str,
    sent: Instant,
    deadline: Instant,
    pace: Pace,
    watch: &Watch<'_>,
) -> Result<TaskWait, RewindError> {
    wait_task_until(port, task_id, sent, deadline, pace, watch, is_terminal).await
}

/// [`wait_task`], ending at the first state `ends` takes (a journal VM restore's ends at 2,
/// WaitingForUserInput, as well as at the terminal ones); a recovery's waits give it their site's
/// client, a port without shared reads.
pub(crate) async fn wait_task_until(
    client: &impl InsertPort,
    task_id: &str,
    sent: Instant,
    deadline: Instant,
    pace: Pace,
    watch: &Watch<'_>,
    ends: fn(i64) -> bool,
) -> Result<TaskWait, RewindError> {
    let Pace { learnt, floor } = pace;
    let mut last: Option<Task> = None;
    let mut past_polls = 0;
    loop {
        let elapsed = sent.elapsed();
        let progress = last.as_ref().and_then(Task::progress);
        let predicted = predict_total(elapsed, progress, learnt);
        let mut delay = next_poll(elapsed, predicted, past_polls, floor);
        if last.is_some() {
            // A prediction can still overshoot (a task started late, nothing learnt yet): never wait
            // longer than already waited, so an overshoot costs a few readings, not a second.
            delay = delay.min(elapsed.max(floor));
        }
        if predicted.is_some_and(|p| p <= elapsed + floor) {
            past_polls += 1;
        }
        let now = Instant::now();
        if now >= deadline {
            crate::metrics::metrics().task_seen(watch.task_type, "waited", sent.elapsed());
            return Ok(TaskWait::StillRunning(last));
        }
        if now + delay > deadline {
            delay = deadline - now;
        }
        tokio::time::sleep(delay).await;
        let task = client.task(task_id).await?;
        watch.report(Stage::Running, Some(task_id), Some(&task));
        if let Some(state) = task.state().filter(|s| ends(*s)) {
            let name = crate::codes::Code::task_state(state).name;
            crate::metrics::metrics().task_seen(watch.task_type, &name, sent.elapsed());
            return Ok(TaskWait::Terminal(task));
        }
        last = Some(task);
    }
}

/// Where a wait for a listed tag starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ListedFrom {
    /// The insert was seen Completed `at`, after running `insert_took` (when known): the origin of
    /// the listing-lag prediction, and what paces the looks ([`next_look`]).
    Completion {
        at: Instant,
        insert_took: Option<Duration>,
    },
    /// Now: a tag that may have been listed long ago is looked for (a reconciliation, an earlier
    /// attempt's tag).
    Now,
}

/// Polls the VPG's checkpoints (from `since` on, the ZVM's clock) until one carries `tag`, or `deadline`
/// passes, paced by the listing lag learnt of the site.
///
/// The first look is immediate: on a ZVM without listing lag, or after a long task, the checkpoint is
/// usually there already; and a wait from [`ListedFrom::Now`] looks for a tag that may have been
/// listed long ago. After an insert seen Completed, with a learnt lag and the insert's duration, the
/// first look is at 0.9 of the lag instead.
///
/// With the checkpoint comes the listing lag this wait saw: the middle between when the last look that
/// missed was sent (the start itself when none missed) and when the look that found it was sent,
/// both from the start. Learning instead the time until the finding answer arrived, or the finding
/// look's time alone, would teach the look's own round trip and its timer's lateness, and since the
/// next first look aims at 0.9 of what was learnt, that error feeds itself: under 64 concurrent guards
/// it settled some 8 ms after the checkpoint was listed. A first look that finds it halves what is
/// learnt, until a look misses and the middle is the lag again.
pub(crate) async fn wait_listed(
    port: &impl InsertPort,
    vpg_id: &str,
    tag: &str,
    since: Option<DateTime<Utc>>,
    from: ListedFrom,
    deadline: Instant,
    pace: Pace,
) -> Result<Option<(Checkpoint, Duration)>, RewindError> {
    let Pace {
        learnt: learnt_lag,
        floor,
    } = pace;
    let (completed, insert_took) = match from {
        ListedFrom::Completion { at, insert_took } => (at, insert_took),
        ListedFrom::Now => (Instant::now(), None),
    };
    let predicted = learnt_lag.map(|d| d.mul_f64(0.9));
    let mut past_polls = 0;
    let mut first = predicted.is_none() || insert_took.is_none();
    let mut missed_at = Duration::ZERO;
    loop {
        if !first {
            let elapsed = completed.elapsed();
            let mut delay = next_look(elapsed, predicted, insert_took, past_polls, floor);
            if predicted.is_none_or(|p| p <= elapsed + floor) {
                past_polls += 1;
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            if now + delay > deadline {
                delay = deadline - now;
            }
            tokio::time::sleep(delay).await;
        }
        first = false;
        let sent_at = completed.elapsed();
        let checkpoints = port.checkpoints_since(vpg_id, since).await?;
        if let Some(c) = find_tag(checkpoints, tag) {
            return Ok(Some((c, (missed_at + sent_at) / 2)));
        }
        missed_at = sent_at;
        if Instant::now() >= deadline {
            return Ok(None);
        }
    }
}

/// The newest checkpoint whose tag is exactly `tag`.
pub(crate) fn find_tag(checkpoints: Vec<Checkpoint>, tag: &str) -> Option<Checkpoint> {
    checkpoints
        .into_iter()
        .filter(|c| c.tag.as_deref() == Some(tag))
        .max_by_key(|c| c.time_stamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn without_a_prediction_the_first_poll_is_quick_and_later_ones_back_off_to_the_cap() {
        assert_eq!(next_poll(MS(0), None, 0, MIN_POLL), MIN_POLL);
        assert_eq!(next_poll(MS(80), None, 0, MIN_POLL), MS(10));
        assert_eq!(
            next_poll(Duration::from_secs(60), None, 0, MIN_POLL),
            MAX_POLL
        );
    }

    #[test]
    fn a_prediction_places_the_next_poll_at_the_predicted_end() {
        assert_eq!(next_poll(MS(5), Some(MS(50)), 0, MIN_POLL), MS(45));
        assert_eq!(
            next_poll(MS(5), Some(Duration::from_secs(30)), 0, MIN_POLL),
            MAX_POLL
        );
    }

    #[test]
    fn past_the_prediction_polls_are_quick_then_grow_but_never_spin() {
        let a = next_poll(MS(60), Some(MS(50)), 0, MIN_POLL);
        let b = next_poll(MS(62), Some(MS(50)), 3, MIN_POLL);
        assert_eq!(a, MIN_POLL);
        assert!(b > a && b <= MS(8), "{b:?}");
        assert!(next_poll(Duration::from_secs(10), Some(MS(50)), 40, MIN_POLL) <= MAX_POLL);
        assert!(next_poll(MS(0), Some(MS(0)), 0, MIN_POLL) >= MIN_POLL);
    }

    #[test]
    fn past_the_prediction_a_long_task_is_not_read_every_two_milliseconds() {
        let two_seconds = Duration::from_secs(2);
        assert_eq!(
            next_poll(two_seconds, Some(two_seconds), 0, MIN_POLL),
            MS(10)
        );
        assert_eq!(
            next_poll(two_seconds, Some(two_seconds), 1, MIN_POLL),
            MS(15)
        );
        assert_eq!(next_poll(MS(50), Some(MS(50)), 0, MIN_POLL), MIN_POLL);
    }

    #[test]
    fn a_look_that_missed_is_followed_after_a_fortieth_of_the_guard_so_far() {
        let d = Duration::from_secs(2);
        // An appliance: 2 s insert, 450 ms after it Completed.
        assert_eq!(
            next_look(MS(450), Some(MS(450)), Some(d), 0, MIN_POLL),
            MS(61) + MS(1) / 4
        );
        // Before the learnt lag, the look waits for it.
        assert_eq!(
            next_look(MS(100), Some(MS(450)), Some(d), 0, MIN_POLL),
            MS(350)
        );
        // A 50 ms insert is looked at every 2 ms, never faster.
        assert_eq!(
            next_look(MS(18), Some(MS(18)), Some(MS(50)), 0, MIN_POLL),
            MIN_POLL
        );
        // Without the insert's duration, as before: an eighth of the wait.
        assert_eq!(next_look(MS(80), None, None, 0, MIN_POLL), MS(10));
    }

    #[test]
    fn the_first_poll_aims_at_the_short_end_of_what_was_learnt() {
        assert_eq!(predict_total(MS(0), None, Some(MS(60))), Some(MS(45)));
        assert_eq!(predict_total(MS(0), None, None), None);
    }

    #[test]
    fn a_task_started_late_is_not_predicted_from_its_progress_alone() {
        // Read at 1 % 60 ms after the POST: progress alone says 3 s; 50 ms were learnt.
        let predicted = predict_total(MS(60), Some(1), Some(MS(50))).unwrap();
        assert!(predicted <= MS(110), "{predicted:?}");
        assert_eq!(predict_total(MS(60), Some(1), None), Some(MS(3000)));
    }

    #[test]
    fn a_task_started_on_time_is_read_at_the_latest_end_its_learnt_duration_allows() {
        // Read at 74 % 37.5 ms after the POST of a 50 ms task that was learnt at 50 ms: it has at
        // most 26 % of 50 ms to go.
        let predicted = predict_total(Duration::from_micros(37_500), Some(74), Some(MS(50)));
        assert_eq!(predicted, Some(Duration::from_micros(50_500)));
        // An appliance's 2 s insert read at 75 % after 1.5 s: at 2 s, not 1.974 s.
        let secs = Duration::from_secs;
        assert_eq!(
            predict_total(MS(1500), Some(75), Some(secs(2))),
            Some(secs(2))
        );
        // A task still at 0 % has about all of a learnt duration to go.
        assert_eq!(predict_total(MS(5), Some(0), Some(MS(50))), Some(MS(55)));
    }

    #[test]
    fn a_task_faster_than_learnt_is_read_by_the_latest_end_its_progress_allows() {
        // At 90 % after 90 ms, a task learnt at 200 ms needs at most 100 ms in all.
        assert_eq!(
            predict_total(MS(90), Some(90), Some(MS(200))),
            Some(MS(100))
        );
        assert_eq!(latest_from_progress(MS(90), 0), None);
    }

    #[test]
    fn progress_gives_a_lower_bound_of_the_total() {
        assert_eq!(predict_from_progress(MS(10), 19), Some(MS(50)));
        assert_eq!(predict_from_progress(MS(10), 0), None);
        assert_eq!(predict_from_progress(MS(10), 100), None);
    }

    #[test]
    fn find_tag_matches_exactly_and_takes_the_newest() {
        let cp = |id: &str, tag: Option<&str>, t: &str| Checkpoint {
            checkpoint_identifier: Some(id.into()),
            time_stamp: super::super::wire::parse_time(t),
            tag: tag.map(str::to_string),
        };
        let list = vec![
            cp("1", Some("a"), "2026-01-01T00:00:00Z"),
            cp("2", Some("a"), "2026-01-01T00:00:05Z"),
            cp("3", Some("a "), "2026-01-01T00:00:09Z"),
            cp("4", None, "2026-01-01T00:00:10Z"),
        ];
        assert_eq!(
            find_tag(list, "a")
                .unwrap()
                .checkpoint_identifier
                .as_deref(),
            Some("2")
        );
    }
}
