//! The schema of one field, and the statements that add the named fields of a struct or
//! struct variant to an `ObjectFields`.
//!
//! Field rules (the crate docs of `tools-schema` give the reasons):
//! - the key is the `serde` name (`rename`, else the container's `rename_all`);
//! - `skip` and `skip_deserializing` fields are not in the schema;
//! - a key is optional when `serde` fills a missing one: `#[serde(default)]` (on the field
//!   or the container) or an `Option<…>` field (written as `Option`, without a custom
//!   deserializer);
//! - the bounds of an `Option<T>` field apply to `T`; an `Option` field's value is `T` at
//!   the parameter root and `T` or `null` elsewhere;
//! - `#[serde(flatten)]` merges the properties of a type implementing `ToolObject`;
//! - `with`, `deserialize_with` and `serialize_with` need `#[tool(schema = path)]`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Field, GenericArgument, Ident, PathArguments, Token, Type};

use crate::case::RenameRule;
use crate::docs::doc_text;
use crate::serde_attrs::{self, Errors};
use crate::tool_attrs::{self, FieldTool};

/// The expansion's shared state: the path of `tools-schema` and the errors so far.
pub(crate) struct Ctx {
    pub(crate) schema: TokenStream,
    pub(crate) errors: Errors,
}

/// How the fields of one object are named and defaulted.
pub(crate) struct Rules {
    pub(crate) rename_all: Option<RenameRule>,
    /// The container's `#[serde(default)]`: every key is optional.
    pub(crate) all_default: bool,
}

/// How an `Option<T>` field's schema is made from `T`'s.
#[derive(Clone, Copy)]
enum Wrap {
    /// By the `ObjectFields` in `__fields` (it knows the position).
    Fields,
    /// As a value anywhere: `T` or `null`.
    Value,
}

