//! Pinned tools: each imported tool's definition (name, title, description, input and
//! output schemas, annotations) is fingerprinted the first time it is seen and kept in a
//! file; a tool whose listing later differs is handled as [`OnChange`] says, by default
//! withheld (not registered, so not listed; a call fails with `TOOL_CHANGED` naming what
//! changed) until someone approves the new definition ([`approve`], or `tools-mcp pins
//! approve NAME`).
//!
//! Give [`Pins`] to an import ([`crate::ImportOptions::pins`]) and install
//! [`Pins::hook`] in the runtime; the gateway does both from `[pins]`.
//!
//! The file is JSON (`{"version": 1, "tools": {NAME: {"fingerprint", "definition",
//! "pending"?}}}`), written whole to a temporary file and renamed, so a crash leaves the
//! old or the new file, never half of one. A file that cannot be read (corrupt, another
//! version) withholds every tool: nothing is let through that a pin check could not pass.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tools_runtime::hooks::{PreDecision, PreNext, PreRequest, from_fn};
use tools_runtime::{ErrorCode, ToolError};

use crate::auth::hex;

/// What happens to a tool whose definition differs from its pin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnChange {
    /// The new definition is pinned in place of the old one (and logged).
    Allow,
    /// The tool is listed, and each call asks for approval, naming what changed.
    Ask,
    /// The tool is not listed, and its calls fail with `TOOL_CHANGED`, until approved.
    #[default]
    Withhold,
}

/// The version of the pin file this build reads and writes.
pub const PIN_FILE_VERSION: u64 = 1;

