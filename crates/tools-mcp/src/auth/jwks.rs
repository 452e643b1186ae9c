//! JWTs of one authorization server: its JWKS fetched, cached and refreshed, each token's
//! signature, issuer, audience, expiry and not-before checked with `jsonwebtoken`.

use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use tokio::sync::{Mutex, RwLock};
use tools_runtime::hooks::Principal;

use super::{AuthError, DEFAULT_JWKS_REFRESH};

/// JWTs of one OAuth 2.1 authorization server (`[auth.jwt]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JwtConfig {
    /// The `iss` every token must carry (the authorization server's issuer identifier).
    pub issuer: String,
    /// The `aud` values accepted (any one); empty: the resource's URI
    /// ([`super::AuthConfig::resource`]), and without one no audience is accepted.
    pub audience: Vec<String>,
    /// Where the issuer's keys are (`http://`; `https://` needs the `tls` feature).
    pub jwks_url: String,
    /// The signature algorithms accepted (default `RS256` and `ES256`); `none` and the
    /// HMAC family never are.
    pub algorithms: Vec<Algorithm>,
    /// How far a clock may be off when `exp` and `nbf` are checked (default 30 s).
    pub leeway: Duration,
    /// How long fetched keys are used before they are fetched again (default 10 min). A
    /// token naming a key id the cache lacks fetches them again at once (at most every
    /// [`MIN_REFETCH`]).
    pub refresh: Duration,
}

/// The shortest time between two fetches of a JWKS, however many unknown key ids arrive.
pub const MIN_REFETCH: Duration = Duration::from_secs(5);

/// The most bytes of a JWKS document read.
const MAX_JWKS_BYTES: usize = 1 << 20;

/// How long one fetch of a JWKS may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

impl JwtConfig {
    /// Tokens of `issuer` signed with keys at `jwks_url`, with the defaults.
    pub fn new(issuer: impl Into<String>, jwks_url: impl Into<String>) -> JwtConfig {
        JwtConfig {
            issuer: issuer.into(),
            audience: Vec::new(),
            jwks_url: jwks_url.into(),
            algorithms: vec![Algorithm::RS256, Algorithm::ES256],
            leeway: Duration::from_secs(30),
            refresh: DEFAULT_JWKS_REFRESH,
        }
    }
}

/// The keys at hand.
#[derive(Debug, Default)]
struct Keys {
    set: Option<JwkSet>,
    fetched: Option<Instant>,
    attempted: Option<Instant>,
    error: Option<String>,
}

/// A JWKS cache and the checks of one issuer.
#[derive(Debug)]
pub(super) struct Jwks {
    config: JwtConfig,
    client: reqwest::Client,
    keys: RwLock<Keys>,
    /// One fetch at a time.
    fetching: Mutex<()>,
}

