//! Lossless output budgets (docs/decisions.md, entry 26): what the model reads of a call's
//! output is cut to a budget, head and tail with a header that says what was cut and how to
//! read the rest; the full result stays in a [`ResultStore`] under a handle, readable page
//! by page with the built-in `read_result` tool. The structured value is never cut:
//! observers and `ToolResult::value` keep it whole, and so do Code Mode programs (only a
//! top-level call, such as `run_code`'s own output, is budgeted; its sub-calls never are).

mod cut;
mod store;

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use tools_pipeline::{PostDecision, PostNext, PostRequest, ToolResult, from_fn};
use tools_presentation::ContentBlock;
use tools_registry::{ToolDefinition, ToolError, define_tool};
use tools_schema::ToolArgs;

pub use store::{MemoryResultStore, ResultStore, StoredResult};

/// The name of the built-in tool that reads a cut result.
pub const READ_RESULT: &str = "read_result";

/// What an image counts for against a budget (its pixels are not text the model reads).
const IMAGE_BYTES: usize = 1024;

/// How much of a call's output the model reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputBudget {
    default: usize,
    per_tool: HashMap<String, usize>,
}

impl OutputBudget {
    /// At most `bytes` bytes of text per call.
    pub fn bytes(bytes: usize) -> OutputBudget {
        OutputBudget {
            default: bytes.max(MIN_BUDGET),
            per_tool: HashMap::new(),
        }
    }

    /// At most about `tokens` tokens per call (4 bytes a token, the usual estimate for
    /// English text and code).
    pub fn tokens(tokens: usize) -> OutputBudget {
        OutputBudget::bytes(tokens.saturating_mul(4))
    }

    /// A different budget, in bytes, for `tool`.
    #[must_use]
    pub fn for_tool(mut self, tool: impl Into<String>, bytes: usize) -> OutputBudget {
        self.per_tool.insert(tool.into(), bytes.max(MIN_BUDGET));
        self
    }

    /// The budget of `tool`, in bytes.
    pub fn of(&self, tool: &str) -> usize {
        self.per_tool.get(tool).copied().unwrap_or(self.default)
    }
}

impl Default for OutputBudget {
    /// 32 KiB (about 8 000 tokens): a large file's head and tail, without one call eating
    /// a model's context.
    fn default() -> Self {
        OutputBudget::bytes(32 << 10)
    }
}

/// The handle of the full result behind a result the output budget cut (read from the
/// header it starts with), for an observer that wants the full text:
/// `runtime.result_store().get(handle)`. `None` for a result that was not cut.
pub fn cut_handle(result: &ToolResult) -> Option<&str> {
    let first = result.content().first()?.as_text()?;
    let header = first.lines().next()?;
    if !header.starts_with(HEADER_START) {
        return None;
    }
    header.split("handle=\"").nth(1)?.split('"').next()
}

/// How a cut output's header begins.
const HEADER_START: &str = "[output cut to fit: ";

/// The smallest budget: room for the header and a little of the text.
const MIN_BUDGET: usize = 512;

/// The post-execute hook that cuts oversized outputs of top-level calls.
pub(crate) fn hook(
    budget: OutputBudget,
    store: Arc<dyn ResultStore>,
) -> impl tools_pipeline::Hook<PostRequest> {
    let state = Arc::new((budget, store));
    from_fn(move |req: PostRequest, next: PostNext| {
        let state = Arc::clone(&state);
        async move {
            let exec = req.execution();
            let tool = exec.name().as_str();
            let exempt = exec.parent().is_some() || tool == READ_RESULT;
            let budget = exec
                .output_budget()
                .map_or_else(|| state.0.of(tool), |bytes| bytes.max(MIN_BUDGET));
            if !exempt && let Some(content) = cut(req.result(), tool, budget, &*state.1) {
                return Ok::<_, ToolError>(PostDecision::accept_content(content));
            }
            next.run(req).await
        }
    })
}

