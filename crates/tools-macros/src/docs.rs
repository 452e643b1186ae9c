//! Doc comments as descriptions.

use syn::{Attribute, Expr, Lit, Meta};

/// The text of the `///` doc comments in `attrs`: each line without the one space after
/// `///` and without trailing white space, lines joined with `\n` (so paragraphs stay
/// apart), leading and trailing blank lines dropped. `None` when there is no text.
/// Doc attributes that are not string literals (`#[doc = include_str!(…)]`) are skipped.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for attr in attrs {
        let Meta::NameValue(meta) = &attr.meta else {
            continue;
        };
        if !meta.path.is_ident("doc") {
            continue;
        }
        let Expr::Lit(expr) = &meta.value else {
            continue;
        };
        let Lit::Str(text) = &expr.lit else {
            continue;
        };
        for line in text.value().split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let line = line.strip_prefix(' ').unwrap_or(line);
            lines.push(line.trim_end().to_owned());
        }
    }
    let first = lines.iter().position(|l| !l.is_empty())?;
    let last = lines.iter().rposition(|l| !l.is_empty()).unwrap_or(first);
    Some(lines.get(first..=last)?.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_lines_keep_paragraphs_and_indentation() {
        let item: syn::ItemStruct = syn::parse_quote! {
            ///
            /// First line.
            #[doc = " Second line.  "]
            ///
            /// ```
            ///     indented
            /// ```
            ///
            #[derive(Debug)]
            struct S;
        };
        assert_eq!(
            doc_text(&item.attrs).as_deref(),
            Some("First line.\nSecond line.\n\n```\n    indented\n```")
        );
        let bare: syn::ItemStruct = syn::parse_quote! { #[doc = ""] struct S; };
        assert_eq!(doc_text(&bare.attrs), None);
    }
}
