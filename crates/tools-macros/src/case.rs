//! `serde`'s `rename_all` conventions, with `serde`'s own results: fields are written in
//! `snake_case` and variants in `PascalCase`, and each convention converts from that.

/// A `rename_all` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// The conventions `serde` accepts, by their spelling.
    pub(crate) const ALL: [(&'static str, RenameRule); 8] = [
        ("lowercase", RenameRule::Lower),
        ("UPPERCASE", RenameRule::Upper),
        ("PascalCase", RenameRule::Pascal),
        ("camelCase", RenameRule::Camel),
        ("snake_case", RenameRule::Snake),
        ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
        ("kebab-case", RenameRule::Kebab),
        ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
    ];

    pub(crate) fn parse(text: &str) -> Option<RenameRule> {
        Self::ALL
            .iter()
            .find(|(name, _)| *name == text)
            .map(|(_, rule)| *rule)
    }

    /// A field name (`snake_case` in Rust) under this convention.
    pub(crate) fn field(self, name: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => name.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => name.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::with_capacity(name.len());
                let mut upper_next = true;
                for ch in name.chars() {
                    if ch == '_' {
                        upper_next = true;
                    } else if upper_next {
                        out.push(ch.to_ascii_uppercase());
                        upper_next = false;
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
            RenameRule::Camel => lower_first(&RenameRule::Pascal.field(name)),
            RenameRule::Kebab => name.replace('_', "-"),
            RenameRule::ScreamingKebab => name.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// A variant name (`PascalCase` in Rust) under this convention.
    pub(crate) fn variant(self, name: &str) -> String {
        match self {
            RenameRule::Pascal => name.to_owned(),
            RenameRule::Lower => name.to_ascii_lowercase(),
            RenameRule::Upper => name.to_ascii_uppercase(),
            RenameRule::Camel => lower_first(name),
            RenameRule::Snake => {
                let mut out = String::with_capacity(name.len() + 4);
                for (i, ch) in name.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        out.push('_');
                    }
                    out.push(ch.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake.variant(name).to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake.variant(name).replace('_', "-"),
            RenameRule::ScreamingKebab => {
                RenameRule::ScreamingSnake.variant(name).replace('_', "-")
            }
        }
    }
}

/// The first character in ASCII lower case, the rest as is.
fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule::{self, *};

    #[test]
    fn fields_convert_from_snake_case() {
        let cases: [(RenameRule, &str); 8] = [
            (Lower, "out_dir_v2"),
            (Upper, "OUT_DIR_V2"),
            (Pascal, "OutDirV2"),
            (Camel, "outDirV2"),
            (Snake, "out_dir_v2"),
            (ScreamingSnake, "OUT_DIR_V2"),
            (Kebab, "out-dir-v2"),
            (ScreamingKebab, "OUT-DIR-V2"),
        ];
        for (rule, expected) in cases {
            assert_eq!(rule.field("out_dir_v2"), expected, "{rule:?}");
        }
        assert_eq!(Camel.field("a"), "a");
        assert_eq!(Pascal.field("_x"), "X");
    }

    #[test]
    fn variants_convert_from_pascal_case() {
        let cases: [(RenameRule, &str); 8] = [
            (Lower, "readfileasync"),
            (Upper, "READFILEASYNC"),
            (Pascal, "ReadFileAsync"),
            (Camel, "readFileAsync"),
            (Snake, "read_file_async"),
            (ScreamingSnake, "READ_FILE_ASYNC"),
            (Kebab, "read-file-async"),
            (ScreamingKebab, "READ-FILE-ASYNC"),
        ];
        for (rule, expected) in cases {
            assert_eq!(rule.variant("ReadFileAsync"), expected, "{rule:?}");
        }
        assert_eq!(Snake.variant("HTTPGet"), "h_t_t_p_get");
        assert_eq!(RenameRule::parse("kebab-case"), Some(Kebab));
        assert_eq!(RenameRule::parse("Kebab"), None);
    }
}
