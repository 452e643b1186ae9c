//! The bindings' side of a call: the function the program calls, which checks its argument
//! and posts it to the host, and the delivery of the host's reply to the call's promise.

use std::collections::HashMap;
use std::rc::Rc;
use tools_codemode::BindingError;
use tools_json::ErrorCode;

use rquickjs::function::Opt;
use rquickjs::{Ctx, Function, Promise, Value};

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
