//! Call limits: how often (a GCRA rate, with `governor`) and how many at once, per
//! principal, per tool, or both. A call over a limit ends at once with `RATE_LIMITED` and a
//! `retry_after_ms` detail; nothing ever waits in a queue.
//!
//! Limits are an execute hook: they count the calls the policy let through (Code Mode
//! sub-calls included, each on its own), and a concurrency slot is held while the call's
//! body runs.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use serde_json::json;
use tools_runtime::hooks::{DispatchNext, DispatchRequest, Hook, from_fn};
use tools_runtime::{ErrorCode, ToolError};

/// Whose calls one limit counts together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Per {
    /// Each principal's calls of the matching tools (calls without one count as one
    /// principal, the local user).
    #[default]
    Principal,
    /// Each matching tool's calls, whoever makes them.
    Tool,
    /// Each principal's calls of each matching tool.
    PrincipalAndTool,
    /// Every call of the matching tools.
    All,
}

/// A rate: `calls` per `window`, as a burst of `calls` replenished evenly over the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Calls per window.
    pub calls: NonZeroU32,
    /// The window.
    pub window: Duration,
}

impl std::str::FromStr for Rate {
    type Err = String;

    /// `100/s`, `10/m`, `5000/h`, `20/10s`.
    fn from_str(text: &str) -> Result<Rate, String> {
        let bad = || format!("{text:?} is not a rate like `100/s`, `10/m` or `20/10s`");
        let (calls, window) = text.split_once('/').ok_or_else(bad)?;
        let calls = calls.trim().parse::<NonZeroU32>().map_err(|_| bad())?;
        let window = match window.trim() {
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            other => humantime::parse_duration(other).map_err(|_| bad())?,
        };
        if window.is_zero() || window > Duration::from_secs(86_400) {
            return Err(format!(
                "{text:?}: the window must be positive and at most a day"
            ));
        }
        Ok(Rate { calls, window })
    }
}

/// One limit over the tools a glob matches.
#[derive(Clone, Debug)]
pub struct Limit {
    /// The tools it counts (a glob over exposed names; `*` for all).
    pub tools: globset::GlobMatcher,
    /// The glob as written.
    pub pattern: String,
    /// Whose calls it counts together.
    pub per: Per,
    /// At most this many calls per window.
    pub rate: Option<Rate>,
    /// At most this many calls running at once.
    pub concurrency: Option<usize>,
}

/// A limit with its counters.
struct Counted {
    limit: Limit,
    rate: Option<DefaultKeyedRateLimiter<String>>,
    running: Mutex<HashMap<String, Arc<AtomicUsize>>>,
}

/// Every configured limit and its counters. Cheap to clone.
#[derive(Clone)]
pub struct Limits {
    counted: Arc<[Counted]>,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.counted.iter().map(|c| &c.limit))
            .finish()
    }
}

/// A concurrency slot, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How long to suggest waiting when a concurrency limit refused a call.
const CONCURRENCY_RETRY: Duration = Duration::from_millis(100);

impl Limits {
    /// Counters for `limits`, all at zero.
    pub fn new(limits: Vec<Limit>) -> Limits {
        let counted: Vec<Counted> = limits
            .into_iter()
            .map(|limit| Counted {
                rate: limit.rate.map(|rate| {
                    let per_call = rate.window / rate.calls.get();
                    let quota = Quota::with_period(per_call.max(Duration::from_nanos(1)))
                        .unwrap_or_else(|| Quota::per_second(rate.calls))
                        .allow_burst(rate.calls);
                    DefaultKeyedRateLimiter::dashmap(quota)
                }),
                limit,
                running: Mutex::new(HashMap::new()),
            })
            .collect();
        Limits {
            counted: counted.into(),
        }
    }

    /// Whether no limit is configured.
    pub fn is_empty(&self) -> bool {
        self.counted.is_empty()
    }

