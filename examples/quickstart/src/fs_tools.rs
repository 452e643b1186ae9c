//! The file-system tools under ROOT: `read_file`, `list_dir` and `search_text`, each with
//! its presenter.

use super::*;

// ---------------------------------------------------------------------------------------
// read_file
// ---------------------------------------------------------------------------------------

/// The arguments of `read_file`, deserialized after validation. The model sees the schema
/// derived from this struct: the doc comments are the descriptions, `Option` fields are
/// optional, `u64` admits no negative number and `#[tool(…)]` adds bounds.
#[derive(Debug, Deserialize, ToolArgs)]
pub(crate) struct ReadArgs {
    /// File path, relative to the workspace root.
    path: String,
    /// 1-based first line (default 1).
    #[tool(minimum = 1)]
    offset: Option<u64>,
    /// Maximum number of lines (default 200).
    limit: Option<u64>,
}

/// What `read_file` returns: the window and where it sits in the file (its output schema
/// is derived too: a closed object).
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadOutput {
    path: String,
    offset: u64,
    total_lines: u64,
    text: String,
}

pub(crate) fn read_file_tool(sandbox: &Arc<Sandbox>) -> Result<ToolDefinition, RegistryError> {
    let sandbox = Arc::clone(sandbox);
    define_tool::<ReadArgs, ReadOutput>(
        "read_file",
        "Read a text file under the workspace root, optionally a window of its lines.",
    )
    .body(move |args: ReadArgs, _ctx: RunContext| {
        let sandbox = Arc::clone(&sandbox);
        async move {
            blocking(move || {
                let real = sandbox.resolve(&args.path).map_err(ToolError::new)?;
                let bytes = std::fs::read(&real).map_err(|e| io_error("read", &args.path, &e))?;
                let text = String::from_utf8_lossy(&bytes);
                let offset = args.offset.unwrap_or(1).max(1);
                let limit = args.limit.unwrap_or(DEFAULT_READ_LIMIT);
                let skip = usize::try_from(offset - 1).unwrap_or(usize::MAX);
                let take = usize::try_from(limit).unwrap_or(usize::MAX);
                let window: Vec<&str> = text.lines().skip(skip).take(take).collect();
                Ok(ReadOutput {
                    path: sandbox.relative(&real),
                    offset,
                    total_lines: count(text.lines().count()),
                    text: window.join("\n"),
                })
            })
            .await
        }
    })
    // Reading never changes anything: reads may overlap with their siblings.
    .concurrency(|_: &ReadArgs| true)
    .render(|_args, output| {
        let output = output.value();
        let text = if output.text.is_empty() {
            format!(
                "(no lines from line {}: {} has {} lines)",
                output.offset, output.path, output.total_lines
            )
        } else {
            output.text.clone()
        };
        vec![ContentBlock::text(text)]
    })
    // The replayable payload a UI turns into a read card (see `read_view_from_meta`).
    .presentation_meta(|_args, output| {
        let output = output.value();
        let lines: Vec<Value> = output
            .text
            .lines()
            .zip(output.offset..)
            .map(|(text, number)| json!({"number": number, "text": text}))
            .collect();
        let mut meta = json!({
            "path": output.path,
            "offset": output.offset,
            "totalLines": output.total_lines,
            "lines": lines,
        });
        if let Some(lang) = lang_for_path(&output.path) {
            meta["lang"] = json!(lang);
        }
        meta
    })
    .presenter(ReadFilePresenter)
    .build()
}

/// The cards of `read_file`: a read card on the way in, the numbered window on the way out.
pub(crate) struct ReadFilePresenter;

impl TypedPresenter for ReadFilePresenter {
    type Args = ReadArgs;

    fn present_call(&self, args: &ReadArgs) -> Option<ToolCallView> {
        let start = u32::try_from(args.offset.unwrap_or(1).max(1)).unwrap_or(u32::MAX);
        let view = GenericCallView::new(format!("Read {}", args.path))
            .with_kind(ToolCallKind::Read)
            .with_locations([FileLocation::new(&args.path).at_line(start)]);
        Some(view.into())
    }

    fn present_result(&self, args: &ReadArgs, result: &RawResult) -> Option<ToolResultView> {
        if result.is_error {
            return None; // the generic card shows the error text
        }
        let view = read_view_from_meta(result.meta.as_ref()?)?;
        let title = match view.lines() {
            [] => format!("Read {} (nothing in range)", args.path),
            [first, .., last] => format!(
                "Read {} (lines {}-{} of {})",
                args.path,
                first.number,
                last.number,
                view.total_lines()
            ),
            [only] => format!(
                "Read {} (line {} of {})",
                args.path,
                only.number,
                view.total_lines()
            ),
        };
        Some(view.with_title(title).into())
    }
}