/// The model's view of `result` when its text exceeds `budget`: the full result is stored
/// and the text cut to a header, its head and its tail; images are kept (and counted).
fn cut(
    result: &ToolResult,
    tool: &str,
    budget: usize,
    store: &dyn ResultStore,
) -> Option<Vec<ContentBlock>> {
    // Sized first, without copying: most outputs fit and cost nothing more.
    let blocks = result.content();
    let texts = blocks.iter().filter_map(ContentBlock::as_text);
    let text_blocks = texts.clone().count();
    let size = texts.map(str::len).sum::<usize>()
        + text_blocks.saturating_sub(1)
        + (blocks.len() - text_blocks) * IMAGE_BYTES;
    if size <= budget {
        return None;
    }
    let mut text = String::with_capacity(size);
    let mut images = Vec::new();
    for block in result.content() {
        match block.as_text() {
            Some(t) => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(t);
            }
            None => images.push(block.clone()),
        }
    }
    let lines = text.lines().count();
    let total = text.len();
    let handle = store.put(StoredResult {
        tool: tool.to_owned(),
        text: text.clone(),
        value: result.value().cloned(),
    });
    let header = format!(
        "{HEADER_START}{total} bytes in {lines} lines; below are its first and last bytes. \
         Read the rest with {READ_RESULT}(handle=\"{handle}\", offset, limit); offsets are bytes.]\n"
    );
    // The marker's widest form: the gap is at most the whole text.
    let marker = |gap: usize| format!("\n[… {gap} bytes cut …]\n");
    let room = budget
        .saturating_sub(header.len() + marker(total).len() + images.len() * IMAGE_BYTES)
        .max(64);
    let (head, tail, gap) = cut::head_tail(&text, room * 2 / 3, room / 3);
    let mut view = header;
    view.push_str(head);
    view.push_str(&marker(gap));
    view.push_str(tail);
    let mut content = vec![ContentBlock::text(view)];
    content.extend(images);
    Some(content)
}

#[derive(Deserialize, ToolArgs)]
struct ReadArgs {
    /// The handle named in the cut output's header.
    handle: String,
    /// The byte offset to start at (default 0).
    offset: Option<u64>,
    /// How many bytes to read at most (default: the output budget).
    limit: Option<u64>,
}

#[derive(serde::Serialize, serde::Deserialize, tools_macros::ToolSchema)]
struct Page {
    /// The text from `offset` (cut on character boundaries).
    text: String,
    /// Where this page starts.
    offset: u64,
    /// Where the next page starts; absent after the last page.
    next_offset: Option<u64>,
    /// The full text's size in bytes.
    total_bytes: u64,
}

/// The `read_result` tool over `store`: pages of a cut result's full text.
pub(crate) fn read_result(
    store: Arc<dyn ResultStore>,
    page: usize,
) -> Result<ToolDefinition, tools_registry::Error> {
    define_tool::<ReadArgs, Page>(
        READ_RESULT,
        "Read part of a tool output that was cut to fit: the handle, offset and limit come from the cut output's header.",
    )
    .read_only()
    .body(move |args: ReadArgs, _ctx| {
        let store = Arc::clone(&store);
        async move {
            let stored = store.get(&args.handle).ok_or_else(|| {
                ToolError::new(format!(
                    "no kept output has the handle {:?} (it may have been evicted)",
                    args.handle
                ))
            })?;
            let text = &stored.text;
            let start = cut::ceil(text, usize::try_from(args.offset.unwrap_or(0)).unwrap_or(usize::MAX));
            let limit = args
                .limit
                .and_then(|l| usize::try_from(l).ok())
                .unwrap_or(page)
                .clamp(1, page);
            let mut end = cut::floor(text, start.saturating_add(limit));
            if end == start && start < text.len() {
                // A limit smaller than the next character: take that character.
                end = cut::ceil(text, start + 1);
            }
            Ok(Page {
                text: text[start..end].to_owned(),
                offset: start as u64,
                next_offset: (end < text.len()).then_some(end as u64),
                total_bytes: text.len() as u64,
            })
        }
    })
    .build()
}