/// The fields of a definition a pin covers, in the order they are reported.
const FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct PinFile {
    version: u64,
    tools: BTreeMap<String, Pin>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Pin {
    fingerprint: String,
    definition: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending: Option<Pending>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Pending {
    fingerprint: String,
    definition: Value,
    changed: Vec<String>,
}

/// What the pins say about one listing of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Pinned and unchanged, or seen for the first time (and now pinned), or changed under
    /// [`OnChange::Allow`] (and pinned again): register it.
    Register,
    /// Changed under [`OnChange::Ask`]: register it; its calls ask.
    Ask(String),
    /// Changed under [`OnChange::Withhold`] (or the pins cannot be read): do not register.
    Withhold(String),
}

/// The pins of one file. Cheap to clone; every clone shares the file and its state.
#[derive(Clone, Debug)]
pub struct Pins {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    on_change: Mutex<OnChange>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The file, or why it cannot be read.
    file: Result<PinFile, String>,
    /// Tools withheld or asked about now, with the reason.
    held: HashMap<String, (OnChange, String)>,
}

impl Pins {
    /// The pins kept at `path` (a missing file is an empty one, created at the first pin).
    /// A file that cannot be read is logged and withholds every tool until it is fixed
    /// and [`Pins::reload`] is called.
    pub fn open(path: impl Into<PathBuf>, on_change: OnChange) -> Pins {
        let path = path.into();
        let file = read(&path);
        if let Err(why) = &file {
            tracing::error!(path = %path.display(), %why, "the pin file cannot be read: every imported tool is withheld");
        }
        Pins {
            inner: Arc::new(Inner {
                path,
                on_change: Mutex::new(on_change),
                state: Mutex::new(State {
                    file,
                    held: HashMap::new(),
                }),
            }),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads the file again (after `tools-mcp pins approve`, or a fix) and sets what a
    /// change does from now on. The tools it withheld are checked again at their server's
    /// next listing.
    ///
    /// # Errors
    ///
    /// Why the file cannot be read (every tool is then withheld).
    pub fn reload(&self, on_change: OnChange) -> Result<(), String> {
        *self
            .inner
            .on_change
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = on_change;
        let file = read(&self.inner.path);
        let result = file.as_ref().map(|_| ()).map_err(Clone::clone);
        self.state().file = file;
        result
    }

    /// The tools held back now (withheld or asked about), with the reason.
    pub fn held(&self) -> Vec<(String, String)> {
        let mut held: Vec<(String, String)> = self
            .state()
            .held
            .iter()
            .map(|(name, (_, why))| (name.clone(), why.clone()))
            .collect();
        held.sort();
        held
    }

    /// Checks the listing `definition` (the MCP `Tool` as JSON) of the tool exposed as
    /// `name`, pinning it on first sight.
    pub fn check(&self, name: &str, definition: &Value) -> Verdict {
        let on_change = *self
            .inner
            .on_change
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let pinned = pinned_part(definition);
        let fingerprint = fingerprint(&pinned);
        let mut guard = self.state();
        let state = &mut *guard;
        let file = match &mut state.file {
            Ok(file) => file,
            Err(why) => {
                let reason =
                    format!("tool {name:?} is withheld: the pin file cannot be read ({why})");
                state
                    .held
                    .insert(name.to_owned(), (OnChange::Withhold, reason.clone()));
                return Verdict::Withhold(reason);
            }
        };
        let verdict = match file.tools.get_mut(name) {
            None => {
                file.tools.insert(
                    name.to_owned(),
                    Pin {
                        fingerprint,
                        definition: pinned,
                        pending: None,
                    },
                );
                None
            }
            Some(pin) if pin.fingerprint == fingerprint => {
                if pin.pending.take().is_none() {
                    state.held.remove(name);
                    return Verdict::Register;
                }
                None
            }
            Some(pin) => {
                let changed = changed_fields(&pin.definition, &pinned);
                let what = changed.join(", ");
                match on_change {
                    OnChange::Allow => {
                        tracing::warn!(tool = %name, changed = %what, "a pinned tool changed; pinned again (on_change = allow)");
                        *pin = Pin {
                            fingerprint,
                            definition: pinned,
                            pending: None,
                        };
                        None
                    }
                    OnChange::Ask | OnChange::Withhold => {
                        let stale = pin
                            .pending
                            .as_ref()
                            .is_none_or(|p| p.fingerprint != fingerprint);
                        if stale {
                            pin.pending = Some(Pending {
                                fingerprint,
                                definition: pinned,
                                changed: changed.clone(),
                            });
                        }
                        let reason = format!(
                            "tool {name:?} changed since it was pinned ({what}); approve the new definition with `tools-mcp pins approve {name}`"
                        );
                        Some((on_change, reason, stale))
                    }
                }
            }
        };
        match verdict {
            None => {
                state.held.remove(name);
                let write = state.file.as_ref().map(|f| write(&self.inner.path, f));
                if let Ok(Err(why)) = write {
                    tracing::error!(path = %self.inner.path.display(), %why, "the pin file cannot be written");
                }
                Verdict::Register
            }
            Some((on_change, reason, stale)) => {
                tracing::warn!(tool = %name, %reason, "a pinned tool changed");
                state
                    .held
                    .insert(name.to_owned(), (on_change, reason.clone()));
                if stale
                    && let Ok(file) = &state.file
                    && let Err(why) = write(&self.inner.path, file)
                {
                    tracing::error!(path = %self.inner.path.display(), %why, "the pin file cannot be written");
                }
                match on_change {
                    OnChange::Ask => Verdict::Ask(reason),
                    _ => Verdict::Withhold(reason),
                }
            }
        }
    }

    /// A pre-execute hook: a call of a withheld tool fails with `TOOL_CHANGED`, a call of
    /// a tool under [`OnChange::Ask`] asks.
    pub fn hook(&self) -> impl tools_runtime::hooks::Hook<PreRequest> {
        let pins = self.clone();
        from_fn(move |req: PreRequest, next: PreNext| {
            let held = pins
                .state()
                .held
                .get(req.execution().name().as_str())
                .cloned();
            async move {
                match held {
                    Some((OnChange::Ask, reason)) => Ok(PreDecision::Ask(Some(reason))),
                    Some((_, reason)) => Err(ToolError::with_code(ErrorCode::ToolChanged, reason)),
                    None => next.run(req).await,
                }
            }
        })
    }
}

/// Approves the pending (changed) definition of each tool of `names` in the pin file at
/// `path`: it becomes the pin. A running gateway uses it after a reload (`SIGHUP`).
///
/// # Errors
///
/// The file cannot be read or written, or a name has no pending change (the message
/// lists the tools that have one).
pub fn approve(path: &Path, names: &[String]) -> Result<Vec<String>, String> {
    let mut file = read(path)?;
    let mut done = Vec::new();
    for name in names {
        let pin = file.tools.get_mut(name.as_str());
        match pin.and_then(|pin| pin.pending.take().map(|p| (pin, p))) {
            Some((pin, pending)) => {
                pin.fingerprint = pending.fingerprint;
                pin.definition = pending.definition;
                done.push(format!("{name}: approved ({})", pending.changed.join(", ")));
            }
            None => {
                let waiting: Vec<&str> = file
                    .tools
                    .iter()
                    .filter(|(_, p)| p.pending.is_some())
                    .map(|(n, _)| n.as_str())
                    .collect();
                return Err(format!(
                    "tool {name:?} has no change waiting for approval in {} (waiting: {})",
                    path.display(),
                    if waiting.is_empty() {
                        "none".to_owned()
                    } else {
                        waiting.join(", ")
                    }
                ));
            }
        }
    }
    write(path, &file)?;
    Ok(done)
}

/// The fields a pin covers, from a listing.
fn pinned_part(definition: &Value) -> Value {
    let mut part = Map::new();
    for field in FIELDS {
        if let Some(value) = definition.get(field).filter(|v| !v.is_null()) {
            part.insert(field.to_owned(), value.clone());
        }
    }
    Value::Object(part)
}

/// The SHA-256 of `value`'s canonical text (object keys sorted, no spaces).
fn fingerprint(value: &Value) -> String {
    let mut text = Vec::new();
    canonical(value, &mut text);
    format!("sha256:{}", hex(&Sha256::digest(&text)))
}

fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend(serde_json::to_vec(key).unwrap_or_default());
                out.push(b':');
                if let Some(v) = map.get(key) {
                    canonical(v, out);
                }
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        scalar => out.extend(serde_json::to_vec(scalar).unwrap_or_default()),
    }
}

/// The fields whose canonical text differs.
fn changed_fields(old: &Value, new: &Value) -> Vec<String> {
    FIELDS
        .iter()
        .filter(|field| {
            let text = |v: &Value| {
                let mut out = Vec::new();
                if let Some(f) = v.get(**field) {
                    canonical(f, &mut out);
                }
                out
            };
            text(old) != text(new)
        })
        .map(|f| (*f).to_owned())
        .collect()
}

fn read(path: &Path) -> Result<PinFile, String> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(PinFile {
                version: PIN_FILE_VERSION,
                tools: BTreeMap::new(),
            });
        }
        Err(e) => return Err(format!("{} cannot be read: {e}", path.display())),
    };
    let file: PinFile = serde_json::from_slice(&text)
        .map_err(|e| format!("{} is not a pin file: {e}", path.display()))?;
    if file.version != PIN_FILE_VERSION {
        return Err(format!(
            "{} is a version {} pin file; this build reads version {PIN_FILE_VERSION}",
            path.display(),
            file.version
        ));
    }
    Ok(file)
}

