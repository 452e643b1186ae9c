//! `flatten` of a type that does not derive `ToolSchema`/`ToolArgs`.

#[derive(serde::Deserialize)]
struct Paging {
    offset: Option<u32>,
}

#[derive(serde::Deserialize, tools_schema::ToolArgs)]
struct Args {
    query: String,
    #[serde(flatten)]
    paging: Paging,
}

fn main() {}
