//! Cross-crate tests of the workspace live in `tests/tests/`; this library is empty.
#![forbid(unsafe_code)]
