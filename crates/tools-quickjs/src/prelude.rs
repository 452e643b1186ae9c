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
/// Once a stop is requested, the host calls `disarm` (the last item): it sets the engine's
/// own `prepareStackTrace` to `undefined` and its `stackTraceLimit` to 0, through the native
/// setters captured here, so that building an error's stack runs no JavaScript in which a
/// stop could be swallowed (see `engine/stop.rs`). `Error.stackTraceLimit` is the prelude's
/// accessor too: a value is made a number when it is set (not, as the engine would, every
/// time an error is built; a conversion that throws gives `NaN`, which the engine reads as
/// 0, as it would have), and nothing is set once disarmed. The hook renders nothing
/// when `note` answers that the run is stopping.
///
/// Known gap: an out-of-memory error raised by a native function that a promise reaction
/// calls directly (`.then(String.prototype.repeat.bind(s, n))`) never crosses a bytecode
/// frame, so the hook never sees it and the program gets an ordinary rejection. QuickJS
/// calls no other host code on that path; closing it needs a custom allocator or
/// `JS_SetUncatchableError`, neither reachable without `unsafe`.
pub(super) const PRELUDE: &str = r#"(function () {
  const define = Object.defineProperty;
  const BaseError = Error;
  const describe = Object.getOwnPropertyDescriptor;
  const nativePrepare = describe(BaseError, "prepareStackTrace");
  const nativeLimit = describe(BaseError, "stackTraceLimit");
  const toNumber = Number;
  let disarmed = false;
  function disarm() {
    disarmed = true;
    if (nativePrepare && nativePrepare.set) nativePrepare.set.call(BaseError, undefined);
    if (nativeLimit && nativeLimit.set) nativeLimit.set.call(BaseError, 0);
  }
  if (nativeLimit && nativeLimit.get && nativeLimit.set) {
    define(BaseError, "stackTraceLimit", {
      __proto__: null,
      get: function () { return nativeLimit.get.call(BaseError); },
      set: function (value) {
        if (disarmed) return;
        let limit;
        try { limit = toNumber(value); } catch (ignored) { limit = NaN; }
        if (!disarmed) nativeLimit.set.call(BaseError, limit);
      },
      enumerable: false,
      configurable: false,
    });
  }
  function installStackHook(note) {
    function prepareStackTrace(error, sites) {
      if (note(error)) return "";
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
      constructor(message, memberValue, code) {
        super(message);
        define(this, "name", { __proto__: null, value: name, enumerable: true, writable: true, configurable: true });
        define(this, member, { __proto__: null, value: memberValue, enumerable: true, writable: true, configurable: true });
        define(this, "code", { __proto__: null, value: code, enumerable: true, writable: true, configurable: true });
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
    disarm,
  ];
})()"#;
