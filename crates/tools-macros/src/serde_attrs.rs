//! The `#[serde(…)]` attributes that change what a value looks like in JSON, read the way
//! `serde` reads them. Attributes with no effect on the schema (`alias`, `bound`,
//! `skip_serializing_if`, …) are skipped; `serde` itself checks their syntax.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, LitStr, Token};

use crate::case::RenameRule;

/// Collects errors so that one expansion reports several.
#[derive(Default)]
pub(crate) struct Errors(Vec<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.0.push(error);
    }

    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.0.push(syn::Error::new(span, message));
    }

    /// `Ok` when nothing was collected, else every error as one.
    pub(crate) fn finish(self) -> syn::Result<()> {
        let mut errors = self.0.into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut first) => {
                first.extend(errors);
                Err(first)
            }
        }
    }
}

/// A container's `#[serde(…)]`.
#[derive(Default)]
pub(crate) struct Container {
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) rename_all_fields: Option<RenameRule>,
    pub(crate) deny_unknown_fields: bool,
    pub(crate) tag: Option<String>,
    pub(crate) content: Option<String>,
    pub(crate) untagged: bool,
    pub(crate) default: bool,
    pub(crate) transparent: bool,
}

/// A field's `#[serde(…)]`.
#[derive(Default)]
pub(crate) struct Field {
    pub(crate) rename: Option<String>,
    pub(crate) default: bool,
    /// `skip` or `skip_deserializing`: the key is not read, so it is not in the schema.
    pub(crate) skip: bool,
    pub(crate) flatten: Option<Span>,
    /// The span of `with`, `deserialize_with` or `serialize_with`.
    pub(crate) with: Option<Span>,
}

/// A variant's `#[serde(…)]`.
#[derive(Default)]
pub(crate) struct Variant {
    pub(crate) rename: Option<String>,
    pub(crate) rename_all: Option<RenameRule>,
    pub(crate) skip: bool,
}

/// Calls `on` for every key of every `#[serde(…)]` in `attrs`; `on` returns `false` for a
/// key it does not handle, whose value is then skipped.
fn each(
    attrs: &[Attribute],
    errors: &mut Errors,
    mut on: impl FnMut(&str, &ParseNestedMeta<'_>, &mut Errors) -> syn::Result<bool>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let mut inner = Errors::default();
        let parsed = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if !on(&key, &meta, &mut inner)? {
                skip_value(&meta)?;
            }
            Ok(())
        });
        errors.0.extend(inner.0);
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
}

/// Consumes `= value` or `(…)` after a key.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// A string value: `key = "…"`.
fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    meta.value()?.parse::<LitStr>()
}

/// `key = "…"` or `key(serialize = "…", deserialize = "…")`: the one name both directions
/// use, `None` when neither renames. `default` is what an unnamed side uses, to compare.
fn one_name(
    meta: &ParseNestedMeta<'_>,
    what: &str,
    default: Option<&str>,
) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(Token![=]) {
        return string(meta).map(Some);
    }
    let (mut ser, mut de) = (None, None);
    meta.parse_nested_meta(|side| {
        if side.path.is_ident("serialize") {
            ser = Some(string(&side)?);
        } else if side.path.is_ident("deserialize") {
            de = Some(string(&side)?);
        } else {
            skip_value(&side)?;
        }
        Ok(())
    })?;
    let text = |lit: &Option<LitStr>| lit.as_ref().map(LitStr::value);
    let (ser_text, de_text) = (text(&ser), text(&de));
    let same = ser_text.as_deref().or(default) == de_text.as_deref().or(default);
    if !same {
        return Err(meta.error(format!(
            "a schema describes one JSON shape: `{what}` must be the same for serialize and deserialize"
        )));
    }
    Ok(de.or(ser))
}

fn rule(lit: &LitStr) -> syn::Result<RenameRule> {
    RenameRule::parse(&lit.value()).ok_or_else(|| {
        let known: Vec<&str> = RenameRule::ALL.iter().map(|(name, _)| *name).collect();
        syn::Error::new(
            lit.span(),
            format!("unknown rename rule; expected one of {}", known.join(", ")),
        )
    })
}

