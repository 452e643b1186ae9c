//! The code-runtime seam of Code Mode: the [`CodeRuntime`] trait that runs one program
//! against named groups of async host functions, its request and result types, the shared
//! binding validation, the runtime limits and the output ledger. The runtimes behind it
//! live in their own crates (`tools-quickjs`, `tools-sandbox`) and build on [`kit`].
//!
//! The contract ("resolve, don't reject"): everything that can go wrong with a *program*
//! (an exception, a budget, an abort, the death of the substrate, output that is not
//! lossless JSON or that is too large) comes back as `Ok(CodeRunResult { error: Some(..) })`.
//! `Err(ContractError)` is only for misuse by the caller: invalid bindings, invalid limits,
//! a run after disposal.

mod binding_future;
pub mod kit;
mod ledger;
mod lifecycle;
mod limits;
mod validate;
pub mod wire;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tools_codemode_sdk::Language;
use tools_json::JsonValue;

#[cfg(feature = "bridge")]
pub(crate) use binding_future::SettleReply;
pub use binding_future::{BindingError, BindingFuture, BindingOutcome};
pub use ledger::{OutputLedger, json_string_len, json_value_len};
pub use limits::RuntimeLimits;
pub use validate::{
    RESERVED_ERROR_MEMBERS, RESERVED_GLOBALS, RESERVED_WORDS, is_portable_identifier,
    validate_bindings,
};

/// The message of an `abort` failure when the run's token is cancelled.
pub const ABORTED_MESSAGE: &str = "run aborted";
/// The message of an `abort` failure when the runtime is disposed during the run.
pub const DISPOSED_MESSAGE: &str = "runtime disposed";
/// The message of an `invalid-output` failure.
pub const INVALID_OUTPUT_MESSAGE: &str = "program completion must be lossless JSON";
/// The message of an `exception` failure whose thrown value cannot be rendered.
pub const UNRENDERABLE_MESSAGE: &str = "program threw an unrenderable value";
/// The prefix of an in-sandbox rejection of a binding argument that is not lossless JSON.
pub const ARGUMENTS_NOT_LOSSLESS: &str = "binding arguments must be lossless JSON";
/// The prefix of an in-sandbox rejection of a host resolution that is not lossless JSON.
pub const RESOLUTION_NOT_LOSSLESS: &str = "binding resolution must be lossless JSON";

/// The error class a namespace's rejections are instances of, e.g. `ToolCallError` whose
/// `toolName` property names the binding that failed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ErrorClass {
    /// The class name, injected as a global (`ToolCallError`).
    pub name: String,
    /// The own property that carries the failing binding's name (`toolName`).
    pub member_name_property: String,
}

impl ErrorClass {
    /// An error class descriptor.
    pub fn new(name: impl Into<String>, member_name_property: impl Into<String>) -> ErrorClass {
        ErrorClass {
            name: name.into(),
            member_name_property: member_name_property.into(),
        }
    }

    /// The descriptor Code Mode hands over for its `tools` namespace:
    /// `ToolCallError` / `toolName`.
    pub fn tool_call_error() -> ErrorClass {
        ErrorClass::new("ToolCallError", "toolName")
    }
}

/// One global object of async host functions, e.g. `tools` with one function per tool.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BindingNamespace {
    /// The global the namespace is bound to (`tools`).
    pub global: String,
    /// The function names; arbitrary strings, looked up as own properties only.
    pub names: Vec<String>,
    /// The class of the namespace's rejections; `None` rejects with plain `Error`
    /// (TypeScript) or `Exception` (Python).
    pub error_class: Option<ErrorClass>,
    /// The functions that take positional arguments instead of one arguments object
    /// (see [`BindingSignature`]); every other function takes its first argument.
    pub signatures: Vec<BindingSignature>,
    /// Where the names a runtime may bind on first use start: `names[lazy_from..]`, in
    /// sorted order (a scope's deferred tools, of which a program calls few). A runtime
    /// may bind them eagerly like the others; what a program reaches is the same, except
    /// that a lazy name is an own key only once it has been read. Past the end (the
    /// default), every name is bound at once.
    pub lazy_from: usize,
}

