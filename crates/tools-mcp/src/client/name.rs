//! Exposed names of imported tools: `<server>__<tool>`.

use crate::Error;

/// The separator between the server's name and the tool's in an exposed name.
pub const SEPARATOR: &str = "__";

/// Checks that `server` can prefix tool names reversibly: ASCII letters, digits, `-` and
/// `_`, not starting or ending with `_`, and no `__` (so the first `__` of an exposed name
/// always ends the server's name).
///
/// # Errors
///
/// [`Error::InvalidServerName`] naming the rule broken.
pub fn check_server_name(server: &str) -> Result<(), Error> {
    let refuse = |reason| {
        Err(Error::InvalidServerName {
            name: server.to_owned(),
            reason,
        })
    };
    if server.is_empty() {
        return refuse("it is empty");
    }
    if !server
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return refuse("only ASCII letters, digits, '-' and '_' may be used");
    }
    if server.starts_with('_') || server.ends_with('_') {
        return refuse("it may not start or end with '_'");
    }
    if server.contains(SEPARATOR) {
        return refuse("it may not contain '__' (the separator of exposed tool names)");
    }
    Ok(())
}

/// The exposed name of `tool` of `server`: `<server>__<tool>`. The tool's own name is kept
/// byte for byte (it is what reaches the server).
///
/// ```
/// use tools_mcp::{exposed_name, split_exposed_name};
///
/// assert_eq!(exposed_name("time", "get_current_time"), "time__get_current_time");
/// assert_eq!(split_exposed_name("time__get_current_time"), Some(("time", "get_current_time")));
/// // The tool's own name may contain the separator; the server's may not.
/// assert_eq!(split_exposed_name("fs__read__file"), Some(("fs", "read__file")));
/// ```
pub fn exposed_name(server: &str, tool: &str) -> String {
    format!("{server}{SEPARATOR}{tool}")
}

/// The server and tool names of an exposed name (split at the first `__`), or `None` when
/// it has no separator.
pub fn split_exposed_name(exposed: &str) -> Option<(&str, &str)> {
    exposed.split_once(SEPARATOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_that_would_make_names_ambiguous_are_refused() {
        for bad in ["", "a__b", "_a", "a_", "a b", "a.b", "ä"] {
            assert!(check_server_name(bad).is_err(), "{bad:?}");
        }
        for good in ["time", "a_b", "a-b", "A1", "x-_y"] {
            assert!(check_server_name(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn exposed_names_split_back_for_every_valid_server_name() {
        for server in ["time", "a_b", "x-_y"] {
            for tool in ["t", "_t", "t__u", "__", "a.b/c"] {
                let exposed = exposed_name(server, tool);
                assert_eq!(split_exposed_name(&exposed), Some((server, tool)));
            }
        }
    }
}