/// `T` when `ty` is written `Option<T>` (or `std::option::Option<T>`, …).
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let ty = match ty {
        Type::Group(group) => &*group.elem,
        Type::Paren(paren) => &*paren.elem,
        other => other,
    };
    let Type::Path(path) = ty else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let is_option = match segments.as_slice() {
        [one] => one == "Option",
        [krate, module, name] => {
            (krate == "std" || krate == "core") && module == "option" && name == "Option"
        }
        _ => false,
    };
    if !is_option {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &path.path.segments.last()?.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

/// The `serde` name of a field.
fn key(field: &Field, rename: Option<String>, rules: &Rules) -> String {
    if let Some(name) = rename {
        return name;
    }
    let rust = field
        .ident
        .as_ref()
        .map(|i| i.unraw().to_string())
        .unwrap_or_default();
    match rules.rename_all {
        Some(rule) => rule.field(&rust),
        None => rust,
    }
}

/// The statements that add `fields` to `__fields` (an `ObjectFields` built for
/// `__position`, both in scope).
pub(crate) fn fill(
    ctx: &mut Ctx,
    fields: &Punctuated<Field, Token![,]>,
    rules: &Rules,
    closed: bool,
) -> TokenStream {
    let mut statements = Vec::new();
    for field in fields {
        let rust_name = field
            .ident
            .as_ref()
            .map(|i| i.unraw().to_string())
            .unwrap_or_default();
        let serde = serde_attrs::field(&field.attrs, &rust_name, &mut ctx.errors);
        let tool = tool_attrs::field(&field.attrs, &mut ctx.errors);
        if serde.skip {
            continue;
        }
        if let Some(span) = serde.flatten {
            if let Some(tool_span) = tool.span {
                ctx.errors.at(
                    tool_span,
                    "`#[tool]` does not apply to a flattened field: put it on the fields of the flattened struct",
                );
            }
            if closed {
                ctx.errors.at(
                    span,
                    "`serde` does not support `flatten` in a struct with `deny_unknown_fields`",
                );
            }
            let s = &ctx.schema;
            let ty = &field.ty;
            statements.push(quote_spanned! {ty.span()=>
                __fields.flatten(<#ty as #s::ToolObject>::tool_fields(__position));
            });
            continue;
        }
        let optional = rules.all_default
            || serde.default
            || (option_inner(&field.ty).is_some() && serde.with.is_none());
        let name = key(field, serde.rename, rules);
        let schema = schema_of(ctx, field, serde.with, &tool, Wrap::Fields);
        let required = !optional;
        statements.push(quote! {
            let __value = #schema;
            __fields.field(#name, __value, #required);
        });
    }
    quote!(#(#statements)*)
}

/// The value schema of a lone field (a newtype struct or variant), `Option` as `T` or
/// `null`.
pub(crate) fn value_of(ctx: &mut Ctx, field: &Field) -> TokenStream {
    let serde = serde_attrs::field(&field.attrs, "", &mut ctx.errors);
    let tool = tool_attrs::field(&field.attrs, &mut ctx.errors);
    if let Some(span) = serde.flatten {
        ctx.errors.at(span, "`flatten` applies to named fields");
    }
    schema_of(ctx, field, serde.with, &tool, Wrap::Value)
}

/// The expression of a field's schema: its type's (or the override's), bounded, wrapped
/// when `Option`, then described.
fn schema_of(
    ctx: &mut Ctx,
    field: &Field,
    with: Option<Span>,
    tool: &FieldTool,
    wrap: Wrap,
) -> TokenStream {
    let s = ctx.schema.clone();
    let (base, bounds, wrapped) = if let Some(path) = &tool.schema {
        if let Some(bound) = tool.bounds.first() {
            ctx.errors.at(
                bound.span,
                "bounds do not combine with `schema = …`: write them in the schema function",
            );
        }
        let base = quote_spanned!(path.span()=> #s::Schema::from(#path()));
        (base, Vec::new(), quote!())
    } else {
        if let Some(span) = with {
            ctx.errors.at(
                span,
                "the derive cannot see the JSON a custom (de)serializer reads or writes: give the field `#[tool(schema = path::to_fn)]`, a `fn() -> Schema` that describes it",
            );
        }
        let (inner, option) = match option_inner(&field.ty) {
            Some(inner) => (inner, true),
            None => (&field.ty, false),
        };
        let base = quote_spanned!(inner.span()=> <#inner as #s::ToolSchema>::tool_schema());
        let bounds = tool
            .bounds
            .iter()
            .map(|bound| {
                let function = Ident::new(bound.keyword.name(), bound.span);
                let value = &bound.value;
                let marker = quote!(#s::__private::ty::<#inner>());
                quote_spanned! {bound.span=>
                    let __ty = #marker;
                    let __s = #s::__private::#function(__ty, __s, #value);
                }
            })
            .collect();
        let wrapped = match (option, wrap) {
            (false, _) => quote!(),
            (true, Wrap::Fields) => quote!(let __s = __fields.option(__s);),
            (true, Wrap::Value) => quote!(let __s = #s::__private::nullable(__s);),
        };
        (base, bounds, wrapped)
    };
    let description = tool.description.clone().or_else(|| doc_text(&field.attrs));
    let description = match description {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    };
    let examples = tool
        .examples
        .iter()
        .map(|e| quote_spanned!(e.span()=> #s::__private::example(&(#e))));
    quote!({
        let __s = #base;
        #(#bounds)*
        #wrapped
        let __s = #s::__private::describe(__s, #description);
        #s::__private::examples(__s, ::std::vec![#(#examples),*])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_recognised_as_written() {
        let inner = |ty: Type| option_inner(&ty).map(|t| quote!(#t).to_string());
        assert_eq!(inner(syn::parse_quote!(Option<u8>)), Some("u8".into()));
        assert_eq!(
            inner(syn::parse_quote!(std::option::Option<Vec<u8>>)),
            Some("Vec < u8 >".into())
        );
        assert_eq!(inner(syn::parse_quote!(Maybe<u8>)), None);
        assert_eq!(inner(syn::parse_quote!(my::Option<u8>)), None);
        assert_eq!(inner(syn::parse_quote!(Option)), None);
    }
}
