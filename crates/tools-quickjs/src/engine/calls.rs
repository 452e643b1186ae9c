//! The bindings' side of a call: the function the program calls, which checks its argument
//! and posts it to the host, and the delivery of the host's reply to the call's promise.

use std::collections::HashMap;
use std::rc::Rc;
use tools_codemode::BindingError;
use tools_json::ErrorCode;

use rquickjs::function::{Opt, Rest};
use rquickjs::object::Property;
use rquickjs::{Ctx, Function, Object, Promise, Value};

use super::Session;
use crate::convert::{Refusal, to_js, to_json};
use crate::shared::{Event, StopReason};
use crate::thrown::is_out_of_memory;
use tools_codemode::{ARGUMENTS_NOT_LOSSLESS, RESOLUTION_NOT_LOSSLESS};

/// A binding call waiting for the host.
pub(super) struct Pending<'js> {
    resolve: Function<'js>,
    reject: Function<'js>,
    namespace: usize,
    /// The binding's name, for the error class of a rejection.
    name: Rc<str>,
}

/// The calls waiting for the host, by id. The ids are the run's own counter, so nothing can
/// flood the map and the unkeyed `foldhash` (which the registry uses for its own ids too)
/// replaces the default SipHash, which cost more than the rest of the map's work.
pub(super) type PendingCalls<'js> = HashMap<u64, Pending<'js>, foldhash::fast::FixedState>;

/// The async function behind `namespace.name(args)`; `index` is the name's index among the
/// namespace's names, which is how a call names its binding to the host (no text is copied
/// per call).
pub(super) fn binding<'js>(
    ctx: &Ctx<'js>,
    session: &Rc<Session<'js>>,
    namespace: usize,
    (index, name): (usize, &str),
) -> rquickjs::Result<Function<'js>> {
    let session = Rc::clone(session);
    let name: Rc<str> = Rc::from(name);
    let function_name = name.to_string();
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, argument: Opt<Value<'js>>| -> rquickjs::Result<Promise<'js>> {
            call(&ctx, &session, namespace, (index, &name), argument.0)
        },
    )?
    .with_name(function_name)
}

/// The async function behind `namespace.name(a, b, …)` for a binding with a signature
/// (`tools_codemode::BindingSignature`): its arguments are packed into one object keyed by
/// `parameters` (an `undefined` argument is left out), which is then checked and posted like
/// any binding's argument. More arguments than parameters reject the call in the sandbox.
pub(super) fn packed_binding<'js>(
    ctx: &Ctx<'js>,
    session: &Rc<Session<'js>>,
    namespace: usize,
    (index, name): (usize, &str),
    parameters: &[String],
) -> rquickjs::Result<Function<'js>> {
    let session = Rc::clone(session);
    let name: Rc<str> = Rc::from(name);
    let parameters: Rc<[String]> = Rc::from(parameters);
    let function_name = name.to_string();
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, arguments: Rest<Value<'js>>| -> rquickjs::Result<Promise<'js>> {
            let given = arguments
                .0
                .iter()
                .rposition(|value| !value.is_undefined())
                .map_or(0, |last| last + 1);
            if given > parameters.len() {
                let message = format!(
                    "{name}() takes at most {} argument{} ({given} given)",
                    parameters.len(),
                    if parameters.len() == 1 { "" } else { "s" },
                );
                return refuse(&ctx, &session, namespace, &name, message);
            }
            let packed = Object::new(ctx.clone())?;
            packed.set_prototype(None)?;
            for (parameter, value) in parameters.iter().zip(arguments.0) {
                if !value.is_undefined() {
                    packed.prop(
                        parameter.as_str(),
                        Property::from(value).writable().enumerable().configurable(),
                    )?;
                }
            }
            call(
                &ctx,
                &session,
                namespace,
                (index, &name),
                Some(packed.into_value()),
            )
        },
    )?
    .with_name(function_name)
}

/// A binding call refused in the sandbox: a promise rejected with the namespace's error
/// class, code `INVALID_ARGS`.
fn refuse<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    namespace: usize,
    name: &str,
    message: String,
) -> rquickjs::Result<Promise<'js>> {
    let (promise, _resolve, reject) = ctx.promise()?;
    let refusal = BindingError::with_code(ErrorCode::InvalidArgs, message);
    let error = session.error_for(namespace, name, &refusal)?;
    reject.call::<_, ()>((error,))?;
    Ok(promise)
}

