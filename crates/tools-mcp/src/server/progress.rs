//! A call's progress updates as `notifications/progress` to the client that asked for them.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::{mpsc, oneshot};
use tools_registry::{Progress, ProgressSink};

/// Updates queued per call before new ones are dropped (a body that reports faster than
/// the client reads loses intermediate updates, never blocks).
const QUEUE: usize = 64;

enum Message {
    Update(Progress),
    /// Everything queued before has been sent: answer.
    Flush(oneshot::Sender<()>),
}

/// The progress channel of one call: the sink the body reports to, and the forwarder that
/// sends to the client. MCP requires progress to increase: an update that does not is
/// dropped.
pub(super) struct Forwarder {
    tx: mpsc::Sender<Message>,
}

impl Forwarder {
    /// A forwarder to `peer` under `token`.
    pub(super) fn start(peer: rmcp::Peer<RoleServer>, token: ProgressToken) -> Forwarder {
        let (tx, mut rx) = mpsc::channel::<Message>(QUEUE);
        tokio::spawn(async move {
            let mut last: Option<f64> = None;
            let mut open = true;
            while let Some(message) = rx.recv().await {
                let update = match message {
                    Message::Flush(done) => {
                        let _ = done.send(());
                        continue;
                    }
                    Message::Update(update) => update,
                };
                if !open
                    || !update.progress.is_finite()
                    || last.is_some_and(|last| update.progress <= last)
                {
                    continue;
                }
                last = Some(update.progress);
                let mut param = ProgressNotificationParam::new(token.clone(), update.progress);
                param.total = update.total.filter(|total| total.is_finite());
                param.message = update.message;
                open = peer.notify_progress(param).await.is_ok();
            }
        });
        Forwarder { tx }
    }

    /// The sink a call reports to.
    pub(super) fn sink(&self) -> Arc<dyn ProgressSink> {
        let tx = self.tx.clone();
        Arc::new(move |update: Progress| {
            // Full or closed: the update is dropped (progress is advisory).
            let _ = tx.try_send(Message::Update(update));
        })
    }

    /// Waits until every update reported so far has been sent, so none follows the result.
    pub(super) async fn flush(self) {
        let (done, sent) = oneshot::channel();
        if self.tx.send(Message::Flush(done)).await.is_ok() {
            let _ = sent.await;
        }
    }
}
