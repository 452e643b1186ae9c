//! A name that differs between serialize and deserialize has no single schema.

#[derive(serde::Deserialize, serde::Serialize, tools_schema::ToolSchema)]
struct Value {
    #[serde(rename(serialize = "out", deserialize = "in"))]
    field: String,
}

fn main() {}