impl BindingNamespace {
    /// A namespace whose functions each take one arguments object.
    pub fn new(
        global: impl Into<String>,
        names: impl IntoIterator<Item = impl Into<String>>,
        error_class: Option<ErrorClass>,
    ) -> BindingNamespace {
        BindingNamespace {
            global: global.into(),
            names: names.into_iter().map(Into::into).collect(),
            error_class,
            signatures: Vec::new(),
            lazy_from: usize::MAX,
        }
    }

    /// The namespace with `lazy` (sorted here) appended to its names, to be bound on first
    /// use where the runtime can (see [`BindingNamespace::lazy_from`]).
    #[must_use]
    pub fn with_lazy(
        mut self,
        lazy: impl IntoIterator<Item = impl Into<String>>,
    ) -> BindingNamespace {
        let mut lazy: Vec<String> = lazy.into_iter().map(Into::into).collect();
        lazy.sort_unstable();
        lazy.dedup();
        self.lazy_from = self.names.len();
        self.names.extend(lazy);
        self
    }

    /// The names bound on first use where the runtime can: `names[lazy_from..]`, sorted.
    pub fn lazy_names(&self) -> &[String] {
        self.names.get(self.lazy_from..).unwrap_or_default()
    }

    /// The namespace with its function `name` taking the positional arguments
    /// `parameters` (see [`BindingSignature`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use tools_codemode::{BindingNamespace, validate_bindings};
    ///
    /// let tools = BindingNamespace::new("tools", ["echo", "$search"], None)
    ///     .with_signature("$search", ["query", "options"]);
    /// assert_eq!(tools.signature("$search").map(|s| s.parameters.len()), Some(2));
    /// assert!(tools.signature("echo").is_none());
    /// assert_eq!(validate_bindings(&[tools]), Ok(()));
    /// ```
    #[must_use]
    pub fn with_signature(
        mut self,
        name: impl Into<String>,
        parameters: impl IntoIterator<Item = impl Into<String>>,
    ) -> BindingNamespace {
        self.signatures.push(BindingSignature {
            name: name.into(),
            parameters: parameters.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// The signature of the function `name`, if it takes positional arguments.
    pub fn signature(&self, name: &str) -> Option<&BindingSignature> {
        self.signatures.iter().find(|s| s.name == name)
    }
}

/// A function of a namespace that takes positional arguments (and, in Python, keyword
/// arguments) instead of one arguments object: the runtime packs them into one object keyed
/// by the parameter names, and that object is what the host receives, checked as lossless
/// JSON like any arguments.
///
/// In `f(a, b)` with parameters `query, options`, the host receives
/// `{"query": a, "options": b}`. An argument left out (or, in TypeScript, `undefined`) is
/// absent from the object. Python keyword arguments name a parameter
/// (`f("x", limit=3)` with parameters `query, limit` sends `{"query": "x", "limit": 3}`).
/// More positional arguments than parameters, an unknown keyword, or a parameter given
/// twice rejects the call with the namespace's error class (code `INVALID_ARGS`) without
/// reaching the host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BindingSignature {
    /// The function's name: one of the namespace's names.
    pub name: String,
    /// The parameter names, in order: distinct identifiers every language accepts
    /// ([`is_portable_identifier`]).
    pub parameters: Vec<String>,
}

/// The host side of the bindings: called for every `await <global>.<name>(args)` of the
/// program, with arguments already checked to be lossless JSON.
///
/// `Err(message)` rejects the call in the program with an instance of the namespace's error
/// class whose `message` is `message`. The future is polled inside the run future (never
/// spawned); it is dropped, not awaited, when the run ends first.
pub trait BindingHost: Send + Sync + 'static {
    /// Calls `global.name(args)`.
    fn call(&self, global: &str, name: &str, args: JsonValue) -> BindingFuture;
}

/// One program run.
pub struct CodeRunRequest {
    /// The program: the body of an async function in the runtime's language.
    pub program: String,
    /// The namespaces bound as globals.
    pub namespaces: Vec<BindingNamespace>,
    /// Serves the binding calls.
    pub host: Arc<dyn BindingHost>,
    /// Cancelling it aborts the run (`abort` failure); already cancelled, nothing starts.
    pub cancel: CancellationToken,
}

impl CodeRunRequest {
    /// A request with a fresh (never cancelled) token.
    pub fn new(
        program: impl Into<String>,
        namespaces: Vec<BindingNamespace>,
        host: Arc<dyn BindingHost>,
    ) -> CodeRunRequest {
        CodeRunRequest {
            program: program.into(),
            namespaces,
            host,
            cancel: CancellationToken::new(),
        }
    }

