//! The run's own thread: a fresh QuickJS runtime and context, the prelude (captured
//! intrinsics, console, bindings, error classes), the program, and the job loop that
//! blocks on the host's replies while the program awaits them.
//!
//! Nothing here touches tokio beyond sending on an unbounded channel: the thread blocks on
//! a std channel while idle, so a CPU-bound program never occupies an async worker.

mod calls;
mod headroom;
mod stop;

use std::cell::{Cell, Ref, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::function::Rest;
use rquickjs::object::Property;
use rquickjs::promise::PromiseState;
use rquickjs::{Constructor, Context, Ctx, Function, Object, Promise, Runtime, Value};
use tokio::sync::{mpsc, oneshot};

use self::calls::{PendingCalls, binding, deliver, packed_binding};
use self::stop::{Interrupt, StopGuard};
use crate::convert::{Refusal, to_json};
use crate::inspect::render_args;
use crate::intrinsics::Intrinsics;
use crate::shared::{Command, Event, Outcome, Setup, Shared, StopReason};
use crate::strip::PROGRAM_FILE;
use crate::thrown::{engine_can_allocate, is_out_of_memory, render_exception};
use tools_codemode::BindingNamespace;

/// Fires when dropped: after the engine is gone (the thread's pool drops it once the thread
/// is listed for the next run), also on a panic.
pub(super) struct ExitSignal(Option<oneshot::Sender<()>>);

impl Drop for ExitSignal {
    fn drop(&mut self) {
        if let Some(sender) = self.0.take() {
            let _ = sender.send(());
        }
    }
}

/// The body of the run's thread.
///
/// Returns the run's exit signal, for the caller to drop once the thread is ready for
/// another run (dropped during the unwind if this panics).
pub(super) fn thread_main(setup: Setup, exited: oneshot::Sender<()>) -> ExitSignal {
    let exit = ExitSignal(Some(exited));
    let events = setup.events.clone();
    let outcome = match Runtime::new() {
        Ok(runtime) => run_on(&runtime, &setup),
        Err(error) => Outcome::Broken(format!("cannot create the engine: {error}")),
    };
    let _ = events.send(Event::Done(outcome));
    exit
}

/// Configures `runtime`, makes a context and runs the program in it.
///
/// A program that holds the engine at its memory cap and catches every error could starve
/// the engine's stop: QuickJS allocates the uncatchable "interrupted" error when the
/// interrupt handler asks it to stop, and when that allocation fails it throws an ordinary,
/// catchable out-of-memory error instead. So once the realm is made, part of the cap is held
/// back for the stop and given back when it needs it (`engine/headroom.rs`, driven by
/// `engine/stop.rs`, which also keeps a stop from being swallowed while an error's stack is
/// built).
fn run_on(runtime: &Runtime, setup: &Setup) -> Outcome {
    let memory = usize::try_from(setup.limits.memory_bytes).unwrap_or(usize::MAX);
    runtime.set_memory_limit(memory);
    runtime.set_max_stack_size(setup.limits.stack_bytes);
    let shared = Arc::clone(&setup.shared);
    let guard = Rc::new(StopGuard::new(memory));
    let guarded = Rc::clone(&guard);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        if !shared.must_stop() {
            return false;
        }
        match guarded.on_stop_interrupt() {
            Interrupt::Defer => false,
            Interrupt::Stop { .. } => true,
        }
    })));
    let context = match Context::full(runtime) {
        Ok(context) => context,
        Err(error) => return Outcome::Broken(format!("cannot create the context: {error}")),
    };
    let outcome = context.with(|ctx| {
        // Forgets the runtime when the realm's work ends, also on a panic.
        let _held = guard.headroom().hold(&ctx);
        let pins = pin_arenas(&ctx);
        let outcome = session(&ctx, setup, &guard);
        drop(pins);
        outcome
    });
    drop(context);
    outcome
}

