//! The failure a tool body, a render or a presenter reports.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::ErrorCode;

/// A failure's machine code: one of the workspace's [`ErrorCode`]s, or a tool's own code
/// (e.g. `"POLICY_FAILED"`, `"ENOSPC"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// A code of the runtime.
    Known(ErrorCode),
    /// A code the tool chose.
    Custom(Arc<str>),
}

impl Code {
    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Code::Known(code) => code.as_str(),
            Code::Custom(code) => code,
        }
    }

    /// The runtime's code, if it is one.
    pub fn known(&self) -> Option<ErrorCode> {
        match self {
            Code::Known(code) => Some(*code),
            Code::Custom(_) => None,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<ErrorCode> for Code {
    fn from(code: ErrorCode) -> Code {
        Code::Known(code)
    }
}

/// A failure of a tool body or of one of a tool's callbacks: a message for the model, an
/// optional machine code, and optionally the error that caused it ([`source`]) and
/// structured detail for programs (the violations of an `INVALID_ARGS` as data, say).
///
/// The message is what the model reads; the detail and the source never change it.
/// Equality compares the message, the code and the detail (a source has no equality).
///
/// [`source`]: std::error::Error::source
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use tools_error::{Code, ErrorCode, ToolError};
///
/// let plain = ToolError::new("disk full");
/// assert_eq!(plain.code(), None);
///
/// let coded = ToolError::with_code(ErrorCode::InvalidArgs, "invalid arguments: path: required property is missing")
///     .with_detail(json!({"violations": [{"path": "path", "pointer": "/path", "message": "required property is missing"}]}));
/// assert_eq!(coded.code().and_then(Code::known), Some(ErrorCode::InvalidArgs));
/// assert_eq!(coded.detail().map(|d| d["violations"][0]["pointer"].clone()), Some(json!("/path")));
///
/// let io = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left on device");
/// let custom = ToolError::custom("ENOSPC", "no space left on device").with_source(io);
/// assert_eq!(custom.code().map(Code::as_str), Some("ENOSPC"));
/// assert!(std::error::Error::source(&custom).is_some());
/// ```
#[derive(Clone)]
pub struct ToolError {
    message: Cow<'static, str>,
    code: Option<Code>,
    /// The rare parts, boxed once so that the common failure stays small.
    extra: Option<Arc<Extra>>,
}

/// The optional parts of a [`ToolError`].
#[derive(Clone, Default)]
struct Extra {
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
    detail: Option<Value>,
}

impl PartialEq for ToolError {
    fn eq(&self, other: &ToolError) -> bool {
        self.message == other.message && self.code == other.code && self.detail() == other.detail()
    }
}

impl Eq for ToolError {}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ToolError");
        debug
            .field("message", &self.message)
            .field("code", &self.code);
        if let Some(detail) = self.detail() {
            debug.field("detail", detail);
        }
        if let Some(source) = self.extra.as_ref().and_then(|extra| extra.source.as_ref()) {
            debug.field("source", source);
        }
        debug.finish()
    }
}

impl ToolError {
    /// A failure without a code.
    pub fn new(message: impl Into<Cow<'static, str>>) -> ToolError {
        ToolError {
            message: message.into(),
            code: None,
            extra: None,
        }
    }

    /// A failure with one of the runtime's codes.
    pub fn with_code(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> ToolError {
        ToolError {
            message: message.into(),
            code: Some(Code::Known(code)),
            extra: None,
        }
    }

    /// A failure with the tool's own code.
    pub fn custom(code: impl Into<Arc<str>>, message: impl Into<Cow<'static, str>>) -> ToolError {
        ToolError {
            message: message.into(),
            code: Some(Code::Custom(code.into())),
            extra: None,
        }
    }

    /// The failure of a panic, with the panic's message when it has one.
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> ToolError {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "<a panic without a message>".to_owned());
        ToolError::new(format!("panicked: {message}"))
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The code, if any.
    pub fn code(&self) -> Option<&Code> {
        self.code.as_ref()
    }

    /// The same failure, caused by `source` (kept for [`std::error::Error::source`] and logs;
    /// the model still reads only the message).
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.extra_mut().source = Some(Arc::new(source));
        self
    }

    /// The same failure with structured detail for programs (it replaces any detail).
    #[must_use]
    pub fn with_detail(mut self, detail: Value) -> Self {
        self.extra_mut().detail = Some(detail);
        self
    }

    /// The same failure with `violations` (a JSON array, one object per violation, as
    /// `tools_json::Violations::to_json` writes them) as its detail:
    /// `{"violations": [...]}`.
    #[must_use]
    pub fn with_violations(self, violations: Value) -> Self {
        let mut detail = serde_json::Map::with_capacity(1);
        detail.insert("violations".into(), violations);
        self.with_detail(Value::Object(detail))
    }

    /// The violations of the detail, when it carries them (an `INVALID_ARGS` or an
    /// `INVALID_TOOL_OUTPUT` of a schema check does).
    pub fn violations(&self) -> Option<&Value> {
        self.detail()?.get("violations")
    }

    /// The structured detail, if any.
    pub fn detail(&self) -> Option<&Value> {
        self.extra.as_ref().and_then(|extra| extra.detail.as_ref())
    }

    /// The optional parts, unshared (copied first when a clone shares them).
    fn extra_mut(&mut self) -> &mut Extra {
        Arc::make_mut(self.extra.get_or_insert_with(Arc::default))
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let source = self.extra.as_ref()?.source.as_ref()?;
        Some(&**source as &(dyn std::error::Error + 'static))
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> ToolError {
        ToolError::new(message)
    }
}

impl From<&'static str> for ToolError {
    fn from(message: &'static str) -> ToolError {
        ToolError::new(message)
    }
}
