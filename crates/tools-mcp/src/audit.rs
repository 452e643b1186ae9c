//! The audit log: one JSON line per call, written before the call's result is returned.
//!
//! # Durability
//!
//! Each line is written whole, with one `write(2)` on a file opened for appending, while
//! the call's result observer runs, that is before [`tools_runtime::ToolRuntime::execute`]
//! returns and so before any client sees the result. Once a client has a response, its line
//! is in the kernel: killing the gateway (`SIGKILL` included) loses no line that was
//! acknowledged, and never leaves half a line. With `sync = true` every line is also
//! flushed to the disk (`fdatasync`) before the result is returned, so a power loss loses
//! none either; that costs a disk flush per call.
//!
//! A line that cannot be written is reported through `tracing`, and from then on every
//! call is refused (`DENIED`, "the audit log cannot be written") until a write succeeds
//! again: nothing runs unaudited.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use serde_json::{Map, Value};

/// Where audit lines go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditTarget {
    /// Appended to this file (created if missing).
    File(PathBuf),
    /// Written to standard output (the gateway over stdio cannot use it: stdout is the
    /// MCP channel there).
    Stdout,
}

/// How the audit log is written (`[audit]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditConfig {
    /// Where lines go.
    pub target: AuditTarget,
    /// A file larger than this after a line is renamed `<path>.1` (the older ones shifted
    /// to `.2` …) and a new one started; `None`: never rotated.
    pub max_bytes: Option<u64>,
    /// How many rotated files are kept (default 5).
    pub keep: usize,
    /// Whether each line carries the call's arguments (default: only their SHA-256).
    pub arguments: bool,
    /// Whether each line is flushed to the disk before the result is returned.
    pub sync: bool,
    /// The gateway instance named in every line (default: host name and process id).
    pub instance: String,
}

impl AuditConfig {
    /// Lines to `target`, not rotated, arguments hashed, not synced.
    pub fn new(target: AuditTarget) -> AuditConfig {
        AuditConfig {
            target,
            max_bytes: None,
            keep: 5,
            arguments: false,
            sync: false,
            instance: default_instance(),
        }
    }
}

/// `<host name>:<pid>`.
fn default_instance() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{host}:{}", std::process::id())
}

/// The open file and its size.
#[derive(Debug)]
struct Open {
    file: Option<File>,
    size: u64,
}

/// An audit log: cheap to clone, safe to share; lines from any number of calls are
/// written one at a time.
#[derive(Clone, Debug)]
pub struct AuditLog {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: AuditConfig,
    open: Mutex<Open>,
    healthy: AtomicBool,
    /// The number of the next line this process writes.
    seq: std::sync::atomic::AtomicU64,
}