    /// The same request, aborted through `cancel`.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> CodeRunRequest {
        self.cancel = cancel;
        self
    }
}

impl fmt::Debug for CodeRunRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeRunRequest")
            .field("program", &self.program)
            .field("namespaces", &self.namespaces)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// The `invalid-output` failure of a completion value the boundary refused: a value nested
/// past the depth limit names the side and the limit (`program result nesting exceeds the
/// depth limit of N`, the same words in every runtime and in the bridge), anything else has
/// the plain [`INVALID_OUTPUT_MESSAGE`].
pub fn invalid_output(error: &tools_json::Error) -> CodeRunFailure {
    let limit = error
        .violations()
        .iter()
        .find_map(|violation| match violation.kind {
            tools_json::ViolationKind::TooDeep { limit } => Some(limit),
            _ => None,
        });
    invalid_output_at(limit, None)
}

/// The `invalid-output` failure; `too_deep` is the depth limit a value nested past,
/// `detail` where the value is not JSON and why (appended to [`INVALID_OUTPUT_MESSAGE`]).
pub fn invalid_output_at(too_deep: Option<usize>, detail: Option<&str>) -> CodeRunFailure {
    match (too_deep, detail) {
        (Some(limit), _) => CodeRunFailure::new(
            FailureKind::InvalidOutput,
            format!("program result nesting exceeds the depth limit of {limit}"),
        ),
        (None, Some(detail)) => CodeRunFailure::new(
            FailureKind::InvalidOutput,
            format!("{INVALID_OUTPUT_MESSAGE}: {detail}"),
        ),
        (None, None) => CodeRunFailure::new(FailureKind::InvalidOutput, INVALID_OUTPUT_MESSAGE),
    }
}

/// Why a run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// The program threw (or did not compile).
    Exception,
    /// The compute (busy-time) budget or the wall-clock ceiling was reached.
    Timeout,
    /// The run was aborted (its token, or disposal of the runtime).
    Abort,
    /// The substrate died: memory cap, crash, exit, or failure to start.
    WorkerExit,
    /// The completion value is not lossless JSON.
    InvalidOutput,
    /// Logs plus completion value or failure message exceed the output cap.
    OutputLimit,
}

