// The globals a run_code program has besides the SDK: the runtime's `console` shim. The SDK
// declares only `tools`, `ToolCallError` and their types; sdk-check compiles this file with
// every program.
declare const console: {
  log(...values: unknown[]): void;
};
