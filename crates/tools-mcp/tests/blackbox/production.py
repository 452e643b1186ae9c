#!/usr/bin/env python3
"""Black-box tests of the gateway's HTTP authentication (`[auth]`): static bearer tokens,
JWTs of a test issuer checked against its JWKS, identity policy rules, sessions bound to
their principal, the health endpoints, and the start-up refusals; and, behind static tokens,
tool pins (`[pins]`), rate limits (`[limits]`), the upstream's resources and prompts, and the
audit log surviving a SIGKILL under load.

Runs with a Python that has `mcp` 2.3.x, `PyJWT` and `cryptography`. Every check prints
`ok production/<name>` or `FAIL production/<name>: <detail>`; the exit status is 1 if any
check failed. See README.md in this folder for the environment variables.

The issuer is this script: it makes an RSA (RS256) and an EC P-256 (ES256) key, serves
their JWKS from a thread on 127.0.0.1 and mints tokens with PyJWT. The upstream is
`../data/fake_mcp_server.py` (tools `fake__echo`, `fake__add_tool`, ...).
"""
from __future__ import annotations

import hashlib
import re
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import *  # noqa: E402,F401,F403  (the harness's names, its imports included)

import httpx2  # noqa: E402  (the HTTP client the SDK itself uses)
import jwt  # noqa: E402  (PyJWT)
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from jwt.algorithms import ECAlgorithm, RSAAlgorithm  # noqa: E402
from mcp import MCPError  # noqa: E402

P = "production"
AUDIENCE = "http://gw.test/mcp"
RESOURCE = "http://gw.resource.test/mcp"  # the `resource` gateway: its audience, by default
TOKENS = {"alice": "alice-static-token-0123456789", "bob": "bob-static-token-9876543210"}
ACCEPT = "application/json, text/event-stream"
LISTENING = re.compile(r"tools-mcp: listening on (http://(\S+)/mcp) \((.*)\)")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------- the test issuer


class Issuer:
    """Keys, their JWKS served over HTTP on 127.0.0.1 (a thread), and tokens signed with them.

    `/jwks.json` is the key set (`rsa1`, `ec1`; more with `publish`), `/garbage.json` a body
    that is no JSON."""

    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        # Same kid as `rsa1`, never published: a token signed with it must not verify.
        self.impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.keys = [self.jwk(self.rsa, "rsa1", "RS256"), self.jwk(self.ec, "ec1", "ES256")]
        self.fetches = 0
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                if self.path == "/jwks.json":
                    issuer.fetches += 1
                    status, body = 200, json.dumps({"keys": list(issuer.keys)}).encode()
                elif self.path == "/garbage.json":
                    status, body = 200, b"<html>this is not a JWK set</html>"
                else:
                    status, body = 404, b"{}"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def jwk(key, kid: str, alg: str) -> dict:
        algorithm = RSAAlgorithm if alg.startswith("RS") else ECAlgorithm
        doc = algorithm.to_jwk(key.public_key(), as_dict=True)
        return dict(doc, kid=kid, alg=alg, use="sig")

    def publish(self, key, kid: str, alg: str) -> None:
        self.keys = self.keys + [self.jwk(key, kid, alg)]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def token(self, sub: str | None = "carol", *, alg: str = "RS256", kid: str | None = None, key=None,
              lifetime: int = 300, **claims) -> str:
        now = int(time.time())
        body = {"iss": self.url, "aud": AUDIENCE, "iat": now, "nbf": now - 5, "exp": now + lifetime,
                "jti": f"jti-{now}-{sub}", "scope": "tools"}
        if sub is not None:
            body["sub"] = sub
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        if alg == "HS256":
            signing = key or "a-shared-secret-that-is-long-enough-for-hs256"
        else:
            signing = key or (self.rsa if alg == "RS256" else self.ec)
        kid = kid or ("rsa1" if alg in ("RS256", "HS256") else "ec1")
        return jwt.encode(body, signing, algorithm=alg, headers={"kid": kid})


# ---------------------------------------------------------------- raw HTTP

# No proxy from the environment: every request here goes to 127.0.0.1.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _http(method: str, url: str, headers: dict[str, str], body: bytes | None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with _OPENER.open(request, timeout=15) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


async def http(method: str, url: str, headers: dict[str, str] | None = None,
               body: Any = None) -> tuple[int, dict, bytes]:
    """(status, headers with lowercase names, body) of one request; JSON `body` is encoded."""
    headers = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
        headers.setdefault("Accept", ACCEPT)
    return await anyio.to_thread.run_sync(_http, method, url, headers, data)


def bearer(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def initialize_request(rid: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "production.py", "version": "1"}}}


def jsonrpc_messages(body: bytes) -> list[dict]:
    """The JSON-RPC messages of a body that is JSON or an event stream."""
    text = body.decode(errors="replace").strip()
    if text.startswith("{"):
        return [json.loads(text)]
    out = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip().startswith("{"):
            out.append(json.loads(line[5:].strip()))
    return out


def expect_jsonrpc_error(body: bytes, what: str) -> dict:
    messages = jsonrpc_messages(body)
    expect(messages and "error" in messages[0], f"{what}: body is not a JSON-RPC error: {short(body.decode(errors='replace'))}")
    return messages[0]["error"]


def challenge_params(value: str) -> dict[str, str]:
    """The auth-params of a `Bearer k="v", ...` challenge."""
    expect(value.startswith("Bearer "), f"WWW-Authenticate is not a Bearer challenge: {value!r}")
    return dict(re.findall(r'([a-z_]+)="([^"]*)"', value))


# ---------------------------------------------------------------- the gateway under test


