//! A custom deserializer without a schema override.

mod seconds {
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        serde::Deserialize::deserialize(d)
    }
}

#[derive(serde::Deserialize, tools_schema::ToolArgs)]
struct Args {
    #[serde(deserialize_with = "seconds::deserialize")]
    timeout: u64,
}

fn main() {}
