//! Helpers shared by the behaviour tests (also included by other crates' tests through
//! `#[path]`).

use std::path::PathBuf;

use serde_json::Value;

/// The crate's test data (`tests/data/`: golden files and vendored suites, copied into the
/// repository with their source noted in each folder's README).
pub(crate) fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Parses JSON text with key order kept and no recursion cap.
pub(crate) fn parse(text: &str) -> Value {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    serde::Deserialize::deserialize(&mut de).expect("fixture JSON parses")
}

/// Reads a JSON file of the crate's test data.
pub(crate) fn read_data(relative: &str) -> Value {
    let path = data_dir().join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse(&text)
}
