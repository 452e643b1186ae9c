//! The `#[tool(…)]` attributes: bounds and annotations on fields, a description on types
//! and variants, the name and concurrency of a `#[tool]` function.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprPath, ExprRange, Lit, LitBool, LitStr, RangeLimits, UnOp};

use crate::serde_attrs::Errors;

/// A bound or annotation keyword on a field, by the name of its `__private` function.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keyword {
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
    MultipleOf,
    MinLength,
    MaxLength,
    Pattern,
    Format,
    MinItems,
    MaxItems,
    UniqueItems,
    MinProperties,
    MaxProperties,
}

/// What a keyword's value is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    Number,
    Count,
    Text,
    Flag,
}

impl Keyword {
    const ALL: [(&'static str, Keyword, ValueKind); 14] = [
        ("minimum", Keyword::Minimum, ValueKind::Number),
        ("maximum", Keyword::Maximum, ValueKind::Number),
        (
            "exclusive_minimum",
            Keyword::ExclusiveMinimum,
            ValueKind::Number,
        ),
        (
            "exclusive_maximum",
            Keyword::ExclusiveMaximum,
            ValueKind::Number,
        ),
        ("multiple_of", Keyword::MultipleOf, ValueKind::Number),
        ("min_length", Keyword::MinLength, ValueKind::Count),
        ("max_length", Keyword::MaxLength, ValueKind::Count),
        ("pattern", Keyword::Pattern, ValueKind::Text),
        ("format", Keyword::Format, ValueKind::Text),
        ("min_items", Keyword::MinItems, ValueKind::Count),
        ("max_items", Keyword::MaxItems, ValueKind::Count),
        ("unique_items", Keyword::UniqueItems, ValueKind::Flag),
        ("min_properties", Keyword::MinProperties, ValueKind::Count),
        ("max_properties", Keyword::MaxProperties, ValueKind::Count),
    ];

    /// The name of the keyword, which is also its `__private` function.
    pub(crate) fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k, _)| *k == self)
            .map_or("", |(name, _, _)| name)
    }
}

/// One bound: the keyword, where it was written, and the value expression to emit.
pub(crate) struct Bound {
    pub(crate) keyword: Keyword,
    pub(crate) span: Span,
    pub(crate) value: TokenStream,
}

/// A field's `#[tool(…)]`.
#[derive(Default)]
pub(crate) struct FieldTool {
    pub(crate) bounds: Vec<Bound>,
    pub(crate) description: Option<String>,
    pub(crate) examples: Vec<Expr>,
    /// `schema = path`: the field's whole schema, from `path()`.
    pub(crate) schema: Option<ExprPath>,
    /// Where the first `#[tool]` key was written (for "not here" errors).
    pub(crate) span: Option<Span>,
}

/// A type's or a variant's `#[tool(…)]`.
#[derive(Default)]
pub(crate) struct TypeTool {
    pub(crate) description: Option<String>,
}

/// The `#[tool(…)]` of an `async fn`.
#[derive(Default)]
pub(crate) struct FnTool {
    pub(crate) name: Option<LitStr>,
    pub(crate) concurrent: bool,
    pub(crate) read_only: bool,
}

const FIELD_KEYS: &str = "range, minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of, min_length, max_length, pattern, format, min_items, max_items, unique_items, min_properties, max_properties, description, example, schema";

fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// Calls `on` for every key of every `#[tool(…)]` in `attrs`.
fn each(
    attrs: &[Attribute],
    errors: &mut Errors,
    mut on: impl FnMut(&str, &ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("tool")) {
        if let Err(error) = attr.parse_nested_meta(|meta| on(&key_of(&meta), &meta)) {
            errors.push(error);
        }
    }
}

