//! A call's progress updates as `notifications/progress` to the client that asked for them.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc;
use tools_runtime::crates::registry::{Progress, ProgressSink};

/// Updates queued per call before the oldest are dropped (a body that reports faster than
/// the client reads loses intermediate updates, never blocks).
const QUEUE: usize = 64;

/// A sink that forwards to `peer` under `token`. MCP requires progress to increase: an
/// update that does not is dropped. A task drains the queue; it ends with the call (when
/// the sink, held by the call, is dropped).
pub(super) fn sink(peer: rmcp::Peer<RoleServer>, token: ProgressToken) -> Arc<dyn ProgressSink> {
    let (tx, mut rx) = mpsc::channel::<Progress>(QUEUE);
    tokio::spawn(async move {
        let mut last: Option<f64> = None;
        while let Some(update) = rx.recv().await {
            if !update.progress.is_finite() || last.is_some_and(|last| update.progress <= last) {
                continue;
            }
            last = Some(update.progress);
            let mut param = ProgressNotificationParam::new(token.clone(), update.progress);
            param.total = update.total.filter(|total| total.is_finite());
            param.message = update.message;
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    Arc::new(move |update: Progress| {
        // Full or closed: the update is dropped (progress is advisory).
        let _ = tx.try_send(update);
    })
}
