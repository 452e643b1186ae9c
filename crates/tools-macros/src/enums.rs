//! `#[derive(ToolSchema)]` on an enum, for each of `serde`'s four representations:
//!
//! | representation | unit variant | newtype variant | struct variant |
//! | --- | --- | --- | --- |
//! | external (default) | its name, in one string `enum` | `{"Name": value}` | `{"Name": {…}}` |
//! | internal (`tag`) | `{"t": "Name"}` | `{"t": "Name", …fields of the struct}` | `{"t": "Name", …}` |
//! | adjacent (`tag`, `content`) | `{"t": "Name"}` | `{"t": "Name", "c": value}` | `{"t": "Name", "c": {…}}` |
//! | `untagged` | `null` | the value | `{…}` |
//!
//! The branches are a `oneOf` (a single branch is itself). Wrapper objects (`{"Name": …}`,
//! `{"t", "c"}`) are closed; struct bodies, and the objects of internally tagged variants,
//! are open unless the enum has `deny_unknown_fields`. Tags are string `const`s. Tuple
//! variants of more than one field are arrays of mixed types, which the subset cannot
//! describe. A variant's doc comment describes its branch; unit variants of an externally
//! tagged enum share one string `enum`, which cannot carry per-value descriptions.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{DataEnum, Field, Fields, Token};

use crate::docs::doc_text;
use crate::fields::{self, Ctx, Rules};
use crate::serde_attrs::{self, Container};
use crate::tool_attrs;

/// How the enum is represented.
enum Tagging<'a> {
    External,
    Internal(&'a str),
    Adjacent(&'a str, &'a str),
    Untagged,
}

fn tagging<'a>(ctx: &mut Ctx, container: &'a Container, span: Span) -> Tagging<'a> {
    match (
        container.tag.as_deref(),
        container.content.as_deref(),
        container.untagged,
    ) {
        (None, None, false) => Tagging::External,
        (Some(tag), None, false) => Tagging::Internal(tag),
        (Some(tag), Some(content), false) => Tagging::Adjacent(tag, content),
        (None, None, true) => Tagging::Untagged,
        _ => {
            ctx.errors.at(
                span,
                "`serde` takes `tag`, `tag` with `content`, or `untagged`, not this combination",
            );
            Tagging::External
        }
    }
}