// ---------------------------------------------------------------------------------------
// list_dir
// ---------------------------------------------------------------------------------------

/// The arguments of `list_dir`.
#[derive(Debug, Deserialize, ToolArgs)]
pub(crate) struct ListArgs {
    /// Directory path, relative to the workspace root.
    path: String,
}

pub(crate) fn list_dir_tool(sandbox: &Arc<Sandbox>) -> Result<ToolDefinition, RegistryError> {
    let sandbox = Arc::clone(sandbox);
    define_tool::<ListArgs, Vec<String>>(
        "list_dir",
        "List a directory under the workspace root, sorted; directories end with `/`.",
    )
    .body(move |args: ListArgs, _ctx: RunContext| {
        let sandbox = Arc::clone(&sandbox);
        async move {
            blocking(move || {
                let real = sandbox.resolve(&args.path).map_err(ToolError::new)?;
                let entries =
                    std::fs::read_dir(&real).map_err(|e| io_error("list", &args.path, &e))?;
                let mut names = Vec::new();
                for entry in entries {
                    let entry = entry.map_err(|e| io_error("list", &args.path, &e))?;
                    let mut name = entry.file_name().to_string_lossy().into_owned();
                    // `metadata` follows symbolic links: a link to a directory lists as one.
                    if entry.path().metadata().is_ok_and(|m| m.is_dir()) {
                        name.push('/');
                    }
                    names.push(name);
                }
                names.sort();
                Ok(names)
            })
            .await
        }
    })
    .concurrency(|_: &ListArgs| true)
    .render(|args, names| {
        let names = names.value();
        let text = if names.is_empty() {
            format!("{} is empty", args.path)
        } else {
            names.join("\n")
        };
        vec![ContentBlock::text(text)]
    })
    // A "paths" search payload: the entries as root-relative paths.
    .presentation_meta(|args, names| {
        let dir = args.path.trim_end_matches('/');
        let paths: Vec<String> = names
            .value()
            .iter()
            .map(|name| match dir {
                "" | "." => name.clone(),
                dir => format!("{dir}/{name}"),
            })
            .collect();
        json!({"shape": "paths", "paths": paths, "truncated": false, "total": paths.len()})
    })
    .presenter(ListDirPresenter)
    .build()
}

/// The cards of `list_dir`: a read card, then the entries as a path list.
pub(crate) struct ListDirPresenter;

impl TypedPresenter for ListDirPresenter {
    type Args = ListArgs;

    fn present_call(&self, args: &ListArgs) -> Option<ToolCallView> {
        let view = GenericCallView::new(format!("List {}", args.path))
            .with_kind(ToolCallKind::Read)
            .with_locations([FileLocation::new(&args.path)]);
        Some(view.into())
    }

    fn present_result(&self, args: &ListArgs, result: &RawResult) -> Option<ToolResultView> {
        if result.is_error {
            return None;
        }
        let view = search_view_from_meta(result.meta.as_ref()?)?;
        Some(titled(view, format!("Listed {}", args.path)))
    }
}

/// A search card with a replacement title.
pub(crate) fn titled(view: SearchResultView, title: String) -> ToolResultView {
    match view {
        SearchResultView::Matches(view) => view.with_title(title).into(),
        SearchResultView::Paths(view) => view.with_title(title).into(),
    }
}

// ---------------------------------------------------------------------------------------
// search_text
// ---------------------------------------------------------------------------------------

/// The arguments of `search_text`.
#[derive(Debug, Deserialize, ToolArgs)]
pub(crate) struct SearchArgs {
    /// Directory to search, relative to the workspace root.
    path: String,
    /// The text to find.
    needle: String,
    /// Maximum number of matches (default 20).
    max_results: Option<u64>,
}

/// One matching line.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchMatch {
    path: String,
    line: u64,
    text: String,
}

/// What `search_text` returns.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchOutput {
    matches: Vec<SearchMatch>,
    /// Whether the walk stopped early because `max_results` was reached.
    truncated: bool,
}