/// One block in each of the engine allocator's small-block size classes, held for the
/// whole run where the program cannot reach them (about 6 KiB of the memory cap, and at
/// most one 4 KiB arena per class of process memory).
///
/// QuickJS-ng carves blocks of up to 512 bytes from 4 KiB arenas, one list per size class
/// (every 8 bytes up to 128, every 16 up to 256, every 32 up to 512, the 8-byte block
/// header included), and frees an arena the moment its last block is freed. A class with
/// nothing else alive in it therefore allocates, threads and frees a whole arena for every
/// short-lived block: an awaited binding call did so two or three times (the key list of
/// its argument, the promise job). A held block keeps its class's arena alive. Classes of
/// 40 bytes and up get a string (24 bytes of header, the text and a terminator); the three
/// smaller ones, which no string fits, get the data of an `ArrayBuffer`. `None` when the
/// engine refuses (a memory cap too small): the run goes on without them.
fn pin_arenas<'js>(ctx: &Ctx<'js>) -> Option<Vec<Value<'js>>> {
    let mut pins = Vec::with_capacity(31);
    let mut make = || -> rquickjs::Result<()> {
        let buffer: Constructor<'js> = ctx.globals().get("ArrayBuffer")?;
        let mut class = 16_usize;
        while class <= 512 {
            pins.push(if class < 40 {
                buffer.construct::<_, Value<'js>>((class - 8,))?
            } else {
                rquickjs::String::from_str(ctx.clone(), &"-".repeat(class - 33))?.into_value()
            });
            class += if class < 128 {
                8
            } else if class < 256 {
                16
            } else {
                32
            };
        }
        Ok(())
    };
    match make() {
        Ok(()) => Some(pins),
        Err(_) => {
            let _ = ctx.catch();
            None
        }
    }
}

/// The realm's values the Rust side holds. They are released before the context goes, so
/// no reference from Rust (captured by a binding's closure) outlives the engine.
struct Realm<'js> {
    intrinsics: Intrinsics<'js>,
    /// Per namespace: its error class, or `None` for plain `Error`.
    classes: Vec<Option<Constructor<'js>>>,
    error: Constructor<'js>,
    /// The prelude's `installStackHook`, until [`install`] has called it.
    install_stack_hook: Option<Function<'js>>,
    /// The prelude's `disarm` (see `engine/stop.rs`).
    disarm: Function<'js>,
}

/// The per-run state the bindings and the loop share.
struct Session<'js> {
    realm: RefCell<Option<Realm<'js>>>,
    pending: RefCell<PendingCalls<'js>>,
    next_id: Cell<u64>,
    shared: Arc<Shared>,
    events: mpsc::UnboundedSender<Event>,
    max_depth: usize,
    /// Set while the runtime renders the value the program threw: running out of memory
    /// then is the rendering's failure (the value is unrenderable), not the program's.
    rendering: Cell<bool>,
    /// The run's stop state, shared with the interrupt handler.
    guard: Rc<StopGuard>,
}

impl<'js> Session<'js> {
    fn stop_check(&self) -> impl Fn() -> bool + '_ {
        || self.shared.must_stop()
    }

    /// The realm's values, until the run is over.
    fn realm(&self) -> Option<Ref<'_, Realm<'js>>> {
        Ref::filter_map(self.realm.borrow(), Option::as_ref).ok()
    }

    /// An instance of the namespace's error class (or `Error`) for a failed call.
    fn error_for(
        &self,
        namespace: usize,
        name: &str,
        error: &tools_codemode::BindingError,
    ) -> rquickjs::Result<Value<'js>> {
        let Some(realm) = self.realm() else {
            return Err(rquickjs::Error::Unknown);
        };
        let message = error.message.as_str();
        match realm.classes.get(namespace).and_then(Option::as_ref) {
            Some(class) => class.construct((message, name, error.code.as_deref())),
            None => realm.error.construct((message,)),
        }
    }

    /// Looks at a value the program threw, as the stack hook sees it: the engine's
    /// out-of-memory error (or a bare `null` thrown while the engine cannot allocate even a
    /// small string) records [`StopReason::OutOfMemory`], so the run ends even when the
    /// program catches it. Allocates nothing on the engine's heap on the error's path.
    ///
    /// Returns whether the run is stopping, after disarming the realm then (the hook renders
    /// nothing; see `engine/stop.rs`).
    fn note_thrown(&self, ctx: &Ctx<'js>, thrown: &Value<'js>) -> bool {
        if !self.rendering.get() && self.shared.stop_reason().is_none() {
            let exhausted = if thrown.is_null() {
                !engine_can_allocate(ctx)
            } else {
                match self.realm() {
                    Some(realm) => is_out_of_memory(&realm.intrinsics, thrown),
                    None => false,
                }
            };
            if exhausted {
                self.shared.request_stop(StopReason::OutOfMemory);
            }
        }
        if !self.shared.must_stop() {
            return false;
        }
        if !self.guard.is_disarmed()
            && let Some(realm) = self.realm()
        {
            self.guard.disarm(ctx, &realm.disarm);
        }
        true
    }

    /// Drops every value of the realm the Rust side still holds.
    fn release(&self) {
        self.pending.borrow_mut().clear();
        self.realm.borrow_mut().take();
    }
}

