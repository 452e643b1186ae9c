//! The HTTP client of a streamable-HTTP server: rmcp's reqwest client, wrapped so that a
//! response breaking a limit is answered for its request instead of being lost.
//!
//! What rmcp's streamable-HTTP client does on its own with such a response:
//!
//! - an SSE event over its size limit (16 MiB) ends the request's response stream with an
//!   error; the request fails at once, but as a closed transport
//!   (`MCP_SERVER_UNAVAILABLE`, though the connection is fine);
//! - an SSE event it cannot parse (nested deeper than `serde_json`'s recursion limit, or
//!   not a message) is skipped with a debug log; the request then fails as a closed
//!   transport when the stream ends, or waits for its deadline when the stream is resumed
//!   (a server that numbers its events, as stateful rmcp servers do);
//! - a JSON body over its limit or that it cannot parse fails the POST, which rmcp reports
//!   as a send failure (`MCP_SERVER_UNAVAILABLE`).
//!
//! This wrapper gives each of those the transport's local answer instead
//! ([`super::transport::answer_locally`], read by the import as `INVALID_TOOL_OUTPUT`): an
//! event nested deeper than [`MAX_DEPTH`], or a response event that does not parse, has its
//! data replaced by the error response for its id (read by the bounded scan); an oversize
//! event of a request's own response stream is followed by the error response for that
//! request (the stream then ends as before); an oversize or unparsable JSON body becomes the
//! error response for the POSTed request. An event that cannot be attributed (no usable id)
//! is dropped with a warning, as rmcp would drop it. A response event whose result has more
//! content blocks than the import's bound is replaced the same way, before rmcp parses it;
//! a JSON body is parsed by rmcp itself (within its 16 MiB), so its blocks are only counted
//! when the import converts the result.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures_util::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::handler::Routes;
use super::scan::Scan;
use super::transport::{MAX_DEPTH, MAX_LINE, answer_locally, too_many_blocks};

/// The prefix of rmcp's message for a JSON body that does not parse as a message.
const UNPARSABLE_BODY: &str = "could not parse JSON response as ServerJsonRpcMessage: ";

/// The most redirects followed for one request (rmcp's default client's number).
const MAX_REDIRECTS: usize = 10;

/// The `Ok` type of a `Result`: names the SSE event type of rmcp's streams (from a crate
/// this one does not depend on).
trait OkOf {
    type Ok;
}

impl<T, E> OkOf for Result<T, E> {
    type Ok = T;
}

/// One SSE event of a response stream.
type Event = <<BoxedSseResponse as futures_util::Stream>::Item as OkOf>::Ok;

type Posted = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// rmcp's reqwest client for one upstream, with responses that break a limit answered for
/// their request.
#[derive(Clone)]
pub(super) struct Bounded {
    client: reqwest::Client,
    routes: Arc<Routes>,
    server: Arc<str>,
    /// The most content blocks of a response event's result.
    max_blocks: usize,
}

impl Bounded {
    /// The client rmcp builds by default (no idle connection pool, same-origin 307 and 308
    /// redirects only, at most 10), wrapped.
    pub(super) fn new(
        routes: Arc<Routes>,
        server: &str,
        max_blocks: usize,
    ) -> Result<Bounded, reqwest::Error> {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(same_origin_redirects())
            .build()?;
        Ok(Bounded {
            client,
            routes,
            server: server.into(),
            max_blocks,
        })
    }

    fn answer(&self, id: RequestId, why: String) -> ServerJsonRpcMessage {
        answer_locally(&self.routes, &self.server, id, why)
    }

