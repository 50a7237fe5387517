//! A request budget for the diagnosis' live reads (the GETs and LISTs of SG501–SG503), so a
//! replica that wins the Lease over 10,000 Applications does not send thousands of requests in
//! the first seconds.
//!
//! The watch of Applications and the audit's paginated lists are not counted here: they are a
//! fixed number of requests per pass. What scales with the number of Applications is the
//! per-Application diagnosis on the first sweep (every Application is reconciled at start and on
//! every lease won), and that is what the budget spreads out: a token bucket of `rate` requests
//! per second with a burst of `burst`, like client-go's client-side rate limiter.

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// Default sustained rate of diagnosis reads (requests per second).
pub const DEFAULT_RATE: f64 = 20.0;
/// Default burst.
pub const DEFAULT_BURST: u32 = 40;

/// A token bucket; `acquire` waits for a token.
#[derive(Debug)]
pub struct ApiBudget {
    interval: Duration,
    burst: Duration,
    /// The time at which the bucket is empty again ("theoretical arrival time", GCRA).
    tat: Mutex<Option<Instant>>,
}

impl ApiBudget {
    /// `rate` requests per second (≤ 0 = unlimited), up to `burst` at once.
    pub fn new(rate: f64, burst: u32) -> Self {
        let interval = if rate > 0.0 && rate.is_finite() {
            Duration::from_secs_f64(1.0 / rate)
        } else {
            Duration::ZERO
        };
        Self {
            interval,
            burst: interval * burst.max(1),
            tat: Mutex::new(None),
        }
    }

    /// No limit (tests).
    pub fn unlimited() -> Self {
        Self::new(0.0, 1)
    }

    /// Waits until one more request fits the budget. Returns how long it waited.
    pub async fn acquire(&self) -> Duration {
        if self.interval.is_zero() {
            return Duration::ZERO;
        }
        let wait = {
            let mut tat = self.tat.lock().await;
            self.reserve(&mut tat, Instant::now())
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        wait
    }

    /// Takes one token at `now`: how long the request must wait before it may go.
    fn reserve(&self, tat: &mut Option<Instant>, now: Instant) -> Duration {
        let start = tat.map_or(now, |t| t.max(now));
        let next = start + self.interval;
        *tat = Some(next);
        // A request may go now while the bucket is less than `burst` ahead of now.
        next.saturating_duration_since(now + self.burst)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The times at which `n` requests arriving together at `t0` may go.
    fn schedule(budget: &ApiBudget, t0: Instant, n: usize) -> Vec<Duration> {
        let mut tat = None;
        let mut now = t0;
        (0..n)
            .map(|_| {
                // Each caller sleeps its wait, then the next one asks.
                now += budget.reserve(&mut tat, now);
                now - t0
            })
            .collect()
    }

    #[test]
    fn a_burst_goes_at_once_and_the_rest_at_the_rate() {
        let budget = ApiBudget::new(10.0, 5);
        let t0 = Instant::now();
        let at = schedule(&budget, t0, 15);
        assert!(at[..5].iter().all(Duration::is_zero), "{at:?}");
        // 10/s after the burst: the 6th at 0.1 s, the 15th at 1.0 s.
        assert_eq!(at[5], Duration::from_millis(100));
        assert_eq!(at[14], Duration::from_millis(1000));
        assert!(at.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn idle_time_refills_the_bucket_up_to_the_burst() {
        let budget = ApiBudget::new(10.0, 5);
        let t0 = Instant::now();
        let mut tat = None;
        for _ in 0..15 {
            budget.reserve(&mut tat, t0);
        }
        // A minute later the bucket is full again: 5 go at once, the 6th waits 100 ms.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..5 {
            assert_eq!(budget.reserve(&mut tat, later), Duration::ZERO);
        }
        assert_eq!(budget.reserve(&mut tat, later), Duration::from_millis(100));
    }

    #[tokio::test]
    async fn unlimited_never_waits() {
        let budget = ApiBudget::unlimited();
        for _ in 0..1000 {
            assert_eq!(budget.acquire().await, Duration::ZERO);
        }
    }
}