/// Sets up the realm, runs the program and reports its outcome.
fn session<'js>(ctx: &Ctx<'js>, setup: &Setup, guard: &Rc<StopGuard>) -> Outcome {
    let shared = Arc::clone(&setup.shared);
    let session = match prepare(ctx, setup, guard) {
        Ok(session) => Rc::new(session),
        Err(error) => return engine_failure(ctx, &shared, error, "cannot prepare the realm"),
    };
    let outcome = match install(ctx, &session, &setup.namespaces) {
        Ok(()) => drive(ctx, &session, setup),
        Err(error) => engine_failure(ctx, &shared, error, "cannot install the bindings"),
    };
    session.release();
    outcome
}

/// Runs the program to its outcome.
fn drive<'js>(ctx: &Ctx<'js>, session: &Rc<Session<'js>>, setup: &Setup) -> Outcome {
    let shared = &setup.shared;

    shared.begin_slice();
    let started = start(ctx, &setup.code);
    shared.end_slice();
    let promise = match started {
        Ok(Started::Promise(promise)) => promise,
        Ok(Started::Value(value)) => {
            // The program closed the wrapper and evaluated to a plain function; its result
            // is the completion value.
            shared.begin_slice();
            let outcome = completion(ctx, session, value);
            shared.end_slice();
            return outcome;
        }
        Err(_) => return settle_thrown(ctx, session),
    };

    loop {
        shared.begin_slice();
        while !shared.must_stop() && ctx.execute_pending_job() {}
        shared.end_slice();
        if shared.must_stop() {
            return Outcome::Stopped;
        }
        match promise.state() {
            PromiseState::Resolved => {
                shared.begin_slice();
                let outcome = match promise.result::<Value<'js>>() {
                    Some(Ok(value)) => completion(ctx, session, value),
                    _ => settle_thrown(ctx, session),
                };
                shared.end_slice();
                return outcome;
            }
            PromiseState::Rejected => {
                shared.begin_slice();
                let _ = promise.result::<Value<'js>>();
                let outcome = settle_thrown(ctx, session);
                shared.end_slice();
                return outcome;
            }
            PromiseState::Pending => {}
        }
        match recv_soon(&setup.commands) {
            Ok(Command::Reply { id, result }) => {
                shared.begin_slice();
                let delivered = deliver(ctx, session, id, result);
                shared.end_slice();
                if let Err(Refusal::Stopped) = delivered {
                    return Outcome::Stopped;
                }
            }
            Ok(Command::Stop) | Err(_) => return Outcome::Stopped,
        }
    }
}

/// How long the engine thread keeps checking for a reply (yielding its core between
/// checks) before it blocks. A host round trip through the pipeline takes a few
/// microseconds, while waking a blocked thread costs tens on a virtualised machine, so a
/// short wait keeps a program's sequential tool calls off the sleep/wake path; a slow tool
/// costs at most this much extra CPU per call.
const REPLY_SPIN: Duration = Duration::from_micros(200);

/// The next command, checked for without blocking during [`REPLY_SPIN`], then blocking.
fn recv_soon(
    commands: &std::sync::mpsc::Receiver<Command>,
) -> Result<Command, std::sync::mpsc::RecvError> {
    let deadline = Instant::now() + REPLY_SPIN;
    loop {
        match commands.try_recv() {
            Ok(command) => return Ok(command),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                return Err(std::sync::mpsc::RecvError);
            }
            Err(std::sync::mpsc::TryRecvError::Empty) if Instant::now() < deadline => {
                std::thread::yield_now();
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => return commands.recv(),
        }
    }
}

/// An engine error during setup: out of memory, a stop, or a broken engine.
fn engine_failure<'js>(
    ctx: &Ctx<'js>,
    shared: &Shared,
    error: rquickjs::Error,
    what: &str,
) -> Outcome {
    if shared.must_stop() {
        return Outcome::Stopped;
    }
    let thrown = ctx.catch();
    if thrown.is_null() || error.to_string().contains("out of memory") {
        return Outcome::OutOfMemory;
    }
    Outcome::Broken(format!("{what}: {error}"))
}

