# The child side of the Python code runtime, run as `python3 -I -u -c <this file>`.
#
# It speaks JSON Lines on file descriptor 3: reads `boot`, applies the resource limits,
# answers `boot-ack`, reads `run`, then runs the program as the body of
# `async def __dsh_main__()` while sending `call` and `log` frames, and ends with one
# `done` frame. The host answers each `call` with one `reply`. Values are encoded and
# decoded without recursion, so nesting depth is bounded only by the limit in `boot`.

import ast
import asyncio
import builtins
import json
import json.decoder
import linecache
import math
import os
import re
import resource
import socket
import sys
import threading
import traceback

PROTOCOL_FD = 3
TRUNCATION_MARKER = "[dsh-code-runtime-python] log capture truncated at {} bytes"
PROGRAM_FILE = "<program>"
ARGUMENTS_NOT_LOSSLESS = "binding arguments must be lossless JSON"
INVALID_OUTPUT = "program completion must be lossless JSON"
I64_MIN = -(1 << 63)
U64_END = 1 << 64

_sock = socket.socket(fileno=PROTOCOL_FD)
_rfile = _sock.makefile("rb")
_wlock = threading.Lock()


def _send(text):
    data = text.encode("utf-8") + b"\n"
    with _wlock:
        _sock.sendall(data)


def _quote(text):
    return json.dumps(text, ensure_ascii=False)


class _Lossy(Exception):
    pass


def _encode(root, max_depth):
    """JSON text of `root`, refusing anything that is not lossless JSON."""
    parts = []
    active = set()
    work = [(0, root, 0)]
    while work:
        kind, item, depth = work.pop()
        if kind == 1:
            parts.append(item)
            continue
        if kind == 2:
            active.discard(item)
            continue
        kind_of = type(item)
        if item is None:
            parts.append("null")
        elif item is True:
            parts.append("true")
        elif item is False:
            parts.append("false")
        elif kind_of is int:
            if not (I64_MIN <= item < U64_END):
                raise _Lossy("the integer %d does not fit 64 bits" % item)
            parts.append(str(item))
        elif kind_of is float:
            if not math.isfinite(item):
                raise _Lossy("a non-finite number is not JSON")
            if item == 0.0 and math.copysign(1.0, item) < 0:
                raise _Lossy("negative zero cannot be carried by JSON")
            parts.append(repr(item))
        elif kind_of is str:
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise _Lossy("a string with a lone surrogate is not JSON") from None
            parts.append(_quote(item))
        elif kind_of is list or kind_of is tuple or kind_of is dict:
            if depth >= max_depth:
                raise _Lossy("nesting exceeds the depth limit of %d" % max_depth)
            if id(item) in active:
                raise _Lossy("a circular reference is not JSON")
            active.add(id(item))
            work.append((2, id(item), 0))
            if kind_of is dict:
                entries = list(item.items())
                work.append((1, "}", 0))
                for index in range(len(entries) - 1, -1, -1):
                    key, value = entries[index]
                    if type(key) is not str:
                        raise _Lossy("a dict key that is not a str is not JSON")
                    work.append((0, value, depth + 1))
                    work.append((1, _quote(key) + ":", 0))
                    if index:
                        work.append((1, ",", 0))
                parts.append("{")
            else:
                work.append((1, "]", 0))
                for index in range(len(item) - 1, -1, -1):
                    work.append((0, item[index], depth + 1))
                    if index:
                        work.append((1, ",", 0))
                parts.append("[")
        else:
            raise _Lossy("a value of type %s is not JSON" % kind_of.__name__)
    return "".join(parts)


def _key_path(path, key):
    if type(key) is int:
        return "%s[%d]" % (path, key)
    if key.isidentifier():
        return "%s.%s" % (path, key)
    return "%s[%s]" % (path, _quote(key))


