//! A map field: the subset cannot describe the values of undeclared keys.

use std::collections::HashMap;

#[derive(serde::Deserialize, tools_schema::ToolArgs)]
struct Args {
    labels: HashMap<String, u32>,
}

fn main() {}
