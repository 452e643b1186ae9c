//! `#[derive(ToolSchema)]` and `#[derive(ToolArgs)]`: the impls for a struct (enums are in
//! `enums`).
//!
//! A struct with named fields gets `ToolObject` (its properties), `ToolSchema` (an object,
//! closed with `deny_unknown_fields`, else open), `ObjectBounds`, and with `ToolArgs` the
//! parameter map (the same properties at the parameter root). A newtype or
//! `#[serde(transparent)]` struct has its field's schema, a unit struct `null`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DataStruct, DeriveInput, Fields, Generics};

use crate::docs::doc_text;
use crate::fields::{self, Ctx, Rules};
use crate::serde_attrs::{self, Container, Errors};
use crate::{enums, paths, tool_attrs};

/// Which derive runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Derive {
    Args,
    Schema,
}

/// The expansion of either derive (errors become `compile_error!`s).
pub(crate) fn derive(input: &DeriveInput, which: Derive) -> TokenStream {
    let mut ctx = Ctx {
        schema: paths::schema(),
        errors: Errors::default(),
    };
    let container = serde_attrs::container(&input.attrs, &mut ctx.errors);
    let tool = tool_attrs::type_level(&input.attrs, &mut ctx.errors);
    let description = tool.description.or_else(|| doc_text(&input.attrs));
    let tokens = match (&input.data, which) {
        (Data::Struct(data), _) => structure(&mut ctx, input, data, &container, description, which),
        (Data::Enum(data), Derive::Schema) => {
            let body = enums::schema(&mut ctx, data, &container, description);
            schema_impl(&ctx, input, &body)
        }
        (Data::Enum(_), Derive::Args) => {
            ctx.errors.at(
                input.ident.span(),
                "`ToolArgs` needs a struct with named fields (the parameter root is an object); derive `ToolSchema` for enums used in argument fields",
            );
            quote!()
        }
        (Data::Union(_), _) => {
            ctx.errors
                .at(input.ident.span(), "unions have no tool schema");
            quote!()
        }
    };
    match ctx.errors.finish() {
        Ok(()) => tokens,
        Err(error) => error.to_compile_error(),
    }
}

