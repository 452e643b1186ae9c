//! The prelude: JavaScript evaluated in the realm before the program, which captures the
//! realm's originals and defines the error-class factory and the stack hook.

/// The realm's originals, the error-class factory and the stack hook, taken before the
/// program runs.
///
/// The stack hook is how a caught out-of-memory error still ends the run: QuickJS-ng calls
/// `Error.prepareStackTrace` for every exception the moment it first crosses a bytecode
/// frame (the out-of-memory error included, and also a bare `null`, which is what the
/// engine throws when it cannot even allocate its error object). The hook hands the thrown
/// value to the host first, then renders the stack exactly as the engine's default does.
/// `Error.prepareStackTrace` is then locked (reads `undefined`, writes are ignored), so the
/// program can neither remove the hook nor see it.
///
/// Known gap: an out-of-memory error raised by a native function that a promise reaction
/// calls directly (`.then(String.prototype.repeat.bind(s, n))`) never crosses a bytecode
/// frame, so the hook never sees it and the program gets an ordinary rejection. QuickJS
/// calls no other host code on that path; closing it needs a custom allocator or
/// `JS_SetUncatchableError`, neither reachable without `unsafe`.
pub(super) const PRELUDE: &str = r#"(function () {
  const define = Object.defineProperty;
  const BaseError = Error;
  function installStackHook(note) {
    function prepareStackTrace(error, sites) {
      note(error);
      let out = "";
      if (sites === null || typeof sites !== "object") return out;
      const count = sites.length;
      for (let i = 0; i < count; i++) {
        const site = sites[i];
        const file = site.getFileName();
        const line = site.getLineNumber();
        const position = line === null ? "" : ":" + line + ":" + site.getColumnNumber();
        if (site.getFunction() === null && !site.isNative()) {
          out += "    at " + file + position + "\n";
          continue;
        }
        const name = site.getFunctionName();
        out += "    at " + (name ? name : "<anonymous>");
        if (site.isNative()) {
          out += " (native)\n";
        } else {
          out += " (" + (file === null ? "<null>" : file) + position + ")\n";
        }
      }
      return out;
    }
    BaseError.prepareStackTrace = prepareStackTrace;
    define(BaseError, "prepareStackTrace", {
      __proto__: null,
      get: function () { return undefined; },
      set: function (ignored) {},
      enumerable: false,
      configurable: false,
    });
  }
  function makeClass(name, member) {
    const C = class extends BaseError {
      constructor(message, memberValue) {
        super(message);
        define(this, "name", { __proto__: null, value: name, enumerable: true, writable: true, configurable: true });
        define(this, member, { __proto__: null, value: memberValue, enumerable: true, writable: true, configurable: true });
      }
    };
    define(C, "name", { __proto__: null, value: name, configurable: true });
    return C;
  }
  return [
    Object.prototype,
    Array.prototype,
    typeof InternalError === "function" ? InternalError.prototype : null,
    String,
    Object.getOwnPropertyDescriptor,
    Error,
    makeClass,
    installStackHook,
    Array.prototype.toString,
  ];
})()"#;
