//! The gateway's TOML configuration: parsed with spans, so every error names its key and
//! line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use toml::Spanned;
use tools_runtime::tools::PresentationMode;

use super::path::normalize_path;
use super::sections::{self, RawAudit, RawAuth, RawLimit, RawOtel, RawPins};
use crate::audit::AuditConfig;
use crate::auth::AuthConfig;
use crate::{Error, ServerSpec, check_server_name};
use tools_runtime::hooks::Principal;

/// The Code Mode language of the gateway's `run_code`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// TypeScript on embedded QuickJS.
    #[default]
    Typescript,
    /// Python in the bubblewrap sandbox.
    Python,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Mode {
    #[default]
    Native,
    Code,
    Both,
}

/// What a policy rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Refuse the call (`DENIED`).
    Deny,
    /// Ask the client (elicitation) or the host's approval service (`APPROVAL_DENIED` when
    /// nobody can answer).
    Ask,
    /// Let it through.
    Allow,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    language: Language,
    concurrency: Option<Spanned<i64>>,
    output_budget: Option<Spanned<i64>>,
    #[serde(default)]
    deferred: Vec<Spanned<String>>,
    #[serde(default)]
    servers: BTreeMap<Spanned<String>, Spanned<RawServer>>,
    #[serde(default)]
    policy: RawPolicy,
    #[serde(default)]
    budgets: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    upstream: RawUpstream,
    auth: Option<RawAuth>,
    audit: Option<RawAudit>,
    #[serde(default)]
    limits: BTreeMap<Spanned<String>, Spanned<RawLimit>>,
    pins: Option<RawPins>,
    otel: Option<RawOtel>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUpstream {
    handshake_timeout: Option<Spanned<String>>,
    list_timeout: Option<Spanned<String>>,
    call_timeout: Option<Spanned<String>>,
    max_content_blocks: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Option<Spanned<Vec<String>>>,
    url: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    #[serde(default = "yes")]
    restart: bool,
    #[serde(default)]
    deferred: bool,
}

fn yes() -> bool {
    true
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    deny: Vec<Spanned<String>>,
    #[serde(default)]
    ask: Vec<Spanned<String>>,
    destructive: Option<Decision>,
    root: Option<Spanned<String>>,
    #[serde(default)]
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    tool: Spanned<String>,
    argument: Option<Spanned<String>>,
    matches: Option<Spanned<String>>,
    principal: Option<Spanned<String>>,
    scopes: Option<Vec<String>>,
    decision: Decision,
    reason: Option<String>,
}

/// One upstream server of the gateway.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Its name (the prefix of its tools' names).
    pub name: String,
    /// How to reach it.
    pub spec: ServerSpec,
    /// Whether a server found disconnected is restarted when a call arrives (default yes).
    pub restart: bool,
    /// Whether every tool of the server is deferred (`deferred = true`): not listed until
    /// a `search_tools` call of the MCP session finds and loads it (default no).
    pub deferred: bool,
}

/// A glob over tool names or values, with the text it was written as.
#[derive(Clone, Debug)]
pub struct Pattern {
    text: String,
    matcher: GlobMatcher,
}

impl Pattern {
    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `text` matches (`*` and `?` match any character, `/` included).
    pub fn is_match(&self, text: &str) -> bool {
        self.matcher.is_match(text)
    }
}

/// Whom a rule applies to: principals whose subject matches `principal` and who hold
/// every scope of `scopes`. Both empty: everyone, calls without a principal included.
#[derive(Clone, Debug, Default)]
pub struct Who {
    /// A glob over the principal's subject.
    pub principal: Option<Pattern>,
    /// Scopes the principal must all hold.
    pub scopes: Vec<String>,
}

impl Who {
    /// Whether the rule says nothing about identity.
    pub fn is_anyone(&self) -> bool {
        self.principal.is_none() && self.scopes.is_empty()
    }

    /// Whether a call made for `principal` is one the rule applies to. A call without a
    /// principal (stdio, or HTTP without `[auth]`) is only covered by a rule for anyone.
    pub fn admits(&self, principal: Option<&Principal>) -> bool {
        if self.is_anyone() {
            return true;
        }
        let Some(principal) = principal else {
            return false;
        };
        self.principal
            .as_ref()
            .is_none_or(|p| p.is_match(principal.subject()))
            && self.scopes.iter().all(|s| principal.has_scope(s))
    }

