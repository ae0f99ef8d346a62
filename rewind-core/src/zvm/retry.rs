//! The retry policy for transient failures: capped, jittered exponential backoff inside a deadline.
//!
//! A connection refused is tried again within the connect budget, whatever the exchange: nothing
//! was sent. Only reads (and token requests) are retried on 502, 503, 504 and a lost answer, within
//! the read budget; any other doubt about a write goes back to the caller, who reconciles (see
//! `guard`). A host that does not resolve, TLS to plain HTTP and a connect timeout are said at once.

use std::time::{Duration, Instant};

use super::error::{CallError, Retry};
use crate::config::HttpSettings;

/// A client's two retry budgets: for connections refused (nothing was sent), and for answers that
/// were started and lost or refused for now.
#[derive(Debug, Clone, PartialEq)]
pub struct Budgets {
    /// `[http] connect_retry_secs`.
    pub connect: RetryPolicy,
    /// `[http] read_retry_secs`.
    pub read: RetryPolicy,
}

impl Budgets {
    /// The budgets of `http`.
    pub fn of(http: &HttpSettings) -> Budgets {
        Budgets {
            connect: RetryPolicy::with_budget(http.connect_retry),
            read: RetryPolicy::with_budget(http.read_retry),
        }
    }

    /// The delay before attempt `attempt + 1` of an exchange that began at `started` and failed
    /// with `failure`; `None` when it is not sent again.
    pub(crate) fn after(
        &self,
        failure: &CallError,
        idempotent: bool,
        attempt: u32,
        started: Instant,
    ) -> Option<Duration> {
        let policy = match failure.retry(idempotent) {
            Retry::Never => return None,
            Retry::Connect => &self.connect,
            Retry::Read => &self.read,
        };
        policy.next_delay(attempt, started)
    }
}

/// Capped, jittered exponential backoff bounded by a deadline.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// The first delay's upper bound.
    pub initial: Duration,
    /// No delay is longer than this.
    pub cap: Duration,
    /// No retry starts after this much time since the first attempt.
    pub budget: Duration,
}

impl RetryPolicy {
    /// A policy with the usual shape (50 ms first, doubling, capped at 2 s) and the given budget.
    pub fn with_budget(budget: Duration) -> Self {
        RetryPolicy {
            initial: Duration::from_millis(50),
            cap: Duration::from_secs(2),
            budget,
        }
    }

    /// The delay before retry number `attempt` (1 for the first retry): "equal jitter", half of the
    /// exponential step fixed and half random, so that concurrent callers spread out but none retries
    /// at once.
    pub fn delay(&self, attempt: u32) -> Duration {
        let exp = self
            .initial
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.cap);
        let half = exp / 2;
        let jitter_ms = half.as_millis() as u64;
        let jitter = if jitter_ms == 0 {
            Duration::ZERO
        } else {
            Duration::from_millis(rand::random_range(0..=jitter_ms))
        };
        half + jitter
    }

    /// The delay before retry `attempt`, or `None` when it would start after the budget that began at
    /// `started`.
    pub fn next_delay(&self, attempt: u32, started: Instant) -> Option<Duration> {
        let delay = self.delay(attempt);
        let end = started + self.budget;
        (Instant::now() + delay < end).then_some(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_then_stay_under_the_cap_and_never_drop_below_half_the_step() {
        let p = RetryPolicy::with_budget(Duration::from_secs(10));
        for _ in 0..50 {
            let d1 = p.delay(1);
            assert!(
                d1 >= Duration::from_millis(25) && d1 <= Duration::from_millis(50),
                "{d1:?}"
            );
            let d3 = p.delay(3);
            assert!(
                d3 >= Duration::from_millis(100) && d3 <= Duration::from_millis(200),
                "{d3:?}"
            );
            let d30 = p.delay(30);
            assert!(
                d30 >= Duration::from_secs(1) && d30 <= Duration::from_secs(2),
                "{d30:?}"
            );
        }
    }

    #[test]
    fn no_retry_is_offered_past_the_budget() {
        let p = RetryPolicy::with_budget(Duration::from_millis(10));
        let long_ago = Instant::now() - Duration::from_secs(1);
        assert!(p.next_delay(1, long_ago).is_none());
        let p = RetryPolicy::with_budget(Duration::from_secs(60));
        assert!(p.next_delay(1, Instant::now()).is_some());
    }
}
