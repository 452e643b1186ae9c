//! One pass over a schema node's keys, sorting them into the subset's keywords, so that the
//! walkers read keywords from fields instead of hashing each name again.

use serde_json::{Map, Value};

/// The keywords of one schema node.
#[derive(Default)]
pub(crate) struct Keys<'a> {
    pub(crate) ty: Option<&'a Value>,
    pub(crate) one_of: Option<&'a Value>,
    pub(crate) properties: Option<&'a Value>,
    pub(crate) required: Option<&'a Value>,
    pub(crate) additional: Option<&'a Value>,
    pub(crate) items: Option<&'a Value>,
    pub(crate) enumeration: Option<&'a Value>,
    pub(crate) constant: Option<&'a Value>,
    pub(crate) description: Option<&'a Value>,
    pub(crate) title: Option<&'a Value>,
    /// The bound keywords, in [`super::bounds::KEYWORDS`] order.
    pub(crate) bounds: [Option<&'a Value>; 13],
}

/// What a keyword of a schema node is, as the one pass over its keys sorts it (and as
/// [`Keywords::classify`](super::build::Keywords::classify) reports it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeywordKind {
    /// A constraint keyword, `description` or `title` (read back from the sorted keywords).
    Known,
    /// `default` or `examples`: annotation data.
    Data,
    /// A bound keyword (`minLength`, `maximum`, `pattern`, …).
    Bound,
    /// An annotation that must be a string: `format`, `$schema`, `$id`, `$comment`.
    Text,
    /// An annotation that must be a boolean: `deprecated`, `readOnly`, `writeOnly`.
    Flag,
    /// Anything else.
    Unknown,
}

/// The internal name of [`KeywordKind`].
pub(crate) use KeywordKind as Key;

impl<'a> Keys<'a> {
    /// Sorts the keys of `map`, calling `each` with every key in key order.
    ///
    /// Inlined: returned from a call, the 184-byte `Keys` was built in the callee and
    /// copied out with `memcpy` for every node of every schema compiled (3 % of e3).
    #[inline(always)]
    pub(crate) fn classify(
        map: &'a Map<String, Value>,
        mut each: impl FnMut(&'a str, &'a Value, Key),
    ) -> Keys<'a> {
        let mut keys = Keys::default();
        for (name, value) in map {
            let slot = match name.as_str() {
                "type" => &mut keys.ty,
                "oneOf" => &mut keys.one_of,
                "properties" => &mut keys.properties,
                "required" => &mut keys.required,
                "additionalProperties" => &mut keys.additional,
                "items" => &mut keys.items,
                "enum" => &mut keys.enumeration,
                "const" => &mut keys.constant,
                "description" => &mut keys.description,
                "title" => &mut keys.title,
                "default" | "examples" => {
                    each(name, value, Key::Data);
                    continue;
                }
                "format" | "$schema" | "$id" | "$comment" => {
                    each(name, value, Key::Text);
                    continue;
                }
                "deprecated" | "readOnly" | "writeOnly" => {
                    each(name, value, Key::Flag);
                    continue;
                }
                other => {
                    match super::bounds::index_of(other) {
                        Some(i) => {
                            if let Some(slot) = keys.bounds.get_mut(i) {
                                *slot = Some(value);
                            }
                            each(name, value, Key::Bound);
                        }
                        None => each(name, value, Key::Unknown),
                    }
                    continue;
                }
            };
            *slot = Some(value);
            each(name, value, Key::Known);
        }
        keys
    }

    /// The constraint keywords present, in the fixed order the check reports them.
    pub(crate) fn constraints(&self) -> impl Iterator<Item = &'static str> + '_ {
        [
            ("properties", self.properties),
            ("required", self.required),
            ("additionalProperties", self.additional),
            ("items", self.items),
            ("enum", self.enumeration),
            ("const", self.constant),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|_| name))
    }

    /// The bound keywords present: their index in [`super::bounds::KEYWORDS`], name and
    /// value.
    pub(crate) fn bounds(&self) -> impl Iterator<Item = (usize, &'static str, &'a Value)> + '_ {
        super::bounds::KEYWORDS
            .iter()
            .zip(self.bounds)
            .enumerate()
            .filter_map(|(i, ((name, _, _), value))| value.map(|v| (i, *name, v)))
    }
}
