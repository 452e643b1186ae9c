//! The sections of the gateway's configuration that a platform team sets: `[auth]` (and,
//! later in the file, `[audit]`, `[pins]`, `[limits]`), parsed from their raw TOML forms.

use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::Error;
use crate::audit::{AuditConfig, AuditTarget};
use crate::auth::{AuthConfig, JwtConfig, StaticToken};

/// An error at a span of the file, naming the key.
pub(super) type At<'a> = &'a dyn Fn(Range<usize>, &str, String) -> Error;

/// One string or a list of them.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAuth {
    #[serde(default)]
    tokens: Vec<Spanned<RawToken>>,
    jwt: Option<Spanned<RawJwt>>,
    resource: Option<Spanned<String>>,
    #[serde(default)]
    scopes_supported: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToken {
    principal: Spanned<String>,
    sha256: Spanned<String>,
    #[serde(default)]
    scopes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJwt {
    issuer: Spanned<String>,
    audience: Option<OneOrMany>,
    jwks_url: Spanned<String>,
    algorithms: Option<Vec<Spanned<String>>>,
    leeway: Option<Spanned<String>>,
    refresh: Option<Spanned<String>>,
}

/// A duration written as people write them (`30s`, `10m`), at most `max` (said as
/// `max_words`), and positive when `positive`.
pub(super) fn duration(
    value: &Spanned<String>,
    key: &str,
    at: At<'_>,
    positive: bool,
    (max, max_words): (Duration, &str),
) -> Result<Duration, Error> {
    let parsed = humantime::parse_duration(value.get_ref()).map_err(|e| {
        at(
            value.span(),
            key,
            format!("{:?} is not a duration: {e}", value.get_ref()),
        )
    })?;
    if (positive && parsed.is_zero()) || parsed > max {
        let sign = if positive { "positive and " } else { "" };
        return Err(at(
            value.span(),
            key,
            format!("must be {sign}at most {max_words}"),
        ));
    }
    Ok(parsed)
}

/// A day, the longest JWT leeway or key refresh.
const DAY: (Duration, &str) = (Duration::from_secs(86_400), "a day");

/// `[auth]`, checked: `None` when the section is absent or names no credential.
pub(super) fn auth(raw: Option<RawAuth>, at: At<'_>) -> Result<Option<AuthConfig>, Error> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let mut config = AuthConfig {
        scopes_supported: raw.scopes_supported,
        ..AuthConfig::default()
    };
    for token in raw.tokens {
        let span = token.span();
        let token = token.into_inner();
        let principal = token.principal.get_ref().trim();
        if principal.is_empty() {
            return Err(at(
                token.principal.span(),
                "auth.tokens.principal",
                "must name a principal".into(),
            ));
        }
        let digest = parse_digest(token.sha256.get_ref()).ok_or_else(|| {
            at(
                token.sha256.span(),
                "auth.tokens.sha256",
                "must be the 64 hex digits of the token's SHA-256 (e.g. `printf %s TOKEN | sha256sum`)"
                    .into(),
            )
        })?;
        if config
            .tokens
            .iter()
            .any(|t: &StaticToken| t.sha256 == digest)
        {
            return Err(at(
                span,
                "auth.tokens",
                "the same token is listed twice".into(),
            ));
        }
        config.tokens.push(StaticToken {
            principal: principal.to_owned(),
            sha256: digest,
            scopes: token.scopes,
        });
    }
    if let Some(resource) = raw.resource {
        let text = resource.get_ref();
        let ok = text.parse::<axum::http::Uri>().is_ok_and(|uri| {
            matches!(uri.scheme_str(), Some("http" | "https")) && uri.authority().is_some()
        });
        if !ok {
            return Err(at(
                resource.span(),
                "auth.resource",
                format!("{text:?} is not an absolute http(s) URI like `https://gw.example/mcp`"),
            ));
        }
        config.resource = Some(resource.into_inner());
    }
    if let Some(jwt) = raw.jwt {
        let span = jwt.span();
        let jwt = jwt.into_inner();
        let mut parsed =
            JwtConfig::new(jwt.issuer.get_ref().clone(), jwt.jwks_url.get_ref().clone());
        if jwt.issuer.get_ref().is_empty() {
            return Err(at(
                jwt.issuer.span(),
                "auth.jwt.issuer",
                "must not be empty".into(),
            ));
        }
        parsed.audience = jwt.audience.map(OneOrMany::into_vec).unwrap_or_default();
        if let Some(algorithms) = jwt.algorithms {
            parsed.algorithms.clear();
            for name in algorithms {
                let alg = name
                    .get_ref()
                    .parse::<jsonwebtoken::Algorithm>()
                    .ok()
                    .filter(|a| {
                        !matches!(
                            a,
                            jsonwebtoken::Algorithm::HS256
                                | jsonwebtoken::Algorithm::HS384
                                | jsonwebtoken::Algorithm::HS512
                        )
                    })
                    .ok_or_else(|| {
                        at(
                            name.span(),
                            "auth.jwt.algorithms",
                            format!(
                                "{:?} is not an accepted algorithm (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA)",
                                name.get_ref()
                            ),
                        )
                    })?;
                parsed.algorithms.push(alg);
            }
            if parsed.algorithms.is_empty() {
                return Err(at(
                    span.clone(),
                    "auth.jwt.algorithms",
                    "must name an algorithm".into(),
                ));
            }
        }
        if let Some(leeway) = &jwt.leeway {
            parsed.leeway = duration(leeway, "auth.jwt.leeway", at, false, DAY)?;
        }
        if let Some(refresh) = &jwt.refresh {
            parsed.refresh = duration(refresh, "auth.jwt.refresh", at, true, DAY)?;
        }
        if parsed.audience.is_empty() && config.resource.is_none() {
            return Err(at(
                span,
                "auth.jwt",
                "needs `audience` (or `[auth] resource`): the audience tokens must be issued for"
                    .into(),
            ));
        }
        // What the authenticator itself refuses (the URL's scheme), said with the line.
        if let Err(e) = crate::auth::Authenticator::new(AuthConfig {
            jwt: Some(parsed.clone()),
            ..AuthConfig::default()
        }) {
            let message = match e {
                Error::Config { message, .. } => message,
                other => other.to_string(),
            };
            return Err(at(jwt.jwks_url.span(), "auth.jwt.jwks_url", message));
        }
        config.jwt = Some(parsed);
    }
    Ok(config.is_configured().then_some(config))
}

