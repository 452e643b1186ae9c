//! The stdio transport of a child-process server: newline-delimited JSON-RPC, bounded.
//!
//! rmcp's own stdio transport drops a line longer than its limit, or one it cannot parse
//! (nested deeper than `serde_json`'s recursion limit included), with nothing but a log
//! line: the request it answered waits until its deadline. This transport bounds each line
//! itself, by length ([`MAX_LINE`]) and by nesting ([`MAX_DEPTH`]), and reads the line's
//! top-level `id` with a streaming scan ([`super::scan`]) that keeps a few bytes whatever the
//! line's length. A response it cannot deliver (too long, too deep, or not a valid message)
//! is answered locally, for its id, with an error that the import reads as
//! `INVALID_TOOL_OUTPUT`:
//!
//! - as soon as both the id and the response's kind (`result` or `error`) have been seen
//!   and a limit is broken, even before the line ends (the rest of it is then discarded);
//! - otherwise when the line ends, if an id was seen by then.
//!
//! The scan also counts the items of a response's `result.content`: a result of more content
//! blocks than [`crate::ImportOptions::max_content_blocks`] is answered the same way as soon
//! as the scan has counted one more, before rmcp parses it (the parse, which buffers the
//! whole message in serde's untagged-enum representation, costs hundreds of bytes per block).
//!
//! A line without a usable id (absent, `null`, fractional, or longer than 128 bytes) cannot
//! be attributed: it is dropped with a warning and the request waits for its deadline. A
//! server's own request that breaks a limit is answered with `Invalid Request`, so the
//! server does not wait either. Only a line that is complete, within both limits and valid
//! reaches rmcp.

use std::future::Future;
use std::io;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::handler::Routes;
use super::scan::Scan;

/// The longest line (one JSON-RPC message, without its newline) read from a child: 16 MiB,
/// rmcp's own limit for stdio and for one streamable-HTTP event.
pub(super) const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The deepest nesting of one message (objects and arrays, the message's own object
/// included): 127, the deepest the `serde_json` parser rmcp uses accepts (its recursion
/// limit of 128 refuses one level more), so every line within it parses.
pub(super) const MAX_DEPTH: usize = 127;

/// How long a closed child may take to exit after its stdin closes before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// The JSON-RPC error code of a response the transport answered itself (in the range the
/// JSON-RPC spec reserves for implementations).
pub(super) const LOCAL_ERROR: ErrorCode = ErrorCode(-32_001);

/// Why the current line is being discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Broken {
    TooLong,
    TooDeep,
    ManyBlocks,
}

/// Newline-delimited JSON-RPC over a reader and a writer, each line bounded.
pub(super) struct Lines<R, W> {
    read: BufReader<R>,
    write: Arc<tokio::sync::Mutex<Option<W>>>,
    routes: Arc<Routes>,
    server: Arc<str>,
    max_line: usize,
    max_depth: usize,
    /// The most items of a response's `result.content` (its content blocks).
    max_blocks: usize,
    /// The current line, while it is within the limits.
    line: Vec<u8>,
    scan: Scan,
    /// Set once the current line broke a limit: its bytes are discarded until its newline.
    broken: Option<Broken>,
    /// Whether the current line's request was already answered locally.
    answered: bool,
}