impl Jwks {
    pub(super) fn new(config: &JwtConfig) -> Result<Jwks, crate::Error> {
        let bad = |message: String| crate::Error::Config {
            path: "[auth.jwt]".to_owned(),
            message,
        };
        if !(config.jwks_url.starts_with("http://") || config.jwks_url.starts_with("https://")) {
            return Err(bad(format!(
                "jwks_url {:?} must be an http:// or https:// URL",
                config.jwks_url
            )));
        }
        if cfg!(not(feature = "tls")) && config.jwks_url.starts_with("https://") {
            return Err(bad(format!(
                "jwks_url {:?} is https://, which needs tools-mcp built with the `tls` feature",
                config.jwks_url
            )));
        }
        if let Some(bad_alg) = config.algorithms.iter().find(|a| is_hmac(**a)) {
            return Err(bad(format!(
                "algorithm {bad_alg:?} is a shared-secret algorithm; a JWKS has public keys only"
            )));
        }
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| bad(format!("cannot build the JWKS client: {e}")))?;
        Ok(Jwks {
            config: config.clone(),
            client,
            keys: RwLock::new(Keys::default()),
            fetching: Mutex::new(()),
        })
    }

    pub(super) fn has_keys(&self) -> bool {
        self.keys.try_read().is_ok_and(|keys| keys.set.is_some())
    }

    /// Fetches the keys now, keeping the old ones if the fetch fails.
    pub(super) async fn refresh(&self) -> Result<(), String> {
        let _one = self.fetching.lock().await;
        self.fetch_locked().await
    }

    async fn fetch_locked(&self) -> Result<(), String> {
        let started = Instant::now();
        let fetched = self.fetch().await;
        let mut keys = self.keys.write().await;
        keys.attempted = Some(started);
        match fetched {
            Ok(set) => {
                keys.set = Some(set);
                keys.fetched = Some(started);
                keys.error = None;
                Ok(())
            }
            Err(why) => {
                tracing::warn!(url = %self.config.jwks_url, %why, "the JWKS could not be fetched");
                keys.error = Some(why.clone());
                Err(why)
            }
        }
    }

    async fn fetch(&self) -> Result<JwkSet, String> {
        let url = &self.config.jwks_url;
        let mut response = self
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| format!("the JWKS at {url} cannot be fetched: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("the JWKS at {url} answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("the JWKS at {url} cannot be read: {e}"))?
        {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(format!(
                    "the JWKS at {url} is larger than {MAX_JWKS_BYTES} bytes"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        let set: JwkSet = serde_json::from_slice(&body)
            .map_err(|e| format!("the JWKS at {url} is not a JWK set: {e}"))?;
        if set.keys.is_empty() {
            return Err(format!("the JWKS at {url} has no keys"));
        }
        Ok(set)
    }

    /// The key for `kid` (or the only key, for a token without one), fetching the set
    /// again when it is stale or lacks the key.
    async fn key(&self, kid: Option<&str>) -> Result<jsonwebtoken::jwk::Jwk, AuthError> {
        for attempt in 0..2 {
            {
                let keys = self.keys.read().await;
                let fresh = keys
                    .fetched
                    .is_some_and(|at| at.elapsed() < self.config.refresh);
                if let Some(set) = &keys.set
                    && (fresh || attempt > 0)
                    && let Some(key) = pick(set, kid)
                {
                    return Ok(key.clone());
                }
                if attempt > 0 {
                    return Err(match (&keys.set, &keys.error) {
                        (None, Some(why)) => {
                            AuthError::Unavailable(format!("the token cannot be checked: {why}"))
                        }
                        (None, None) => AuthError::Unavailable(
                            "the token cannot be checked: the issuer's keys are not fetched yet"
                                .to_owned(),
                        ),
                        (Some(_), _) => AuthError::Invalid(match kid {
                            Some(kid) => {
                                format!("the token's key {kid:?} is not in the issuer's JWKS")
                            }
                            None => "the token names no key and the issuer has several".to_owned(),
                        }),
                    });
                }
            }
            let _one = self.fetching.lock().await;
            let recent = self
                .keys
                .read()
                .await
                .attempted
                .is_some_and(|at| at.elapsed() < MIN_REFETCH);
            if !recent {
                let _ = self.fetch_locked().await;
            }
        }
        Err(AuthError::Unavailable(
            "the token cannot be checked".to_owned(),
        ))
    }

    /// The principal of a JWT that checks out.
    pub(super) async fn verify(
        &self,
        token: &str,
        resource: Option<&str>,
    ) -> Result<Principal, AuthError> {
        let invalid = |why: String| AuthError::Invalid(why);
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| invalid(format!("the token's header cannot be read: {e}")))?;
        if !self.config.algorithms.contains(&header.alg) {
            return Err(invalid(format!(
                "the token is signed with {:?}, which is not accepted",
                header.alg
            )));
        }
        let jwk = self.key(header.kid.as_deref()).await?;
        if let Some(alg) = jwk.common.key_algorithm
            && alg.to_string() != format!("{:?}", header.alg)
        {
            return Err(invalid(format!(
                "the token says {:?} but its key is for {alg}",
                header.alg
            )));
        }
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|e| invalid(format!("the issuer's key cannot be used: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.config.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.config.issuer]);
        let audience: Vec<&str> = if self.config.audience.is_empty() {
            resource.into_iter().collect()
        } else {
            self.config.audience.iter().map(String::as_str).collect()
        };
        if audience.is_empty() {
            return Err(invalid(
                "no audience is configured, so no token is accepted".to_owned(),
            ));
        }
        validation.set_audience(&audience);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Value>(token, &key, &validation)
            .map_err(|e| invalid(format!("the token is not valid: {}", reason(&e))))?;
        principal_of(&data.claims)
            .ok_or_else(|| invalid("the token has no string `sub` claim".to_owned()))
    }
}

/// The key of `set` named `kid`, or its only key when the token names none.
fn pick<'a>(set: &'a JwkSet, kid: Option<&str>) -> Option<&'a jsonwebtoken::jwk::Jwk> {
    match kid {
        Some(kid) => set.find(kid),
        None if set.keys.len() == 1 => set.keys.first(),
        None => None,
    }
}

fn is_hmac(alg: Algorithm) -> bool {
    matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// What a failed check says, in words.
fn reason(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "it has expired".to_owned(),
        ErrorKind::ImmatureSignature => "it is not valid yet (nbf)".to_owned(),
        ErrorKind::InvalidSignature => "its signature does not verify".to_owned(),
        ErrorKind::InvalidIssuer => "its issuer is not the configured one".to_owned(),
        ErrorKind::InvalidAudience => "its audience is not this resource".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) => format!("it lacks the `{claim}` claim"),
        _ => error.to_string(),
    }
}

