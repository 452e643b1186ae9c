//! A string bound on an integer field.

#[derive(serde::Deserialize, tools_schema::ToolArgs)]
struct Args {
    #[tool(pattern = "^[0-9]+$")]
    count: u32,
    #[tool(min_items = 1)]
    name: String,
}

fn main() {}