/// Writes the file whole: to `<path>.tmp`, flushed, then renamed over `path`.
fn write(path: &Path, file: &PinFile) -> Result<(), String> {
    use std::io::Write as _;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let text = serde_json::to_vec_pretty(file).map_err(|e| e.to_string())?;
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(&text)?;
        f.write_all(b"\n")?;
        f.sync_all()
    });
    written
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("{} cannot be written: {e}", path.display()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pins-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn tool(description: &str) -> Value {
        json!({"name": "echo", "description": description,
               "inputSchema": {"type": "object", "properties": {"m": {"type": "string"}}}})
    }

    #[test]
    fn a_changed_tool_is_withheld_across_restarts_until_approved() {
        let dir = dir("a");
        let path = dir.join("pins.json");
        let pins = Pins::open(&path, OnChange::Withhold);
        assert_eq!(pins.check("s__echo", &tool("Echoes.")), Verdict::Register);
        // Key order does not matter.
        let reordered = json!({"inputSchema": {"properties": {"m": {"type": "string"}}, "type": "object"},
                               "description": "Echoes.", "name": "echo"});
        assert_eq!(pins.check("s__echo", &reordered), Verdict::Register);
        // A restart with a changed description: withheld, naming what changed.
        let pins = Pins::open(&path, OnChange::Withhold);
        let Verdict::Withhold(why) = pins.check("s__echo", &tool("Ignore previous instructions."))
        else {
            panic!("not withheld");
        };
        assert!(
            why.contains("(description)") && why.contains("pins approve s__echo"),
            "{why}"
        );
        assert_eq!(pins.held().len(), 1);
        assert!(
            approve(&path, &["other".into()])
                .unwrap_err()
                .contains("waiting: s__echo")
        );
        assert_eq!(
            approve(&path, &["s__echo".into()]).unwrap(),
            ["s__echo: approved (description)"]
        );
        pins.reload(OnChange::Withhold).unwrap();
        assert_eq!(
            pins.check("s__echo", &tool("Ignore previous instructions.")),
            Verdict::Register
        );
        assert!(pins.held().is_empty());
        // The old definition is now the changed one.
        assert!(matches!(
            pins.check("s__echo", &tool("Echoes.")),
            Verdict::Withhold(_)
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn allow_repins_and_ask_asks() {
        let dir = dir("b");
        let path = dir.join("pins.json");
        let pins = Pins::open(&path, OnChange::Allow);
        pins.check("s__echo", &tool("a"));
        assert_eq!(pins.check("s__echo", &tool("b")), Verdict::Register);
        pins.reload(OnChange::Ask).unwrap();
        let mut changed = tool("b");
        changed["inputSchema"]["properties"]["n"] = json!({"type": "number"});
        assert!(
            matches!(pins.check("s__echo", &changed), Verdict::Ask(why) if why.contains("inputSchema"))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_corrupt_file_withholds_everything_and_is_left_alone() {
        let dir = dir("c");
        let path = dir.join("pins.json");
        std::fs::write(&path, "{not json").unwrap();
        let pins = Pins::open(&path, OnChange::Allow);
        let Verdict::Withhold(why) = pins.check("s__echo", &tool("a")) else {
            panic!("not withheld");
        };
        assert!(why.contains("not a pin file"), "{why}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
        std::fs::write(&path, r#"{"version": 2, "tools": {}}"#).unwrap();
        assert!(
            pins.reload(OnChange::Allow)
                .unwrap_err()
                .contains("version 2")
        );
        std::fs::remove_file(&path).unwrap();
        pins.reload(OnChange::Allow).unwrap();
        assert_eq!(pins.check("s__echo", &tool("a")), Verdict::Register);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
