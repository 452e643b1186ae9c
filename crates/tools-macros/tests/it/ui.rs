//! The compile-fail suite: each `tests/ui/*.rs` must fail to compile with the pinned
//! `.stderr` (regenerate with `TRYBUILD=overwrite`, then read every message).

#[test]
fn macro_input_errors_are_clear_compile_errors() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