def _locate(root, max_depth):
    """Where `root` is not lossless JSON, and why: the first refused value in document
    order, as `$.a[1]: reason`. Run only after `_encode` refused, so the cost of paths is
    paid only on the failure path."""
    active = set()
    work = [(0, root, "$", 0)]
    while work:
        kind, item, path, depth = work.pop()
        if kind == 1:
            active.discard(item)
            continue
        kind_of = type(item)
        if kind_of is list or kind_of is tuple or kind_of is dict:
            if depth >= max_depth:
                return "%s: nesting exceeds the depth limit of %d" % (path, max_depth)
            if id(item) in active:
                return "%s: a circular reference is not JSON" % path
            active.add(id(item))
            work.append((1, id(item), path, 0))
            if kind_of is dict:
                entries = list(item.items())
                for key, value in reversed(entries):
                    if type(key) is not str:
                        return "%s: a dict key that is not a str is not JSON" % path
                for key, value in reversed(entries):
                    work.append((0, value, _key_path(path, key), depth + 1))
            else:
                for index in range(len(item) - 1, -1, -1):
                    work.append((0, item[index], _key_path(path, index), depth + 1))
            continue
        try:
            _encode(item, 1)
        except _Lossy as problem:
            return "%s: %s" % (path, problem.args[0] if problem.args else "not JSON")
    return None


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_WS = re.compile(r"[ \t\n\r]*")
_scanstring = json.decoder.scanstring


def _decode(text):
    """The value of JSON text, without recursion."""
    pos = _WS.match(text, 0).end()
    stack = []
    while True:
        ch = text[pos]
        if ch == "{" or ch == "[":
            pos = _WS.match(text, pos + 1).end()
            if ch == "{":
                if text[pos] == "}":
                    value = {}
                    pos += 1
                else:
                    if text[pos] != '"':
                        raise ValueError("expected a key")
                    key, pos = _scanstring(text, pos + 1)
                    pos = _WS.match(text, pos).end()
                    if text[pos] != ":":
                        raise ValueError("expected ':'")
                    pos = _WS.match(text, pos + 1).end()
                    stack.append([{}, key])
                    continue
            else:
                if text[pos] == "]":
                    value = []
                    pos += 1
                else:
                    stack.append([[], None])
                    continue
        elif ch == '"':
            value, pos = _scanstring(text, pos + 1)
        elif text.startswith("null", pos):
            value, pos = None, pos + 4
        elif text.startswith("true", pos):
            value, pos = True, pos + 4
        elif text.startswith("false", pos):
            value, pos = False, pos + 5
        else:
            match = _NUMBER.match(text, pos)
            if match is None:
                raise ValueError("unexpected character")
            token = match.group()
            value = float(token) if (match.group(1) or match.group(2)) else int(token)
            pos = match.end()
        while True:
            if not stack:
                pos = _WS.match(text, pos).end()
                if pos != len(text):
                    raise ValueError("trailing text")
                return value
            top = stack[-1]
            if top[1] is None:
                top[0].append(value)
            else:
                top[0][top[1]] = value
            pos = _WS.match(text, pos).end()
            ch = text[pos]
            if ch == ",":
                pos = _WS.match(text, pos + 1).end()
                if top[1] is not None:
                    if text[pos] != '"':
                        raise ValueError("expected a key")
                    top[1], pos = _scanstring(text, pos + 1)
                    pos = _WS.match(text, pos).end()
                    if text[pos] != ":":
                        raise ValueError("expected ':'")
                    pos = _WS.match(text, pos + 1).end()
                break
            if (ch == "]" and top[1] is None) or (ch == "}" and top[1] is not None):
                pos += 1
                value = top[0]
                stack.pop()
                continue
            raise ValueError("unexpected character")


def _read_frame():
    line = _rfile.readline()
    if not line:
        os._exit(70)
    return _decode(line.decode("utf-8"))


class _Logs:
    """The child's own ledger: stops forwarding once the log budget is spent."""

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.used = 2
        self.count = 0
        self.truncated = False

    def log(self, text):
        if self.truncated:
            return
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        cost = len(_quote(text).encode("utf-8")) + (1 if self.count else 0)
        if self.used + cost > self.max_bytes:
            self.truncated = True
            marker = TRUNCATION_MARKER.format(self.max_bytes)
            _send('{"type":"log","text":%s,"truncated":true}' % _quote(marker))
            return
        self.used += cost
        self.count += 1
        _send('{"type":"log","text":%s}' % _quote(text))


