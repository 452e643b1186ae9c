//! The three stages of a call: [`prepare`] (creation, pre-execute, approval, guards),
//! [`dispatch`] (the execute waterfall around the body) and [`complete`] (post-execute,
//! materialization, finalization, observers), with the typestate handles between them.

pub(crate) mod body;
pub(crate) mod body_token;
pub(crate) mod complete;
pub(crate) mod dispatch;
pub(crate) mod prepare;