    /// Admits a call of `tool` for `principal` (`""`: none), or says why not. The slots
    /// returned are held while the call runs.
    fn admit(&self, tool: &str, principal: &str) -> Result<Vec<Slot>, ToolError> {
        let mut slots = Vec::new();
        for counted in self.counted.iter() {
            let limit = &counted.limit;
            if !limit.tools.is_match(tool) {
                continue;
            }
            let key = match limit.per {
                Per::Principal => principal.to_owned(),
                Per::Tool => tool.to_owned(),
                Per::PrincipalAndTool => format!("{principal}\u{0}{tool}"),
                Per::All => String::new(),
            };
            if let Some(max) = limit.concurrency {
                let counter = {
                    let mut running = counted
                        .running
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    if running.len() > 100_000 {
                        running.retain(|_, c| c.load(Ordering::Acquire) > 0);
                    }
                    Arc::clone(running.entry(key.clone()).or_default())
                };
                let taken = counter.fetch_add(1, Ordering::AcqRel);
                let slot = Slot(counter);
                if taken >= max {
                    return Err(limited(
                        limit,
                        principal,
                        tool,
                        &format!("{max} calls at once"),
                        CONCURRENCY_RETRY,
                    ));
                }
                slots.push(slot);
            }
            if let (Some(rate), Some(limiter)) = (limit.rate, &counted.rate)
                && let Err(not_until) = limiter.check_key(&key)
            {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                let what = format!(
                    "{} calls per {}",
                    rate.calls,
                    humantime::format_duration(rate.window)
                );
                return Err(limited(limit, principal, tool, &what, wait));
            }
        }
        Ok(slots)
    }

    /// The limits as an execute hook.
    pub fn hook(&self) -> impl Hook<DispatchRequest> {
        hook(Arc::new(arc_swap::ArcSwap::from_pointee(self.clone())))
    }
}

/// An execute hook over the limits in `current`, which a reload may replace (the new
/// counters start at zero; calls running keep the slots of the old ones).
pub(crate) fn hook(current: Arc<arc_swap::ArcSwap<Limits>>) -> impl Hook<DispatchRequest> {
    from_fn(move |req: DispatchRequest, next: DispatchNext| {
        let limits = current.load_full();
        async move {
            let exec = req.execution();
            let principal = exec.principal().map_or("", |p| p.subject());
            let slots = limits.admit(exec.name().as_str(), principal)?;
            let result = next.run(req).await;
            drop(slots);
            result
        }
    })
}

/// The `RATE_LIMITED` error of a call `limit` refused.
fn limited(limit: &Limit, principal: &str, tool: &str, what: &str, wait: Duration) -> ToolError {
    let whose = match limit.per {
        Per::Principal | Per::PrincipalAndTool if !principal.is_empty() => {
            format!(" for principal {principal:?}")
        }
        _ => String::new(),
    };
    let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
    ToolError::with_code(
        ErrorCode::RateLimited,
        format!(
            "call of {tool:?} refused: over the gateway's limit of {what} on {:?}{whose}; retry after {ms} ms",
            limit.pattern
        ),
    )
    .with_detail(json!({"retry_after_ms": ms, "limit": limit.pattern}))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn limit(pattern: &str, per: Per, rate: Option<&str>, concurrency: Option<usize>) -> Limit {
        Limit {
            tools: globset::Glob::new(pattern).unwrap().compile_matcher(),
            pattern: pattern.to_owned(),
            per,
            rate: rate.map(|r| r.parse().unwrap()),
            concurrency,
        }
    }

    #[test]
    fn rates_parse_as_people_write_them() {
        let r: Rate = "100/s".parse().unwrap();
        assert_eq!((r.calls.get(), r.window), (100, Duration::from_secs(1)));
        let r: Rate = "20/10s".parse().unwrap();
        assert_eq!((r.calls.get(), r.window), (20, Duration::from_secs(10)));
        for bad in ["", "100", "0/s", "x/s", "10/y", "10/0s", "10/2d"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_rate_refuses_past_its_burst_per_principal() {
        let limits = Limits::new(vec![limit("*", Per::Principal, Some("3/h"), None)]);
        for _ in 0..3 {
            assert!(limits.admit("t", "alice").is_ok());
        }
        let err = limits.admit("t", "alice").err().unwrap();
        assert_eq!(
            err.code().and_then(|c| c.known()),
            Some(ErrorCode::RateLimited)
        );
        assert!(
            err.message().contains("3 calls per 1h"),
            "{}",
            err.message()
        );
        let wait = err.detail().unwrap()["retry_after_ms"].as_u64().unwrap();
        assert!(wait > 60_000, "{wait}");
        // Another principal has its own bucket.
        assert!(limits.admit("t", "bob").is_ok());
    }

    #[test]
    fn concurrency_slots_are_held_until_dropped_and_never_queue() {
        let limits = Limits::new(vec![limit("db__*", Per::Tool, None, Some(2))]);
        let a = limits.admit("db__q", "alice").unwrap();
        let b = limits.admit("db__q", "bob").unwrap();
        let err = limits.admit("db__q", "carol").err().unwrap();
        assert!(err.message().contains("2 calls at once"));
        assert!(limits.admit("db__other", "carol").is_ok());
        assert!(limits.admit("fs__read", "carol").unwrap().is_empty());
        drop(a);
        assert!(limits.admit("db__q", "carol").is_ok());
        drop(b);
    }
}