def _make_class(name, member):
    def __init__(self, message="", member_value=None, code=None):
        Exception.__init__(self, message)
        self.message = message
        self.code = code
        setattr(self, member, member_value)

    return type(name, (Exception,), {"__init__": __init__, "__module__": "builtins"})


class _Session:
    def __init__(self, boot):
        self.max_depth = int(boot.get("maxDepth", 10000))
        self.max_value_bytes = int(boot["maxValueBytes"])
        self.logs = _Logs(int(boot["maxLogBytes"]))
        self.pending = {}
        self.next_id = 1
        self.loop = None
        self.namespaces = []
        for spec in boot["namespaces"]:
            error_class = spec.get("errorClass")
            cls = None
            if error_class is not None:
                cls = _make_class(error_class["name"], error_class["memberNameProperty"])
            signatures = {}
            for signature in spec.get("signatures") or ():
                signatures[signature["name"]] = tuple(signature["parameters"])
            self.namespaces.append((spec["global"], list(spec["names"]), cls, signatures))

    def fail(self, cls, name, message, code=None):
        if cls is None:
            return Exception(message)
        return cls(message, name, code)

    def binding(self, global_name, name, cls):
        session = self

        async def call(*args):
            if not args:
                raise session.fail(cls, name, ARGUMENTS_NOT_LOSSLESS + " (call the binding with an arguments dict, e.g. `{}`)", "INVALID_ARGS")
            try:
                encoded = _encode(args[0], session.max_depth)
            except _Lossy as problem:
                raise session.fail(cls, name, "%s: %s" % (ARGUMENTS_NOT_LOSSLESS, problem), "INVALID_ARGS") from None
            call_id = session.next_id
            session.next_id += 1
            future = session.loop.create_future()
            session.pending[call_id] = (future, cls, name)
            _send('{"type":"call","id":%d,"global":%s,"name":%s,"args":%s}' % (call_id, _quote(global_name), _quote(name), encoded))
            return await future

        call.__name__ = name if name.isidentifier() else "binding"
        call.__qualname__ = "%s.%s" % (global_name, call.__name__)
        return call

    def packed_binding(self, global_name, name, cls, parameters):
        """A binding with a signature: its positional and keyword arguments, packed into one
        dict keyed by `parameters`, are the one argument of a plain binding."""
        session = self
        plain = self.binding(global_name, name, cls)

        async def call(*args, **kwargs):
            if len(args) > len(parameters):
                raise session.fail(cls, name, "%s() takes at most %d argument%s (%d given)" % (name, len(parameters), "" if len(parameters) == 1 else "s", len(args)), "INVALID_ARGS")
            packed = dict(zip(parameters, args))
            for key, value in kwargs.items():
                if key not in parameters:
                    raise session.fail(cls, name, "%s() got an unexpected keyword argument %r" % (name, key), "INVALID_ARGS")
                if key in packed:
                    raise session.fail(cls, name, "%s() got multiple values for argument %r" % (name, key), "INVALID_ARGS")
                packed[key] = value
            return await plain(packed)

        call.__name__ = plain.__name__
        call.__qualname__ = plain.__qualname__
        return call

    def on_reply(self, frame):
        entry = self.pending.pop(frame.get("id"), None)
        if entry is None:
            return
        future, cls, name = entry
        if future.done():
            return
        if frame.get("ok") is True:
            future.set_result(frame.get("value"))
        else:
            code = frame.get("code")
            future.set_exception(self.fail(cls, name, str(frame.get("message", "")), code if type(code) is str else None))

    def reader(self):
        for line in _rfile:
            try:
                frame = _decode(line.decode("utf-8"))
            except Exception:
                continue
            if type(frame) is dict and frame.get("type") == "reply":
                self.loop.call_soon_threadsafe(self.on_reply, frame)


class _Namespace:
    __slots__ = ("_bindings",)

    def __init__(self, bindings):
        object.__setattr__(self, "_bindings", bindings)

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "_bindings")[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name):
        return object.__getattribute__(self, "_bindings")[name]

    def __dir__(self):
        return sorted(object.__getattribute__(self, "_bindings"))


def _program_traceback(error):
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != PROGRAM_FILE:
        tb = tb.tb_next
    try:
        return "".join(traceback.format_exception(type(error), error, tb)).rstrip("\n")
    except BaseException:
        return "%s: %s" % (type(error).__name__, error)


