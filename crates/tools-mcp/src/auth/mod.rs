//! Who is calling over HTTP: static bearer tokens (kept as SHA-256 digests) and JWTs from
//! an OAuth 2.1 authorization server, checked against its JWKS, as the MCP authorization
//! specification asks of a protected resource.
//!
//! The HTTP front ([`crate::HttpOptions::auth`]) asks the [`Authenticator`] about every
//! request but `/healthz`, `/readyz` and the RFC 9728 metadata document. A request without
//! a credential, or with one that does not check out, gets `401` with a `WWW-Authenticate:
//! Bearer` challenge naming the metadata document; a JWT that cannot be checked because the
//! issuer's keys cannot be had gets `503`. Nothing is let through on a failed or skipped
//! check.

mod jwks;

use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tools_runtime::hooks::Principal;

use jwks::Jwks;
pub use jwks::{JwtConfig, MIN_REFETCH};

/// The digest a static token is stored as: SHA-256 of the token's bytes.
pub fn token_digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The lowercase hex SHA-256 of `token`: what `[auth] tokens` stores in `sha256`.
pub fn hex_digest(token: &str) -> String {
    hex(&token_digest(token))
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(text, "{b:02x}");
    }
    text
}

/// A static bearer token: the digest it is stored as, and who holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticToken {
    /// The principal's name (the subject policies match).
    pub principal: String,
    /// SHA-256 of the token ([`token_digest`]); the token itself is never stored.
    pub sha256: [u8; 32],
    /// The scopes it grants.
    pub scopes: Vec<String>,
}

/// How HTTP callers prove who they are (`[auth]` in the gateway's configuration).
#[derive(Clone, Debug, Default)]
pub struct AuthConfig {
    /// Static bearer tokens.
    pub tokens: Vec<StaticToken>,
    /// JWTs of one OAuth 2.1 authorization server.
    pub jwt: Option<JwtConfig>,
    /// The protected resource's canonical URI (`https://gw.example/mcp`): the `resource`
    /// of the metadata document, and the audience JWTs must carry when
    /// [`JwtConfig::audience`] is empty. `None`: the request's `Host` and path, over `http`.
    pub resource: Option<String>,
    /// The scopes the metadata document advertises (`scopes_supported`).
    pub scopes_supported: Vec<String>,
}

impl AuthConfig {
    /// Whether any credential is accepted at all.
    pub fn is_configured(&self) -> bool {
        !self.tokens.is_empty() || self.jwt.is_some()
    }
}

/// Why a request was not authenticated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization: Bearer` credential (`401`, a bare challenge).
    #[error("this endpoint needs a bearer token (Authorization: Bearer …)")]
    Missing,
    /// A credential that does not check out (`401`, `error="invalid_token"`).
    #[error("{0}")]
    Invalid(String),
    /// A JWT that cannot be checked now: the issuer's keys cannot be fetched (`503`).
    #[error("{0}")]
    Unavailable(String),
}

/// Checks the credentials of HTTP requests. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Authenticator {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: AuthConfig,
    jwks: Option<Jwks>,
}

/// The most bytes of an `Authorization` header looked at; a longer one is refused unread.
const MAX_CREDENTIAL: usize = 16 * 1024;

