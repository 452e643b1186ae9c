//! The sessions of the streamable-HTTP front, bounded in number.
//!
//! rmcp's [`LocalSessionManager`] keeps every session it is asked to create. This manager
//! wraps it and refuses a new session while [`HttpOptions::max_sessions`] are open. A slot
//! is taken when rmcp asks for a session (after the `initialize` request has been read and
//! checked, so a request that opens none takes none) and freed when the session closes for
//! any reason: the client's `DELETE` (before its answer is sent), the idle timeout, the
//! end of its handler, the server's shutdown. rmcp closes every session through
//! [`SessionManager::close_session`], once or more; only the first frees the slot.
//!
//! A refusal is an error of `create_session`, which rmcp answers with a 500. The front's
//! middleware runs each request in a [`Refusal`] scope that the refusal marks, and turns
//! that answer into a 503 with a JSON-RPC error.
//!
//! [`HttpOptions::max_sessions`]: super::HttpOptions::max_sessions

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, ServerSseMessage, SessionId, SessionManager,
};
use tools_runtime::hooks::Principal;

tokio::task_local! {
    /// Set while the front's middleware serves a request: marked when that request was
    /// refused a session.
    pub(super) static REFUSAL: Refusal;
}

tokio::task_local! {
    /// Set while the front's middleware serves a request: who made it (`None` without
    /// authentication). A session opened by the request belongs to this principal.
    pub(super) static OPENER: Option<Arc<Principal>>;
}

/// Whether the request being served was refused a session.
#[derive(Clone, Debug, Default)]
pub(super) struct Refusal(Arc<AtomicBool>);

impl Refusal {
    fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the request was refused a session.
    pub(super) fn is_marked(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Why a session was not created or used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BoundedSessionsError {
    /// Every slot is taken.
    #[error("the server has reached its limit of {max} sessions")]
    Full {
        /// The limit.
        max: usize,
    },
    /// rmcp's manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// The slots: those reserved by a session being created, and the open sessions with the
/// principal each belongs to.
#[derive(Debug, Default)]
struct Slots {
    reserved: usize,
    open: HashMap<SessionId, Option<Arc<Principal>>>,
}

/// rmcp's [`LocalSessionManager`], with at most `max` sessions open at once.
#[derive(Debug)]
pub(crate) struct BoundedSessions {
    local: LocalSessionManager,
    max: usize,
    slots: Mutex<Slots>,
}

impl BoundedSessions {
    /// At most `max` sessions of `local`.
    pub(crate) fn new(local: LocalSessionManager, max: usize) -> BoundedSessions {
        BoundedSessions {
            local,
            max,
            slots: Mutex::new(Slots::default()),
        }
    }

    /// The limit.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Whether the session `id` is open.
    pub(crate) fn is_open(&self, id: &str) -> bool {
        self.slots().open.contains_key(id)
    }

    /// Whether a request made by `principal` may use the session `id`: the session is not
    /// open (rmcp answers that), or it was opened by the same subject of the same issuer.
    /// A session opened without a principal is usable only without one.
    pub(crate) fn may_use(&self, id: &str, principal: Option<&Principal>) -> bool {
        match self.slots().open.get(id) {
            None => true,
            Some(owner) => match (owner.as_deref(), principal) {
                (None, None) => true,
                (Some(owner), Some(principal)) => {
                    owner.subject() == principal.subject() && owner.issuer() == principal.issuer()
                }
                _ => false,
            },
        }
    }

    fn slots(&self) -> MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a slot for a session being created, if one is free.
    fn reserve(&self) -> Option<Reservation<'_>> {
        let mut slots = self.slots();
        if slots.reserved.saturating_add(slots.open.len()) >= self.max {
            return None;
        }
        slots.reserved += 1;
        Some(Reservation {
            sessions: self,
            held: true,
        })
    }
}

/// A slot taken for a session being created: freed when dropped (the creation failed or
/// was abandoned), unless [`Reservation::commit`] gave it to the session.
struct Reservation<'a> {
    sessions: &'a BoundedSessions,
    held: bool,
}

impl Reservation<'_> {
    /// The slot now belongs to the open session `id`.
    fn commit(mut self, id: &SessionId, owner: Option<Arc<Principal>>) {
        let mut slots = self.sessions.slots();
        slots.reserved = slots.reserved.saturating_sub(1);
        slots.open.insert(id.clone(), owner);
        self.held = false;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.held {
            let mut slots = self.sessions.slots();
            slots.reserved = slots.reserved.saturating_sub(1);
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = BoundedSessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let Some(reservation) = self.reserve() else {
            // Outside the middleware's scope (no request being served) nobody reads it.
            // rmcp logs the error (as an internal one, with this error's text).
            let _ = REFUSAL.try_with(Refusal::mark);
            return Err(BoundedSessionsError::Full { max: self.max });
        };
        let (id, transport) = self.local.create_session().await?;
        let owner = OPENER.try_with(Clone::clone).ok().flatten();
        reservation.commit(&id, owner);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.local.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.local.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // The slot is free before the session's end is awaited (or fails).
        self.slots().open.remove(id);
        Ok(self.local.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.local.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.resume(id, last_event_id).await?)
    }

    // `restore_session` keeps the trait's default (not supported): no session store is
    // configured, and a restored session would bypass the bound.

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn slots_are_taken_by_creation_and_freed_by_the_first_close() {
        let sessions = BoundedSessions::new(LocalSessionManager::default(), 2);
        let (a, _ta) = sessions.create_session().await.unwrap();
        let (_b, _tb) = sessions.create_session().await.unwrap();
        let refused = REFUSAL.scope(Refusal::default(), async {
            let refused = sessions.create_session().await;
            (refused.is_err(), REFUSAL.with(Refusal::is_marked))
        });
        assert_eq!(refused.await, (true, true));
        sessions.close_session(&a).await.unwrap();
        sessions.close_session(&a).await.unwrap();
        let (_c, _tc) = sessions.create_session().await.unwrap();
        assert!(sessions.create_session().await.is_err());
    }

    #[tokio::test]
    async fn a_session_belongs_to_the_principal_that_opened_it() {
        let sessions = BoundedSessions::new(LocalSessionManager::default(), 4);
        let alice = Arc::new(Principal::new("alice"));
        let (a, _ta) = OPENER
            .scope(Some(Arc::clone(&alice)), sessions.create_session())
            .await
            .unwrap();
        let (anon, _tn) = sessions.create_session().await.unwrap();
        assert!(sessions.may_use(&a, Some(&Principal::new("alice"))));
        assert!(!sessions.may_use(&a, Some(&Principal::new("bob"))));
        assert!(!sessions.may_use(&a, None));
        assert!(!sessions.may_use(&a, Some(&Principal::new("alice").with_issuer("other"))));
        assert!(sessions.may_use(&anon, None));
        assert!(!sessions.may_use(&anon, Some(&alice)));
        assert!(sessions.may_use("not-open", Some(&alice)));
    }

    #[test]
    fn an_abandoned_reservation_frees_its_slot() {
        let sessions = BoundedSessions::new(LocalSessionManager::default(), 1);
        let reserved = sessions.reserve();
        assert!(reserved.is_some());
        assert!(sessions.reserve().is_none());
        drop(reserved);
        assert!(sessions.reserve().is_some());
    }
}
