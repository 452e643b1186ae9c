//! Lexical normalization of paths given as argument values, for the policy's path patterns:
//! text only, the file system is never asked.

/// `text` as a lexically normalized absolute path: resolved against `root` (an absolute
/// path) when it does not start with `/`, then repeated `/` collapsed, `.` segments dropped,
/// each `..` taking away the segment before it (nothing above `/`: `/..` is `/`) and no
/// trailing `/` (except the root `/` itself). Lexical only: the file system is never asked,
/// so a symbolic link is the upstream server's business.
pub(crate) fn normalize_path(root: &str, text: &str) -> String {
    let base = if text.starts_with('/') { "" } else { root };
    let mut segments: Vec<&str> = Vec::new();
    for segment in base.split('/').chain(text.split('/')) {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            segment => segments.push(segment),
        }
    }
    if segments.is_empty() {
        return "/".to_owned();
    }
    let mut path = String::with_capacity(base.len() + text.len() + 1);
    for segment in segments {
        path.push('/');
        path.push_str(segment);
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn normalization_is_lexical() {
        for (text, path) in [
            ("/", "/"),
            ("", "/"),
            (".", "/"),
            ("..", "/"),
            ("/..", "/"),
            ("/../..", "/"),
            ("/../../etc/./x/", "/etc/x"),
            ("//a//b//", "/a/b"),
            ("/a/b/../../../c", "/c"),
            ("a/./b/..", "/a"),
            ("/a/.../b", "/a/.../b"),
            ("/a/..b/c.", "/a/..b/c."),
            ("/a\\..\\b", "/a\\..\\b"),
        ] {
            assert_eq!(normalize_path("/", text), path, "{text:?}");
        }
        assert_eq!(normalize_path("/srv/data", "x/../y"), "/srv/data/y");
        assert_eq!(normalize_path("/srv/data", "../../../y"), "/y");
        assert_eq!(normalize_path("/srv/data", "/y"), "/y");
        assert_eq!(normalize_path("/srv/data", ""), "/srv/data");
    }

    /// The properties of a normalized path, for `text` under `root`.
    fn check_normal_form(root: &str, text: &str) {
        let path = normalize_path(root, text);
        assert!(path.starts_with('/'), "{text:?} -> {path:?}");
        for bad in ["//", "/./", "/../"] {
            assert!(!path.contains(bad), "{text:?} -> {path:?}");
        }
        if path != "/" {
            for bad in ["/", "/.", "/.."] {
                assert!(!path.ends_with(bad), "{text:?} -> {path:?}");
            }
        }
        assert_eq!(
            normalize_path(root, &path),
            path,
            "{text:?}: not idempotent"
        );
        assert_eq!(normalize_path("/elsewhere", &path), path, "{text:?}");
    }

    /// The segments of the property: `a`, `..`, `.` and the empty one.
    const SEGMENTS: [&str; 4] = ["a", "..", ".", ""];

    #[test]
    fn normal_forms_of_every_short_path() {
        // Every sequence of up to 7 segments, joined by `/`, as given and with a leading
        // `/`, under two roots: the whole space the property ranges over at those lengths.
        let mut count = 0;
        for len in 0..=7u32 {
            for mut n in 0..SEGMENTS.len().pow(len) {
                let mut parts = Vec::new();
                for _ in 0..len {
                    parts.push(SEGMENTS[n % SEGMENTS.len()]);
                    n /= SEGMENTS.len();
                }
                let text = parts.join("/");
                for root in ["/", "/r/s"] {
                    check_normal_form(root, &text);
                    check_normal_form(root, &format!("/{text}"));
                }
                count += 1;
            }
        }
        assert_eq!(count, 21_845);
    }

    proptest::proptest! {
        /// Longer sequences (up to 64 segments, any segment text without `/`) under any
        /// absolute root: the normal form holds and normalizing is idempotent.
        #[test]
        fn normal_forms_of_random_long_paths(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(SEGMENTS.to_vec()).prop_map(str::to_owned),
                    "[^/]{0,6}",
                ],
                0..64,
            ),
            root in proptest::collection::vec("[a-z.]{1,4}", 0..4),
            absolute in proptest::bool::ANY,
        ) {
            let text = parts.join("/");
            let text = if absolute { format!("/{text}") } else { text };
            let root = format!("/{}", root.join("/"));
            check_normal_form(&normalize_path("/", &root), &text);
        }
    }
}