    /// The rule's identity condition in words (`principal "alice*" with scopes ["a"]`).
    pub fn describe(&self) -> String {
        match (&self.principal, self.scopes.is_empty()) {
            (Some(p), true) => format!("principal {:?}", p.as_str()),
            (Some(p), false) => format!("principal {:?} with scopes {:?}", p.as_str(), self.scopes),
            (None, false) => format!("principals with scopes {:?}", self.scopes),
            (None, true) => "anyone".to_owned(),
        }
    }
}

/// An identity rule: calls of tools matching `tool` made for the principals of `who`.
/// `deny` and `ask` decide those calls; `allow` rules are an allow-list: a tool that some
/// `allow` identity rule names may be called only by the principals one of them admits.
#[derive(Clone, Debug)]
pub struct IdentityRule {
    /// The tools it applies to.
    pub tool: Pattern,
    /// Whom it applies to.
    pub who: Who,
    /// What it decides.
    pub decision: Decision,
    /// The reason given to the model or the approver.
    pub reason: Option<String>,
}

/// An argument rule: calls of tools matching `tool` whose argument at `argument` (a dotted
/// path; array items by index) is, or holds anywhere inside it, a string, number or boolean
/// whose text matches `matches`: as given, or, when `matches` contains a `/`, as a lexically
/// normalized path (relative texts resolved against [`PolicyConfig::root`]). With `who`,
/// only calls made for those principals.
#[derive(Clone, Debug)]
pub struct ArgumentRule {
    /// The tools it applies to.
    pub tool: Pattern,
    /// Whom it applies to.
    pub who: Who,
    /// The path of the argument, split at dots.
    pub argument: Vec<String>,
    /// The pattern over the argument's text.
    pub matches: Pattern,
    /// What it decides.
    pub decision: Decision,
    /// The reason given to the model or the approver.
    pub reason: Option<String>,
    /// What normalized values are compared with: `None` when `matches` has no `/`.
    path: Option<PathMatcher>,
}

impl ArgumentRule {
    /// The normalized path of `text` when it matches this rule's pattern as a path (and the
    /// pattern looks like a path), else `None`. Compares the normalized path only; the text
    /// as given is [`ArgumentRule::matches`]' business.
    pub(crate) fn path_match(&self, text: &str) -> Option<String> {
        let path = self.path.as_ref()?;
        let normalized = normalize_path(&path.root, text);
        path.globs.is_match(&normalized).then_some(normalized)
    }
}

/// The globs a path pattern compares normalized values with, and the root relative values
/// resolve against (kept with the globs, so both always agree).
#[derive(Clone, Debug)]
struct PathMatcher {
    root: String,
    globs: GlobSet,
}

impl PathMatcher {
    /// The matcher of `pattern` under `root` (normalized, absolute), or `None` when the
    /// pattern has no `/`. The set holds the pattern, the pattern resolved against `root`
    /// when it is relative, and, for each of those ending in `/**`, `/*` or `/`, the
    /// directory it names (the pattern without that ending, repeatedly), so that `/etc/**`
    /// and `/etc/*` also match `/etc`.
    fn new(pattern: &str, root: &str) -> Result<Option<PathMatcher>, globset::Error> {
        if !pattern.contains('/') {
            return Ok(None);
        }
        let mut forms = vec![pattern.to_owned()];
        if !pattern.starts_with('/') {
            forms.push(format!(
                "{}/{pattern}",
                globset::escape(root.trim_end_matches('/'))
            ));
        }
        let mut globs = GlobSetBuilder::new();
        for form in &forms {
            let mut form = form.as_str();
            globs.add(Glob::new(form)?);
            while let Some(dir) = ["/**", "/*", "/"]
                .iter()
                .find_map(|end| form.strip_suffix(end))
                .filter(|dir| !dir.is_empty())
            {
                globs.add(Glob::new(dir)?);
                form = dir;
            }
        }
        Ok(Some(PathMatcher {
            root: root.to_owned(),
            globs: globs.build()?,
        }))
    }
}