def _done_error(kind, message):
    _send('{"type":"done","error":{"kind":%s,"message":%s}}' % (_quote(kind), _quote(message)))


def _compile(program):
    tree = ast.parse(program, filename=PROGRAM_FILE, mode="exec")
    fields = {
        "name": "__dsh_main__",
        "args": ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        "body": tree.body or [ast.Pass(lineno=1, col_offset=0)],
        "decorator_list": [],
        "returns": None,
        "type_comment": None,
        "lineno": 1,
        "col_offset": 0,
    }
    if "type_params" in ast.AsyncFunctionDef._fields:
        fields["type_params"] = []
    module = ast.Module(body=[ast.AsyncFunctionDef(**fields)], type_ignores=[])
    ast.fix_missing_locations(module)
    return compile(module, PROGRAM_FILE, "exec")


async def _main(session, program):
    session.loop = asyncio.get_running_loop()
    threading.Thread(target=session.reader, daemon=True).start()

    program_builtins = dict(builtins.__dict__)

    def program_print(*args, sep=" ", end="\n", file=None, flush=False):
        if file is not None and file is not sys.stdout and file is not sys.stderr:
            return builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
        text = (" " if sep is None else sep).join(str(arg) for arg in args)
        if end is not None and end != "\n":
            text += end
        session.logs.log(text)

    program_builtins["print"] = program_print
    scope = {"__builtins__": program_builtins, "__name__": "__dsh_program__"}
    for global_name, names, cls, signatures in session.namespaces:
        bindings = {}
        for name in names:
            if name in signatures:
                bindings[name] = session.packed_binding(global_name, name, cls, signatures[name])
            else:
                bindings[name] = session.binding(global_name, name, cls)
        scope[global_name] = _Namespace(bindings)
        if cls is not None:
            scope[cls.__name__] = cls

    linecache.cache[PROGRAM_FILE] = (len(program), None, program.splitlines(True), PROGRAM_FILE)
    try:
        code = _compile(program)
    except SyntaxError as error:
        _done_error("exception", "".join(traceback.format_exception_only(type(error), error)).rstrip("\n"))
        return
    try:
        exec(code, scope)
        main = scope.pop("__dsh_main__")
        result = await main()
    except Exception as error:
        _done_error("exception", _program_traceback(error))
        return
    if result is None:
        _send('{"type":"done"}')
        return
    try:
        encoded = _encode(result, session.max_depth)
    except _Lossy as problem:
        message = INVALID_OUTPUT
        if problem.args and "depth limit" in problem.args[0]:
            message = "program result " + problem.args[0]
        else:
            try:
                where = _locate(result, session.max_depth)
            except Exception:
                where = None
            if where is not None:
                message = "%s: %s" % (INVALID_OUTPUT, where)
        _done_error("invalid-output", message)
        return
    if len(encoded.encode("utf-8")) > session.max_value_bytes:
        _done_error("output-limit", "outer output exceeded %d bytes" % session.max_value_bytes)
        return
    _send('{"type":"done","value":%s}' % encoded)


def _limit(which, wanted):
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(which, (wanted, wanted if hard == resource.RLIM_INFINITY else hard))


def _boot():
    # bubblewrap exports the working directory it set; the program's environment is PATH alone.
    os.environ.pop("PWD", None)
    boot = _read_frame()
    if type(boot) is not dict or boot.get("type") != "boot":
        os._exit(71)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(boot["cpuSeconds"])
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    cpu_hard = cpu + 1 if hard == resource.RLIM_INFINITY else min(cpu + 1, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (min(cpu, cpu_hard), cpu_hard))
    _limit(resource.RLIMIT_AS, int(boot["addressSpaceBytes"]))
    if "maxProcesses" in boot:
        _limit(resource.RLIMIT_NPROC, int(boot["maxProcesses"]))
    session = _Session(boot)
    _send('{"type":"boot-ack"}')
    run = _read_frame()
    if type(run) is not dict or run.get("type") != "run" or type(run.get("program")) is not str:
        os._exit(72)
    asyncio.run(_main(session, run["program"]))
    os._exit(0)


_boot()
