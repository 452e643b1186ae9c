//! Cross-crate tests of the workspace live in `tests/tests/`. This library's documentation is
//! the repository's README, so that `cargo test` compiles and runs the README's host example.
#![doc = include_str!("../../README.md")]
#![forbid(unsafe_code)]