impl<R, W> Lines<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Bounded lines over `read` and `write`; local answers are recorded in `routes`.
    pub(super) fn new(read: R, write: W, routes: Arc<Routes>, server: &str) -> Lines<R, W> {
        Lines::with_limits(read, write, routes, server, MAX_LINE, MAX_DEPTH)
    }

    pub(super) fn with_limits(
        read: R,
        write: W,
        routes: Arc<Routes>,
        server: &str,
        max_line: usize,
        max_depth: usize,
    ) -> Lines<R, W> {
        Lines {
            read: BufReader::new(read),
            write: Arc::new(tokio::sync::Mutex::new(Some(write))),
            routes,
            server: server.into(),
            max_line,
            max_depth,
            max_blocks: usize::MAX,
            line: Vec::new(),
            scan: Scan::default(),
            broken: None,
            answered: false,
        }
    }

    /// The same lines, with a response of more than `max` content blocks (items of its
    /// `result.content`) answered locally as soon as the scan has counted one more, before
    /// it is parsed (unbounded by default).
    pub(super) fn max_content_blocks(mut self, max: usize) -> Lines<R, W> {
        self.max_blocks = max;
        self
    }

    /// The next message rmcp should see; `None` at the end of the stream.
    ///
    /// Cancel-safe: the state of a partly read line lives in `self`, and bytes are consumed
    /// from the reader only together with the state they changed.
    async fn next(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let ended = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(error) => {
                        tracing::warn!(server = %self.server, %error, "reading from the MCP server failed");
                        return None;
                    }
                };
                if available.is_empty() {
                    return None;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let content = &available[..newline.unwrap_or(available.len())];
                self.scan.feed(content);
                if self.broken.is_none() {
                    if self.scan.max_depth() > self.max_depth {
                        self.broken = Some(Broken::TooDeep);
                    } else if self.line.len().saturating_add(content.len()) > self.max_line {
                        self.broken = Some(Broken::TooLong);
                    } else if self.scan.content_items() > self.max_blocks {
                        self.broken = Some(Broken::ManyBlocks);
                    } else {
                        self.line.extend_from_slice(content);
                    }
                    if self.broken.is_some() {
                        self.line = Vec::new();
                    }
                }
                let taken = newline.map_or(available.len(), |at| at + 1);
                self.read.consume(taken);
                newline.is_some()
            };
            if let Some(broken) = self.broken {
                if let Some(message) = self.answer_broken(broken, ended) {
                    if ended {
                        self.end_line();
                    }
                    return Some(message);
                }
                if ended {
                    self.end_line();
                }
                continue;
            }
            if ended {
                let parsed = self.parse_line();
                self.end_line();
                if let Some(message) = parsed {
                    return Some(message);
                }
            }
        }
    }

    /// The local answer to a line that broke a limit, once it can be given (at most once
    /// per line).
    fn answer_broken(
        &mut self,
        broken: Broken,
        ended: bool,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.answered {
            return None;
        }
        let why = match broken {
            Broken::TooLong => format!(
                "its response is longer than the transport's limit of {} bytes on one line",
                self.max_line
            ),
            Broken::TooDeep => format!(
                "its response is nested deeper than the transport's limit of {} levels",
                self.max_depth
            ),
            Broken::ManyBlocks => too_many_blocks(self.max_blocks),
        };
        let id = self.scan.id().cloned();
        let response = self.scan.has_response() && !self.scan.has_method();
        match id {
            Some(id) if response || (ended && !self.scan.has_method()) => {
                self.answered = true;
                Some(self.answer_locally(id, why))
            }
            Some(id) if ended => {
                // The server's own request: refuse it, so that it does not wait either.
                self.answered = true;
                tracing::warn!(server = %self.server, %id, "a request of the MCP server broke the transport's limits; refused");
                self.refuse(id);
                None
            }
            None if ended => {
                tracing::warn!(
                    server = %self.server,
                    reason = %why,
                    "dropped a message of the MCP server: it carries no id to answer"
                );
                None
            }
            _ => None,
        }
    }

    /// Parses a complete line within the limits; a response that is not a valid message
    /// is answered locally.
    fn parse_line(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
            Ok(message) => return Some(message),
            Err(error) => error,
        };
        match (self.scan.id().cloned(), self.scan.has_method()) {
            (Some(id), false) => Some(self.answer_locally(
                id,
                format!("its response is not a valid JSON-RPC message ({error})"),
            )),
            (Some(id), true) => {
                tracing::warn!(server = %self.server, %id, %error, "a request of the MCP server could not be read; refused");
                self.refuse(id);
                None
            }
            (None, _) => {
                tracing::debug!(server = %self.server, %error, "ignored a message of the MCP server that could not be read");
                None
            }
        }
    }

    /// The error response given to request `id` in the server's stead.
    fn answer_locally(&self, id: RequestId, why: String) -> RxJsonRpcMessage<RoleClient> {
        answer_locally(&self.routes, &self.server, id, why)
    }

    /// Answers the server's request `id` with `Invalid Request`, in the background (the
    /// writer may be busy; a reply is one whole line under its lock).
    fn refuse(&self, id: RequestId) {
        let reply: TxJsonRpcMessage<RoleClient> = JsonRpcMessage::error(
            ErrorData::invalid_request("the message broke the client's transport limits", None),
            Some(id),
        );
        let write = Arc::clone(&self.write);
        tokio::spawn(async move {
            let _ = write_line(&write, &reply).await;
        });
    }

    fn end_line(&mut self) {
        if self.line.capacity() > 64 * 1024 {
            self.line = Vec::new();
        } else {
            self.line.clear();
        }
        self.scan.reset();
        self.broken = None;
        self.answered = false;
    }
}

