#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use proc_macro::TokenStream;

mod case;
mod docs;
mod enums;
mod expand;
mod fields;
mod paths;
mod serde_attrs;
mod tool_attrs;
mod tool_fn;

/// Derives `ToolArgs` (and `ToolSchema`, `ToolObject`, `ObjectBounds`) for a struct with
/// named fields; see the crate docs.
#[proc_macro_derive(ToolArgs, attributes(tool))]
pub fn derive_tool_args(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input, expand::Derive::Args).into()
}

/// Derives `ToolSchema` for a struct or an enum; see the crate docs.
#[proc_macro_derive(ToolSchema, attributes(tool))]
pub fn derive_tool_schema(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input, expand::Derive::Schema).into()
}

/// Turns a documented `async fn` into the function that builds its tool; see the crate
/// docs.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool_fn::expand(args.into(), item.into()).into()
}
