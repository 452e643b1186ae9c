//! The client side of one upstream connection: what it tells the server about itself, and
//! the notifications it routes (list changes to a resync, progress to the calling body).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tools_runtime::RunContext;
use tools_runtime::crates::registry::Progress;

/// Shared by the connection's handler and the import: the list-change signal and the
/// bodies waiting for progress, by token.
#[derive(Default)]
pub(super) struct Routes {
    pub(super) changed: tokio::sync::Notify,
    progress: Mutex<HashMap<ProgressToken, RunContext>>,
}

impl Routes {
    /// Routes the progress of `token` (the one rmcp gave the request) to `ctx` until the
    /// guard drops.
    pub(super) fn route(self: &Arc<Self>, token: ProgressToken, ctx: &RunContext) -> ProgressRoute {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), ctx.clone());
        ProgressRoute {
            routes: Arc::clone(self),
            token,
        }
    }

    fn forward(&self, param: ProgressNotificationParam) {
        let ctx = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&param.progress_token)
            .cloned();
        // Late progress of a finished or cancelled call has no route: dropped.
        if let Some(ctx) = ctx {
            let mut update = Progress::new(param.progress);
            update.total = param.total;
            update.message = param.message;
            ctx.report_progress(update);
        }
    }
}

/// A progress token's route; removed on drop.
pub(super) struct ProgressRoute {
    routes: Arc<Routes>,
    pub(super) token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
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

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.routes.forward(params);
    }
}
