//! `#[tool]` needs the description a doc comment gives, and an `async fn`.

use tools_registry::{ToolError, tool};

#[tool]
async fn undocumented() -> Result<String, ToolError> {
    Ok(String::new())
}

/// Not async.
#[tool]
fn blocking() -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}
