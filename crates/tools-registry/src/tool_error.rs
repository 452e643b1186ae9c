//! The failure a tool body, a render or a presenter reports.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use tools_json::ErrorCode;

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

/// A failure of a tool body or of one of a tool's callbacks: a message for the model and an
/// optional machine code.
///
/// # Examples
///
/// ```
/// use tools_registry::{Code, ToolError};
/// use tools_json::ErrorCode;
///
/// let plain = ToolError::new("disk full");
/// assert_eq!(plain.code(), None);
///
/// let coded = ToolError::with_code(ErrorCode::InvalidArgs, "invalid arguments: path: required property is missing");
/// assert_eq!(coded.code().and_then(Code::known), Some(ErrorCode::InvalidArgs));
///
/// let custom = ToolError::custom("ENOSPC", "no space left on device");
/// assert_eq!(custom.code().map(Code::as_str), Some("ENOSPC"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    message: Cow<'static, str>,
    code: Option<Code>,
}

impl ToolError {
    /// A failure without a code.
    pub fn new(message: impl Into<Cow<'static, str>>) -> ToolError {
        ToolError {
            message: message.into(),
            code: None,
        }
    }

    /// A failure with one of the runtime's codes.
    pub fn with_code(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> ToolError {
        ToolError {
            message: message.into(),
            code: Some(Code::Known(code)),
        }
    }

    /// A failure with the tool's own code.
    pub fn custom(code: impl Into<Arc<str>>, message: impl Into<Cow<'static, str>>) -> ToolError {
        ToolError {
            message: message.into(),
            code: Some(Code::Custom(code.into())),
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
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<tools_schema::Error> for ToolError {
    fn from(err: tools_schema::Error) -> ToolError {
        ToolError::with_code(err.code(), err.to_string())
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