/// Evaluates the prelude and captures the intrinsics.
fn prepare<'js>(
    ctx: &Ctx<'js>,
    setup: &Setup,
    guard: &Rc<StopGuard>,
) -> rquickjs::Result<Session<'js>> {
    let captured = crate::prelude_bytecode::evaluate(ctx)?;
    let intrinsics = Intrinsics::capture(&captured)?;
    let error: Constructor<'js> = captured.get(5)?;
    let make_class: Function<'js> = captured.get(6)?;
    let install_stack_hook: Function<'js> = captured.get(7)?;
    let disarm: Function<'js> = captured.get(9)?;
    let mut classes = Vec::with_capacity(setup.namespaces.len());
    for namespace in setup.namespaces.iter() {
        classes.push(match &namespace.error_class {
            Some(class) => Some(make_class.call::<_, Constructor<'js>>((
                class.name.as_str(),
                class.member_name_property.as_str(),
            ))?),
            None => None,
        });
    }
    Ok(Session {
        realm: RefCell::new(Some(Realm {
            intrinsics,
            classes,
            error,
            install_stack_hook: Some(install_stack_hook),
            disarm,
        })),
        pending: RefCell::new(PendingCalls::default()),
        next_id: Cell::new(1),
        shared: Arc::clone(&setup.shared),
        events: setup.events.clone(),
        max_depth: setup.limits.max_json_depth,
        rendering: Cell::new(false),
        guard: Rc::clone(guard),
    })
}

/// A plain data property of a global or a namespace.
fn global<T>(value: T) -> Property<T> {
    Property::from(value).writable().configurable()
}

/// Installs `console`, the namespaces and the error classes as globals.
fn install<'js>(
    ctx: &Ctx<'js>,
    session: &Rc<Session<'js>>,
    namespaces: &Arc<Vec<BindingNamespace>>,
) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let console = Object::new(ctx.clone())?;
    for method in ["log", "info", "warn", "error", "debug"] {
        let session = Rc::clone(session);
        let function = Function::new(ctx.clone(), move |args: Rest<Value<'js>>| {
            if let Some(realm) = session.realm() {
                let text = render_args(&realm.intrinsics, &args.0);
                let _ = session.events.send(Event::Log(text));
            }
        })?
        .with_name(method)?;
        console.prop(method, global(function))?;
    }
    globals.prop("console", global(console))?;

    let hook = session
        .realm
        .borrow_mut()
        .as_mut()
        .and_then(|realm| realm.install_stack_hook.take());
    if let Some(hook) = hook {
        let noted = Rc::clone(session);
        let note = Function::new(ctx.clone(), move |ctx: Ctx<'js>, thrown: Value<'js>| {
            noted.note_thrown(&ctx, &thrown)
        })?;
        hook.call::<_, ()>((note,))?;
    }

    for (index, namespace) in namespaces.iter().enumerate() {
        let holder = Object::new(ctx.clone())?;
        holder.set_prototype(None)?;
        let lazy_from = namespace.lazy_from.min(namespace.names.len());
        for (name_index, name) in namespace.names.iter().enumerate().take(lazy_from) {
            let function = match namespace.signature(name) {
                Some(signature) => packed_binding(
                    ctx,
                    session,
                    index,
                    (name_index, name),
                    &signature.parameters,
                )?,
                None => binding(ctx, session, index, (name_index, name))?,
            };
            holder.prop(
                name.as_str(),
                Property::from(function)
                    .writable()
                    .enumerable()
                    .configurable(),
            )?;
        }
        if lazy_from < namespace.names.len() {
            let holder = lazy_holder(ctx, session, namespaces, index, holder)?;
            globals.prop(namespace.global.as_str(), global(holder))?;
        } else {
            globals.prop(namespace.global.as_str(), global(holder))?;
        }
        let constructor = session
            .realm()
            .and_then(|realm| realm.classes.get(index).cloned().flatten());
        if let (Some(class), Some(constructor)) = (&namespace.error_class, constructor) {
            globals.prop(class.name.as_str(), global(constructor))?;
        }
    }
    Ok(())
}

/// Makes a namespace's lazy tail (`BindingNamespace::lazy_from`) bound on first use.
const LAZY_PROXY: &str = "(() => { const { has, get, defineProperty } = Reflect; \
    return (target, resolve) => new Proxy(target, { get(t, k, r) { \
        if (typeof k === 'string' && !has(t, k)) { const f = resolve(k); \
            if (f !== undefined) { defineProperty(t, k, { value: f, writable: true, enumerable: true, configurable: true }); return f; } } \
        return get(t, k, r); } }); })()";

