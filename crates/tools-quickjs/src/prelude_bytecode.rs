//! The prelude as QuickJS bytecode: compiled once per process, loaded into every run's
//! fresh realm.
//!
//! Parsing and compiling the prelude's source took 67–129 µs of every run (timed alone on
//! the reference machine, against 14–16 µs to read its bytecode); under callgrind a
//! `return 100` run (scenario f4) went from 2.79 M to 1.96 M instructions. The realm stays
//! fresh: only the compilation is shared, never a value.
//!
//! Why this module holds the crate's one `unsafe` block: `rquickjs` marks loading bytecode
//! `unsafe`, because QuickJS trusts bytecode it reads. The bytes read here are never from
//! outside the process: they are written by this same linked engine from the constant
//! [`PRELUDE`] source (see the `SAFETY` comment at the block).
//!
//! The prelude is compiled as a module, which exports nothing: the value it evaluates to is
//! handed over through a global the host removes before the program runs. A module that
//! exported it would stay reachable from the program by its name (`import("eval_script")`
//! finds a loaded module), and with it the prelude's stack hook installer. The module has
//! the file name a script evaluated by `Ctx::eval` gets (`eval_script`) and the prelude's
//! line layout, so a stack frame inside the prelude reads as before. Module code is strict;
//! the prelude was written to be valid in both modes.
//!
//! When the bytecode cannot be made (the engine refuses to compile or write it), every run
//! parses the source, as before: slower, never different.
#![allow(unsafe_code)]

use std::sync::OnceLock;

use rquickjs::{Array, Context, Ctx, Module, Runtime, WriteOptions};

use crate::prelude::PRELUDE;

/// The file name of the prelude's frames: `rquickjs`'s default for an evaluated script.
const PRELUDE_FILE: &str = "eval_script";

/// The global the module assigns the prelude's value to, removed before the program runs.
const HANDOFF: &str = "__toolsCodemodePrelude";

/// The prelude's bytecode (`None`: it could not be made; runs parse the source).
static BYTECODE: OnceLock<Option<Box<[u8]>>> = OnceLock::new();

/// The module's source: the prelude's own text, assigned to [`HANDOFF`] on its first line
/// so that every line keeps its number.
fn module_source() -> String {
    format!("globalThis.{HANDOFF} = {PRELUDE};")
}

/// Compiles the module in a scratch engine of its own and writes its bytecode.
fn compile() -> Option<Box<[u8]>> {
    let runtime = Runtime::new().ok()?;
    let context = Context::full(&runtime).ok()?;
    context.with(|ctx| {
        let module = Module::declare(ctx, PRELUDE_FILE, module_source()).ok()?;
        module
            .write(WriteOptions::default())
            .ok()
            .map(Vec::into_boxed_slice)
    })
}

/// Evaluates the prelude in `ctx`'s realm and returns what it captured (the array
/// [`PRELUDE`] evaluates to).
///
/// # Errors
///
/// The engine's error when the prelude cannot run (the memory cap, an interrupt). The
/// hand-off global is then possibly still there, so the caller must not run the program;
/// `prepare` fails the run.
pub(super) fn evaluate<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Array<'js>> {
    let Some(bytes) = BYTECODE.get_or_init(compile) else {
        return ctx.eval(PRELUDE);
    };
    // SAFETY: `Module::load` requires valid bytecode. `bytes` was written by
    // `Module::write` (QuickJS's `JS_WriteObject`) in this process, by the engine linked
    // into this binary, from the constant `PRELUDE` source, and is never changed after
    // (it lives in a `OnceLock` for the rest of the process, which also outlives every use
    // the engine makes of it). QuickJS-ng copies the buffer and re-interns its atoms on
    // reading (`JS_READ_OBJ_ROM_DATA` is a no-op there), so bytecode written by one runtime
    // is valid in another.
    let module = unsafe { Module::load(ctx.clone(), bytes) }?;
    let (_module, _promise) = module.eval()?;
    let globals = ctx.globals();
    let captured: Array<'js> = globals.get(HANDOFF)?;
    globals.remove(HANDOFF)?;
    Ok(captured)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use rquickjs::{Context, Runtime, Value};

    use super::*;

    #[test]
    fn the_bytecode_is_made_and_evaluates_to_what_the_source_does() {
        assert!(BYTECODE.get_or_init(compile).is_some());
        let runtime = Runtime::new().unwrap();
        let context = Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let loaded = evaluate(&ctx).unwrap();
            // What the source evaluates to: the realm's own originals, then functions.
            let originals: Array<'_> = ctx
                .eval("[Object.prototype, Array.prototype, InternalError.prototype, String, Object.getOwnPropertyDescriptor, Error]")
                .unwrap();
            assert_eq!(loaded.len(), 10);
            for i in 0..originals.len() {
                let (a, b): (Value<'_>, Value<'_>) = (loaded.get(i).unwrap(), originals.get(i).unwrap());
                assert_eq!(a, b, "item {i}");
            }
            for i in 6..loaded.len() {
                let item: Value<'_> = loaded.get(i).unwrap();
                assert!(item.is_function(), "item {i}");
            }
            // Nothing of the prelude is left where the program could reach it.
            assert!(!ctx.globals().contains_key(HANDOFF).unwrap());
            let namespace: Value<'_> = ctx
                .eval("typeof globalThis.__toolsCodemodePrelude")
                .unwrap();
            assert_eq!(namespace.as_string().unwrap().to_string().unwrap(), "undefined");
            // Importing the loaded module by its name finds nothing either (an empty
            // namespace, or no such module: both hide the captured values).
            let keys: rquickjs::Promise<'_> = ctx
                .eval(
                    "import('eval_script').then(ns => Object.getOwnPropertyNames(ns).length, () => 0)",
                )
                .unwrap();
            while ctx.execute_pending_job() {}
            assert_eq!(keys.result::<i32>().unwrap().unwrap(), 0);
        });
    }
}
