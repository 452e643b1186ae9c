//! Paths that locate a violation inside a schema or a value.

use std::fmt;

use smol_str::SmolStr;

/// One step of a [`Path`]: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// An object key, kept verbatim (no quoting or escaping, so `a.b` stays `a.b`). Keys of
    /// up to 23 bytes are stored inline: reporting a violation allocates no key.
    Key(SmolStr),
    /// An array index.
    Index(usize),
}

/// The location of a violation: a root label followed by keys and indices.
///
/// Rendering follows one rule: a key is appended as `.key`, except directly after an empty
/// root label, where it stands alone; an index is appended as `[i]`. So with the root
/// `value` a path renders as `value.servers[1].host`, and with the empty root used for tool
/// arguments as `servers[1].host`. An empty rendering (the root of the arguments) is shown
/// as `arguments` inside violation messages (see [`Path::display_name`]).
///
/// # Examples
///
/// ```
/// use tools_json::{Path, Segment};
///
/// let path = Path::root("").key("servers").index(1).key("host");
/// assert_eq!(path.to_string(), "servers[1].host");
/// assert_eq!(Path::root("").display_name(), "arguments");
/// assert_eq!(path.segments()[1], Segment::Index(1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    root: SmolStr,
    segments: Vec<Segment>,
}

impl Path {
    /// A path at the root, labelled `label` (`"schema"`, `"value"`, `""` for arguments…).
    pub fn root(label: &str) -> Path {
        Path {
            root: label.into(),
            segments: Vec::new(),
        }
    }

    /// Builds a path from its parts.
    pub fn from_parts(label: &str, segments: Vec<Segment>) -> Path {
        Path {
            root: label.into(),
            segments,
        }
    }

    /// This path extended by an object key.
    #[must_use]
    pub fn key(mut self, key: &str) -> Path {
        self.segments.push(Segment::Key(key.into()));
        self
    }

    /// This path extended by an array index.
    #[must_use]
    pub fn index(mut self, index: usize) -> Path {
        self.segments.push(Segment::Index(index));
        self
    }

    /// The root label.
    pub fn root_label(&self) -> &str {
        &self.root
    }

    /// The steps below the root, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The last key of the path, if the path ends in a key.
    pub fn last_key(&self) -> Option<&str> {
        match self.segments.last() {
            Some(Segment::Key(key)) => Some(key),
            _ => None,
        }
    }

    /// The rendering used inside messages: the path itself, or `arguments` when it renders
    /// empty (the root of a tool's arguments).
    pub fn display_name(&self) -> String {
        let rendered = self.to_string();
        if rendered.is_empty() {
            "arguments".to_owned()
        } else {
            rendered
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.root)?;
        let mut empty = self.root.is_empty();
        for segment in &self.segments {
            match segment {
                Segment::Key(key) if empty => {
                    f.write_str(key)?;
                    empty = key.is_empty();
                }
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => {
                    write!(f, "[{index}]")?;
                    empty = false;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_root_with_a_dot_unless_the_root_is_empty() {
        assert_eq!(
            Path::root("value").key("a").key("b").to_string(),
            "value.a.b"
        );
        assert_eq!(Path::root("").key("c").key("d").to_string(), "c.d");
        assert_eq!(Path::root("").index(1).key("host").to_string(), "[1].host");
        assert_eq!(
            Path::root("value").index(0).index(2).to_string(),
            "value[0][2]"
        );
    }

    #[test]
    fn keys_are_verbatim() {
        assert_eq!(Path::root("").key("a b").to_string(), "a b");
        assert_eq!(Path::root("schema").key("a.b").to_string(), "schema.a.b");
        // A key is joined with a dot only when something was rendered before it.
        assert_eq!(Path::root("").key("").key("x").to_string(), "x");
    }

    #[test]
    fn the_empty_path_is_named_arguments_in_messages() {
        assert_eq!(Path::root("").display_name(), "arguments");
        assert_eq!(Path::root("output").display_name(), "output");
    }
}
