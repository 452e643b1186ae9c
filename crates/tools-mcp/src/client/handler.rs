//! The client side of one upstream connection: what it tells the server about itself, and
//! the notifications it routes: list changes to a resync (in rmcp's handler), progress to
//! the calling body (in the transport's receive path, which is sequential: an update is
//! delivered before the response that follows it, which rmcp's spawned handlers do not
//! guarantee).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
};
use std::future::Future;

use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ServerNotification};
use rmcp::service::{NotificationContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, RoleClient};
use tools_runtime::RunContext;
use tools_runtime::crates::registry::Progress;

/// Progress notifications kept for a request whose route is not registered yet (rmcp
/// gives the request its token while sending it, so the first update can arrive before the
/// route); beyond this many, the oldest are dropped (late updates of finished calls end
/// here too).
const EARLY: usize = 64;

/// Shared by the connection's handler, its transport and the import: the list-change
/// signal and the bodies waiting for progress, by token.
#[derive(Default)]
pub(super) struct Routes {
    pub(super) changed: tokio::sync::Notify,
    progress: Mutex<Progressing>,
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