/// The 32 bytes of a 64-digit hex SHA-256.
fn parse_digest(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut digest = [0_u8; 32];
    for (i, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(digest)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAudit {
    path: Spanned<String>,
    max_bytes: Option<Spanned<i64>>,
    keep: Option<Spanned<i64>>,
    #[serde(default)]
    arguments: bool,
    #[serde(default)]
    sync: bool,
    instance: Option<String>,
}

/// `[audit]`, checked; a relative `path` is under `base` (the configuration's folder).
pub(super) fn audit(
    raw: Option<RawAudit>,
    base: &std::path::Path,
    at: At<'_>,
) -> Result<Option<AuditConfig>, Error> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let target = match raw.path.get_ref().as_str() {
        "" => {
            return Err(at(
                raw.path.span(),
                "audit.path",
                "must name a file, or `-` for stdout".into(),
            ));
        }
        "-" => AuditTarget::Stdout,
        path => AuditTarget::File(base.join(path)),
    };
    let mut config = AuditConfig::new(target);
    if let Some(max) = raw.max_bytes {
        let n = u64::try_from(*max.get_ref()).ok().filter(|n| *n >= 4096);
        config.max_bytes = Some(n.ok_or_else(|| {
            at(
                max.span(),
                "audit.max_bytes",
                "must be a number of bytes, at least 4096".into(),
            )
        })?);
    }
    if let Some(keep) = raw.keep {
        config.keep = usize::try_from(*keep.get_ref())
            .ok()
            .filter(|n| *n <= 1000)
            .ok_or_else(|| {
                at(
                    keep.span(),
                    "audit.keep",
                    "must be between 0 and 1000".into(),
                )
            })?;
    }
    config.arguments = raw.arguments;
    config.sync = raw.sync;
    if let Some(instance) = raw.instance {
        config.instance = instance;
    }
    Ok(Some(config))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimit {
    rate: Option<Spanned<String>>,
    concurrency: Option<Spanned<i64>>,
    per: Option<Spanned<String>>,
}

/// `[limits]`: each key a glob over tool names, in the file's order.
pub(super) fn limits(
    raw: std::collections::BTreeMap<Spanned<String>, Spanned<RawLimit>>,
    at: At<'_>,
) -> Result<Vec<crate::limits::Limit>, Error> {
    use crate::limits::{Limit, Per, Rate};
    let mut entries: Vec<(Spanned<String>, Spanned<RawLimit>)> = raw.into_iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut limits = Vec::with_capacity(entries.len());
    for (pattern, entry) in entries {
        let key = format!("limits.{:?}", pattern.get_ref());
        let span = entry.span();
        let entry = entry.into_inner();
        let tools = globset::Glob::new(pattern.get_ref())
            .map_err(|e| at(pattern.span(), &key, format!("not a valid pattern: {e}")))?
            .compile_matcher();
        let rate = match &entry.rate {
            None => None,
            Some(rate) => Some(
                rate.get_ref()
                    .parse::<Rate>()
                    .map_err(|why| at(rate.span(), &format!("{key}.rate"), why))?,
            ),
        };
        let concurrency = match &entry.concurrency {
            None => None,
            Some(n) => Some(
                usize::try_from(*n.get_ref())
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        at(
                            n.span(),
                            &format!("{key}.concurrency"),
                            "must be a positive integer".into(),
                        )
                    })?,
            ),
        };
        let per = match entry.per.as_ref().map(|p| (p.get_ref().as_str(), p.span())) {
            None | Some(("principal", _)) => Per::Principal,
            Some(("tool", _)) => Per::Tool,
            Some(("principal_and_tool", _)) => Per::PrincipalAndTool,
            Some(("all", _)) => Per::All,
            Some((other, span)) => {
                return Err(at(
                    span,
                    &format!("{key}.per"),
                    format!(
                        "{other:?} is not one of \"principal\", \"tool\", \"principal_and_tool\", \"all\""
                    ),
                ));
            }
        };
        if rate.is_none() && concurrency.is_none() {
            return Err(at(span, &key, "needs `rate` or `concurrency`".into()));
        }
        limits.push(Limit {
            tools,
            pattern: pattern.into_inner(),
            per,
            rate,
            concurrency,
        });
    }
    Ok(limits)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPins {
    path: Spanned<String>,
    #[serde(default)]
    on_change: crate::pins::OnChange,
}

/// `[pins]`: the pin file (relative to the configuration's folder) and what a change does.
pub(super) fn pins(
    raw: Option<RawPins>,
    base: &std::path::Path,
    at: At<'_>,
) -> Result<Option<(std::path::PathBuf, crate::pins::OnChange)>, Error> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    if raw.path.get_ref().is_empty() {
        return Err(at(raw.path.span(), "pins.path", "must name a file".into()));
    }
    Ok(Some((base.join(raw.path.get_ref()), raw.on_change)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOtel {
    endpoint: Option<Spanned<String>>,
    service_name: Option<String>,
    #[serde(default)]
    capture_content: bool,
}

/// `[otel]`: where spans go.
pub(super) fn otel(
    raw: Option<RawOtel>,
    at: At<'_>,
) -> Result<Option<crate::otel::OtelConfig>, Error> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let mut config = crate::otel::OtelConfig {
        capture_content: raw.capture_content,
        ..crate::otel::OtelConfig::default()
    };
    if let Some(endpoint) = raw.endpoint {
        let text = endpoint.get_ref();
        if !(text.starts_with("http://") || text.starts_with("https://")) {
            return Err(at(
                endpoint.span(),
                "otel.endpoint",
                format!("{text:?} is not an http(s) URL like `http://127.0.0.1:4318`"),
            ));
        }
        config.endpoint = Some(endpoint.into_inner());
    }
    if let Some(name) = raw.service_name {
        config.service_name = name;
    }
    Ok(Some(config))
}