impl FailureKind {
    /// The wire name: `exception`, `timeout`, `abort`, `worker-exit`, `invalid-output`,
    /// `output-limit`.
    pub const fn as_str(self) -> &'static str {
        match self {
            FailureKind::Exception => "exception",
            FailureKind::Timeout => "timeout",
            FailureKind::Abort => "abort",
            FailureKind::WorkerExit => "worker-exit",
            FailureKind::InvalidOutput => "invalid-output",
            FailureKind::OutputLimit => "output-limit",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed run: its kind and a message for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeRunFailure {
    /// The failure kind.
    pub kind: FailureKind,
    /// The message (an exception's stack, a budget, `outer output exceeded <cap> bytes`, …).
    pub message: String,
}

impl CodeRunFailure {
    /// A failure.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> CodeRunFailure {
        CodeRunFailure {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for CodeRunFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

/// What a run reports. `error` wins over `value`: a failed run has no value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodeRunResult {
    /// The completion value; `None` when the program returned `undefined` / `None` (a
    /// returned `null` is `Some(null)`).
    pub value: Option<JsonValue>,
    /// One entry per console call / print (and per line of stray output), in order.
    pub logs: Vec<String>,
    /// Why the run failed, if it did.
    pub error: Option<CodeRunFailure>,
}

/// Misuse of a runtime by its caller; program failures never take this path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// A namespace global is not an identifier every language accepts.
    #[error(
        "binding global {global:?} is not a usable identifier: it needs ASCII letters, digits and `_` only, no leading digit, and no JavaScript or Python reserved word"
    )]
    UnusableGlobal {
        /// The global.
        global: String,
    },
    /// A namespace global takes a slot the runtimes keep for themselves.
    #[error("binding global {global:?} is reserved by the code runtimes")]
    ReservedGlobal {
        /// The global.
        global: String,
    },
    /// Two namespaces share a global.
    #[error("binding global {global:?} is declared by more than one namespace")]
    DuplicateGlobal {
        /// The global.
        global: String,
    },
    /// An error class name is not an identifier every language accepts.
    #[error(
        "error class name {name:?} is not a usable identifier: it needs ASCII letters, digits and `_` only, no leading digit, and no JavaScript or Python reserved word"
    )]
    UnusableErrorClass {
        /// The class name.
        name: String,
    },
    /// An error class name takes a slot the runtimes keep for themselves.
    #[error("error class name {name:?} is reserved by the code runtimes")]
    ReservedErrorClass {
        /// The class name.
        name: String,
    },
    /// An error class name collides with a namespace global or another error class.
    #[error(
        "injected global {name:?} is declared twice (namespace globals and error classes share one scope)"
    )]
    DuplicateInjectedGlobal {
        /// The class name.
        name: String,
    },
    /// The member-name property of an error class is empty, dunder-shaped or a built-in
    /// member of errors.
    #[error(
        "member property {property:?} of error class {class:?} is not usable: it must be non-empty, not `__dunder__`-shaped, and none of name, message, stack, args, with_traceback, add_note"
    )]
    UnusableMemberProperty {
        /// The class name.
        class: String,
        /// The property.
        property: String,
    },
    /// A binding signature names no function of its namespace, names one twice, or has a
    /// parameter that is not a portable identifier or appears twice.
    #[error("binding signature of {name:?} is not usable: {reason}")]
    UnusableSignature {
        /// The function's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A limit is out of range.
    #[error("invalid runtime limit `{limit}`: {reason}")]
    InvalidLimit {
        /// The limit's field name.
        limit: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A process runtime was asked to confine its child and cannot: the sandbox's tool is
    /// missing or the kernel refuses a namespace it needs (docs/decisions.md, entry 29:
    /// isolation fails closed).
    #[error(
        "the code runtime cannot confine its child process: {missing} (or opt into Isolation::UnconfinedProcess, which gives the program the host user's authority)"
    )]
    Unconfinable {
        /// What is missing.
        missing: String,
    },
    /// The interpreter of a process runtime cannot be run.
    #[error("code runtime interpreter {interpreter:?} is unavailable: {reason}")]
    InterpreterUnavailable {
        /// The interpreter as configured.
        interpreter: String,
        /// Why.
        reason: String,
    },
    /// `run` was called after the runtime was disposed.
    #[error("run() after disposal: this code runtime has been disposed")]
    Disposed,
}

/// The future of one run.
pub type RunFuture = Pin<Box<dyn Future<Output = Result<CodeRunResult, ContractError>> + Send>>;

/// The future of a disposal.
pub type DisposeFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A code runtime: runs programs of one language, each on a fresh substrate.
///
/// The run future returns only once its substrate (thread or process) has stopped, or, for
/// an engine stuck in one long native operation, after a bounded grace past the budget
/// (the substrate is then told to stop and ends on its own). It needs no task spawning:
/// binding calls are polled inside it.
pub trait CodeRuntime: Send + Sync + 'static {
    /// The language of the programs.
    fn language(&self) -> Language;

    /// A label of the isolation (`embedded-thread`, `process`); not a security claim.
    fn isolation(&self) -> &str;

    /// Runs one program.
    fn run(&self, request: CodeRunRequest) -> RunFuture;

    /// Fails every run in flight with `abort` / `runtime disposed`, waits until their
    /// substrates stopped, and makes later runs fail with [`ContractError::Disposed`].
    ///
    /// The default does nothing, for runtimes that hold nothing between runs.
    fn dispose(&self) -> DisposeFuture {
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_kinds_have_their_wire_names() {
        let kinds = [
            (FailureKind::Exception, "exception"),
            (FailureKind::Timeout, "timeout"),
            (FailureKind::Abort, "abort"),
            (FailureKind::WorkerExit, "worker-exit"),
            (FailureKind::InvalidOutput, "invalid-output"),
            (FailureKind::OutputLimit, "output-limit"),
        ];
        for (kind, name) in kinds {
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.to_string(), name);
        }
    }

    #[test]
    fn the_tool_call_error_descriptor() {
        let class = ErrorClass::tool_call_error();
        assert_eq!(class.name, "ToolCallError");
        assert_eq!(class.member_name_property, "toolName");
    }
}