/// Why a response of more than `max` content blocks was dropped.
pub(super) fn too_many_blocks(max: usize) -> String {
    format!("its result has more content blocks than the limit of {max} (max_content_blocks)")
}

/// The error response given to request `id` in the server's stead, recorded in `routes` so
/// that the request's waiter knows it is the transport's (`why` names the limit).
pub(super) fn answer_locally(
    routes: &Routes,
    server: &str,
    id: RequestId,
    why: String,
) -> RxJsonRpcMessage<RoleClient> {
    tracing::warn!(server = %server, %id, reason = %why, "answered a request locally: the server's response was dropped");
    routes.answered_locally(id.clone(), why.clone());
    JsonRpcMessage::error(ErrorData::new(LOCAL_ERROR, why, None), Some(id))
}

/// Writes `message` as one line.
async fn write_line<W: AsyncWrite + Unpin>(
    write: &tokio::sync::Mutex<Option<W>>,
    message: &TxJsonRpcMessage<RoleClient>,
) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(message).map_err(io::Error::other)?;
    bytes.push(b'\n');
    let mut guard = write.lock().await;
    let Some(writer) = guard.as_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    writer.write_all(&bytes).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleClient> for Lines<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move { write_line(&write, &item).await }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.next()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let writer = self.write.lock().await.take();
        if let Some(mut writer) = writer {
            let _ = writer.shutdown().await;
        }
        Ok(())
    }
}

/// A child process speaking MCP on its stdin and stdout (stderr inherited), through
/// [`Lines`]. Closing it closes its stdin, waits a moment for it to exit, then kills it;
/// dropping it kills it.
pub(super) struct ChildProcess {
    child: Child,
    lines: Lines<ChildStdout, ChildStdin>,
}

impl ChildProcess {
    /// Starts `command` (its stdio is set here).
    pub(super) fn spawn(
        mut command: tokio::process::Command,
        routes: Arc<Routes>,
        server: &str,
        max_blocks: usize,
    ) -> io::Result<ChildProcess> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("the child's stdio could not be taken"));
        };
        Ok(ChildProcess {
            child,
            lines: Lines::new(stdout, stdin, routes, server).max_content_blocks(max_blocks),
        })
    }
}

