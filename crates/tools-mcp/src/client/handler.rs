//! The client side of one upstream connection: what it tells the server about itself, and
//! the notifications it routes: list changes to a resync (in rmcp's handler), progress to
//! the calling body (in the transport's receive path, which is sequential: an update is
//! delivered before the response that follows it, which rmcp's spawned handlers do not
//! guarantee).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    RequestId,
};
use std::future::Future;

use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ServerNotification};
use rmcp::service::{NotificationContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, RoleClient};
use tools_registry::Progress;
use tools_runtime::RunContext;

/// Progress notifications kept for a request whose route is not registered yet (rmcp
/// gives the request its token while sending it, so the first update can arrive before the
/// route); beyond this many, the oldest are dropped (late updates of finished calls end
/// here too).
const EARLY: usize = 64;

/// How many requests the transport answered locally are remembered (the oldest are
/// forgotten first; a request's waiter reads its entry as soon as the answer arrives).
const LOCAL: usize = 256;

/// Shared by the connection's handler, its transport and the import: the list-change
/// signal, the bodies waiting for progress, by token, and the requests the transport
/// answered itself because their response broke its limits.
#[derive(Default)]
pub(super) struct Routes {
    pub(super) changed: tokio::sync::Notify,
    progress: Mutex<Progressing>,
    local: Mutex<VecDeque<(RequestId, String)>>,
}

#[derive(Default)]
struct Progressing {
    live: HashMap<ProgressToken, RunContext>,
    early: VecDeque<ProgressNotificationParam>,
}

impl Routes {
    /// Routes the progress of `token` (the one rmcp gave the request) to `ctx` until the
    /// guard drops; updates that arrived first are delivered now, in order.
    pub(super) fn route(self: &Arc<Self>, token: ProgressToken, ctx: &RunContext) -> ProgressRoute {
        let early: Vec<ProgressNotificationParam> = {
            let mut state = self.lock();
            state.live.insert(token.clone(), ctx.clone());
            let (mine, others): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut state.early)
                .into_iter()
                .partition(|p| p.progress_token == token);
            state.early = others;
            mine.into_iter().collect()
        };
        for param in early {
            report(ctx, param);
        }
        ProgressRoute {
            routes: Arc::clone(self),
            token,
        }
    }

    /// Delivers one progress notification, in the order the transport received it.
    pub(super) fn forward(&self, param: ProgressNotificationParam) {
        let ctx = {
            let mut state = self.lock();
            match state.live.get(&param.progress_token) {
                Some(ctx) => ctx.clone(),
                None => {
                    if state.early.len() == EARLY {
                        state.early.pop_front();
                    }
                    state.early.push_back(param);
                    return;
                }
            }
        };
        report(&ctx, param);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Progressing> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that the transport answered request `id` with an error of its own, because
    /// the server's response was dropped for `why` (a sentence naming the limit).
    pub(super) fn answered_locally(&self, id: RequestId, why: String) {
        let mut local = self.local.lock().unwrap_or_else(PoisonError::into_inner);
        if local.len() == LOCAL {
            local.pop_front();
        }
        local.push_back((normalized(id), why));
    }

    /// Why the transport answered request `id` itself, if it did (the entry is removed). An
    /// error response the server sent is never found here, whatever it says.
    pub(super) fn local_answer(&self, id: &RequestId) -> Option<String> {
        let id = normalized(id.clone());
        let mut local = self.local.lock().unwrap_or_else(PoisonError::into_inner);
        let at = local.iter().position(|(seen, _)| *seen == id)?;
        local.remove(at).map(|(_, why)| why)
    }
}

/// rmcp matches a response id `"7"` to its request `7`: so does the record of local answers.
fn normalized(id: RequestId) -> RequestId {
    match &id {
        RequestId::String(s) => s.parse().map_or(id, RequestId::Number),
        RequestId::Number(_) => id,
    }
}

fn report(ctx: &RunContext, param: ProgressNotificationParam) {
    let mut update = Progress::new(param.progress);
    update.total = param.total;
    update.message = param.message;
    ctx.report_progress(update);
}

/// A progress token's route; removed on drop.
pub(super) struct ProgressRoute {
    routes: Arc<Routes>,
    pub(super) token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes.lock().live.remove(&self.token);
    }
}

/// rmcp's client handler of one upstream connection.
#[derive(Clone)]
pub(super) struct Upstream {
    pub(super) routes: Arc<Routes>,
}

impl ClientHandler for Upstream {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("tools-mcp", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.routes.changed.notify_one();
    }
}

/// A transport that routes progress notifications as it receives them, then hands every
/// message to rmcp unchanged.
pub(super) struct Routed<T> {
    inner: T,
    routes: Arc<Routes>,
}

impl<T> Routed<T> {
    pub(super) fn new(inner: T, routes: Arc<Routes>) -> Routed<T> {
        Routed { inner, routes }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Routed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let Some(JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::ProgressNotification(progress),
            ..
        })) = &message
        {
            self.routes.forward(progress.params.clone());
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