/// The principal of verified claims: `sub`, the scopes of `scope` (space-separated, RFC
/// 8693) or `scp` (a list or a string), `jti`, `iss`.
fn principal_of(claims: &Value) -> Option<Principal> {
    let subject = claims.get("sub")?.as_str()?;
    let mut scopes: Vec<String> = Vec::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(text)) => scopes.extend(text.split_whitespace().map(str::to_owned)),
            Some(Value::Array(items)) => {
                scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            _ => {}
        }
    }
    let mut principal = Principal::new(subject).with_scopes(scopes);
    if let Some(jti) = claims.get("jti").and_then(Value::as_str) {
        principal = principal.with_token_id(jti);
    }
    if let Some(iss) = claims.get("iss").and_then(Value::as_str) {
        principal = principal.with_issuer(iss);
    }
    Some(principal)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claims_give_subject_scopes_and_token_id() {
        let p =
            principal_of(&json!({"sub": "alice", "scope": "tools read", "jti": "j1", "iss": "i"}))
                .unwrap();
        assert_eq!(p.subject(), "alice");
        assert_eq!(p.scopes(), ["tools", "read"]);
        assert_eq!(p.token_id(), Some("j1"));
        assert_eq!(p.issuer(), Some("i"));
        let p = principal_of(&json!({"sub": "bob", "scp": ["a", 1, "b"]})).unwrap();
        assert_eq!(p.scopes(), ["a", "b"]);
        assert!(principal_of(&json!({"sub": 5})).is_none());
        assert!(principal_of(&json!({})).is_none());
    }

    #[test]
    fn shared_secret_algorithms_and_other_urls_are_refused() {
        let mut config = JwtConfig::new("i", "http://127.0.0.1:1/jwks");
        config.algorithms.push(Algorithm::HS256);
        assert!(Jwks::new(&config).is_err());
        assert!(Jwks::new(&JwtConfig::new("i", "file:///etc/passwd")).is_err());
    }

    #[tokio::test]
    async fn a_jwks_that_is_down_makes_tokens_unavailable_not_valid() {
        // Port 1 on loopback: nothing listens (connection refused at once).
        let jwks = Jwks::new(&JwtConfig::new("i", "http://127.0.0.1:1/jwks")).unwrap();
        let token = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhIn0.c2ln";
        match jwks.verify(token, Some("r")).await {
            Err(AuthError::Unavailable(why)) => assert!(why.contains("127.0.0.1:1"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(!jwks.has_keys());
        match jwks
            .verify("eyJhbGciOiJIUzI1NiJ9.e30.c2ln", Some("r"))
            .await
        {
            Err(AuthError::Invalid(why)) => assert!(why.contains("HS256"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