impl Transport<RoleClient> for ChildProcess {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.lines.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin waits for a write in progress, which a child that stopped reading
        // holds forever: bounded, and the child is killed after its grace either way.
        let _ = tokio::time::timeout(EXIT_GRACE, self.lines.close()).await;
        if tokio::time::timeout(EXIT_GRACE, self.child.wait())
            .await
            .is_err()
        {
            self.child.kill().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use rmcp::model::ServerResult;
    use serde_json::json;
    use tokio::io::AsyncReadExt;

    fn lines(
        input: Vec<u8>,
        max_line: usize,
    ) -> (
        Lines<std::io::Cursor<Vec<u8>>, tokio::io::DuplexStream>,
        Arc<Routes>,
        tokio::io::DuplexStream,
    ) {
        let routes = Arc::new(Routes::default());
        let (write, peer) = tokio::io::duplex(1 << 16);
        let lines = Lines::with_limits(
            std::io::Cursor::new(input),
            write,
            Arc::clone(&routes),
            "t",
            max_line,
            MAX_DEPTH,
        );
        (lines, routes, peer)
    }

    fn nested(id: i64, depth: usize) -> String {
        // The message's object and `result`'s object are 2 levels; the rest are arrays.
        let arrays = depth - 2;
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"x":{}{}}}}}"#,
            "[".repeat(arrays),
            "]".repeat(arrays)
        )
    }

    fn local_error(message: &RxJsonRpcMessage<RoleClient>) -> (RequestId, String) {
        match message {
            JsonRpcMessage::Error(e) => {
                assert_eq!(e.error.code, LOCAL_ERROR);
                (e.id.clone().unwrap(), e.error.message.to_string())
            }
            other => panic!("not an error: {other:?}"),
        }
    }

    #[tokio::test]
    async fn every_line_within_the_depth_limit_parses_and_the_next_is_answered() {
        let input = format!("{}\n{}\n", nested(1, MAX_DEPTH), nested(2, MAX_DEPTH + 1));
        let (mut lines, routes, _peer) = lines(input.into_bytes(), MAX_LINE);
        let first = lines.next().await.unwrap();
        assert!(matches!(first, JsonRpcMessage::Response(ref r) if r.id == RequestId::Number(1)));
        // The limit is rmcp's parser's own: one more level would not parse.
        assert!(
            serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&nested(3, MAX_DEPTH + 1))
                .is_err()
        );
        let (id, why) = local_error(&lines.next().await.unwrap());
        assert_eq!(id, RequestId::Number(2));
        assert!(
            why.contains("nested deeper than the transport's limit of 127 levels"),
            "{why}"
        );
        assert_eq!(routes.local_answer(&RequestId::Number(2)), Some(why));
        assert_eq!(routes.local_answer(&RequestId::Number(2)), None);
        assert!(lines.next().await.is_none());
    }

    #[tokio::test]
    async fn a_long_line_is_answered_by_its_id_and_the_next_line_still_reads() {
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"a","result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
            "x".repeat(300)
        );
        let late_id = format!(
            r#"{{"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"{}"}}]}},"id":9}}"#,
            "y".repeat(300)
        );
        let ok = r#"{"jsonrpc":"2.0","id":4,"result":{}}"#;
        let input = format!("{long}\n{late_id}\n{ok}\n");
        let (mut lines, _routes, _peer) = lines(input.into_bytes(), 200);
        let (id, why) = local_error(&lines.next().await.unwrap());
        assert_eq!(id, RequestId::String("a".into()));
        assert!(
            why.contains("longer than the transport's limit of 200 bytes"),
            "{why}"
        );
        assert_eq!(
            local_error(&lines.next().await.unwrap()).0,
            RequestId::Number(9)
        );
        match lines.next().await.unwrap() {
            JsonRpcMessage::Response(r) => {
                assert_eq!(r.id, RequestId::Number(4));
                assert!(matches!(r.result, ServerResult::EmptyResult(_)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn an_oversize_response_is_answered_before_its_line_ends() {
        // A reader that yields the head of a huge line and then never more.
        let (mut feed, read) = tokio::io::duplex(1 << 16);
        let (write, _peer) = tokio::io::duplex(1 << 16);
        let routes = Arc::new(Routes::default());
        let mut lines = Lines::with_limits(read, write, routes, "t", 100, MAX_DEPTH);
        feed.write_all(br#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":""#)
            .await
            .unwrap();
        feed.write_all(&[b'z'; 500]).await.unwrap();
        let message = tokio::time::timeout(Duration::from_secs(20), lines.next())
            .await
            .expect("answered before the line ends");
        assert_eq!(local_error(&message.unwrap()).0, RequestId::Number(5));
        // The rest of the line is discarded; the next line reads.
        feed.write_all(b"zzz\"}]}}\n{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n")
            .await
            .unwrap();
        let next = lines.next().await.unwrap();
        assert!(matches!(next, JsonRpcMessage::Response(ref r) if r.id == RequestId::Number(6)));
    }

    #[tokio::test]
    async fn unreadable_responses_are_answered_and_unattributable_lines_dropped() {
        let input = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[}\n",
            "not json at all\n",
            "\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/custom\",\"params\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n",
        );
        let (mut lines, _routes, _peer) = lines(input.as_bytes().to_vec(), MAX_LINE);
        let (id, why) = local_error(&lines.next().await.unwrap());
        assert_eq!(id, RequestId::Number(3));
        assert!(why.contains("not a valid JSON-RPC message"), "{why}");
        let mut rest = Vec::new();
        while let Some(message) = lines.next().await {
            rest.push(message);
        }
        assert!(
            rest.iter()
                .any(|m| matches!(m, JsonRpcMessage::Response(r) if r.id == RequestId::Number(8))),
            "{rest:?}"
        );
        assert!(!rest.iter().any(|m| matches!(m, JsonRpcMessage::Error(_))));
    }

    #[tokio::test]
    async fn a_server_request_that_breaks_a_limit_is_refused_to_the_server() {
        let input = format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": 11, "method": "roots/list", "params": {"x": "y".repeat(300)}})
        );
        let (mut lines, _routes, mut peer) = lines(input.into_bytes(), 200);
        assert!(lines.next().await.is_none());
        let mut reply = vec![0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(20), peer.read(&mut reply))
            .await
            .unwrap()
            .unwrap();
        let reply: serde_json::Value = serde_json::from_slice(&reply[..n]).unwrap();
        assert_eq!(reply["id"], 11);
        assert_eq!(reply["error"]["code"], -32600);
    }
}
