//! The budgets and caps of a code runtime: validated once, when the runtime is built.

use std::time::Duration;

use super::ContractError;

/// The budgets and caps every run of a runtime gets. The defaults mirror the reference
/// worker: 60 s of compute, a 600 s wall-clock ceiling, 512 MiB of memory and 64 MiB of
/// output; JSON crosses up to the pipeline's depth limit of 512 levels.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tools_codemode::RuntimeLimits;
///
/// let limits = RuntimeLimits {
///     compute: Duration::from_secs(5),
///     ..RuntimeLimits::default()
/// };
/// assert!(limits.validate().is_ok());
///
/// let broken = RuntimeLimits { max_output_bytes: 3, ..RuntimeLimits::default() };
/// assert!(broken.validate().unwrap_err().to_string().contains("max_output_bytes"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeLimits {
    /// Busy time of the program: time spent executing it, not time spent waiting for
    /// binding calls. QuickJS measures it on the run's thread; Python applies it as
    /// `RLIMIT_CPU`, rounded up to whole seconds. Positive.
    pub compute: Duration,
    /// Wall-clock ceiling of the whole run. Positive, at most 2^31-1 ms.
    pub wall: Duration,
    /// Memory cap. QuickJS: the engine's allocation limit (exhaustion ends the run as
    /// `worker-exit`). Python: `RLIMIT_AS` of the child is this plus
    /// [`RuntimeLimits::PYTHON_ADDRESS_SPACE_ALLOWANCE`] for the interpreter itself. At least
    /// 1 MiB.
    pub memory_bytes: u64,
    /// Output cap of the ledger: logs plus completion value or failure message, as JSON
    /// bytes. At least 4.
    pub max_output_bytes: usize,
    /// Deepest JSON value (container nesting) that crosses the boundary in either direction:
    /// binding arguments, binding resolutions and the completion value. At least 1.
    ///
    /// The default is [`tools_json::DEFAULT_MAX_DEPTH`] (512), the limit the tool pipeline
    /// applies to arguments and tool outputs, so that Code Mode has one limit: a program's
    /// result, a sub-call's arguments and a tool's output may each nest 512 levels, and
    /// 513 is refused on every side. Under Code Mode the bridge enforces that limit
    /// whatever this field says (a raised value lets nothing deeper through; a lowered one
    /// refuses earlier, inside the sandbox). Standalone, a runtime may raise it: values are
    /// converted without recursion at any depth.
    pub max_json_depth: usize,
    /// The engine's stack limit (QuickJS `set_max_stack_size`); the run's thread gets this
    /// plus 8 MiB. At least 256 KiB.
    pub stack_bytes: usize,
    /// How long the host waits past a budget for the substrate to report and stop before it
    /// settles on its own (an engine stuck in one long native operation cannot be
    /// interrupted). Positive.
    pub settle_grace: Duration,
}

impl RuntimeLimits {
    /// The largest wall-clock ceiling accepted, 2^31-1 ms (about 24.8 days).
    pub const MAX_WALL: Duration = Duration::from_millis(2_147_483_647);
    /// Address space granted to the Python interpreter on top of
    /// [`RuntimeLimits::memory_bytes`] (the interpreter, its libraries and thread stacks).
    pub const PYTHON_ADDRESS_SPACE_ALLOWANCE: u64 = 256 * 1024 * 1024;

    /// Checks every limit.
    ///
    /// # Errors
    ///
    /// [`ContractError::InvalidLimit`] naming the first limit out of range.
    pub fn validate(&self) -> Result<(), ContractError> {
        let invalid = |limit: &'static str, reason: &str| {
            Err(ContractError::InvalidLimit {
                limit,
                reason: reason.to_owned(),
            })
        };
        if self.compute.is_zero() {
            return invalid("compute", "must be positive");
        }
        if self.wall.is_zero() {
            return invalid("wall", "must be positive");
        }
        if self.wall > Self::MAX_WALL {
            return invalid("wall", "must be at most 2147483647 ms");
        }
        if self.memory_bytes < 1024 * 1024 {
            return invalid("memory_bytes", "must be at least 1 MiB");
        }
        if usize::try_from(self.memory_bytes).is_err() {
            return invalid("memory_bytes", "does not fit this platform's address size");
        }
        if self.max_output_bytes < 4 {
            return invalid("max_output_bytes", "must be at least 4");
        }
        if self.max_json_depth == 0 {
            return invalid("max_json_depth", "must be at least 1");
        }
        if self.stack_bytes < 256 * 1024 {
            return invalid("stack_bytes", "must be at least 256 KiB");
        }
        if self.settle_grace.is_zero() {
            return invalid("settle_grace", "must be positive");
        }
        Ok(())
    }
}

impl Default for RuntimeLimits {
    fn default() -> RuntimeLimits {
        RuntimeLimits {
            compute: Duration::from_secs(60),
            wall: Duration::from_secs(600),
            memory_bytes: 512 * 1024 * 1024,
            max_output_bytes: 64 * 1024 * 1024,
            max_json_depth: tools_json::DEFAULT_MAX_DEPTH,
            stack_bytes: 8 * 1024 * 1024,
            settle_grace: Duration::from_secs(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(limits: RuntimeLimits) -> String {
        limits
            .validate()
            .map_or_else(|e| e.to_string(), |()| String::new())
    }

    #[test]
    fn the_defaults_are_valid() {
        assert_eq!(RuntimeLimits::default().validate(), Ok(()));
    }

    #[test]
    fn the_default_depth_is_the_pipelines() {
        assert_eq!(
            RuntimeLimits::default().max_json_depth,
            tools_json::DEFAULT_MAX_DEPTH
        );
    }

    #[test]
    fn out_of_range_limits_are_named() {
        let base = RuntimeLimits::default;
        let cases = [
            (
                RuntimeLimits {
                    compute: Duration::ZERO,
                    ..base()
                },
                "`compute`",
            ),
            (
                RuntimeLimits {
                    wall: Duration::ZERO,
                    ..base()
                },
                "`wall`",
            ),
            (
                RuntimeLimits {
                    wall: RuntimeLimits::MAX_WALL + Duration::from_millis(1),
                    ..base()
                },
                "2147483647 ms",
            ),
            (
                RuntimeLimits {
                    memory_bytes: 1024,
                    ..base()
                },
                "`memory_bytes`",
            ),
            (
                RuntimeLimits {
                    max_output_bytes: 3,
                    ..base()
                },
                "at least 4",
            ),
            (
                RuntimeLimits {
                    max_json_depth: 0,
                    ..base()
                },
                "`max_json_depth`",
            ),
            (
                RuntimeLimits {
                    stack_bytes: 1024,
                    ..base()
                },
                "`stack_bytes`",
            ),
            (
                RuntimeLimits {
                    settle_grace: Duration::ZERO,
                    ..base()
                },
                "`settle_grace`",
            ),
        ];
        for (limits, expected) in cases {
            let message = reason(limits);
            assert!(message.contains(expected), "{message}");
        }
        assert_eq!(
            RuntimeLimits {
                max_output_bytes: 4,
                wall: RuntimeLimits::MAX_WALL,
                ..base()
            }
            .validate(),
            Ok(())
        );
    }
}