/// The gateway's policy.
#[derive(Clone, Debug)]
pub struct PolicyConfig {
    /// Tools refused by name.
    pub deny: Vec<Pattern>,
    /// Tools that need approval, by name.
    pub ask: Vec<Pattern>,
    /// What a tool whose server marks it `destructiveHint: true` gets (default: allow).
    pub destructive: Option<Decision>,
    /// Rules over argument values.
    pub rules: Vec<ArgumentRule>,
    /// Rules over who calls (`[[policy.rules]]` without `argument`).
    pub identity: Vec<IdentityRule>,
    /// The folder relative argument values resolve against before a path pattern compares
    /// them (`[policy] root`, default `/`): absolute and lexically normalized. Each rule
    /// keeps the root it was parsed under.
    pub root: String,
}

impl Default for PolicyConfig {
    fn default() -> PolicyConfig {
        PolicyConfig {
            deny: Vec::new(),
            ask: Vec::new(),
            destructive: None,
            rules: Vec::new(),
            identity: Vec::new(),
            root: "/".to_owned(),
        }
    }
}

/// The deadlines of the requests the gateway makes to its upstream servers (`[upstream]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpstreamConfig {
    /// How long starting a server and its MCP handshake may take (`handshake_timeout`,
    /// default 30 s).
    pub handshake_timeout: Duration,
    /// How long one listing of a server's tools may take (`list_timeout`, default 30 s).
    pub list_timeout: Duration,
    /// The timeout budget of a call of an imported tool that no `[budgets]` pattern
    /// matches (`call_timeout`, default 60 s).
    pub call_timeout: Duration,
    /// The most content blocks one result of an imported tool may carry
    /// (`max_content_blocks`, default 10 000); a result with more ends its call as
    /// `INVALID_TOOL_OUTPUT` (see [`crate::ImportOptions::max_content_blocks`]).
    pub max_content_blocks: usize,
}

impl Default for UpstreamConfig {
    fn default() -> UpstreamConfig {
        UpstreamConfig {
            handshake_timeout: crate::DEFAULT_HANDSHAKE_TIMEOUT,
            list_timeout: crate::DEFAULT_LIST_TIMEOUT,
            call_timeout: crate::DEFAULT_CALL_TIMEOUT,
            max_content_blocks: crate::DEFAULT_MAX_CONTENT_BLOCKS,
        }
    }
}

/// A parsed and checked gateway configuration.
#[derive(Clone, Debug)]
pub struct GatewayConfig {
    /// The presentation mode served (`native`, `code`, `both`).
    pub mode: PresentationMode,
    /// The Code Mode language.
    pub language: Language,
    /// How many calls of one batch or one program may run at once (default 10).
    pub concurrency: Option<usize>,
    /// How many bytes of a call's output the client's model reads (the rest is kept for
    /// `read_result`); `None`: no budget.
    pub output_budget: Option<usize>,
    /// The upstream servers, by name.
    pub servers: Vec<ServerConfig>,
    /// Globs over exposed tool names (`server__tool`) whose tools are deferred (the
    /// top-level `deferred = […]`), besides the tools of the servers marked `deferred`.
    pub deferred: Vec<Pattern>,
    /// The policy.
    pub policy: PolicyConfig,
    /// Timeout budgets of imported tools, first match wins (in the file's order); a tool
    /// none matches has [`UpstreamConfig::call_timeout`].
    pub budgets: Vec<(Pattern, Duration)>,
    /// The deadlines of upstream requests.
    pub upstream: UpstreamConfig,
    /// Who may call over HTTP (`[auth]`); `None`: nobody is asked (loopback use only, see
    /// the binary's `--insecure-no-auth`).
    pub auth: Option<AuthConfig>,
    /// The audit log (`[audit]`); `None`: no audit.
    pub audit: Option<AuditConfig>,
    /// Call limits (`[limits]`), each over the tools its key matches.
    pub limits: Vec<crate::limits::Limit>,
    /// The pin file and what a changed tool gets (`[pins]`); `None`: no pins.
    pub pins: Option<(PathBuf, crate::pins::OnChange)>,
    /// Where spans go (`[otel]`); `None`: only where `OTEL_EXPORTER_OTLP_ENDPOINT` says, if
    /// set.
    pub otel: Option<crate::otel::OtelConfig>,
}