/// `impl … where T: ToolSchema` for every type parameter `T`.
fn split(ctx: &Ctx, generics: &Generics, extra: Option<TokenStream>) -> [TokenStream; 3] {
    let s = &ctx.schema;
    let mut generics = generics.clone();
    let params: Vec<_> = generics.type_params().map(|p| p.ident.clone()).collect();
    let where_clause = generics.make_where_clause();
    for param in params {
        where_clause
            .predicates
            .push(syn::parse_quote!(#param: #s::ToolSchema));
    }
    if let Some(extra) = extra {
        where_clause.predicates.push(syn::parse_quote!(#extra));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    [
        quote!(#impl_generics),
        quote!(#ty_generics),
        quote!(#where_clause),
    ]
}

/// `impl ToolSchema` whose body evaluates to a `Schema`, guarded against recursion.
fn schema_impl(ctx: &Ctx, input: &DeriveInput, body: &TokenStream) -> TokenStream {
    let s = &ctx.schema;
    let name = &input.ident;
    let [impl_generics, ty_generics, where_clause] = split(ctx, &input.generics, None);
    quote! {
        #[automatically_derived]
        impl #impl_generics #s::ToolSchema for #name #ty_generics #where_clause {
            fn tool_schema() -> #s::Schema {
                let _building = match #s::__private::enter(::core::any::type_name::<Self>()) {
                    ::core::result::Result::Ok(building) => building,
                    ::core::result::Result::Err(report) => return report,
                };
                #body
            }
        }
    }
}

fn description_tokens(description: Option<String>) -> TokenStream {
    match description {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}

fn structure(
    ctx: &mut Ctx,
    input: &DeriveInput,
    data: &DataStruct,
    container: &Container,
    description: Option<String>,
    which: Derive,
) -> TokenStream {
    let s = ctx.schema.clone();
    let described = description_tokens(description);
    let named = matches!(data.fields, Fields::Named(_));
    if !named || container.transparent {
        if which == Derive::Args {
            ctx.errors.push(syn::Error::new_spanned(
                &data.fields,
                "`ToolArgs` needs a struct with named fields (the parameter root is an object)",
            ));
            return quote!();
        }
        let body = match lone_field(ctx, data) {
            Some(field) => {
                let value = fields::value_of(ctx, field);
                quote!(#s::__private::describe(#value, #described))
            }
            None if matches!(data.fields, Fields::Named(_)) => return quote!(),
            None if matches!(data.fields, Fields::Unit) => {
                quote!(#s::__private::describe(#s::Schema::from(#s::Schema::null()), #described))
            }
            None => {
                ctx.errors.push(syn::Error::new_spanned(
                    &data.fields,
                    "a tuple struct serializes as a JSON array of mixed types, which the schema subset cannot describe: use named fields",
                ));
                return quote!();
            }
        };
        return schema_impl(ctx, input, &body);
    }
    let Fields::Named(named) = &data.fields else {
        return quote!();
    };
    let rules = Rules {
        rename_all: container.rename_all,
        all_default: container.default,
    };
    let closed = container.deny_unknown_fields;
    let fill = fields::fill(ctx, &named.named, &rules, closed);
    let name = &input.ident;
    let [impl_generics, ty_generics, where_clause] = split(ctx, &input.generics, None);
    let object = quote! {
        #[automatically_derived]
        impl #impl_generics #s::ToolObject for #name #ty_generics #where_clause {
            fn tool_fields(__position: #s::FieldPosition) -> #s::ObjectFields {
                let _building = match #s::__private::enter(::core::any::type_name::<Self>()) {
                    ::core::result::Result::Ok(building) => building,
                    ::core::result::Result::Err(report) => {
                        let mut __fields = #s::ObjectFields::new(__position, true);
                        __fields.field("", report, true);
                        return __fields;
                    }
                };
                let mut __fields = #s::ObjectFields::new(__position, #closed);
                #fill
                __fields
            }
        }

        #[automatically_derived]
        impl #impl_generics #s::ObjectBounds for #name #ty_generics #where_clause {}

        #[automatically_derived]
        impl #impl_generics #s::ToolSchema for #name #ty_generics #where_clause {
            fn tool_schema() -> #s::Schema {
                let __fields = <Self as #s::ToolObject>::tool_fields(#s::FieldPosition::Value);
                #s::__private::describe(#s::Schema::from(__fields.into_object()), #described)
            }
        }
    };
    let args = if which == Derive::Args {
        let extra = (!input.generics.params.is_empty())
            .then(|| quote!(Self: #s::__private::DeserializeOwned));
        let [impl_generics, ty_generics, where_clause] = split(ctx, &input.generics, extra);
        quote! {
            #[automatically_derived]
            impl #impl_generics #s::ToolArgs for #name #ty_generics #where_clause {
                fn tool_params() -> #s::Params {
                    <Self as #s::ToolObject>::tool_fields(#s::FieldPosition::Params).into_params()
                }
            }
        }
    } else {
        quote!()
    };
    quote!(#object #args)
}

/// The one field a newtype or transparent struct serializes as.
fn lone_field<'a>(ctx: &mut Ctx, data: &'a DataStruct) -> Option<&'a syn::Field> {
    let kept: Vec<&syn::Field> = data
        .fields
        .iter()
        .filter(|field| {
            let mut ignored = Errors::default();
            !serde_attrs::field(&field.attrs, "", &mut ignored).skip
        })
        .collect();
    match kept.as_slice() {
        [one] => Some(one),
        _ => {
            if matches!(data.fields, Fields::Named(_)) {
                ctx.errors.push(syn::Error::new_spanned(
                    &data.fields,
                    "a transparent struct has exactly one field that is not skipped",
                ));
            }
            None
        }
    }
}