impl AuditLog {
    /// Opens the log (creating its file).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Config`] when the file cannot be opened for appending.
    pub fn open(config: AuditConfig) -> Result<AuditLog, crate::Error> {
        let file = match &config.target {
            AuditTarget::Stdout => None,
            AuditTarget::File(path) => {
                Some(open_append(path).map_err(|e| crate::Error::Config {
                    path: path.display().to_string(),
                    message: format!("the audit log cannot be opened for appending: {e}"),
                })?)
            }
        };
        let size = file
            .as_ref()
            .and_then(|f| f.metadata().ok())
            .map_or(0, |m| m.len());
        Ok(AuditLog {
            inner: Arc::new(Inner {
                config,
                open: Mutex::new(Open { file, size }),
                healthy: AtomicBool::new(true),
                seq: std::sync::atomic::AtomicU64::new(1),
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AuditConfig {
        &self.inner.config
    }

    /// Whether the last line was written (calls are refused while it is not).
    pub fn is_healthy(&self) -> bool {
        self.inner.healthy.load(Ordering::Acquire)
    }

    /// Writes `record` (an object) as one line, with `time`, `instance` and `seq` (the
    /// line's number in this process, from 1: with `instance`, a unique id of the line)
    /// first.
    ///
    /// # Errors
    ///
    /// The write failed; the log is unhealthy until a later write succeeds.
    pub fn write(&self, record: Map<String, Value>) -> std::io::Result<()> {
        let mut line = Map::with_capacity(record.len() + 3);
        line.insert(
            "time".into(),
            Value::String(humantime::format_rfc3339_millis(SystemTime::now()).to_string()),
        );
        line.insert(
            "instance".into(),
            Value::String(self.inner.config.instance.clone()),
        );
        let seq = self.inner.seq.fetch_add(1, Ordering::Relaxed);
        line.insert("seq".into(), Value::from(seq));
        line.extend(record);
        let mut bytes = serde_json::to_vec(&Value::Object(line)).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        let written = self.write_line(&bytes);
        let was = self.inner.healthy.swap(written.is_ok(), Ordering::AcqRel);
        match &written {
            Err(e) => {
                tracing::error!(error = %e, "the audit log cannot be written: calls are refused until it can")
            }
            Ok(()) if !was => tracing::warn!("the audit log is written again: calls are accepted"),
            Ok(()) => {}
        }
        written
    }

    fn write_line(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut open = self
            .inner
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let AuditTarget::File(path) = &self.inner.config.target else {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)?;
            return out.flush();
        };
        if let Some(max) = self.inner.config.max_bytes
            && open.size > 0
            && open.size.saturating_add(bytes.len() as u64) > max
        {
            open.file = None;
            rotate(path, self.inner.config.keep)?;
            open.size = 0;
        }
        if open.file.is_none() {
            let file = open_append(path)?;
            open.size = file.metadata().map_or(0, |m| m.len());
            open.file = Some(file);
        }
        let Some(file) = open.file.as_mut() else {
            return Err(std::io::Error::other("the audit file is not open"));
        };
        // One write of the whole line: an appending write of a regular file is not split
        // by a signal once it has started, so no reader sees half a line.
        file.write_all(bytes)?;
        if self.inner.config.sync {
            file.sync_data()?;
        }
        open.size = open.size.saturating_add(bytes.len() as u64);
        Ok(())
    }
}

fn open_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// `path` → `path.1`, `path.1` → `path.2` … keeping `keep` rotated files.
fn rotate(path: &Path, keep: usize) -> std::io::Result<()> {
    let numbered = |n: usize| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    };
    if keep == 0 {
        return std::fs::remove_file(path);
    }
    let _ = std::fs::remove_file(numbered(keep));
    for n in (1..keep).rev() {
        let from = numbered(n);
        if from.exists() {
            std::fs::rename(&from, numbered(n + 1))?;
        }
    }
    match std::fs::rename(path, numbered(1)) {
        // Nothing to rotate (the file was removed under us): a new one is started.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(n: usize) -> Map<String, Value> {
        match json!({"tool": "t", "n": n}) {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn lines_are_whole_json_with_time_and_instance_first() {
        let dir = std::env::temp_dir().join(format!("audit-{}-a", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.jsonl");
        let mut config = AuditConfig::new(AuditTarget::File(path.clone()));
        config.instance = "gw-1".into();
        let log = AuditLog::open(config).unwrap();
        for n in 0..3 {
            log.write(record(n)).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2]["n"], 2);
        assert_eq!(lines[0]["instance"], "gw-1");
        let keys: Vec<&String> = lines[0].as_object().unwrap().keys().collect();
        assert_eq!(keys[..3], ["time", "instance", "seq"]);
        assert_eq!(lines[2]["seq"], 3);
        assert!(lines[0]["time"].as_str().unwrap().ends_with('Z'));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_full_file_is_rotated_and_old_ones_dropped() {
        let dir = std::env::temp_dir().join(format!("audit-{}-b", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.jsonl");
        let mut config = AuditConfig::new(AuditTarget::File(path.clone()));
        config.max_bytes = Some(200);
        config.keep = 2;
        let log = AuditLog::open(config).unwrap();
        for n in 0..40 {
            log.write(record(n)).unwrap();
        }
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]);
        for file in &files {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            assert!(text.len() <= 200, "{file}: {} bytes", text.len());
            for line in text.lines() {
                serde_json::from_str::<Value>(line).unwrap();
            }
        }
        let last = std::fs::read_to_string(&path).unwrap();
        assert!(last.contains("\"n\":39"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_write_that_fails_makes_the_log_unhealthy_until_one_succeeds() {
        let dir = std::env::temp_dir().join(format!("audit-{}-c", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.jsonl");
        let mut config = AuditConfig::new(AuditTarget::File(path.clone()));
        config.max_bytes = Some(10);
        let log = AuditLog::open(config).unwrap();
        log.write(record(0)).unwrap();
        // The next line rotates: with the folder gone, reopening fails.
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(log.write(record(1)).is_err());
        assert!(!log.is_healthy());
        std::fs::create_dir_all(&dir).unwrap();
        log.write(record(2)).unwrap();
        assert!(log.is_healthy());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
