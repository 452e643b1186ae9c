//! An imported server's resources and prompts, reached through its connection: listed
//! (every page, within the list deadline) and read or fetched (within the call deadline).
//! Nothing is cached here; the gateway's front routes and guards them.

use std::future::Future;
use std::time::Duration;

use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, JsonObject, Prompt, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceTemplate,
};
use rmcp::{Peer, RoleClient};

use super::{ImportedServer, peer_for_call};
use crate::Error;

/// What a server's `initialize` said it serves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offers {
    /// `resources` (and their templates).
    pub resources: bool,
    /// `prompts`.
    pub prompts: bool,
}

impl ImportedServer {
    /// Whether the connected server offers resources and prompts (nothing while it is
    /// down).
    pub async fn offers(&self) -> Offers {
        let Some(peer) = self.inner.peer().await else {
            return Offers::default();
        };
        peer.peer_info()
            .map_or_else(Offers::default, |info| Offers {
                resources: info.capabilities.resources.is_some(),
                prompts: info.capabilities.prompts.is_some(),
            })
    }

    async fn ask<T, F, Fut>(&self, what: &str, limit: Duration, request: F) -> Result<T, Error>
    where
        F: FnOnce(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let upstream = |message: String| Error::Upstream {
            server: self.inner.name.clone(),
            message,
        };
        let Some(peer) = peer_for_call(&self.inner).await else {
            return Err(upstream("the server is not connected".to_owned()));
        };
        tokio::time::timeout(limit, request(peer))
            .await
            .map_err(|_| upstream(format!("no {what} answer within {limit:?}")))?
            .map_err(|e| upstream(format!("{what} failed: {e}")))
    }

    fn list_limit(&self) -> Duration {
        self.inner.options.list_timeout
    }

    fn call_limit(&self) -> Duration {
        self.inner
            .options
            .call_timeout
            .unwrap_or(super::DEFAULT_CALL_TIMEOUT)
    }

    /// The server's resources, as it names them (empty when it offers none).
    ///
    /// # Errors
    ///
    /// [`Error::Upstream`]: not connected, no answer within the list deadline, or an error.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        if !self.offers().await.resources {
            return Ok(Vec::new());
        }
        self.ask("resources/list", self.list_limit(), |peer| async move {
            peer.list_all_resources().await
        })
        .await
    }

    /// The server's resource templates (empty when it offers no resources).
    ///
    /// # Errors
    ///
    /// As [`ImportedServer::list_resources`].
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        if !self.offers().await.resources {
            return Ok(Vec::new());
        }
        self.ask(
            "resources/templates/list",
            self.list_limit(),
            |peer| async move { peer.list_all_resource_templates().await },
        )
        .await
    }

    /// The server's prompts (empty when it offers none).
    ///
    /// # Errors
    ///
    /// As [`ImportedServer::list_resources`].
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        if !self.offers().await.prompts {
            return Ok(Vec::new());
        }
        self.ask("prompts/list", self.list_limit(), |peer| async move {
            peer.list_all_prompts().await
        })
        .await
    }

    /// Reads the resource `uri` (the server's own URI).
    ///
    /// # Errors
    ///
    /// [`Error::Upstream`]: not connected, no answer within the call deadline, or the
    /// server's error.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let params = ReadResourceRequestParams::new(uri);
        self.ask("resources/read", self.call_limit(), |peer| async move {
            peer.read_resource(params).await
        })
        .await
    }

    /// Fetches the prompt `name` (the server's own name) with `arguments`.
    ///
    /// # Errors
    ///
    /// As [`ImportedServer::read_resource`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, Error> {
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = arguments;
        self.ask("prompts/get", self.call_limit(), |peer| async move {
            peer.get_prompt(params).await
        })
        .await
    }
}
