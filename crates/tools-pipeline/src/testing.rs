//! Test support (feature `test-util`): an invariant checker for pipelines.
//!
//! [`InvariantChecker::install`] has the pipeline report every stage entry and publication,
//! and checks, for every execution (by token):
//! - **stage order**: pre-execute at most once; the execute waterfall only after
//!   pre-execute, at most once; post-execute only after pre-execute or execute, at most
//!   once;
//! - **exactly one published result**, and none for an execution that never started;
//! - **non-empty identity** at publication (name and call id).
//!
//! Results are immutable by construction (there is no `&mut` access to a published
//! result), so the checker records only the facts above. Violations are collected and
//! reported when the last handle of the checker is dropped, normally at the end of the test
//! that holds it: a test that forgets [`InvariantChecker::assert_clean`] still fails, and a
//! hook that keeps the pipeline alive (a closure capturing the runtime) cannot silence the
//! check. The checker also reports executions that entered a stage but never published a
//! result.

// Test support reports a violated invariant the way tests fail: by panicking.
#![allow(clippy::panic)]

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use tools_registry::ExecutionToken;

use crate::Pipeline;
use crate::shared::Probe;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Pre,
    Execute,
    Post,
}

#[derive(Default)]
struct State {
    stages: HashMap<ExecutionToken, Vec<Stage>>,
    published: HashMap<ExecutionToken, usize>,
    violations: Vec<String>,
}

/// The shared state; checks for unpublished executions and violations when dropped.
struct Shared(Mutex<State>);

impl Shared {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn enter(&self, token: ExecutionToken, stage: Stage) {
        self.with(|state| {
            let seen = state.stages.entry(token).or_default();
            let ok = match stage {
                Stage::Pre => seen.is_empty(),
                Stage::Execute => seen.as_slice() == [Stage::Pre],
                Stage::Post => {
                    matches!(seen.as_slice(), [Stage::Pre] | [Stage::Pre, Stage::Execute])
                }
            };
            if !ok {
                state
                    .violations
                    .push(format!("{stage:?} after {seen:?} for execution {token:?}"));
            }
            seen.push(stage);
        });
    }

    fn publish(&self, token: ExecutionToken, name: &str, call_id: &str) {
        self.with(|state| {
            let count = state.published.entry(token).or_default();
            *count += 1;
            if *count > 1 {
                state
                    .violations
                    .push(format!("execution {token:?} published {count} results"));
            }
            if name.is_empty() || call_id.is_empty() {
                state.violations.push(format!(
                    "execution {token:?} published with an empty name or call id"
                ));
            }
        });
    }

    fn problems(&self) -> Vec<String> {
        self.with(|state| {
            let mut problems = state.violations.clone();
            for token in state.stages.keys() {
                if !state.published.contains_key(token) {
                    problems.push(format!(
                        "execution {token:?} entered a stage but published no result"
                    ));
                }
            }
            problems
        })
    }
}

/// The handles' shared part: reports the problems when the last handle is dropped.
struct Guard(Arc<Shared>);

impl Drop for Guard {
    fn drop(&mut self) {
        let problems = self.0.problems();
        if !problems.is_empty() && !std::thread::panicking() {
            panic!("pipeline invariants violated: {}", problems.join("; "));
        }
    }
}

/// Checks a pipeline's invariants; see the module docs. Hold it (or a clone) for as long
/// as the test runs: dropping the last handle reports the violations.
#[derive(Clone)]
#[must_use = "the checker reports when its last handle is dropped: hold it until the test ends"]
pub struct InvariantChecker {
    guard: Arc<Guard>,
}

impl InvariantChecker {
    /// Installs the checker on `pipeline`, for the pipeline's lifetime: the pipeline reports
    /// every stage a call enters and every publication to it (whatever hooks are installed,
    /// in whatever order). One checker per pipeline: a second one replaces the first.
    pub fn install(pipeline: &Pipeline) -> InvariantChecker {
        let shared = Arc::new(Shared(Mutex::new(State::default())));
        let s = Arc::clone(&shared);
        pipeline.set_probe(Arc::new(move |exec, probe| {
            let token = exec.token();
            match probe {
                Probe::Pre => s.enter(token, Stage::Pre),
                Probe::Execute => s.enter(token, Stage::Execute),
                Probe::Post => s.enter(token, Stage::Post),
                Probe::Published => s.publish(token, exec.name().as_str(), exec.call_id()),
            }
        }));
        InvariantChecker {
            guard: Arc::new(Guard(shared)),
        }
    }

    /// Every violation so far (stage order, publications) and every execution that entered
    /// a stage without publishing.
    pub fn violations(&self) -> Vec<String> {
        self.guard.0.problems()
    }

    /// How many results were published.
    pub fn published(&self) -> usize {
        self.guard.0.with(|state| state.published.values().sum())
    }

    /// Panics with every violation, if any.
    pub fn assert_clean(&self) {
        let problems = self.violations();
        assert!(
            problems.is_empty(),
            "pipeline invariants violated: {}",
            problems.join("; ")
        );
    }
}

impl fmt::Debug for InvariantChecker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvariantChecker")
            .field("published", &self.published())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Shared {
        Shared(Mutex::new(State::default()))
    }

    #[test]
    fn valid_sequences_pass() {
        let s = shared();
        let (a, b, c) = (
            ExecutionToken::mint(),
            ExecutionToken::mint(),
            ExecutionToken::mint(),
        );
        for stage in [Stage::Pre, Stage::Execute, Stage::Post] {
            s.enter(a, stage);
        }
        s.publish(a, "t", "c");
        s.enter(b, Stage::Pre);
        s.enter(b, Stage::Post);
        s.publish(b, "t", "c");
        s.publish(c, "t", "c");
        assert!(s.problems().is_empty());
    }

    #[test]
    fn out_of_order_stages_repeats_and_double_publication_are_reported() {
        let s = shared();
        let (a, b, c, d) = (
            ExecutionToken::mint(),
            ExecutionToken::mint(),
            ExecutionToken::mint(),
            ExecutionToken::mint(),
        );
        s.enter(a, Stage::Pre);
        s.enter(a, Stage::Pre);
        s.enter(b, Stage::Execute);
        s.enter(c, Stage::Post);
        for token in [a, b, c] {
            s.publish(token, "t", "c");
        }
        s.publish(d, "", "c");
        s.publish(d, "t", "c");
        let problems = s.problems();
        assert_eq!(problems.len(), 5, "{problems:?}");
    }

    #[test]
    #[should_panic(expected = "published no result")]
    fn the_last_handle_reports_when_it_is_dropped() {
        let s = shared();
        s.enter(ExecutionToken::mint(), Stage::Pre);
        drop(Guard(Arc::new(s)));
    }

    #[test]
    fn an_unpublished_execution_is_reported() {
        let s = shared();
        s.enter(ExecutionToken::mint(), Stage::Pre);
        assert_eq!(s.problems().len(), 1);
    }
}
