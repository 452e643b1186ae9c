//! A misspelled `#[tool]` key, and a bound on a type.

#[derive(serde::Deserialize, tools_schema::ToolArgs)]
#[tool(minimum = 1)]
struct Args {
    #[tool(minimun = 1)]
    count: u32,
}

fn main() {}
