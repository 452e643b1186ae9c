//! `#[tool]` on an `async fn`: the function becomes the tool's body, and a function of the
//! same name and visibility, taking nothing, builds the tool.
//!
//! ```text
//! /// Read a UTF-8 file.                          ← the description (required)
//! #[tool]                                         ← or #[tool(name = "read", concurrent)]
//! async fn read_file(args: ReadArgs, ctx: RunContext) -> Result<String, ToolError> { … }
//! ```
//!
//! expands to `fn read_file() -> Result<ToolDefinition, Error>`, which calls
//! `define_tool::<ReadArgs, _>("read_file", "Read a UTF-8 file.")` with the body and
//! builds it: the parameters come from `ReadArgs: ToolArgs` and the output schema from the
//! output type's `ToolSchema`. The parameters are `(args)`, `(args, ctx)`, `(ctx)` (a
//! parameter whose type is named `RunContext`) or none (the tool takes `NoArgs`).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, ReturnType, Type};

use crate::docs::doc_text;
use crate::serde_attrs::Errors;
use crate::{paths, tool_attrs};

/// The expansion; on an error, the error and the item as written (so that what the item
/// uses does not also turn up as unused).
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    expand_checked(args, item.clone()).unwrap_or_else(|error| {
        let error = error.to_compile_error();
        quote!(#error #item)
    })
}

/// Whether a parameter's type is written `RunContext` (any path ending so).
fn is_context(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "RunContext"),
        _ => false,
    }
}

fn expand_checked(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let options = tool_attrs::function(args)?;
    let function: ItemFn = syn::parse2(item)?;
    let sig = &function.sig;
    let mut errors = Errors::default();
    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token.span(),
            "`#[tool]` takes an `async fn` (the tool's body)",
        );
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "a `#[tool]` function cannot be generic: its types are the tool's schemas",
        ));
    }
    if let ReturnType::Default = sig.output {
        errors.push(syn::Error::new_spanned(
            sig,
            "a `#[tool]` function returns `Result<Output, ToolError>`",
        ));
    }
    let description = doc_text(&function.attrs);
    if description.is_none() {
        errors.at(
            sig.ident.span(),
            "a `#[tool]` function needs a doc comment: it is the tool's description, what the model reads to decide when to call it",
        );
    }
    let mut types = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => errors.push(syn::Error::new_spanned(
                receiver,
                "a `#[tool]` function is a free function, not a method",
            )),
            FnArg::Typed(typed) => types.push(&*typed.ty),
        }
    }
    let registry = paths::registry();
    let body_name = Ident::new("__tool_body", sig.ident.span());
    let (args_ty, call) = match types.as_slice() {
        [] => (
            quote!(#registry::NoArgs),
            quote!(|_: #registry::NoArgs, _ctx| #body_name()),
        ),
        [only] if is_context(only) => (
            quote!(#registry::NoArgs),
            quote!(|_: #registry::NoArgs, ctx| #body_name(ctx)),
        ),
        [args] => (quote!(#args), quote!(|args, _ctx| #body_name(args))),
        [args, _ctx] => (quote!(#args), quote!(|args, ctx| #body_name(args, ctx))),
        _ => {
            errors.push(syn::Error::new_spanned(
                &sig.inputs,
                "a `#[tool]` function takes its arguments and, optionally, its `RunContext`",
            ));
            (quote!(), quote!())
        }
    };
    errors.finish()?;

    let name = options
        .name
        .map_or_else(|| sig.ident.unraw().to_string(), |lit| lit.value());
    let description = description.unwrap_or_default();
    let concurrency = if options.read_only {
        Some(quote!(.read_only()))
    } else {
        options.concurrent.then(|| quote!(.concurrency_safe()))
    };
    let args_span = types
        .first()
        .map_or_else(|| sig.ident.span(), |ty| ty.span());
    let define = quote_spanned!(args_span=> #registry::define_tool::<#args_ty, _>);
    let (docs, attrs): (Vec<_>, Vec<_>) = function
        .attrs
        .iter()
        .partition(|attr| attr.path().is_ident("doc"));
    let vis = &function.vis;
    let ident = &sig.ident;
    let mut body_sig = sig.clone();
    body_sig.ident = body_name;
    let block = &function.block;
    Ok(quote! {
        #(#docs)*
        #(#attrs)*
        #vis fn #ident() -> ::core::result::Result<#registry::ToolDefinition, #registry::Error> {
            #body_sig #block
            #define(#name, #description)
                .body(#call)
                #concurrency
                .build()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(args: TokenStream, item: TokenStream) -> String {
        expand(args, item).to_string()
    }

    #[test]
    fn a_documented_async_fn_becomes_a_builder() {
        let out = expanded(
            quote!(name = "read", concurrent),
            quote! {
                /// Read a file.
                pub async fn read_file(args: ReadArgs, ctx: RunContext) -> Result<String, ToolError> {
                    Ok(args.path)
                }
            },
        );
        assert!(out.contains("pub fn read_file ()"), "{out}");
        assert!(
            out.contains("define_tool :: < ReadArgs , _ > (\"read\" , \"Read a file.\")"),
            "{out}"
        );
        assert!(out.contains(". concurrency_safe ()"), "{out}");
        assert!(
            out.contains("async fn __tool_body (args : ReadArgs , ctx : RunContext)"),
            "{out}"
        );
    }

    #[test]
    fn context_only_and_no_parameters_take_no_args() {
        let out = expanded(
            quote!(),
            quote! {
                /// Now.
                async fn now(ctx: tools_registry::RunContext) -> Result<u64, ToolError> { Ok(1) }
            },
        );
        assert!(out.contains("NoArgs , ctx | __tool_body (ctx)"), "{out}");
        assert!(
            out.contains("define_tool :: < :: tools_registry :: NoArgs , _ > (\"now\""),
            "{out}"
        );
    }

    #[test]
    fn mistakes_are_compile_errors() {
        let out = expanded(
            quote!(),
            quote!(
                fn f(a: A) -> Result<u8, ToolError> {
                    Ok(1)
                }
            ),
        );
        assert!(out.contains("takes an `async fn`"), "{out}");
        assert!(out.contains("needs a doc comment"), "{out}");
        let out = expanded(
            quote!(title = "x"),
            quote!(
                async fn f() {}
            ),
        );
        assert!(out.contains("unknown `#[tool]` key `title`"), "{out}");
        let out = expanded(
            quote!(),
            quote!(
                /// D.
                async fn f(a: A, b: B, c: C) -> Result<u8, E> {
                    Ok(1)
                }
            ),
        );
        assert!(out.contains("optionally, its `RunContext`"), "{out}");
    }
}
