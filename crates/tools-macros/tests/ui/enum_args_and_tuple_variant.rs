//! `ToolArgs` on an enum, and a tuple variant of two fields.

#[derive(serde::Deserialize, tools_schema::ToolArgs)]
enum Args {
    A { x: u8 },
}

#[derive(serde::Deserialize, serde::Serialize, tools_schema::ToolSchema)]
enum Shape {
    Point(i32, i32),
}

fn main() {}