/// The body of `tool_schema` for an enum: an expression of type `Schema`.
pub(crate) fn schema(
    ctx: &mut Ctx,
    data: &DataEnum,
    container: &Container,
    description: Option<String>,
) -> TokenStream {
    let s = ctx.schema.clone();
    let tagging = tagging(ctx, container, data.enum_token.span());
    let closed = container.deny_unknown_fields;
    let mut unit_names: Vec<String> = Vec::new();
    let mut branches: Vec<TokenStream> = Vec::new();
    for variant in &data.variants {
        let rust = variant.ident.unraw().to_string();
        let serde = serde_attrs::variant(&variant.attrs, &rust, &mut ctx.errors);
        let tool = tool_attrs::type_level(&variant.attrs, &mut ctx.errors);
        if serde.skip {
            continue;
        }
        let doc = tool.description.or_else(|| doc_text(&variant.attrs));
        let name = serde
            .rename
            .or_else(|| container.rename_all.map(|rule| rule.variant(&rust)))
            .unwrap_or(rust);
        let rules = Rules {
            rename_all: serde.rename_all.or(container.rename_all_fields),
            all_default: false,
        };
        let tag_of = |tag: &str| quote!(__fields.field(#tag, #s::__private::tag(#name), true););
        let object = |ctx: &mut Ctx, fields: &Punctuated<Field, Token![,]>, tag: Option<&str>| {
            let fill = fields::fill(ctx, fields, &rules, closed);
            let tag = tag.map(tag_of);
            quote!({
                let __position = #s::FieldPosition::Value;
                let mut __fields = #s::ObjectFields::new(__position, #closed);
                #tag
                #fill
                #s::Schema::from(__fields.into_object())
            })
        };
        let adjacent = |tag: &str, content: Option<(&str, TokenStream)>| {
            let content = content.map(|(key, value)| {
                quote!(let __content = #value; __fields.field(#key, __content, true);)
            });
            let tag = tag_of(tag);
            quote!({
                let mut __fields = #s::ObjectFields::new(#s::FieldPosition::Value, true);
                #tag
                #content
                #s::Schema::from(__fields.into_object())
            })
        };
        let branch = match (&variant.fields, &tagging) {
            (Fields::Unit, Tagging::External) => {
                unit_names.push(name);
                continue;
            }
            (Fields::Unit, Tagging::Internal(tag)) => object(ctx, &Punctuated::new(), Some(tag)),
            (Fields::Unit, Tagging::Adjacent(tag, _)) => adjacent(tag, None),
            (Fields::Unit, Tagging::Untagged) => {
                quote!(#s::Schema::from(#s::Schema::null()))
            }
            (Fields::Unnamed(unnamed), _) if unnamed.unnamed.len() != 1 => {
                ctx.errors.push(syn::Error::new_spanned(
                    &variant.fields,
                    "a tuple variant serializes as a JSON array of mixed types, which the schema subset cannot describe: use named fields or one field",
                ));
                continue;
            }
            (Fields::Unnamed(unnamed), Tagging::Internal(tag)) => {
                let Some(field) = unnamed.unnamed.first() else {
                    continue;
                };
                if let Some(span) = tool_attrs::field(&field.attrs, &mut ctx.errors).span {
                    ctx.errors.at(
                        span,
                        "`#[tool]` does not apply here: the struct's fields are merged beside the tag; put it on them",
                    );
                }
                let ty = &field.ty;
                let inner = quote_spanned!(ty.span()=>
                    <#ty as #s::ToolObject>::tool_fields(#s::FieldPosition::Value)
                );
                let tag = tag_of(tag);
                quote!({
                    let __inner = #inner;
                    let mut __fields =
                        #s::ObjectFields::new(#s::FieldPosition::Value, __inner.is_closed());
                    #tag
                    __fields.flatten(__inner);
                    #s::Schema::from(__fields.into_object())
                })
            }
            (Fields::Unnamed(unnamed), tagging) => {
                let Some(field) = unnamed.unnamed.first() else {
                    continue;
                };
                let value = fields::value_of(ctx, field);
                match tagging {
                    Tagging::External => quote!(#s::__private::wrapped(#name, #value)),
                    Tagging::Adjacent(tag, content) => adjacent(tag, Some((content, value))),
                    _ => value,
                }
            }
            (Fields::Named(named), Tagging::Internal(tag)) => object(ctx, &named.named, Some(tag)),
            (Fields::Named(named), tagging) => {
                let value = object(ctx, &named.named, None);
                match tagging {
                    Tagging::External => quote!(#s::__private::wrapped(#name, #value)),
                    Tagging::Adjacent(tag, content) => adjacent(tag, Some((content, value))),
                    _ => value,
                }
            }
        };
        let doc = match doc {
            Some(text) => quote!(::core::option::Option::Some(#text)),
            None => quote!(::core::option::Option::None),
        };
        branches.push(quote!(#s::__private::describe(#branch, #doc)));
    }
    if !unit_names.is_empty() {
        branches.insert(0, quote!(#s::__private::names(&[#(#unit_names),*])));
    }
    let skipped_all = data.variants.iter().all(|variant| {
        let mut ignored = crate::serde_attrs::Errors::default();
        serde_attrs::variant(&variant.attrs, "", &mut ignored).skip
    });
    if branches.is_empty() && skipped_all {
        ctx.errors.at(
            data.enum_token.span(),
            "an enum without variants that deserialize has no tool schema",
        );
    }
    let description = match description {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    };
    quote! {
        #s::__private::describe(
            #s::__private::one_of(::std::vec![#(#branches),*]),
            #description,
        )
    }
}