impl GatewayConfig {
    /// Reads and checks the configuration file at `path`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`]: the file cannot be read, or is not valid (the message names the
    /// key and its line).
    pub fn load(path: &Path) -> Result<GatewayConfig, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Config {
            path: path.display().to_string(),
            message: format!("cannot be read: {e}"),
        })?;
        GatewayConfig::parse(&text, path)
    }

    /// Parses and checks `text` (`path` names it in errors; relative `cwd`s resolve
    /// against its folder).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the key and its line.
    pub fn parse(text: &str, path: &Path) -> Result<GatewayConfig, Error> {
        let at = |span: std::ops::Range<usize>, key: &str, message: String| Error::Config {
            path: path.display().to_string(),
            message: format!("line {}: `{key}`: {message}", line_of(text, span.start)),
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start));
            Error::Config {
                path: path.display().to_string(),
                message: match line {
                    Some(line) => format!("line {line}: {}", e.message()),
                    None => e.message().to_owned(),
                },
            }
        })?;
        let mode = match raw.mode {
            Mode::Native => PresentationMode::Native,
            Mode::Code => PresentationMode::Code,
            Mode::Both => PresentationMode::Both,
        };
        let concurrency = match raw.concurrency {
            None => None,
            Some(c) => {
                let n = usize::try_from(*c.get_ref()).ok().filter(|n| *n > 0);
                Some(n.ok_or_else(|| {
                    at(c.span(), "concurrency", "must be a positive integer".into())
                })?)
            }
        };
        let output_budget = match raw.output_budget {
            None => None,
            Some(b) => {
                let n = usize::try_from(*b.get_ref()).ok().filter(|n| *n >= 512);
                Some(n.ok_or_else(|| {
                    at(
                        b.span(),
                        "output_budget",
                        "must be a number of bytes, at least 512".into(),
                    )
                })?)
            }
        };
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut servers = Vec::new();
        for (name, server) in raw.servers {
            let key = format!("servers.{}", name.get_ref());
            check_server_name(name.get_ref()).map_err(|e| at(name.span(), &key, e.to_string()))?;
            let span = server.span();
            let server = server.into_inner();
            let spec = match (server.command, server.url) {
                (Some(command), None) => {
                    let span = command.span();
                    let mut words = command.into_inner().into_iter();
                    let program = words.next().ok_or_else(|| {
                        at(span, &format!("{key}.command"), "names no program".into())
                    })?;
                    let mut spec = ServerSpec::command(program, words);
                    for (k, v) in server.env {
                        spec = spec.with_env(k, v);
                    }
                    if let Some(cwd) = server.cwd {
                        spec = spec.with_cwd(resolve(&base, &cwd));
                    }
                    spec
                }
                (None, Some(url)) => {
                    let text = url.get_ref();
                    if !(text.starts_with("http://") || text.starts_with("https://")) {
                        return Err(at(
                            url.span(),
                            &format!("{key}.url"),
                            "must be an http:// or https:// URL".into(),
                        ));
                    }
                    ServerSpec::url(url.into_inner())
                }
                (Some(_), Some(_)) => {
                    return Err(at(
                        span,
                        &key,
                        "has both `command` and `url`; give one".into(),
                    ));
                }
                (None, None) => {
                    return Err(at(
                        span,
                        &key,
                        "needs `command = [\"prog\", \"arg\", …]` or `url = \"…\"`".into(),
                    ));
                }
            };
            servers.push(ServerConfig {
                name: name.into_inner(),
                spec,
                restart: server.restart,
                deferred: server.deferred,
            });
        }
        let glob = |s: Spanned<String>, key: &str| -> Result<Pattern, Error> {
            let span = s.span();
            let text = s.into_inner();
            let matcher = Glob::new(&text)
                .map_err(|e| at(span, key, format!("{text:?} is not a valid pattern: {e}")))?
                .compile_matcher();
            Ok(Pattern { text, matcher })
        };
        let deferred = raw
            .deferred
            .into_iter()
            .map(|p| glob(p, "deferred"))
            .collect::<Result<Vec<_>, _>>()?;
        let root = match raw.policy.root {
            None => "/".to_owned(),
            Some(root) if root.get_ref().starts_with('/') => normalize_path("/", root.get_ref()),
            Some(root) => {
                return Err(at(
                    root.span(),
                    "policy.root",
                    format!(
                        "{:?} is not an absolute path: the root must start with `/`",
                        root.get_ref()
                    ),
                ));
            }
        };
        let mut policy = PolicyConfig {
            destructive: raw.policy.destructive,
            root,
            ..PolicyConfig::default()
        };
        for p in raw.policy.deny {
            policy.deny.push(glob(p, "policy.deny")?);
        }
        for p in raw.policy.ask {
            policy.ask.push(glob(p, "policy.ask")?);
        }
        for rule in raw.policy.rules {
            let tool = glob(rule.tool, "policy.rules.tool")?;
            let who = Who {
                principal: rule
                    .principal
                    .map(|p| glob(p, "policy.rules.principal"))
                    .transpose()?,
                scopes: rule.scopes.unwrap_or_default(),
            };
            let (argument, matches) = match (rule.argument, rule.matches) {
                (None, None) => {
                    policy.identity.push(IdentityRule {
                        tool,
                        who,
                        decision: rule.decision,
                        reason: rule.reason,
                    });
                    continue;
                }
                (Some(argument), Some(matches)) => (argument, matches),
                (Some(one), None) | (None, Some(one)) => {
                    return Err(at(
                        one.span(),
                        "policy.rules",
                        "`argument` and `matches` go together: give both, or neither for a rule over tools and principals".into(),
                    ));
                }
            };
            let path: Vec<String> = argument.get_ref().split('.').map(str::to_owned).collect();
            if path.iter().any(String::is_empty) {
                return Err(at(
                    argument.span(),
                    "policy.rules.argument",
                    "must be a dotted path like `path` or `options.target`".into(),
                ));
            }
            let span = matches.span();
            let matches = glob(matches, "policy.rules.matches")?;
            let path_matcher = PathMatcher::new(matches.as_str(), &policy.root).map_err(|e| {
                at(
                    span,
                    "policy.rules.matches",
                    format!("{:?} cannot be matched as a path: {e}", matches.as_str()),
                )
            })?;
            policy.rules.push(ArgumentRule {
                tool,
                who,
                argument: path,
                matches,
                decision: rule.decision,
                reason: rule.reason,
                path: path_matcher,
            });
        }
        let duration = |value: Spanned<String>, key: &str| -> Result<Duration, Error> {
            let max = (tools_registry::MAX_TIMEOUT, "24 days");
            sections::duration(&value, key, &at, true, max)
        };
        let mut upstream = UpstreamConfig::default();
        if let Some(value) = raw.upstream.handshake_timeout {
            upstream.handshake_timeout = duration(value, "upstream.handshake_timeout")?;
        }
        if let Some(value) = raw.upstream.list_timeout {
            upstream.list_timeout = duration(value, "upstream.list_timeout")?;
        }
        if let Some(value) = raw.upstream.call_timeout {
            upstream.call_timeout = duration(value, "upstream.call_timeout")?;
        }
        if let Some(value) = raw.upstream.max_content_blocks {
            upstream.max_content_blocks = usize::try_from(*value.get_ref())
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    at(
                        value.span(),
                        "upstream.max_content_blocks",
                        "must be a positive integer".into(),
                    )
                })?;
        }
        let mut budgets = Vec::new();
        let mut entries: Vec<(Spanned<String>, Spanned<String>)> =
            raw.budgets.into_iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        for (pattern, value) in entries {
            let key = format!("budgets.{:?}", pattern.get_ref());
            let budget = duration(value, &key)?;
            budgets.push((glob(pattern, &key)?, budget));
        }
        let auth = sections::auth(raw.auth, &at)?;
        let audit = sections::audit(raw.audit, &base, &at)?;
        let limits = sections::limits(raw.limits, &at)?;
        let pins = sections::pins(raw.pins, &base, &at)?;
        let otel = sections::otel(raw.otel, &at)?;
        Ok(GatewayConfig {
            otel,
            pins,
            limits,
            auth,
            audit,
            mode,
            language: raw.language,
            concurrency,
            output_budget,
            servers,
            deferred,
            policy,
            budgets,
            upstream,
        })
    }

    /// Whether any tool is deferred: a server is marked `deferred`, or a top-level
    /// `deferred` glob is given (the gateway then serves `search_tools`).
    pub fn defers(&self) -> bool {
        !self.deferred.is_empty() || self.servers.iter().any(|s| s.deferred)
    }

    /// The timeout budget of the imported tool `exposed`, if a budget pattern matches.
    pub fn budget_of(&self, exposed: &str) -> Option<Duration> {
        self.budgets
            .iter()
            .find(|(pattern, _)| pattern.is_match(exposed))
            .map(|(_, budget)| *budget)
    }
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset)
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn resolve(base: &Path, dir: &str) -> PathBuf {
    let dir = Path::new(dir);
    if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        base.join(dir)
    }
}
