//! Argument types are structs with named fields; a tuple struct has no parameter map, and
//! as a value it is an array of mixed types.

#[derive(serde::Deserialize, tools_schema::ToolArgs)]
struct Args(String, u8);

#[derive(serde::Deserialize, serde::Serialize, tools_schema::ToolSchema)]
struct Pair(String, u8);

fn main() {}