pub(crate) fn search_text_tool(sandbox: &Arc<Sandbox>) -> Result<ToolDefinition, RegistryError> {
    let sandbox = Arc::clone(sandbox);
    define_tool::<SearchArgs, SearchOutput>(
        "search_text",
        "Search the files under a directory for a plain-text needle (case-sensitive); \
         skips `target` and `.git`. Returns `path:line: text` matches.",
    )
    .body(move |args: SearchArgs, ctx: RunContext| {
        let sandbox = Arc::clone(&sandbox);
        // The walk checks the call's token between files: a cancelled batch stops it.
        let cancel = ctx.cancellation().clone();
        async move {
            if args.needle.is_empty() {
                return Err(ToolError::custom("EMPTY_NEEDLE", "the needle is empty"));
            }
            blocking(move || {
                let dir = sandbox.resolve(&args.path).map_err(ToolError::new)?;
                let max = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
                let mut search = Search {
                    sandbox: &sandbox,
                    needle: &args.needle,
                    max,
                    cancel: &cancel,
                    matches: Vec::new(),
                    truncated: false,
                };
                search
                    .walk(&dir)
                    .map_err(|e| io_error("search", &args.path, &e))?;
                Ok(SearchOutput {
                    matches: search.matches,
                    truncated: search.truncated,
                })
            })
            .await
        }
    })
    .concurrency(|_: &SearchArgs| true)
    .render(|args, output| {
        let output = output.value();
        let mut lines: Vec<String> = output
            .matches
            .iter()
            .map(|m| format!("{}:{}: {}", m.path, m.line, m.text))
            .collect();
        if lines.is_empty() {
            lines.push(format!(
                "no matches for {:?} under {}",
                args.needle, args.path
            ));
        }
        if output.truncated {
            lines.push(format!(
                "(stopped after {} matches; narrow the search or raise max_results)",
                output.matches.len()
            ));
        }
        vec![ContentBlock::text(lines.join("\n"))]
    })
    // A "matches" search payload, grouped by file in first-seen order.
    .presentation_meta(|_args, output| {
        let output = output.value();
        let mut files: Vec<(String, Vec<Value>)> = Vec::new();
        for m in &output.matches {
            let found = json!({"lineNumber": m.line, "line": m.text});
            match files.iter_mut().find(|(path, _)| *path == m.path) {
                Some((_, matches)) => matches.push(found),
                None => files.push((m.path.clone(), vec![found])),
            }
        }
        let files: Vec<Value> = files
            .into_iter()
            .map(|(path, matches)| json!({"path": path, "matches": matches}))
            .collect();
        // When the walk stopped early, more matches exist than the ones carried.
        let total = count(output.matches.len()) + u64::from(output.truncated);
        json!({"shape": "matches", "files": files, "truncated": output.truncated, "total": total})
    })
    .presenter(SearchTextPresenter)
    .build()
}

/// A recursive, sorted walk with std only.
pub(crate) struct Search<'a> {
    sandbox: &'a Sandbox,
    needle: &'a str,
    max: u64,
    cancel: &'a CancellationToken,
    matches: Vec<SearchMatch>,
    truncated: bool,
}

impl Search<'_> {
    fn walk(&mut self, dir: &Path) -> std::io::Result<()> {
        let mut entries: Vec<std::fs::DirEntry> =
            std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            if self.truncated || self.cancel.is_cancelled() {
                return Ok(());
            }
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                if !matches!(entry.file_name().to_str(), Some("target" | ".git")) {
                    self.walk(&path)?;
                }
            } else if kind.is_file() {
                // Symbolic links are skipped: they could lead out of ROOT or into a loop.
                self.search_file(&path);
            }
        }
        Ok(())
    }

    fn search_file(&mut self, path: &Path) {
        let too_big = path.metadata().is_ok_and(|m| m.len() > MAX_SEARCHED_FILE);
        let Some(text) = (!too_big)
            .then(|| std::fs::read(path).ok())
            .flatten()
            .and_then(|bytes| String::from_utf8(bytes).ok())
        else {
            return; // too big, unreadable or not text
        };
        for (number, line) in (1u64..).zip(text.lines()) {
            if !line.contains(self.needle) {
                continue;
            }
            if count(self.matches.len()) >= self.max {
                self.truncated = true;
                return;
            }
            self.matches.push(SearchMatch {
                path: self.sandbox.relative(path),
                line: number,
                text: shorten_line(line.trim(), 160),
            });
        }
    }
}

/// The cards of `search_text`: a search card with the directory, then the matches.
pub(crate) struct SearchTextPresenter;

impl TypedPresenter for SearchTextPresenter {
    type Args = SearchArgs;

    fn present_call(&self, args: &SearchArgs) -> Option<ToolCallView> {
        let view = GenericCallView::new(format!("Search {:?} in {}", args.needle, args.path))
            .with_kind(ToolCallKind::Search)
            .with_locations([FileLocation::new(&args.path)]);
        Some(view.into())
    }

    fn present_result(&self, args: &SearchArgs, result: &RawResult) -> Option<ToolResultView> {
        if result.is_error {
            return None;
        }
        let view = search_view_from_meta(result.meta.as_ref()?)?;
        Some(titled(
            view,
            format!("Searched {:?} in {}", args.needle, args.path),
        ))
    }
}