impl Authenticator {
    /// An authenticator for `config`. Nothing is fetched yet: the JWKS is fetched at the
    /// first JWT (or by [`Authenticator::refresh`]).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Config`] for a JWKS URL this build cannot fetch.
    pub fn new(config: AuthConfig) -> Result<Authenticator, crate::Error> {
        let jwks = match &config.jwt {
            Some(jwt) => Some(Jwks::new(jwt)?),
            None => None,
        };
        Ok(Authenticator {
            inner: Arc::new(Inner { config, jwks }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AuthConfig {
        &self.inner.config
    }

    /// Fetches the issuer's keys now (at start, so that a JWKS that is down is reported
    /// before the first request).
    ///
    /// # Errors
    ///
    /// What went wrong, naming the URL (the gateway goes on: static tokens still work, and
    /// JWTs get `503` until the keys can be had).
    pub async fn refresh(&self) -> Result<(), String> {
        match &self.inner.jwks {
            Some(jwks) => jwks.refresh().await,
            None => Ok(()),
        }
    }

    /// Whether the keys JWTs need are at hand (always, without JWT configuration).
    pub fn is_ready(&self) -> bool {
        self.inner.jwks.as_ref().is_none_or(Jwks::has_keys)
    }

    /// The principal of a request whose `Authorization` header values are `headers`.
    ///
    /// # Errors
    ///
    /// [`AuthError`]: no credential, one that does not check out, or a JWT whose keys
    /// cannot be had.
    pub async fn authenticate<'a>(
        &self,
        mut headers: impl Iterator<Item = &'a [u8]>,
    ) -> Result<Principal, AuthError> {
        let Some(header) = headers.next() else {
            return Err(AuthError::Missing);
        };
        if headers.next().is_some() {
            return Err(AuthError::Invalid(
                "more than one Authorization header".to_owned(),
            ));
        }
        let token = bearer(header)?;
        let digest = token_digest(token);
        // Every stored digest is compared, each in constant time: which one matched, or
        // how much of one, does not show in the time taken.
        let mut found = None;
        for stored in &self.inner.config.tokens {
            if constant_time_eq(&stored.sha256, &digest) {
                found = Some(stored);
            }
        }
        if let Some(stored) = found {
            return Ok(Principal::new(stored.principal.as_str())
                .with_scopes(stored.scopes.iter().cloned())
                .with_token_id(format!("sha256:{}", hex(&stored.sha256[..6]))));
        }
        match &self.inner.jwks {
            Some(jwks) if looks_like_jwt(token) => {
                let audience = self.inner.config.resource.as_deref();
                jwks.verify(token, audience).await
            }
            _ => Err(AuthError::Invalid(
                "the bearer token is not valid".to_owned(),
            )),
        }
    }

    /// The RFC 9728 protected-resource metadata document, for the resource `resource`.
    pub fn metadata(&self, resource: &str) -> serde_json::Value {
        let config = &self.inner.config;
        let mut doc = serde_json::json!({
            "resource": resource,
            "bearer_methods_supported": ["header"],
            "resource_name": "tools-mcp gateway",
        });
        if let Some(jwt) = &config.jwt {
            doc["authorization_servers"] = serde_json::json!([jwt.issuer]);
        }
        if !config.scopes_supported.is_empty() {
            doc["scopes_supported"] = serde_json::json!(config.scopes_supported);
        }
        doc
    }
}

/// The token of an `Authorization: Bearer <token>` value (RFC 6750's `b64token`).
fn bearer(header: &[u8]) -> Result<&str, AuthError> {
    let invalid = |why: &str| Err(AuthError::Invalid(why.to_owned()));
    if header.len() > MAX_CREDENTIAL {
        return invalid("the Authorization header is too long");
    }
    let Ok(text) = std::str::from_utf8(header) else {
        return invalid("the Authorization header is not text");
    };
    let Some((scheme, token)) = text.trim().split_once(' ') else {
        return invalid("the Authorization header is not `Bearer <token>`");
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return invalid("only Bearer credentials are accepted");
    }
    let token = token.trim_start_matches(' ');
    let b64token = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    if token.is_empty() || !token.chars().all(b64token) {
        return invalid("the bearer token is malformed");
    }
    Ok(token)
}

/// Whether `token` has a JWS compact serialization's shape (three dot-separated parts).
fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

/// Whether `a` and `b` are equal, looking at every byte whatever the first difference.
fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// How long the keys of a JWKS are used before they are fetched again (default).
pub const DEFAULT_JWKS_REFRESH: Duration = Duration::from_secs(600);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn auth(tokens: &[(&str, &str)]) -> Authenticator {
        Authenticator::new(AuthConfig {
            tokens: tokens
                .iter()
                .map(|(principal, token)| StaticToken {
                    principal: (*principal).to_owned(),
                    sha256: token_digest(token),
                    scopes: vec!["tools".to_owned()],
                })
                .collect(),
            ..AuthConfig::default()
        })
        .unwrap()
    }

    async fn who(auth: &Authenticator, headers: &[&str]) -> Result<String, AuthError> {
        auth.authenticate(headers.iter().map(|h| h.as_bytes()))
            .await
            .map(|p| p.subject().to_owned())
    }

    #[tokio::test]
    async fn static_tokens_name_their_principal() {
        let auth = auth(&[("alice", "s3cret-a"), ("bob", "s3cret-b")]);
        assert_eq!(who(&auth, &["Bearer s3cret-a"]).await.unwrap(), "alice");
        assert_eq!(who(&auth, &["bearer   s3cret-b"]).await.unwrap(), "bob");
        let principal = auth
            .authenticate(std::iter::once(&b"Bearer s3cret-a"[..]))
            .await
            .unwrap();
        assert_eq!(principal.scopes(), ["tools"]);
        assert!(principal.token_id().unwrap().starts_with("sha256:"));
    }

    #[tokio::test]
    async fn bad_credentials_are_refused_with_a_reason() {
        let auth = auth(&[("alice", "s3cret-a")]);
        assert_eq!(who(&auth, &[]).await, Err(AuthError::Missing));
        for (headers, needle) in [
            (&["Bearer wrong"][..], "not valid"),
            (&["Basic YWxpY2U6eA=="], "only Bearer"),
            (&["Bearer"], "not `Bearer <token>`"),
            (&["Bearer a b"], "malformed"),
            (&["Bearer s3cret-a", "Bearer s3cret-a"], "more than one"),
            (&["Bearer \u{e9}t\u{e9}"], "malformed"),
        ] {
            match who(&auth, headers).await {
                Err(AuthError::Invalid(why)) => assert!(why.contains(needle), "{headers:?}: {why}"),
                other => panic!("{headers:?}: {other:?}"),
            }
        }
        let long = format!("Bearer {}", "a".repeat(MAX_CREDENTIAL));
        assert!(matches!(
            who(&auth, &[&long]).await,
            Err(AuthError::Invalid(_))
        ));
        let bytes: &[u8] = &[b'B', 0xff, 0xfe];
        assert!(matches!(
            auth.authenticate(std::iter::once(bytes)).await,
            Err(AuthError::Invalid(_))
        ));
    }

    #[test]
    fn the_metadata_document_names_the_issuer_and_scopes() {
        let auth = Authenticator::new(AuthConfig {
            jwt: Some(JwtConfig::new(
                "https://issuer.example",
                "http://127.0.0.1:1/jwks",
            )),
            scopes_supported: vec!["tools".into()],
            ..AuthConfig::default()
        })
        .unwrap();
        let doc = auth.metadata("https://gw.example/mcp");
        assert_eq!(doc["resource"], "https://gw.example/mcp");
        assert_eq!(doc["authorization_servers"][0], "https://issuer.example");
        assert_eq!(doc["scopes_supported"][0], "tools");
        assert_eq!(doc["bearer_methods_supported"][0], "header");
    }

    #[test]
    fn digests_are_hex_sha256() {
        assert_eq!(
            hex(&token_digest("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
