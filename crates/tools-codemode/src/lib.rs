#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

#[cfg(feature = "bridge")]
mod bridge;
mod runtime;
#[cfg(feature = "test-util")]
pub mod testing;

#[cfg(feature = "bridge")]
pub use bridge::{
    CODE_ONLY_INSTRUCTION, CodeModeConfig, DEFAULT_MAX_PARALLEL_SUB_CALLS, DESCRIPTION_PARAMETER,
    DispatchSettled, DispatchSink, DispatchStarted, IMAGE_CONTEXT_SOURCE, INVALID_DESCRIPTION,
    LogRewrite, MAX_JSON_DEPTH, NO_OUTPUT, REQUIRES_RUNTIME, RunCodePresenter, code_only_section,
    install, render_run_code_output, run_code_output_schema, run_code_parameters, sdk_section,
    sdk_tools,
};
pub use runtime::kit;
pub use runtime::{
    ABORTED_MESSAGE, ARGUMENTS_NOT_LOSSLESS, BindingError, BindingFuture, BindingHost,
    BindingNamespace, BindingOutcome, BindingSignature, CodeRunFailure, CodeRunRequest,
    CodeRunResult, CodeRuntime, ContractError, DISPOSED_MESSAGE, DisposeFuture, ErrorClass,
    FailureKind, INVALID_OUTPUT_MESSAGE, OutputLedger, RESERVED_ERROR_MEMBERS, RESERVED_GLOBALS,
    RESERVED_WORDS, RESOLUTION_NOT_LOSSLESS, RunFuture, RuntimeLimits, UNRENDERABLE_MESSAGE,
    is_portable_identifier, json_string_len, json_value_len, validate_bindings,
};
/// The SDK side of Code Mode (`tools-codemode-sdk`): the languages, their renderers and the
/// tool shape they render.
pub use tools_codemode_sdk::{
    DEFAULT_SEARCH_LIMIT, Error, Language, LanguageBinding, MAX_SEARCH_LIMIT, RunCodeFlavour,
    SDK_HEADING, SdkOptions, SdkRenderer, ToolSdkSchema, ToolSearchSdk, json_schema_to_py,
    json_schema_to_ts,
};

/// Re-export of the workspace's machine codes.
pub use tools_json::ErrorCode;
