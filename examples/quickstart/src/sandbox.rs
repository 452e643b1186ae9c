//! The sandbox: every path a tool touches is resolved here, by the guard and by the bodies.

use super::*;

/// The canonical ROOT every file-system tool is confined to.
#[derive(Debug)]
pub(crate) struct Sandbox {
    pub(crate) root: PathBuf,
}

impl Sandbox {
    /// `requested` (relative to ROOT, or absolute) as a path under ROOT, or why not.
    ///
    /// The lexical check catches `..` escapes even for paths that do not exist; the
    /// canonical check catches symbolic links inside ROOT that lead out of it. A path that
    /// does not exist is returned as is: the tool reports it.
    pub(crate) fn resolve(&self, requested: &str) -> Result<PathBuf, String> {
        let outside = || {
            format!(
                "access denied: {requested:?} is outside the workspace root {}",
                self.root.display()
            )
        };
        let candidate = Path::new(requested);
        let joined = if candidate.is_absolute() {
            candidate.to_path_buf()
        } else {
            self.root.join(candidate)
        };
        let mut lexical = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    if !lexical.pop() {
                        return Err(outside());
                    }
                }
                other => lexical.push(other),
            }
        }
        if !lexical.starts_with(&self.root) {
            return Err(outside());
        }
        match lexical.canonicalize() {
            Ok(real) if real.starts_with(&self.root) => Ok(real),
            Ok(_) => Err(format!("{} (through a symbolic link)", outside())),
            Err(_) => Ok(lexical),
        }
    }

    /// `path` relative to ROOT, with `/` separators (`.` for ROOT itself).
    pub(crate) fn relative(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }
}

/// An I/O failure as a tool error with a machine code the model (and a UI) can act on.
pub(crate) fn io_error(what: &str, path: &str, error: &std::io::Error) -> ToolError {
    let code = match error.kind() {
        std::io::ErrorKind::NotFound => "NOT_FOUND",
        std::io::ErrorKind::PermissionDenied => "PERMISSION_DENIED",
        _ => "IO_ERROR",
    };
    ToolError::custom(code, format!("cannot {what} {path:?}: {error}"))
}

/// Runs blocking file-system work off the async worker threads.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|join| {
            Err(ToolError::new(format!(
                "the file-system task failed: {join}"
            )))
        })
}

pub(crate) fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