pub(crate) fn field(attrs: &[Attribute], errors: &mut Errors) -> FieldTool {
    let mut out = FieldTool::default();
    let mut seen: Vec<String> = Vec::new();
    each(attrs, errors, |key, meta| {
        out.span.get_or_insert(meta.path.span());
        if key != "example" && seen.iter().any(|k| k == key) {
            return Err(meta.error(format!("duplicate `{key}`")));
        }
        seen.push(key.to_owned());
        match key {
            "range" => out.bounds.extend(range(meta)?),
            "description" => out.description = Some(meta.value()?.parse::<LitStr>()?.value()),
            "example" => out.examples.push(meta.value()?.parse::<Expr>()?),
            "schema" => {
                let value = meta.value()?;
                out.schema = Some(if value.peek(LitStr) {
                    value.parse::<LitStr>()?.parse::<ExprPath>()?
                } else {
                    value.parse::<ExprPath>()?
                });
            }
            _ => {
                let Some(&(_, keyword, kind)) = Keyword::ALL.iter().find(|(n, _, _)| *n == key)
                else {
                    return Err(meta.error(format!(
                        "unknown `#[tool]` key `{key}`; expected one of: {FIELD_KEYS}"
                    )));
                };
                let value = match kind {
                    ValueKind::Number => number(&meta.value()?.parse::<Expr>()?)?,
                    ValueKind::Count => count(&meta.value()?.parse::<Expr>()?)?,
                    ValueKind::Text => meta.value()?.parse::<Expr>()?.into_token_stream(),
                    ValueKind::Flag if meta.input.peek(syn::Token![=]) => {
                        meta.value()?.parse::<LitBool>()?.into_token_stream()
                    }
                    ValueKind::Flag => quote!(true),
                };
                let span = meta.path.span();
                out.bounds.push(Bound {
                    keyword,
                    span,
                    value,
                });
            }
        }
        Ok(())
    });
    let has = |k: &str| seen.iter().any(|s| s == k);
    if has("range") {
        let clash = [
            "minimum",
            "maximum",
            "exclusive_minimum",
            "exclusive_maximum",
        ];
        if let Some(other) = clash.iter().find(|k| has(k)) {
            let span = out.span.unwrap_or_else(Span::call_site);
            errors.at(span, format!("`range` and `{other}` set the same bound"));
        }
    }
    out
}

/// `range = a..b`, `a..=b`, `a..`, `..b`, `..=b`.
fn range(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Bound>> {
    let expr = meta.value()?.parse::<Expr>()?;
    let Expr::Range(ExprRange {
        start, limits, end, ..
    }) = unwrap_group(&expr)
    else {
        return Err(syn::Error::new_spanned(
            &expr,
            "`range` takes a Rust range: `1..=500`, `0..10`, `1..`, `..=9`",
        ));
    };
    let span = meta.path.span();
    let mut bounds = Vec::new();
    if let Some(start) = start {
        bounds.push(Bound {
            keyword: Keyword::Minimum,
            span,
            value: number(start)?,
        });
    }
    if let Some(end) = end {
        let keyword = match limits {
            RangeLimits::HalfOpen(_) => Keyword::ExclusiveMaximum,
            RangeLimits::Closed(_) => Keyword::Maximum,
        };
        bounds.push(Bound {
            keyword,
            span,
            value: number(end)?,
        });
    }
    if bounds.is_empty() {
        return Err(syn::Error::new_spanned(&expr, "`..` bounds nothing"));
    }
    Ok(bounds)
}

fn unwrap_group(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => unwrap_group(&group.expr),
        Expr::Paren(paren) => unwrap_group(&paren.expr),
        other => other,
    }
}

/// A literal number, possibly negated: `Some((negative, literal))`.
fn literal(expr: &Expr) -> Option<(bool, &Lit)> {
    match unwrap_group(expr) {
        Expr::Lit(ExprLit { lit, .. }) => Some((false, lit)),
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => match unwrap_group(&unary.expr) {
            Expr::Lit(ExprLit { lit, .. }) => Some((true, lit)),
            _ => None,
        },
        _ => None,
    }
}

/// A numeric bound: an unsuffixed literal gets the suffix that holds it (so `3_000_000_000`
/// is not an overflowing `i32`); anything else is emitted as written and must implement
/// `BoundNumber`.
fn number(expr: &Expr) -> syn::Result<TokenStream> {
    match literal(expr) {
        Some((negative, Lit::Int(int))) if int.suffix().is_empty() => {
            let magnitude = int.base10_parse::<u64>()?;
            let literal = match (negative, i64::try_from(magnitude)) {
                (false, Ok(v)) => Literal::i64_suffixed(v),
                (false, Err(_)) => Literal::u64_suffixed(magnitude),
                (true, _) => {
                    let v = i64::try_from(-i128::from(magnitude))
                        .map_err(|_| syn::Error::new_spanned(expr, "below `i64::MIN`"))?;
                    Literal::i64_suffixed(v)
                }
            };
            Ok(literal.into_token_stream())
        }
        Some((negative, Lit::Float(float))) if float.suffix().is_empty() => {
            let value = float.base10_parse::<f64>()?;
            let value = if negative { -value } else { value };
            Ok(Literal::f64_suffixed(value).into_token_stream())
        }
        Some((_, Lit::Int(_) | Lit::Float(_))) | None => Ok(expr.into_token_stream()),
        Some(_) => Err(syn::Error::new_spanned(expr, "expected a number")),
    }
}

