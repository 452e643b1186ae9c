//! Tool names.

use smol_str::SmolStr;
use std::borrow::Borrow;
use std::fmt;

use crate::Error;

/// The name of the reserved Code Mode transport.
pub const RUN_CODE: &str = "run_code";

/// A tool name: any non-empty string, compared exactly (docs/decisions.md, entry 11). Cheap
/// to clone: a name of up to 23 bytes (most are) is kept inline, so making one per call
/// allocates nothing and cloning it touches no shared reference count; a longer name is
/// shared.
///
/// # Examples
///
/// ```
/// use tools_registry::ToolName;
///
/// let name = ToolName::new("read_file").unwrap();
/// assert_eq!(name.as_str(), "read_file");
/// assert!(ToolName::new("").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(SmolStr);

impl ToolName {
    /// A name, refusing the empty string.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyName`].
    pub fn new(name: impl AsRef<str>) -> Result<ToolName, Error> {
        let name = name.as_ref();
        if name.is_empty() {
            Err(Error::EmptyName)
        } else {
            Ok(ToolName(SmolStr::new(name)))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the reserved `run_code`.
    pub fn is_run_code(&self) -> bool {
        &*self.0 == RUN_CODE
    }
}

impl Borrow<str> for ToolName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for ToolName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for ToolName {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for ToolName {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl serde::Serialize for ToolName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}
