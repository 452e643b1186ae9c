//! Paths that locate a violation inside a schema or a value.

use std::fmt;

use smallvec::SmallVec;
use smol_str::SmolStr;

/// How many segments a [`Path`] holds without a heap allocation: argument paths are
/// rarely deeper (`items[3].qty` is three).
const INLINE_SEGMENTS: usize = 4;

/// A path's segments: inline up to [`INLINE_SEGMENTS`], so reporting a violation at a
/// shallow path allocates nothing for its path.
pub(crate) type Segments = SmallVec<[Segment; INLINE_SEGMENTS]>;

/// One step of a [`Path`]: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// An object key, kept verbatim (no quoting or escaping, so `a.b` stays `a.b`). Keys of
    /// up to 23 bytes are stored inline: reporting a violation allocates no key.
    Key(SmolStr),
    /// An array index.
    Index(usize),
}

impl Segment {
    /// The segment of an object key.
    pub fn key(key: &str) -> Segment {
        Segment::Key(inline_key(key))
    }
}

/// A key or root label as a `SmolStr`, copied inline without `SmolStr::new`'s checks for
/// its shared whitespace forms when it fits (keys of validated arguments are short).
fn inline_key(key: &str) -> SmolStr {
    if key.len() <= INLINE_KEY {
        SmolStr::new_inline(key)
    } else {
        SmolStr::new(key)
    }
}

/// The longest text a `SmolStr` holds inline.
const INLINE_KEY: usize = 23;

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
    segments: Segments,
}

impl Path {
    /// A path at the root, labelled `label` (`"schema"`, `"value"`, `""` for arguments…).
    pub fn root(label: &str) -> Path {
        Path {
            root: inline_key(label),
            segments: Segments::new(),
        }
    }

    /// Builds a path from its parts.
    pub fn from_parts(label: &str, segments: Vec<Segment>) -> Path {
        Path::from_segments(label, Segments::from_vec(segments))
    }

    /// As [`Path::from_parts`], from segments that are already in place.
    pub(crate) fn from_segments(label: &str, segments: Segments) -> Path {
        Path {
            root: inline_key(label),
            segments,
        }
    }

    /// This path extended by an object key.
    #[must_use]
    pub fn key(mut self, key: &str) -> Path {
        self.segments.push(Segment::key(key));
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

    /// The JSON Pointer (RFC 6901) of the path below its root: `/items/3/qty`, with `~`
    /// and `/` in keys escaped as `~0` and `~1`; the root itself is the empty pointer.
    pub fn pointer(&self) -> String {
        let mut pointer = String::new();
        for segment in &self.segments {
            pointer.push('/');
            match segment {
                Segment::Key(key) => {
                    for c in key.chars() {
                        match c {
                            '~' => pointer.push_str("~0"),
                            '/' => pointer.push_str("~1"),
                            other => pointer.push(other),
                        }
                    }
                }
                Segment::Index(index) => pointer.push_str(&index.to_string()),
            }
        }
        pointer
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
    fn a_key_segment_is_the_key_at_every_length_and_paths_spill_past_the_inline_ones() {
        for len in 0..=40 {
            for key in [
                "k".repeat(len),
                " ".repeat(len),
                "\n".repeat(len),
                "é".repeat(len),
            ] {
                let segment = Segment::key(&key);
                assert_eq!(segment, Segment::Key(SmolStr::new(&key)));
                let Segment::Key(inner) = &segment else {
                    panic!("a key segment");
                };
                assert_eq!(inner.as_str(), key);
            }
        }
        let mut path = Path::root("value");
        let mut parts = Vec::new();
        for i in 0..(INLINE_SEGMENTS * 3) {
            path = path.key("k").index(i);
            parts.extend([Segment::key("k"), Segment::Index(i)]);
        }
        assert_eq!(path.segments(), parts.as_slice());
        assert_eq!(Path::from_parts("value", parts), path);
        assert!(path.to_string().starts_with("value.k[0].k[1]"));
    }

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
