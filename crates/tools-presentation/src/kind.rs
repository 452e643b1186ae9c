//! [`ToolCallKind`]: the category of a call, for a UI's icon or treatment.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The category of a tool call, used by a UI to pick an icon or treatment.
///
/// Serialised lowercase (`"read"`, `"execute"`, …). The default is [`ToolCallKind::Other`]; a
/// kind is never guessed from a tool's name. An unknown string read back from JSON (a kind
/// added by a newer writer) becomes `Other` rather than an error, because a kind is only a
/// display hint and should not cost the whole card.
///
/// # Examples
///
/// ```
/// use tools_presentation::ToolCallKind;
///
/// assert_eq!(ToolCallKind::default(), ToolCallKind::Other);
/// assert_eq!(ToolCallKind::Execute.as_str(), "execute");
/// assert_eq!("fetch".parse::<ToolCallKind>(), Ok(ToolCallKind::Fetch));
/// ```
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallKind {
    /// Reading files or data.
    Read,
    /// Modifying files or content.
    Edit,
    /// Removing files or data.
    Delete,
    /// Moving or renaming files.
    Move,
    /// Searching for information.
    Search,
    /// Running commands or code.
    Execute,
    /// Retrieving external data.
    Fetch,
    /// Anything else (the default).
    #[default]
    #[serde(other)]
    Other,
}

impl ToolCallKind {
    /// Every kind, in documentation order.
    pub const ALL: [ToolCallKind; 8] = [
        ToolCallKind::Read,
        ToolCallKind::Edit,
        ToolCallKind::Delete,
        ToolCallKind::Move,
        ToolCallKind::Search,
        ToolCallKind::Execute,
        ToolCallKind::Fetch,
        ToolCallKind::Other,
    ];

    /// The wire spelling, e.g. `"read"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolCallKind::Read => "read",
            ToolCallKind::Edit => "edit",
            ToolCallKind::Delete => "delete",
            ToolCallKind::Move => "move",
            ToolCallKind::Search => "search",
            ToolCallKind::Execute => "execute",
            ToolCallKind::Fetch => "fetch",
            ToolCallKind::Other => "other",
        }
    }

    /// Whether this is the default kind, [`ToolCallKind::Other`].
    pub const fn is_other(&self) -> bool {
        matches!(self, ToolCallKind::Other)
    }
}

impl fmt::Display for ToolCallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when a string is not the wire spelling of a [`ToolCallKind`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool call kind {0:?}")]
pub struct UnknownToolCallKind(pub String);

impl std::str::FromStr for ToolCallKind {
    type Err = UnknownToolCallKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolCallKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| UnknownToolCallKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_spelling_and_serde() {
        for kind in ToolCallKind::ALL {
            assert_eq!(kind.as_str().parse::<ToolCallKind>(), Ok(kind));
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::String(kind.as_str().into()));
            assert_eq!(serde_json::from_value::<ToolCallKind>(json).unwrap(), kind);
        }
        assert!("Read".parse::<ToolCallKind>().is_err());
    }

    #[test]
    fn an_unknown_kind_reads_back_as_other() {
        let kind: ToolCallKind = serde_json::from_str(r#""think""#).unwrap();
        assert_eq!(kind, ToolCallKind::Other);
        assert!(serde_json::from_str::<ToolCallKind>("5").is_err());
    }
}