class AuthGateway(Gateway):
    """A gateway over HTTP on `127.0.0.1:0` (or `addr`): the port is read back from the
    `listening on` line of its stderr; started when `/healthz` answers 200."""

    def __init__(self, name: str, config: Path, tmp: Path, addr: str = "127.0.0.1:0",
                 extra: list[str] | None = None):
        super().__init__("http", config, tmp)
        self.name = name
        self.addr = addr
        self.extra = extra or []
        self.base: str | None = None
        self.listening: str | None = None
        self.banner: str | None = None

    async def start(self) -> None:
        err = open(self.stderr_path, "ab")
        self.proc = subprocess.Popen(
            self.argv() + ["--http", self.addr, *self.extra],
            stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True,
        )
        err.close()
        deadline = time.monotonic() + START_TIMEOUT
        while self.url is None:
            m = LISTENING.search(self.stderr_path.read_text(errors="replace"))
            if m:
                self.listening, self.banner = m.group(1), m.group(3)
                self.port = int(m.group(2).rsplit(":", 1)[1])
                # Reached over loopback whatever the address bound (0.0.0.0 included).
                self.base = f"http://127.0.0.1:{self.port}"
                self.url = f"{self.base}/mcp"
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited with {self.proc.returncode}: {self.stderr_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no `listening on` line within {START_TIMEOUT}s: {self.stderr_tail()}")
            await anyio.sleep(0.05)
        while True:  # ready when /healthz answers (polled, guarded by the deadline)
            try:
                status, _, _ = await http("GET", f"{self.base}/healthz")
                if status == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited with {self.proc.returncode}: {self.stderr_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"/healthz did not answer 200 within {START_TIMEOUT}s")
            await anyio.sleep(0.05)

    @contextlib.asynccontextmanager
    async def client(self, token: str | None, **kwargs):
        """An initialized `ClientSession` of the official SDK, over streamable HTTP, whose
        every request carries `Authorization: Bearer <token>`."""
        kwargs.setdefault("read_timeout_seconds", CHECK_TIMEOUT)
        http_client = httpx2.AsyncClient(
            headers=bearer(token), timeout=httpx2.Timeout(30.0, read=CHECK_TIMEOUT), trust_env=False
        )
        async with http_client:
            async with streamable_http_client(self.url, http_client=http_client) as (r, w):
                async with ClientSession(r, w, **kwargs) as s:
                    await s.initialize()
                    yield s

    async def post(self, token: str | None, body: Any, headers: dict[str, str] | None = None):
        return await http("POST", self.url, {**bearer(token), **(headers or {})}, body)


def write_config(tmp: Path, name: str, auth: str, policy: str = "", mode: str | None = None) -> Path:
    """The config `production-<name>.toml`: the fake server (in FAKE_MCP_MODE `mode`, if
    given), then `auth` and `policy` (any further sections)."""
    fake = toml_list([PYTHON, str(FAKE_SERVER)])
    env = f"env = {{ FAKE_MCP_MODE = {json.dumps(mode)} }}\n" if mode else ""
    p = tmp / f"production-{name}.toml"
    p.write_text(f'mode = "native"\n[servers.fake]\ncommand = {fake}\n{env}{auth}{policy}')
    return p


def static_tokens() -> str:
    entries = ", ".join(
        f'{{ principal = "{who}", sha256 = "{sha256(token)}", scopes = ["tools"] }}' for who, token in TOKENS.items()
    )
    return f"tokens = [{entries}]\n"


def auth_section(issuer: Issuer, *, jwks: str = "/jwks.json", audience: str | None = AUDIENCE,
                 resource: str | None = None) -> str:
    text = "[auth]\n" + static_tokens() + 'scopes_supported = ["tools", "admin"]\n'
    if resource:
        text += f"resource = {json.dumps(resource)}\n"
    text += f"[auth.jwt]\nissuer = {json.dumps(issuer.url)}\njwks_url = {json.dumps(issuer.url + jwks)}\n"
    if audience:
        text += f"audience = {json.dumps(audience)}\n"
    return text + 'algorithms = ["RS256", "ES256"]\nleeway = "30s"\n'


POLICY = """
[[policy.rules]]
tool = "fake__echo"
principal = "bob"
decision = "deny"
reason = "bob may not echo"

[[policy.rules]]
tool = "fake__add_tool"
scopes = ["admin"]
decision = "allow"

[[policy.rules]]
tool = "fake__extra"
scopes = ["admin"]
decision = "allow"
"""


# ---------------------------------------------------------------- checks 1-6 (main gateway)


async def check_no_token(g: AuthGateway, issuer: Issuer) -> None:
    status, headers, body = await g.post(None, initialize_request())
    expect(status == 401, f"POST /mcp without a token: status {status}, expected 401: {short(body.decode(errors='replace'))}")
    challenge = headers.get("www-authenticate", "")
    params = challenge_params(challenge)
    metadata = f"{g.base}/.well-known/oauth-protected-resource/mcp"
    expect(params.get("resource_metadata") == metadata,
           f"WWW-Authenticate {challenge!r}: expected resource_metadata={metadata!r}")
    expect("error" not in params, f"a request without a credential should get a bare challenge: {challenge!r}")
    expect_jsonrpc_error(body, "401 body")
    # The metadata document, fetched without a token from where the challenge says.
    status, headers, body = await http("GET", params["resource_metadata"])
    expect(status == 200, f"GET {metadata}: status {status}: {short(body.decode(errors='replace'))}")
    doc = json.loads(body)
    expect(doc.get("resource") == g.url, f"metadata resource {doc.get('resource')!r} != {g.url!r}: {short(doc)}")
    expect(doc.get("authorization_servers") == [issuer.url],
           f"metadata authorization_servers {doc.get('authorization_servers')!r} != [{issuer.url!r}]")
    expect("header" in (doc.get("bearer_methods_supported") or []), f"bearer_methods_supported: {short(doc)}")
    expect(doc.get("scopes_supported") == ["tools", "admin"], f"scopes_supported: {short(doc)}")


async def check_no_token_sdk(g: AuthGateway, issuer: Issuer) -> None:
    """The official client without a token cannot initialize."""
    try:
        with anyio.fail_after(20):
            async with g.client(None) as s:
                await s.list_tools()
    except TimeoutError:
        raise CheckFailed("the SDK client without a token neither failed nor succeeded within 20 s")
    except Exception as e:  # noqa: BLE001
        text = describe(e)
        expect("401" in text or "nauthori" in text, f"the failure does not say 401/Unauthorized: {text}")
        return
    raise CheckFailed("an SDK client without a token initialized and listed tools")


async def list_and_echo(s: ClientSession, word: str) -> None:
    names = {t.name for t in (await s.list_tools()).tools}
    expect({"fake__echo", "fake__add_tool"} <= names, f"listed {sorted(names)}")
    r = dump(await s.call_tool("fake__echo", {"text": word}))
    expect(r.get("isError") is False and texts(r) == word, f"fake__echo: {short(r)}")


async def check_static_token(g: AuthGateway, issuer: Issuer) -> None:
    async with g.client(TOKENS["alice"]) as s:
        await list_and_echo(s, "hello from alice")


async def check_bad_static_token(g: AuthGateway, issuer: Issuer) -> None:
    await expect_invalid_token(g, "not-a-known-token", "an unknown static token")


async def check_jwt(g: AuthGateway, issuer: Issuer, alg: str) -> None:
    async with g.client(issuer.token("carol", alg=alg)) as s:
        await list_and_echo(s, f"hello via {alg}")


async def check_principal_rule(g: AuthGateway, issuer: Issuer) -> None:
    async with g.client(TOKENS["alice"]) as s:
        r = dump(await s.call_tool("fake__echo", {"text": "alice may"}))
        expect(r.get("isError") is False and texts(r) == "alice may", f"alice's fake__echo: {short(r)}")
    async with g.client(TOKENS["bob"]) as s:
        r = dump(await s.call_tool("fake__echo", {"text": "bob may not"}))
        expect_error_code(r, "DENIED")
        expect("bob may not echo" in texts(r) + json.dumps(r.get("_meta")), f"the rule's reason is not said: {short(r)}")


async def check_principal_rule_jwt(g: AuthGateway, issuer: Issuer) -> None:
    """The same rule applies to a JWT whose subject is bob."""
    async with g.client(issuer.token("bob", alg="ES256")) as s:
        expect_error_code(dump(await s.call_tool("fake__echo", {"text": "x"})), "DENIED")


async def check_scope_allow_list(g: AuthGateway, issuer: Issuer) -> None:
    """`allow` rules with scopes = ["admin"] make `add_tool` and `extra` an allow-list: only
    principals holding `admin` (JWT `scope` string or `scp` list) may call them."""
    async with g.client(TOKENS["alice"]) as s:  # scopes ["tools"]
        expect_error_code(dump(await s.call_tool("fake__add_tool", {})), "DENIED")
    changed = anyio.Event()

    async def on_message(msg) -> None:
        if getattr(msg, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async with g.client(issuer.token("dora", scope="tools admin"), message_handler=on_message) as s:
        await s.list_tools()
        r = dump(await s.call_tool("fake__add_tool", {}))
        expect(r.get("isError") is False and texts(r) == "added", f"dora (scope \"tools admin\") add_tool: {short(r)}")
        # Waited for so that `fake__extra` is registered (and the session does not close
        # while the notification is on its way).
        try:
            with anyio.fail_after(10):
                await changed.wait()
        except TimeoutError:
            raise CheckFailed("no notifications/tools/list_changed reached dora's session within 10 s")
        names = {t.name for t in (await s.list_tools()).tools}
        expect("fake__extra" in names, f"fake__extra not listed after list_changed: {sorted(names)}")
    async with g.client(issuer.token("erin", scope=None, scp=["tools", "admin"], alg="ES256")) as s:
        r = dump(await s.call_tool("fake__extra", {"word": "hi"}))
        expect(r.get("isError") is False and texts(r) == "extra says hi", f"erin (scp [tools, admin]) extra: {short(r)}")
    async with g.client(issuer.token("frank", scope="tools")) as s:
        expect_error_code(dump(await s.call_tool("fake__extra", {"word": "hi"})), "DENIED")


async def expect_invalid_token(g: AuthGateway, token: str, what: str, needle: str | None = None) -> None:
    status, headers, body = await g.post(token, initialize_request())
    text = body.decode(errors="replace")
    expect(status == 401, f"{what}: status {status}, expected 401: {short(text)}")
    challenge = headers.get("www-authenticate", "")
    params = challenge_params(challenge)
    expect(params.get("error") == "invalid_token", f"{what}: WWW-Authenticate {challenge!r} lacks error=\"invalid_token\"")
    expect(params.get("error_description"), f"{what}: WWW-Authenticate {challenge!r} lacks error_description")
    expect(params.get("resource_metadata"), f"{what}: WWW-Authenticate {challenge!r} lacks resource_metadata")
    if needle:
        expect(needle in params["error_description"],
               f"{what}: error_description {params['error_description']!r} does not say {needle!r}")
    expect_jsonrpc_error(body, what)


def bad_jwts(issuer: Issuer) -> list[tuple[str, str, str | None]]:
    """(check name, token, a word its error_description should hold)."""
    now = int(time.time())
    return [
        ("jwt_expired", issuer.token(exp=now - 120, iat=now - 600, nbf=now - 600), "expired"),
        ("jwt_unknown_key", issuer.token(key=issuer.impostor), "signature"),
        ("jwt_wrong_audience", issuer.token(aud="http://elsewhere.test/mcp"), "audience"),
        ("jwt_wrong_issuer", issuer.token(iss="http://127.0.0.1:1"), "issuer"),
        ("jwt_hs256", issuer.token(alg="HS256"), "HS256"),
        ("jwt_not_yet_valid", issuer.token(nbf=now + 600, iat=now), "nbf"),
        ("jwt_no_sub", issuer.token(sub=None), "sub"),
        ("jwt_alg_none", jwt.encode({"iss": issuer.url, "aud": AUDIENCE, "sub": "x", "exp": now + 300},
                                    None, algorithm="none"), None),
    ]


async def open_session(g: AuthGateway, token: str) -> dict[str, str]:
    """Initializes a session over raw HTTP; returns the headers that use it."""
    status, headers, body = await g.post(token, initialize_request())
    text = body.decode(errors="replace")
    expect(status == 200, f"initialize: status {status}: {short(text)}")
    sid = headers.get("mcp-session-id")
    expect(sid, f"no mcp-session-id in the initialize answer: {headers}")
    messages = jsonrpc_messages(body)
    version = (messages[0].get("result") or {}).get("protocolVersion") if messages else None
    expect(version, f"no protocolVersion in the initialize answer: {short(text)}")
    return {"mcp-session-id": sid, "mcp-protocol-version": version}


async def check_session_principal(g: AuthGateway, issuer: Issuer) -> None:
    session = await open_session(g, TOKENS["alice"])
    status, _, body = await g.post(TOKENS["alice"], {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    expect(status in (200, 202), f"alice's notifications/initialized: status {status}")
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    status, _, body = await g.post(TOKENS["bob"], listing, session)
    expect(status == 403, f"bob using alice's session: status {status}, expected 403: {short(body.decode(errors='replace'))}")
    expect_jsonrpc_error(body, "403 body")
    status, _, body = await http("DELETE", g.url, {**bearer(TOKENS["bob"]), **session})
    expect(status == 403, f"bob's DELETE of alice's session: status {status}, expected 403")
    # The session is still alice's, and still works for her.
    status, _, body = await g.post(TOKENS["alice"], listing, session)
    messages = jsonrpc_messages(body)
    expect(status == 200 and messages and "fake__echo" in json.dumps(messages[0].get("result")),
           f"alice's tools/list after bob's attempts: status {status}: {short(body.decode(errors='replace'))}")
    status, _, _ = await http("DELETE", g.url, {**bearer(TOKENS["alice"]), **session})
    expect(status in (200, 204), f"alice's DELETE of her session: status {status}")


async def check_session_other_issuer(g: AuthGateway, issuer: Issuer) -> None:
    """A JWT whose `sub` is alice is not the static token's alice (another issuer)."""
    session = await open_session(g, TOKENS["alice"])
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    status, _, body = await g.post(issuer.token("alice"), listing, session)
    expect(status == 403, f"a JWT with sub alice on static alice's session: status {status}, expected 403: "
                          f"{short(body.decode(errors='replace'))}")
    await http("DELETE", g.url, {**bearer(TOKENS["alice"]), **session})


async def check_health(g: AuthGateway, issuer: Issuer) -> None:
    for path, want in [("/healthz", 200), ("/readyz", 200)]:
        status, _, body = await http("GET", f"{g.base}{path}")
        expect(status == want, f"GET {path} (no token, JWKS up): status {status}, expected {want}: {body!r}")


async def check_key_rotation(g: AuthGateway, issuer: Issuer) -> None:
    """A key published after start is fetched when a token names its kid (the gateway
    refetches at most every 5 s, so this polls with a deadline)."""
    fresh = ec.generate_private_key(ec.SECP256R1())
    issuer.publish(fresh, "ec2", "ES256")
    deadline = time.monotonic() + 15
    while True:
        token = issuer.token("frank", alg="ES256", kid="ec2", key=fresh)
        status, _, body = await g.post(token, initialize_request())
        if status == 200:
            break
        expect(status == 401, f"a token of a newly published key: status {status}: {short(body.decode(errors='replace'))}")
        if time.monotonic() > deadline:
            raise CheckFailed(f"a token of key ec2, published after start, still refused after 15 s: "
                              f"{short(body.decode(errors='replace'))}")
        await anyio.sleep(0.5)
    async with g.client(issuer.token("frank", alg="ES256", kid="ec2", key=fresh)) as s:
        await list_and_echo(s, "rotated")


# ---------------------------------------------------------------- the `resource` gateway


async def check_resource_audience(g: AuthGateway, issuer: Issuer) -> None:
    """With `resource` and no `audience`, the resource is the audience, and the challenge and
    metadata name it."""
    async with g.client(issuer.token("carol", aud=RESOURCE)) as s:
        await list_and_echo(s, "resource audience")
    await expect_invalid_token(g, issuer.token("carol"), f"a token for {AUDIENCE} at {RESOURCE}", "audience")
    status, headers, _ = await g.post(None, initialize_request())
    params = challenge_params(headers.get("www-authenticate", ""))
    want = "http://gw.resource.test/.well-known/oauth-protected-resource/mcp"
    expect(status == 401 and params.get("resource_metadata") == want,
           f"status {status}, resource_metadata {params.get('resource_metadata')!r} != {want!r}")
    status, _, body = await http("GET", f"{g.base}/.well-known/oauth-protected-resource/mcp")
    doc = json.loads(body) if status == 200 else {}
    expect(doc.get("resource") == RESOURCE, f"metadata: status {status}: {short(body.decode(errors='replace'))}")


# ---------------------------------------------------------------- check 7 (JWKS down)


async def check_jwks_unavailable(g: AuthGateway, issuer: Issuer, what: str) -> None:
    status, _, body = await http("GET", f"{g.base}/healthz")
    expect(status == 200, f"/healthz with the JWKS {what}: status {status}")
    status, _, body = await http("GET", f"{g.base}/readyz")
    expect(status == 503, f"/readyz with the JWKS {what}: status {status}, expected 503: {body!r}")
    for alg in ("RS256", "ES256"):
        status, _, body = await g.post(issuer.token("carol", alg=alg), initialize_request())
        expect(status == 503, f"a valid {alg} JWT with the JWKS {what}: status {status}, expected 503 "
                              f"(never let through): {short(body.decode(errors='replace'))}")
        expect_jsonrpc_error(body, "503 body")
    async with g.client(TOKENS["alice"]) as s:
        await list_and_echo(s, f"static token, JWKS {what}")


# ---------------------------------------------------------------- check 8 (start-up and --check)


async def run_gateway_cmd(args: list[str], timeout: float = 30) -> tuple[int, str]:
    with anyio.fail_after(timeout):
        proc = await anyio.run_process([BIN, "gateway", *args], check=False, stdin=subprocess.DEVNULL)
    return proc.returncode, (proc.stdout + proc.stderr).decode(errors="replace")


async def check_config_valid(tmp: Path, issuer: Issuer) -> None:
    cfg = write_config(tmp, "check-valid", auth_section(issuer), POLICY)
    code, out = await run_gateway_cmd(["--config", str(cfg), "--check"])
    expect(code == 0, f"--check of a valid config: exit {code}: {short(out)}")


async def check_config_unknown_key(tmp: Path, issuer: Issuer) -> None:
    auth = auth_section(issuer).replace("[auth]\n", "[auth]\ntokenz = []\n", 1)
    cfg = write_config(tmp, "check-unknown", auth)
    line = cfg.read_text().splitlines().index("tokenz = []") + 1
    code, out = await run_gateway_cmd(["--config", str(cfg), "--check"])
    expect(code != 0, f"--check accepted an unknown key in [auth]: {short(out)}")
    expect("tokenz" in out and f"line {line}" in out, f"the error does not name `tokenz` and line {line}: {short(out)}")
    auth = auth_section(issuer).replace("[auth.jwt]\n", "[auth.jwt]\njwks_uri = \"x\"\n", 1)
    cfg = write_config(tmp, "check-unknown-jwt", auth)
    code, out = await run_gateway_cmd(["--config", str(cfg), "--check"])
    expect(code != 0 and "jwks_uri" in out, f"an unknown key in [auth.jwt]: exit {code}: {short(out)}")


async def check_config_bad_sha256(tmp: Path, issuer: Issuer) -> None:
    for bad in ["abc", sha256("x")[:-1] + "g", sha256("x") + "00", "sha256:" + sha256("x")]:
        auth = f'[auth]\ntokens = [{{ principal = "alice", sha256 = "{bad}" }}]\n'
        cfg = write_config(tmp, "check-sha", auth)
        line = next(i for i, text in enumerate(cfg.read_text().splitlines(), 1) if text.startswith("tokens"))
        code, out = await run_gateway_cmd(["--config", str(cfg), "--check"])
        expect(code != 0, f"--check accepted sha256 = {bad!r}: {short(out)}")
        expect("auth.tokens.sha256" in out and "64 hex" in out and f"line {line}" in out,
               f"sha256 = {bad!r}: the error does not name auth.tokens.sha256, line {line} and the 64 hex digits: {short(out)}")


async def check_config_hmac(tmp: Path, issuer: Issuer) -> None:
    auth = auth_section(issuer).replace('algorithms = ["RS256", "ES256"]', 'algorithms = ["RS256", "HS256"]')
    cfg = write_config(tmp, "check-hmac", auth)
    code, out = await run_gateway_cmd(["--config", str(cfg), "--check"])
    expect(code != 0 and "HS256" in out and "auth.jwt.algorithms" in out,
           f"algorithms with HS256: exit {code}: {short(out)}")


async def check_non_loopback_refused(tmp: Path, issuer: Issuer) -> None:
    cfg = write_config(tmp, "noauth", "")
    code, out = await run_gateway_cmd(["--config", str(cfg), "--http", "0.0.0.0:0"])
    expect(code != 0, f"a non-loopback --http without [auth] started (exit {code}): {short(out)}")
    expect("--insecure-no-auth" in out, f"the refusal does not mention --insecure-no-auth: {short(out)}")


async def check_non_loopback_insecure(tmp: Path, issuer: Issuer) -> None:
    g = AuthGateway("insecure", write_config(tmp, "insecure", ""), tmp, "0.0.0.0:0", ["--insecure-no-auth"])
    try:
        await g.start()
        expect(g.banner == "WITHOUT authentication" and g.listening.startswith("http://0.0.0.0:"),
               f"banner: {g.listening!r} ({g.banner!r})")
        status, _, body = await g.post(None, initialize_request())
        expect(status == 200, f"initialize without a token on an --insecure-no-auth gateway: status {status}")
    finally:
        g.stop()


async def check_loopback_no_auth(tmp: Path, issuer: Issuer) -> None:
    """Without [auth], loopback serves as before (no token asked)."""
    g = AuthGateway("loopback", write_config(tmp, "loopback", ""), tmp)
    try:
        await g.start()
        async with g.client(None) as s:
            await list_and_echo(s, "no auth on loopback")
        status, _, _ = await http("GET", f"{g.base}/readyz")
        expect(status == 200, f"/readyz without [auth]: {status}")
    finally:
        g.stop()


# ---------------------------------------------------------------- pins, limits, resources and prompts

POLL_DEADLINE = 15.0  # failure guard of each wait for the gateway to catch up (polled)


def static_auth() -> str:
    return "[auth]\n" + static_tokens()


@contextlib.asynccontextmanager
async def own_gateway(name: str, config: Path, tmp: Path):
    """A gateway of one check: started, yielded, then stopped by SIGINT, which must end it
    with exit 0 and leave no process of its group alive (a failed check just stops it)."""
    g = AuthGateway(name, config, tmp)
    try:
        await g.start()
        yield g
    except BaseException:
        g.stop()
        raise
    code, left = await anyio.to_thread.run_sync(g.stop)
    expect(code == 0, f"the {name} gateway exited with {code} after SIGINT (expected 0); stderr: {g.stderr_tail()}")
    expect(not left, f"processes of the {name} gateway's group still alive 10 s after it exited: {left}")


async def poll(what: str, probe, deadline: float = POLL_DEADLINE):
    """Awaits `probe()` until it returns something other than None (returned), every
    50 ms; `probe` raises CheckFailed on an answer that is wrong rather than early. The
    deadline only guards against a gateway that never gets there."""
    until = time.monotonic() + deadline
    while True:
        got = await probe()
        if got is not None:
            return got
        if time.monotonic() > until:
            raise CheckFailed(f"{what}: not within {deadline:.0f} s")
        await anyio.sleep(0.05)


async def listed(s: ClientSession) -> dict[str, dict]:
    return {t.name: dump(t) for t in (await s.list_tools()).tools}


async def check_pins_withhold_then_approve(tmp: Path, issuer: Issuer) -> None:
    """`[pins]` (on_change withhold, the default): a tool whose description changes after it
    was pinned is no longer listed and its calls fail with TOOL_CHANGED, until `tools-mcp
    pins approve` and a SIGHUP."""
    cfg = write_config(tmp, "pins", static_auth(), '[pins]\npath = "pins.json"\n', mode="rug_pull")
    pin_file = tmp / "pins.json"  # relative to the config's folder
    async with own_gateway("pins", cfg, tmp) as g, g.client(TOKENS["alice"]) as s:
        tools = await listed(s)
        expect({"fake__echo", "fake__rug_pull"} <= tools.keys(), f"listed {sorted(tools)}")
        before = tools["fake__echo"].get("description")
        r = dump(await s.call_tool("fake__echo", {"text": "pinned"}))
        expect(r.get("isError") is False and texts(r) == "pinned", f"fake__echo before the rug pull: {short(r)}")
        expect(pin_file.exists(), f"no pin file at {pin_file} after the first listing: {sorted(p.name for p in tmp.iterdir())}")
        r = dump(await s.call_tool("fake__rug_pull", {}))
        expect(r.get("isError") is False and texts(r) == "pulled", f"fake__rug_pull: {short(r)}")

        async def withheld():
            r = dump(await s.call_tool("fake__echo", {"text": "after the pull"}))
            if r.get("isError") is False and texts(r) == "after the pull":
                return None  # the gateway has not listed the server again yet
            expect_error_code(r, "TOOL_CHANGED")
            return r

        r = await poll("a call of fake__echo failing with TOOL_CHANGED after the rug pull", withheld)
        text = texts(r)
        expect("description" in text and "pins approve" in text,
               f"the TOOL_CHANGED text names neither `description` nor `pins approve`: {short(r)}")

        async def unlisted():
            return True if "fake__echo" not in await listed(s) else None

        await poll("fake__echo gone from tools/list once withheld", unlisted)
        expect_error_code(dump(await s.call_tool("fake__echo", {"text": "still"})), "TOOL_CHANGED")

        with anyio.fail_after(30):
            proc = await anyio.run_process([BIN, "pins", "approve", "fake__echo", "--config", str(cfg)],
                                           check=False, stdin=subprocess.DEVNULL)
        out, err = proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
        expect(proc.returncode == 0 and out.strip() == "fake__echo: approved (description)",
               f"`pins approve fake__echo`: exit {proc.returncode}, stdout {out!r}, stderr {err!r}")
        g.proc.send_signal(signal.SIGHUP)  # our own child, by its PID

        async def approved():
            tools = await listed(s)
            if "fake__echo" not in tools:
                return None
            r = dump(await s.call_tool("fake__echo", {"text": "approved"}))
            if r.get("isError") is True and (r.get("_meta") or {}).get("code") == "TOOL_CHANGED":
                return None  # listed, the hook not yet told
            expect(r.get("isError") is False and texts(r) == "approved", f"fake__echo after the approval: {short(r)}")
            return tools["fake__echo"]

        echo = await poll("fake__echo listed and callable again after `pins approve` and SIGHUP", approved)
        after = echo.get("description") or ""
        expect(after != before and "send every file" in after,
               f"the description listed after the approval is not the approved one: {after!r} (before: {before!r})")
        expect("reloaded the policy, limits and pins" in g.stderr_path.read_text(errors="replace"),
               f"no reload line on the gateway's stderr: {g.stderr_tail()}")


async def check_rate_limited(tmp: Path, issuer: Issuer) -> None:
    """`[limits] "fake__echo" = { rate = "3/h" }`: per principal (the default), each static
    token's principal gets 3 calls, the 4th fails with RATE_LIMITED."""
    cfg = write_config(tmp, "limits", static_auth(), '[limits]\n"fake__echo" = { rate = "3/h" }\n')
    async with own_gateway("limits", cfg, tmp) as g:
        for who in ("alice", "bob"):
            async with g.client(TOKENS[who]) as s:
                for n in range(1, 4):
                    word = f"{who} {n}"
                    r = dump(await s.call_tool("fake__echo", {"text": word}))
                    expect(r.get("isError") is False and texts(r) == word, f"{who}'s call {n} of 3: {short(r)}")
                r = dump(await s.call_tool("fake__echo", {"text": f"{who} 4"}))
                expect_error_code(r, "RATE_LIMITED")
                expect("retry after" in texts(r), f"{who}'s 4th call: the text does not say `retry after`: {short(r)}")


async def check_resources_and_prompts(tmp: Path, issuer: Issuer) -> None:
    """The upstream's resources, templates and prompts through the gateway: names prefixed
    with the server's, URIs kept, reads routed (a listed URI or a template's), the policy
    applied to `<server>__<uri>`, and one audit line per read and per prompt."""
    log = tmp / "production-resources-audit.jsonl"
    cfg = write_config(tmp, "resources", static_auth(),
                       f'[policy]\ndeny = ["fake__fake://secret/*"]\n[audit]\npath = "{log.name}"\n',
                       mode="resources")
    async with own_gateway("resources", cfg, tmp) as g, g.client(TOKENS["alice"]) as s:
        resources = {str(r.uri): r.name for r in (await s.list_resources()).resources}
        want = {"fake://notes/1": "fake__note1", "fake://secret/1": "fake__secret1"}
        expect(resources == want, f"resources/list: {resources}, expected {want}")
        templates = [t.uri_template for t in (await s.list_resource_templates()).resource_templates]
        expect("fake://notes/{id}" in templates, f"resources/templates/list: {templates}")
        for uri, want_text in [("fake://notes/1", "note 1"), ("fake://notes/7", "note 7")]:
            r = dump(await s.read_resource(uri))
            got = [c.get("text") for c in r.get("contents", [])]
            expect(got == [want_text], f"resources/read {uri}: {short(r)}")
        try:
            r = await s.read_resource("fake://secret/1")
        except MCPError as e:
            expect("denied" in str(e).lower(), f"the refusal of fake://secret/1 does not say denied: {e} (data {e.data!r})")
            expect((e.data or {}).get("code") == "DENIED", f"the refusal's data has no code DENIED: {e.data!r}")
        else:
            raise CheckFailed(f"fake://secret/1 (denied by the policy) was read: {short(dump(r))}")
        prompts = [p.name for p in (await s.list_prompts()).prompts]
        expect("fake__greet" in prompts, f"prompts/list: {prompts}")
        r = dump(await s.get_prompt("fake__greet", {"who": "ann"}))
        got = [(m.get("content") or {}).get("text") for m in r.get("messages", [])]
        expect(got == ["Hello ann"], f"prompts/get fake__greet: {short(r)}")
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    reads = [(line.get("name"), line.get("decision"), line.get("principal")) for line in lines if line.get("kind") == "resource"]
    want_reads = [("fake__fake://notes/1", "allow", "alice"), ("fake__fake://notes/7", "allow", "alice"),
                  ("fake__fake://secret/1", "deny", "alice")]
    expect(reads == want_reads, f"the audit's resource lines (name, decision, principal): {reads}, expected {want_reads}")
    fetched = [(line.get("name"), line.get("decision")) for line in lines if line.get("kind") == "prompt"]
    expect(fetched == [("fake__greet", "allow")], f"the audit's prompt lines (name, decision): {fetched}")


# ---------------------------------------------------------------- the audit log under a kill

AUDIT_RESPONSES = 10_000  # successful calls the load reaches (at least)
AUDIT_CLIENTS = 16
AUDIT_KILL_AT = 3_000  # successful calls before the SIGKILL
AUDIT_RETRIES = 5  # failed calls in a row a client tolerates (each with a new nonce)
AUDIT_TIMEOUT = 300.0  # failure guard of the whole check


class AuditLoad:
    """The state the clients of `audit_survives_kill` share with the task that kills and
    restarts the gateway."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.generation = 0  # bumped at the kill: a call sent before it may be lost
        self.restarted: anyio.Event | None = None  # set when the restarted gateway is up
        self.kill_due = anyio.Event()
        self.sent: set[str] = set()
        self.answered: dict[str, int] = {}  # nonce → the generation that answered it
        self.lost: set[str] = set()  # failed, and a kill came while in flight
        self.unexpected: list[str] = []  # failed with no kill to blame
        self.killed_at: tuple[float, int] | None = None  # (seconds into the load, responses)
        self.restart_seconds: float | None = None

    async def wait_up(self) -> None:
        while self.restarted is not None:
            await self.restarted.wait()


async def audit_client(load: AuditLoad, c: int) -> None:
    """Client `c`: its own HTTP client (connections), sequential `tools/call`s of `fake__echo`,
    each with a new nonce, until the load has its responses. A failed call is never resent:
    the next one has a new nonce."""
    headers = {**bearer(TOKENS["alice"]), "Accept": ACCEPT}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0), trust_env=False) as http:
        await audit_calls(load, http, c)


async def audit_calls(load: AuditLoad, http: httpx2.AsyncClient, c: int) -> None:
    n = in_a_row = 0
    while len(load.answered) < AUDIT_RESPONSES:
        await load.wait_up()
        n += 1
        nonce = f"c{c}-{n}"
        generation, url = load.generation, load.url
        load.sent.add(nonce)
        body = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "fake__echo", "arguments": {"text": nonce}}}
        why = None
        try:
            r = await http.post(url, json=body)
            if r.status_code != 200:
                why = f"status {r.status_code}: {short(r.text, 200)}"
            else:
                answer = next((m for m in jsonrpc_messages(r.content) if m.get("id") == n), None)
                result = (answer or {}).get("result") or {}
                if result.get("isError") is not False or texts(result) != nonce:
                    why = f"not the echo of {nonce}: {short(r.text, 300)}"
        except httpx2.HTTPError as e:
            why = describe(e)
        if why is None:
            load.answered[nonce] = generation
            in_a_row = 0
            if len(load.answered) >= AUDIT_KILL_AT:
                load.kill_due.set()
            continue
        if load.generation != generation or load.restarted is not None:
            load.lost.add(nonce)  # in flight at the kill
        else:
            load.unexpected.append(f"{nonce}: {why}")
        in_a_row += 1
        expect(in_a_row <= AUDIT_RETRIES, f"client {c}: {in_a_row} failed calls in a row, the last {nonce}: {why}")


async def audit_killer(load: AuditLoad, gateways: list[AuthGateway], config: Path, tmp: Path,
                       began: float) -> None:
    """At AUDIT_KILL_AT responses: SIGKILL the gateway, start it again on the same config
    (another port), and point the clients at it."""
    await load.kill_due.wait()
    old = gateways[-1]
    load.restarted = anyio.Event()
    load.generation += 1
    old.proc.kill()  # SIGKILL, to our own child's PID
    load.killed_at = (time.monotonic() - began, len(load.answered))
    t = time.monotonic()
    code, left = await anyio.to_thread.run_sync(old.stop)  # reaps it; its upstream exits on EOF
    expect(code == -signal.SIGKILL, f"the killed gateway exited with {code}")
    expect(not left, f"processes of the killed gateway's group still alive 10 s later: {left}")
    new = AuthGateway("audit", config, tmp, extra=["--stateless"])
    new.stderr_path = tmp / f"{config.stem}.restarted.gateway.stderr"
    gateways.append(new)
    await new.start()
    load.restart_seconds = time.monotonic() - t
    load.url = new.url
    restarted, load.restarted = load.restarted, None
    restarted.set()


async def check_audit_survives_kill(tmp: Path, gateways: list[AuthGateway], shutdown: dict) -> None:
    """The audit log's promise: under load (AUDIT_CLIENTS clients, AUDIT_RESPONSES calls)
    with the gateway SIGKILLed once and restarted on the same file, every call that got a
    response has exactly one line, and no line is torn. Stateless HTTP: every request stands
    alone, so a client only has to move to the new URL after the restart."""
    log = tmp / "production-audit.jsonl"
    auth = f'[auth]\ntokens = [{{ principal = "alice", sha256 = "{sha256(TOKENS["alice"])}", scopes = ["tools"] }}]\n'
    config = write_config(tmp, "audit", auth, f'[audit]\npath = "{log.name}"\narguments = true\n')
    first = AuthGateway("audit", config, tmp, extra=["--stateless"])
    gateways.append(first)
    await first.start()
    load = AuditLoad(first.url)
    began = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(audit_killer, load, gateways, config, tmp, began)
        async with anyio.create_task_group() as clients:
            for c in range(AUDIT_CLIENTS):
                clients.start_soon(audit_client, load, c)
        tg.cancel_scope.cancel()  # the killer, if the load ended before it ran
    load_seconds = time.monotonic() - began
    code, left = await anyio.to_thread.run_sync(gateways[-1].stop)  # SIGINT
    shutdown["audit"] = (code, left, gateways[-1])
    expect(load.killed_at is not None and load.restart_seconds is not None,
           f"the gateway was not killed and restarted ({len(load.answered)} responses)")
    expect(len(load.answered) >= AUDIT_RESPONSES, f"only {len(load.answered)} responses")

    summary, problems = audit_findings(log.read_bytes(), load, load_seconds)
    print(f"# {P}/audit_survives_kill: {summary}", flush=True)
    expect(not problems, "; ".join(problems) + f" ({summary})")


def audit_findings(data: bytes, load: AuditLoad, load_seconds: float) -> tuple[str, list[str]]:
    """The numbers of the audit file `data` after `load`, and what is wrong with it."""
    # Every line whole JSON, the last one ended.
    raw = data.split(b"\n")
    tail = raw.pop()  # b"" when the file ends with a newline
    torn = [] if tail == b"" else [f"last line without a newline: {short(tail.decode(errors='replace'), 200)}"]
    lines: list[dict] = []
    for i, text in enumerate(raw, 1):
        try:
            line = json.loads(text)
            expect(isinstance(line, dict), "not an object")
            lines.append(line)
        except (ValueError, CheckFailed):
            torn.append(f"line {i}: {short(text.decode(errors='replace'), 200)}")
    per_nonce: dict[str, list[dict]] = {}
    for line in lines:
        per_nonce.setdefault(str((line.get("arguments") or {}).get("text")), []).append(line)
    missing = [n for n in load.answered if n not in per_nonce]
    doubled = {n: len(ls) for n, ls in per_nonce.items() if len(ls) > 1}
    strangers = [n for n in per_nonce if n not in load.sent]
    unanswered = [n for n in per_nonce if n in load.sent and n not in load.answered]
    principals = {line.get("principal") for line in lines}
    wrong = [short(ls[0], 300) for n, ls in per_nonce.items() if n in load.answered and not (
        ls[0].get("tool") == "fake__echo" and ls[0].get("decision") == "allow" and ls[0].get("code") is None)]
    # The lines of calls each gateway answered carry that gateway's instance, and they differ:
    # the restarted gateway appended to the file the killed one wrote.
    instances = [{ls[0].get("instance") for n, ls in per_nonce.items() if load.answered.get(n) == gen}
                 for gen in (0, 1)]
    calls = {(line.get("session"), line.get("call_id")) for line in lines}
    summary = (f"{len(load.answered)} responses ({len(load.sent)} calls sent, {len(load.lost)} lost at the kill, "
               f"{len(load.unexpected)} other failures), {len(lines)} lines, {len(unanswered)} lines of calls "
               f"without a response, {len(torn)} torn; killed after {load.killed_at[0]:.1f} s at "
               f"{load.killed_at[1]} responses, restarted in {load.restart_seconds:.1f} s; load {load_seconds:.1f} s "
               f"({len(load.answered) / load_seconds:.0f} calls/s); {len(calls)} distinct (session, call_id)")
    problems = []
    if torn:
        problems.append(f"{len(torn)} torn lines, e.g. {torn[:3]}")
    if missing:
        problems.append(f"{len(missing)} answered calls have no line, e.g. {sorted(missing)[:5]}")
    if doubled:
        problems.append(f"{len(doubled)} calls have more than one line, e.g. {dict(list(doubled.items())[:5])}")
    if strangers:
        problems.append(f"{len(strangers)} lines of no call sent, e.g. {strangers[:5]}")
    if principals != {"alice"}:
        problems.append(f"principals {sorted(map(str, principals))}, expected only alice")
    if wrong:
        problems.append(f"{len(wrong)} lines of answered calls are not allow/fake__echo/no code, e.g. {wrong[:2]}")
    if not (len(instances[0]) == len(instances[1]) == 1 and instances[0] != instances[1]):
        problems.append(f"instances of the lines before/after the kill: {instances}")
    if load.unexpected:
        problems.append(f"{len(load.unexpected)} calls failed with no kill in flight, e.g. {load.unexpected[:3]}")
    return summary, problems


async def run_check_within(name: str, timeout: float, fn, *args) -> None:
    """`run_check` with another failure guard (the load runs longer than CHECK_TIMEOUT)."""
    try:
        with anyio.fail_after(timeout):
            await fn(*args)
    except TimeoutError:
        record(name, f"timed out after {timeout}s (failure guard)")
        return
    except Exception as e:  # noqa: BLE001 - a crashing check is a failed check
        record(name, short(describe(e), 1500))
        return
    record(name, None)


async def run_audit(tmp: Path) -> None:
    gateways: list[AuthGateway] = []
    shutdown: dict = {}
    try:
        await run_check_within(f"{P}/audit_survives_kill", AUDIT_TIMEOUT, check_audit_survives_kill,
                               tmp, gateways, shutdown)
    finally:
        for g in gateways:  # left running by a failure
            if g.proc is not None and g.proc.poll() is None:
                g.stop()
    if "audit" in shutdown:
        code, left, g = shutdown["audit"]
        detail = None
        if code != 0:
            detail = f"exit code {code} after SIGINT (expected 0); stderr: {g.stderr_tail()}"
        elif left:
            detail = f"processes of the gateway's group still alive 10 s after it exited: {left}"
        record(f"{P}/shutdown_audit", detail)


# ---------------------------------------------------------------- driver


async def started(name: str, g: AuthGateway) -> bool:
    try:
        with anyio.fail_after(START_TIMEOUT + 5):
            await g.start()
    except Exception as e:  # noqa: BLE001
        record(f"{P}/start_{name}", f"{describe(e)}; stderr: {g.stderr_tail()}")
        return False
    return True


def stopped(name: str, g: AuthGateway) -> None:
    code, left = g.stop()
    detail = None
    if code != 0:
        detail = f"exit code {code} after SIGINT (expected 0); stderr: {g.stderr_tail()}"
    elif left:
        detail = f"processes of the gateway's group still alive 10 s after it exited: {left}"
    record(f"{P}/shutdown_{name}", detail)


async def run_all(tmp: Path, issuer: Issuer) -> None:
    # A bound socket that never listens: connecting to it is refused, and no one else gets the port.
    closed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    closed.bind(("127.0.0.1", 0))
    closed_url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    gateways = {
        "main": AuthGateway("main", write_config(tmp, "main", auth_section(issuer), POLICY), tmp),
        "resource": AuthGateway(
            "resource", write_config(tmp, "resource", auth_section(issuer, audience=None, resource=RESOURCE)), tmp
        ),
        "jwks_down": AuthGateway(
            "jwks_down",
            write_config(tmp, "jwks-down", auth_section(issuer).replace(f'"{issuer.url}/jwks.json"', f'"{closed_url}/jwks.json"')),
            tmp,
        ),
        "jwks_garbage": AuthGateway("jwks_garbage", write_config(tmp, "jwks-garbage", auth_section(issuer, jwks="/garbage.json")), tmp),
    }
    up: dict[str, AuthGateway] = {}
    try:
        for name, g in gateways.items():
            if await started(name, g):
                up[name] = g
        if "main" in up:
            g = up["main"]
            await run_check(f"{P}/health", check_health, g, issuer)
            await run_check(f"{P}/no_token_401", check_no_token, g, issuer)
            await run_check(f"{P}/no_token_sdk_refused", check_no_token_sdk, g, issuer)
            await run_check(f"{P}/static_token", check_static_token, g, issuer)
            await run_check(f"{P}/bad_static_token", check_bad_static_token, g, issuer)
            await run_check(f"{P}/jwt_rs256", check_jwt, g, issuer, "RS256")
            await run_check(f"{P}/jwt_es256", check_jwt, g, issuer, "ES256")
            await run_check(f"{P}/principal_rule", check_principal_rule, g, issuer)
            await run_check(f"{P}/principal_rule_jwt", check_principal_rule_jwt, g, issuer)
            await run_check(f"{P}/scope_allow_list", check_scope_allow_list, g, issuer)
            for name, token, needle in bad_jwts(issuer):
                await run_check(f"{P}/{name}", expect_invalid_token, g, token, name, needle)
            await run_check(f"{P}/session_other_principal_403", check_session_principal, g, issuer)
            await run_check(f"{P}/session_other_issuer_403", check_session_other_issuer, g, issuer)
            await run_check(f"{P}/jwks_key_rotation", check_key_rotation, g, issuer)
        if "resource" in up:
            await run_check(f"{P}/resource_is_audience", check_resource_audience, up["resource"], issuer)
        if "jwks_down" in up:
            await run_check(f"{P}/jwks_down", check_jwks_unavailable, up["jwks_down"], issuer, "down")
        if "jwks_garbage" in up:
            await run_check(f"{P}/jwks_garbage", check_jwks_unavailable, up["jwks_garbage"], issuer, "garbage")
    finally:
        for name, g in up.items():
            stopped(name, g)
        closed.close()
    await run_check(f"{P}/check_valid_config", check_config_valid, tmp, issuer)
    await run_check(f"{P}/check_unknown_auth_key", check_config_unknown_key, tmp, issuer)
    await run_check(f"{P}/check_bad_sha256", check_config_bad_sha256, tmp, issuer)
    await run_check(f"{P}/check_hmac_algorithm", check_config_hmac, tmp, issuer)
    await run_check(f"{P}/non_loopback_without_auth_refused", check_non_loopback_refused, tmp, issuer)
    await run_check(f"{P}/non_loopback_insecure_no_auth", check_non_loopback_insecure, tmp, issuer)
    await run_check(f"{P}/loopback_without_auth", check_loopback_no_auth, tmp, issuer)
    await run_check(f"{P}/pins_withhold_then_approve", check_pins_withhold_then_approve, tmp, issuer)
    await run_check(f"{P}/rate_limited", check_rate_limited, tmp, issuer)
    await run_check(f"{P}/resources_and_prompts", check_resources_and_prompts, tmp, issuer)
    await run_audit(tmp)


async def main() -> int:
    if not Path(BIN).exists():
        print(f"FAIL setup: TOOLS_MCP_BIN={BIN} does not exist", flush=True)
        return 1
    st = os.stat(BIN)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime))
    print(f"# binary {BIN} ({st.st_size} bytes, modified {stamp})", flush=True)
    started_at = time.monotonic()
    issuer = Issuer()
    try:
        with tempfile.TemporaryDirectory(prefix="tools-mcp-production-") as d:
            tmp = Path(d)
            await run_all(tmp, issuer)
            keep_logs(tmp)
    finally:
        issuer.stop()
    return summary(started_at)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
