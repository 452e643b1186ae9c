//! The derives and the attribute that write a tool once: `#[derive(ToolArgs)]`,
//! `#[derive(ToolSchema)]` and `#[tool]`.
//!
//! Use them through `tools-schema` (the derives) or `tools-runtime`'s prelude (all three);
//! the generated code names whichever of `tools-schema`, `tools-registry` and
//! `tools-runtime` the crate depends on. The runnable examples, and what a derived schema
//! means for every `serde` attribute, are in the `tools-schema` crate docs ("Derived
//! schemas"); this crate's own tests hold the compile-fail cases (`tests/ui`).
//!
//! - `#[derive(ToolArgs)]` on a struct with named fields implements `ToolArgs` (the
//!   parameter map), `ToolSchema` (the struct as an object value), `ToolObject` (its
//!   properties, for `#[serde(flatten)]`) and `ObjectBounds`.
//! - `#[derive(ToolSchema)]` implements `ToolSchema` for structs (named, newtype,
//!   transparent, unit) and enums (every `serde` representation); for named structs also
//!   `ToolObject` and `ObjectBounds`. Derive one of the two, not both.
//! - `#[tool(…)]` on a field: bounds (`range = 1..=500`, `minimum`, `maximum`,
//!   `exclusive_minimum`, `exclusive_maximum`, `multiple_of`, `min_length`, `max_length`,
//!   `pattern`, `format`, `min_items`, `max_items`, `unique_items`, `min_properties`,
//!   `max_properties`), `description = "…"` (instead of the doc comment), `example = expr`
//!   (repeatable) and `schema = path::to_fn` (the field's whole schema). A bound on a type
//!   that does not take it is a compile error at the bound.
//! - `#[tool]` on an `async fn` turns it into a function of the same name that builds the
//!   tool, named after the function (or `#[tool(name = "…")]`), described by its doc
//!   comment, its arguments and output typed by the signature; `#[tool(concurrent)]` marks
//!   every call with valid arguments concurrency-safe (`concurrency_safe()`); `#[tool(read_only)]` declares the tool read-only (the
//!   `read_only` hint MCP clients see as `readOnlyHint`, and concurrency-safe).
//!
//! Input errors are compile errors (`syn::Error` at the offending field or attribute,
//! several per expansion where that is cheap); the macros never panic.

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