/// A count: an unsuffixed literal becomes a `u64`; anything else must implement
/// `BoundCount`.
fn count(expr: &Expr) -> syn::Result<TokenStream> {
    match literal(expr) {
        Some((true, _)) => Err(syn::Error::new_spanned(
            expr,
            "a length or count cannot be negative",
        )),
        Some((false, Lit::Int(int))) if int.suffix().is_empty() => {
            Ok(Literal::u64_suffixed(int.base10_parse::<u64>()?).into_token_stream())
        }
        Some((false, Lit::Int(_))) | None => Ok(expr.into_token_stream()),
        Some(_) => Err(syn::Error::new_spanned(
            expr,
            "a length or count is a non-negative integer",
        )),
    }
}

/// A type's or a variant's `#[tool(…)]`: only `description`.
pub(crate) fn type_level(attrs: &[Attribute], errors: &mut Errors) -> TypeTool {
    let mut out = TypeTool::default();
    each(attrs, errors, |key, meta| {
        if key == "description" {
            out.description = Some(meta.value()?.parse::<LitStr>()?.value());
            Ok(())
        } else {
            Err(meta.error(format!(
                "unknown `#[tool]` key `{key}` here; a type or variant takes only `description` (bounds go on fields)"
            )))
        }
    });
    out
}

/// The arguments of `#[tool(…)]` on a function: `name = "…"`, `concurrent`, `read_only`.
pub(crate) fn function(args: TokenStream) -> syn::Result<FnTool> {
    let mut out = FnTool::default();
    let parser = syn::meta::parser(|meta| {
        match key_of(&meta).as_str() {
            "name" => out.name = Some(meta.value()?.parse::<LitStr>()?),
            "concurrent" => out.concurrent = true,
            "read_only" => out.read_only = true,
            other => {
                return Err(meta.error(format!(
                    "unknown `#[tool]` key `{other}`; expected `name = \"…\"`, `concurrent` or `read_only`"
                )));
            }
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, args)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(attrs: TokenStream) -> (FieldTool, syn::Result<()>) {
        let item: syn::ItemStruct = syn::parse_quote! { struct S { #attrs x: u8 } };
        let mut errors = Errors::default();
        let attrs = item
            .fields
            .iter()
            .next()
            .map(|f| f.attrs.clone())
            .unwrap_or_default();
        let tool = field(&attrs, &mut errors);
        (tool, errors.finish())
    }

    fn values(tool: &FieldTool) -> Vec<(String, String)> {
        tool.bounds
            .iter()
            .map(|b| {
                (
                    b.keyword.name().to_owned(),
                    b.value.to_string().replace(' ', ""),
                )
            })
            .collect()
    }

    #[test]
    fn ranges_and_literals() {
        let (tool, ok) = parsed(quote!(#[tool(range = -5..3_000_000_000, multiple_of = 0.5)]));
        assert!(ok.is_ok());
        assert_eq!(
            values(&tool),
            [
                ("minimum".to_owned(), "-5i64".to_owned()),
                ("exclusive_maximum".to_owned(), "3000000000i64".to_owned()),
                ("multiple_of".to_owned(), "0.5f64".to_owned()),
            ]
        );
        let (tool, ok) = parsed(quote!(#[tool(range = ..=18446744073709551615, min_items = 2)]));
        assert!(ok.is_ok());
        assert_eq!(
            values(&tool),
            [
                ("maximum".to_owned(), "18446744073709551615u64".to_owned()),
                ("min_items".to_owned(), "2u64".to_owned()),
            ]
        );
        let (tool, ok) = parsed(quote!(#[tool(maximum = LIMIT, unique_items, pattern = "^a")]));
        assert!(ok.is_ok());
        assert_eq!(values(&tool)[0].1, "LIMIT");
        assert_eq!(values(&tool)[1].1, "true");
    }

    #[test]
    fn bad_keys_and_clashes_are_errors() {
        let (_, err) = parsed(quote!(#[tool(minimun = 1)]));
        assert!(
            err.err()
                .is_some_and(|e| e.to_string().contains("unknown `#[tool]` key `minimun`"))
        );
        let (_, err) = parsed(quote!(#[tool(range = 1..=2, minimum = 0)]));
        assert!(
            err.err()
                .is_some_and(|e| e.to_string().contains("same bound"))
        );
        let (_, err) = parsed(quote!(#[tool(min_length = -1)]));
        assert!(
            err.err()
                .is_some_and(|e| e.to_string().contains("negative"))
        );
        let (_, err) = parsed(quote!(#[tool(pattern = "a", pattern = "b")]));
        assert!(
            err.err()
                .is_some_and(|e| e.to_string().contains("duplicate"))
        );
        assert!(function(quote!(name = "x", concurrent)).is_ok());
        assert!(function(quote!(read_only)).is_ok_and(|f| f.read_only));
        assert!(function(quote!(nme = "x")).is_err());
    }
}