/// One binding call: checks the argument (the first one; any others are ignored) in the
/// sandbox, then posts it to the host.
fn call<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    namespace: usize,
    (index, name): (usize, &Rc<str>),
    argument: Option<Value<'js>>,
) -> rquickjs::Result<Promise<'js>> {
    let (promise, resolve, reject) = ctx.promise()?;
    let argument = argument.filter(|value| !value.is_undefined());
    let converted = match argument {
        None => Err(format!(
            "{ARGUMENTS_NOT_LOSSLESS} (call the binding with an arguments object, e.g. `{{}}`)"
        )),
        Some(argument) => {
            let Some(realm) = session.realm() else {
                return Err(rquickjs::Exception::throw_internal(ctx, "the run is over"));
            };
            let converted = to_json(
                ctx,
                &realm.intrinsics,
                argument,
                session.max_depth,
                &session.stop_check(),
            );
            drop(realm);
            match converted {
                Ok(json) => Ok(json),
                Err(Refusal::Lossy(detail) | Refusal::TooDeep(detail)) => {
                    Err(format!("{ARGUMENTS_NOT_LOSSLESS}: {detail}"))
                }
                Err(Refusal::Stopped) => {
                    return Err(rquickjs::Exception::throw_internal(
                        ctx,
                        "the run is stopping",
                    ));
                }
            }
        }
    };
    match converted {
        Ok(args) => {
            let id = session.next_id.get();
            session.next_id.set(id + 1);
            session.pending.borrow_mut().insert(
                id,
                Pending {
                    resolve,
                    reject,
                    namespace,
                    name: Rc::clone(name),
                },
            );
            let _ = session.events.send(Event::Call {
                id,
                namespace,
                name: index,
                args,
            });
        }
        Err(message) => {
            let refusal = BindingError::with_code(ErrorCode::InvalidArgs, message);
            let error = session.error_for(namespace, name, &refusal)?;
            reject.call::<_, ()>((error,))?;
        }
    }
    Ok(promise)
}

/// Settles a binding call with the host's reply. Unknown ids are ignored.
pub(super) fn deliver<'js>(
    ctx: &Ctx<'js>,
    session: &Session<'js>,
    id: u64,
    result: tools_codemode::BindingOutcome,
) -> Result<(), Refusal> {
    let Some(pending) = session.pending.borrow_mut().remove(&id) else {
        return Ok(());
    };
    let rejection = match result {
        Ok(value) if value.depth() > session.max_depth => Some(BindingError::with_code(
            ErrorCode::InvalidToolOutput,
            format!(
                "{RESOLUTION_NOT_LOSSLESS}: $: nesting exceeds the depth limit of {}",
                session.max_depth
            ),
        )),
        Ok(value) => match to_js(ctx, &value, &session.stop_check()) {
            Ok(built) => {
                if pending.resolve.call::<_, ()>((built,)).is_err() {
                    let _ = ctx.catch();
                }
                None
            }
            Err(Refusal::Lossy(detail) | Refusal::TooDeep(detail)) => {
                // The engine may have refused for want of memory.
                let thrown = ctx.catch();
                if let Some(realm) = session.realm()
                    && is_out_of_memory(&realm.intrinsics, &thrown)
                {
                    session.shared.request_stop(StopReason::OutOfMemory);
                    return Err(Refusal::Stopped);
                }
                Some(BindingError::with_code(
                    ErrorCode::InvalidToolOutput,
                    format!("{RESOLUTION_NOT_LOSSLESS}: {detail}"),
                ))
            }
            Err(Refusal::Stopped) => return Err(Refusal::Stopped),
        },
        Err(error) => Some(error),
    };
    if let Some(error) = rejection {
        match session.error_for(pending.namespace, &pending.name, &error) {
            Ok(error) => {
                if pending.reject.call::<_, ()>((error,)).is_err() {
                    let _ = ctx.catch();
                }
            }
            Err(_) => {
                let thrown = ctx.catch();
                if pending.reject.call::<_, ()>((thrown,)).is_err() {
                    let _ = ctx.catch();
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    #[test]
    fn consecutive_ids_spread_over_the_buckets() {
        let hasher = foldhash::fast::FixedState::default();
        // The table's control bytes use the top 7 bits and its buckets the low bits: an
        // identity-like hash of consecutive ids would crowd both.
        let top: HashSet<u64> = (1..=4096_u64).map(|id| hasher.hash_one(id) >> 57).collect();
        assert_eq!(top.len(), 128);
        let low: HashSet<u64> = (1..=4096_u64)
            .map(|id| hasher.hash_one(id) & 4095)
            .collect();
        assert!(low.len() > 2_500, "{} distinct low buckets", low.len());
    }
}