    /// The response to a POST of `request` (its id, if it is a request), with a body that
    /// broke a limit turned into the local answer and its stream bounded.
    fn settle(&self, request: Option<RequestId>, posted: Posted) -> Posted {
        let error = match posted {
            Ok(StreamableHttpPostResponse::Sse(events, session)) => {
                return Ok(StreamableHttpPostResponse::Sse(
                    self.bound(events, request),
                    session,
                ));
            }
            Ok(other) => return Ok(other),
            Err(error) => error,
        };
        let Some(id) = request else {
            return Err(error);
        };
        let why = match &error {
            StreamableHttpError::ResponseBodyTooLarge { max_size } => {
                format!("its response is longer than the transport's limit of {max_size} bytes")
            }
            StreamableHttpError::UnexpectedServerResponse(message)
                if message.starts_with(UNPARSABLE_BODY) =>
            {
                let reason = message[UNPARSABLE_BODY.len()..]
                    .split(": ")
                    .next()
                    .unwrap_or_default();
                if reason.starts_with("recursion limit exceeded") {
                    format!(
                        "its response is nested deeper than the transport's limit of {MAX_DEPTH} levels"
                    )
                } else {
                    format!("its response is not a valid JSON-RPC message ({reason})")
                }
            }
            _ => return Err(error),
        };
        Ok(StreamableHttpPostResponse::Json(self.answer(id, why), None))
    }

    /// `events`, with each event that broke a limit answered (see the module's doc).
    fn bound(&self, events: BoxedSseResponse, request: Option<RequestId>) -> BoxedSseResponse {
        let this = self.clone();
        events
            .flat_map(move |item| futures_util::stream::iter(this.event(item, request.as_ref())))
            .boxed()
    }

    fn event(
        &self,
        item: Result<Event, SseError>,
        request: Option<&RequestId>,
    ) -> Vec<Result<Event, SseError>> {
        match item {
            Ok(mut event) => {
                let message = matches!(event.event.as_deref(), None | Some("" | "message"));
                if message
                    && let Some(data) = &event.data
                    && let Some(replaced) = self.check(data)
                {
                    event.data = replaced;
                }
                vec![Ok(event)]
            }
            Err(error) => {
                let too_large = matches!(error, SseError::Body(_))
                    && error.to_string().contains("exceeded the maximum size");
                let Some(id) = request.filter(|_| too_large) else {
                    return vec![Err(error)];
                };
                let why = format!(
                    "its response is longer than the transport's limit of {MAX_LINE} bytes per event"
                );
                let answer = self.answer(id.clone(), why);
                match serde_json::to_string(&answer) {
                    Ok(data) => {
                        let event = Event {
                            data: Some(data),
                            ..Event::default()
                        };
                        vec![Ok(event), Err(error)]
                    }
                    Err(_) => vec![Err(error)],
                }
            }
        }
    }

    /// The data that replaces `data` when it breaks a limit (`Some(None)`: dropped, it
    /// cannot be attributed); `None` when it is fine.
    fn check(&self, data: &str) -> Option<Option<String>> {
        let mut scan = Scan::default();
        scan.feed(data.as_bytes());
        let id = scan.id().filter(|_| !scan.has_method()).cloned();
        let why = if scan.max_depth() > MAX_DEPTH {
            format!(
                "its response is nested deeper than the transport's limit of {MAX_DEPTH} levels"
            )
        } else if scan.content_items() > self.max_blocks && !scan.has_method() {
            too_many_blocks(self.max_blocks)
        } else {
            // Only a response is worth a second parse: rmcp drops anything else it cannot
            // read, and nobody waits for it.
            id.as_ref()?;
            let error = serde_json::from_str::<ServerJsonRpcMessage>(data).err()?;
            format!("its response is not a valid JSON-RPC message ({error})")
        };
        let Some(id) = id else {
            tracing::warn!(server = %self.server, reason = %why, "dropped an event of the MCP server: it carries no id to answer");
            return Some(None);
        };
        Some(serde_json::to_string(&self.answer(id, why)).ok())
    }
}

/// The id of `message` when it is a request.
fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

/// rmcp's default redirect policy: only same-origin 307 and 308 redirects (they keep the
/// method and body; another origin would receive the session id and headers), at most
/// [`MAX_REDIRECTS`].
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|original| original.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("exceeded {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

impl StreamableHttpClient for Bounded {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Posted {
        let request = request_id(&message);
        let posted = self
            .client
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.settle(request, posted)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Posted {
        let request = request_id(&message);
        let posted = self
            .client
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.settle(request, posted)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Posted {
        let request = request_id(&message);
        let posted = self
            .client
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.settle(request, posted)
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<Self::Error>>> + Send + '_ {
        self.client
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        let events = self
            .client
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.bound(events, None))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        let events = self
            .client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.bound(events, None))
    }
}
