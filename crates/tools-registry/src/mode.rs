//! Presentation modes and restriction filters.

use std::collections::HashSet;
use std::fmt;

/// How a scope presents its tools to the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PresentationMode {
    /// Every visible tool is a tool of its own (the default).
    #[default]
    Native,
    /// Only `run_code` is callable; the other tools are reached from inside the program, and
    /// a direct call to one of them is refused (`UNKNOWN_TOOL` with the route back).
    Code,
    /// Both: every visible tool, plus `run_code`.
    Both,
}

impl PresentationMode {
    /// The mode's name: `native`, `code` or `both`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PresentationMode::Native => "native",
            PresentationMode::Code => "code",
            PresentationMode::Both => "both",
        }
    }

    /// Whether `run_code` is offered.
    pub const fn offers_run_code(self) -> bool {
        !matches!(self, PresentationMode::Native)
    }
}

impl fmt::Display for PresentationMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// An allow/deny mask over the tools a scope inherits; see [`crate::AgentScope::restrict`].
///
/// # Examples
///
/// ```
/// use tools_registry::ToolFilter;
///
/// let only_reads = ToolFilter::allow(["read_file", "list_dir"]);
/// let no_shell = ToolFilter::deny(["bash"]);
/// let both = ToolFilter::allow(["read_file", "bash"]).and_deny(["bash"]);
/// assert!(only_reads.admits("read_file") && !only_reads.admits("bash"));
/// assert!(no_shell.admits("web") && !no_shell.admits("bash"));
/// assert!(both.admits("read_file") && !both.admits("bash"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolFilter {
    allow: Option<HashSet<String>>,
    deny: Option<HashSet<String>>,
}

impl ToolFilter {
    /// Admits only these inherited tools (an empty list admits none).
    pub fn allow<I, S>(names: I) -> ToolFilter
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ToolFilter::default().and_allow(names)
    }

    /// Admits every inherited tool except these (tools registered later are admitted).
    pub fn deny<I, S>(names: I) -> ToolFilter
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ToolFilter::default().and_deny(names)
    }

    /// Adds an allow list.
    #[must_use]
    pub fn and_allow<I, S>(mut self, names: I) -> ToolFilter
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a deny list.
    #[must_use]
    pub fn and_deny<I, S>(mut self, names: I) -> ToolFilter
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Whether neither list is present.
    pub fn is_empty(&self) -> bool {
        self.allow.is_none() && self.deny.is_none()
    }

    /// Whether the filter admits an inherited tool.
    pub fn admits(&self, name: &str) -> bool {
        self.allow.as_ref().is_none_or(|allow| allow.contains(name))
            && self.deny.as_ref().is_none_or(|deny| !deny.contains(name))
    }

    /// Every name the filter lists, allow list first, each list in sorted order.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for list in [&self.allow, &self.deny].into_iter().flatten() {
            let mut names: Vec<&str> = list.iter().map(String::as_str).collect();
            names.sort_unstable();
            out.extend(names);
        }
        out
    }
}
