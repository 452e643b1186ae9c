//! Who a call is made for: the authenticated identity a transport attaches to a call.

use std::fmt;
use std::sync::Arc;

/// The identity a call is made for: an MCP client's token holder, a user of the host's own
/// front end. A transport that authenticates its caller attaches one with
/// [`crate::ToolCall::with_principal`]; every hook reads it from
/// [`crate::Execution::principal`], and a Code Mode sub-call inherits the principal of the
/// `run_code` call it is made from. A call without one was made by the host itself (or by
/// the local user of a stdio transport).
///
/// # Examples
///
/// ```
/// use tools_pipeline::Principal;
///
/// let alice = Principal::new("alice").with_scopes(["tools", "admin"]).with_token_id("t-1");
/// assert!(alice.has_scope("admin"));
/// assert!(!alice.has_scope("billing"));
/// assert_eq!(alice.token_id(), Some("t-1"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    subject: Arc<str>,
    scopes: Arc<[String]>,
    token_id: Option<Arc<str>>,
    issuer: Option<Arc<str>>,
}

impl Principal {
    /// The principal `subject` (a user or service name, a token's `sub`), without scopes.
    pub fn new(subject: impl Into<Arc<str>>) -> Principal {
        Principal {
            subject: subject.into(),
            scopes: Arc::from(Vec::new()),
            token_id: None,
            issuer: None,
        }
    }

    /// The same principal holding `scopes` (in place of any it held).
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Principal
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The same principal with the id of the credential it presented (a JWT's `jti`, a
    /// static token's name), for audit.
    #[must_use]
    pub fn with_token_id(mut self, id: impl Into<Arc<str>>) -> Principal {
        self.token_id = Some(id.into());
        self
    }

    /// The same principal with the issuer that vouched for it (a JWT's `iss`).
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<Arc<str>>) -> Principal {
        self.issuer = Some(issuer.into());
        self
    }

    /// The subject.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The scopes held, in the order the credential gave them.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether `scope` is held.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The id of the credential presented, if known.
    pub fn token_id(&self) -> Option<&str> {
        self.token_id.as_deref()
    }

    /// The issuer that vouched for the principal, if any.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }
}

impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("subject", &self.subject)
            .field("scopes", &self.scopes)
            .field("token_id", &self.token_id)
            .field("issuer", &self.issuer)
            .finish()
    }
}
