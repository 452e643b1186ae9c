#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod audit;
pub mod auth;
mod client;
mod error;
pub mod gateway;
pub mod limits;
pub mod otel;
pub mod pins;
mod server;
mod wire;

pub use client::{
    Customize, DEFAULT_CALL_TIMEOUT, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_LIST_TIMEOUT,
    DEFAULT_MAX_CONTENT_BLOCKS, ImportOptions, ImportedServer, ImportedTool, Offers, SEPARATOR,
    ServerSpec, check_server_name, exposed_name, split_exposed_name,
};
pub use error::{Error, ErrorKind, UpstreamCode};
pub use server::{
    APPROVE_FIELD, Caller, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT, HttpOptions,
    McpServer, McpSession, Passthrough, PassthroughFuture, SESSION_FIELD,
};
pub use wire::{CODE_META_KEY, UNENFORCED_META_KEY, WRAPPED_MARKER, WRAPPED_RESULT_KEY};
