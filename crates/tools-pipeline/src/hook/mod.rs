//! Hooks: each waterfall is a chain of type-erased [`Hook`]s walked by index, ending in the
//! waterfall's default (or the tool body). Closures become hooks through [`from_fn`], tower
//! layers through [`layer`] (applied once, at registration, so their state survives).
//!
//! Why a chain and not a re-composed tower stack: re-applying a layer on every hook change
//! re-creates its service and loses its state (a semaphore, a rate window); a chain of
//! erased hooks over an immutable snapshot changes by swapping the snapshot, costs one boxed
//! future per hook per call, and lets a closure's types be inferred from the waterfall it
//! is registered in. Every waterfall is still a tower `Layer` stack for a user: any layer is
//! a hook through [`layer`].

pub(crate) mod chain;
pub(crate) mod from_fn;
pub(crate) mod layer;
pub(crate) mod options;
pub(crate) mod request;
pub(crate) mod set;