/// `holder` behind a proxy that binds a name of namespace `index`'s lazy tail the first
/// time the program reads it (a binary search of the sorted tail), so that a scope's
/// thousands of deferred tools cost a run nothing until one is called.
fn lazy_holder<'js>(
    ctx: &Ctx<'js>,
    session: &Rc<Session<'js>>,
    namespaces: &Arc<Vec<BindingNamespace>>,
    index: usize,
    holder: Object<'js>,
) -> rquickjs::Result<Value<'js>> {
    let all = Arc::clone(namespaces);
    let session = Rc::clone(session);
    let resolve = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, key: String| -> rquickjs::Result<Value<'js>> {
            let Some(namespace) = all.get(index) else {
                return Ok(Value::new_undefined(ctx));
            };
            let from = namespace.lazy_from.min(namespace.names.len());
            let lazy = namespace.names.get(from..).unwrap_or_default();
            match lazy.binary_search_by(|name| name.as_str().cmp(key.as_str())) {
                Ok(at) => {
                    Ok(binding(&ctx, &session, index, (from + at, key.as_str()))?.into_value())
                }
                Err(_) => Ok(Value::new_undefined(ctx)),
            }
        },
    )?;
    let make: Function<'js> = ctx.eval(LAZY_PROXY)?;
    make.call((holder, resolve))
}

/// What calling the evaluated program gave.
enum Started<'js> {
    /// The wrapper's promise (the normal case).
    Promise(Promise<'js>),
    /// Anything else (a program that closed the wrapper early).
    Value(Value<'js>),
}

/// Evaluates the wrapped program and calls it.
fn start<'js>(ctx: &Ctx<'js>, code: &str) -> rquickjs::Result<Started<'js>> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.backtrace_barrier = true;
    options.promise = false;
    options.filename = Some(PROGRAM_FILE.to_owned());
    let main: Value<'js> = ctx.eval_with_options(code, options)?;
    let Some(main) = main.as_function() else {
        return Ok(Started::Value(main));
    };
    let result: Value<'js> = main.call(())?;
    if let Some(promise) = result.as_promise() {
        return Ok(Started::Promise(promise.clone()));
    }
    Ok(Started::Value(result))
}

/// The outcome of a completed program.
fn completion<'js>(ctx: &Ctx<'js>, session: &Session<'js>, value: Value<'js>) -> Outcome {
    if value.is_undefined() {
        return Outcome::Completed(None);
    }
    let Some(realm) = session.realm() else {
        return Outcome::Stopped;
    };
    match to_json(
        ctx,
        &realm.intrinsics,
        value,
        session.max_depth,
        &session.stop_check(),
    ) {
        Ok(json) => Outcome::Completed(Some(json)),
        Err(refusal @ (Refusal::Lossy(_) | Refusal::TooDeep(_))) => {
            // A getter may have thrown while the value was read.
            let _ = ctx.catch();
            if session.shared.must_stop() {
                return Outcome::Stopped;
            }
            match refusal {
                Refusal::Lossy(detail) => Outcome::InvalidOutput {
                    too_deep: None,
                    detail: Some(detail),
                },
                _ => Outcome::InvalidOutput {
                    too_deep: Some(session.max_depth),
                    detail: None,
                },
            }
        }
        Err(Refusal::Stopped) => Outcome::Stopped,
    }
}

/// The outcome of a program that threw: the pending exception is taken from the context.
fn settle_thrown<'js>(ctx: &Ctx<'js>, session: &Session<'js>) -> Outcome {
    if session.shared.must_stop() {
        return Outcome::Stopped;
    }
    let thrown = ctx.catch();
    let Some(realm) = session.realm() else {
        return Outcome::Stopped;
    };
    if is_out_of_memory(&realm.intrinsics, &thrown) {
        return Outcome::OutOfMemory;
    }
    session.rendering.set(true);
    let rendered = render_exception(&realm.intrinsics, &thrown);
    session.rendering.set(false);
    // Rendering may have run program code (a getter, `toString`) that hit the memory cap
    // or was stopped.
    let _ = ctx.catch();
    if session.shared.must_stop() {
        return Outcome::Stopped;
    }
    Outcome::Threw(rendered.unwrap_or_else(|| tools_codemode::UNRENDERABLE_MESSAGE.to_owned()))
}

#[cfg(test)]
mod tests {
    use rquickjs::{Context, Runtime};

    use super::pin_arenas;

    #[test]
    fn one_block_is_pinned_per_small_size_class() {
        let runtime = Runtime::new().unwrap();
        let context = Context::full(&runtime).unwrap();
        context.with(|ctx| assert_eq!(pin_arenas(&ctx).map(|pins| pins.len()), Some(31)));
        // With no room left, the run goes on without them.
        runtime.set_memory_limit(1);
        context.with(|ctx| assert!(pin_arenas(&ctx).is_none()));
    }
}