pub(crate) fn container(attrs: &[Attribute], errors: &mut Errors) -> Container {
    let mut out = Container::default();
    each(attrs, errors, |key, meta, _| {
        match key {
            "rename_all" => {
                out.rename_all = one_name(meta, key, None)?.as_ref().map(rule).transpose()?;
            }
            "rename_all_fields" => {
                out.rename_all_fields =
                    one_name(meta, key, None)?.as_ref().map(rule).transpose()?;
            }
            "deny_unknown_fields" => out.deny_unknown_fields = true,
            "tag" => out.tag = Some(string(meta)?.value()),
            "content" => out.content = Some(string(meta)?.value()),
            "untagged" => out.untagged = true,
            "transparent" => out.transparent = true,
            "default" => {
                out.default = true;
                return Ok(false);
            }
            "from" | "try_from" | "into" | "remote" => {
                return Err(meta.error(format!(
                    "`#[serde({key} = …)]` hides the JSON shape from the derive: implement `ToolSchema` (and `ToolArgs`) by hand for this type"
                )));
            }
            _ => return Ok(false),
        }
        Ok(true)
    });
    out
}

pub(crate) fn field(attrs: &[Attribute], rust_name: &str, errors: &mut Errors) -> Field {
    let mut out = Field::default();
    each(attrs, errors, |key, meta, _| {
        match key {
            "rename" => out.rename = one_name(meta, key, Some(rust_name))?.map(|l| l.value()),
            "default" => {
                out.default = true;
                return Ok(false);
            }
            "skip" | "skip_deserializing" => out.skip = true,
            "flatten" => out.flatten = Some(meta.path.span()),
            "with" | "deserialize_with" | "serialize_with" => {
                out.with = Some(meta.path.span());
                return Ok(false);
            }
            _ => return Ok(false),
        }
        Ok(true)
    });
    out
}

pub(crate) fn variant(attrs: &[Attribute], rust_name: &str, errors: &mut Errors) -> Variant {
    let mut out = Variant::default();
    each(attrs, errors, |key, meta, _| {
        match key {
            "rename" => out.rename = one_name(meta, key, Some(rust_name))?.map(|l| l.value()),
            "rename_all" => {
                out.rename_all = one_name(meta, key, None)?.as_ref().map(rule).transpose()?;
            }
            "skip" | "skip_deserializing" => out.skip = true,
            "other" | "untagged" | "with" | "deserialize_with" | "serialize_with" => {
                return Err(meta.error(format!(
                    "`#[serde({key})]` on a variant has no derived schema: implement `ToolSchema` by hand for this enum"
                )));
            }
            _ => return Ok(false),
        }
        Ok(true)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_agree_across_directions() {
        let item: syn::ItemStruct = syn::parse_quote! {
            struct S {
                #[serde(rename(serialize = "a", deserialize = "a"), default)]
                x: u8,
                #[serde(rename(deserialize = "b"))]
                y: u8,
                #[serde(alias = "zz", skip_serializing_if = "is_zero", rename = "z")]
                z: u8,
            }
        };
        let fields: Vec<&syn::Field> = item.fields.iter().collect();
        let mut errors = Errors::default();
        let x = field(&fields[0].attrs, "x", &mut errors);
        assert_eq!((x.rename.as_deref(), x.default), (Some("a"), true));
        let z = field(&fields[2].attrs, "z", &mut errors);
        assert_eq!(z.rename.as_deref(), Some("z"));
        assert!(errors.finish().is_ok());
        let mut errors = Errors::default();
        let _ = field(&fields[1].attrs, "y", &mut errors);
        let message = errors.finish().err().map(|e| e.to_string());
        assert!(message.is_some_and(|m| m.contains("same for serialize and deserialize")));
    }

    #[test]
    fn container_keys() {
        let item: syn::ItemEnum = syn::parse_quote! {
            #[serde(tag = "kind", content = "data", rename_all = "snake_case")]
            #[serde(deny_unknown_fields, bound = "T: X", rename_all_fields = "camelCase")]
            enum E { A }
        };
        let mut errors = Errors::default();
        let c = container(&item.attrs, &mut errors);
        assert!(errors.finish().is_ok());
        assert_eq!(c.tag.as_deref(), Some("kind"));
        assert_eq!(c.content.as_deref(), Some("data"));
        assert_eq!(c.rename_all, Some(RenameRule::Snake));
        assert_eq!(c.rename_all_fields, Some(RenameRule::Camel));
        assert!(c.deny_unknown_fields);
    }
}
