//! Resources, resource templates, prompts and completion on a connected server: the
//! catalog the hub keeps per connection (listed after connect and on `list_changed`), and
//! the requests `resources/read`, `prompts/get` and `completion/complete`.

use super::McpHub;
use super::connection::Connection;
use super::locks::lock;
use crate::mcp::catalog::{
    Catalog, CompletionTarget, PromptResult, ResourcePart, declared, prompt_entry, prompt_message,
    resource_entry, resource_part, template_entry,
};
use crate::mcp::errors;
use crate::mcp::handler::ListChangedHook;
use crate::mcp::types::{HubEvent, McpError};
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionContext, GetPromptRequestParams,
    ReadResourceRequestParams, Reference,
};
use rmcp::{Peer, RoleClient, ServiceError};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

fn worded(e: &ServiceError) -> String {
    match e {
        ServiceError::UnexpectedResponse => "the answer is not a valid MCP result".to_string(),
        other => errors::service_error(other),
    }
}

fn timed_out(connection: &Connection) -> String {
    format!(
        "no answer within {} s",
        connection.call_timeout.as_secs().max(1)
    )
}

impl McpHub {
    /// The catalogs of the connected servers, in connection order.
    pub fn catalogs(&self) -> Vec<Arc<Catalog>> {
        self.inner.servers.each(|c| Some(lock(&c.catalog).clone()))
    }

    pub fn catalog(&self, server: &str) -> Option<Arc<Catalog>> {
        self.inner
            .servers
            .connection(server)
            .map(|c| lock(&c.catalog).clone())
    }

    /// Lists resources, templates and prompts (as far as the server declared them) and
    /// keeps the result; a list that fails leaves a problem in the catalog instead of its
    /// entries, so one broken list never hides the others. Sends `CatalogChanged`.
    pub async fn refresh_catalog(&self, server: &str) -> Option<Arc<Catalog>> {
        let connection = self.inner.servers.connection(server)?;
        let mut catalog = declared(server, &connection.peer);
        let peer = connection.peer.clone();
        if catalog.has_resources {
            match self.bounded(&connection, peer.list_all_resources()).await {
                Ok(list) => catalog.resources = list.iter().map(resource_entry).collect(),
                Err(why) => catalog
                    .problems
                    .push(format!("resources/list failed: {why}")),
            }
            // Many servers with plain resources never implemented templates; "method not
            // found" there means none, not a problem worth a notice.
            let templates = peer.list_all_resource_templates();
            match tokio::time::timeout(connection.call_timeout, templates).await {
                Ok(Ok(list)) => catalog.templates = list.iter().map(template_entry).collect(),
                Ok(Err(ServiceError::McpError(e))) if e.code.0 == -32601 => {}
                other => {
                    let why = match other {
                        Ok(Err(e)) => worded(&e),
                        _ => timed_out(&connection),
                    };
                    catalog
                        .problems
                        .push(format!("resources/templates/list failed: {why}"));
                }
            }
        }
        if catalog.has_prompts {
            match self.bounded(&connection, peer.list_all_prompts()).await {
                Ok(list) => catalog.prompts = list.iter().map(prompt_entry).collect(),
                Err(why) => catalog.problems.push(format!("prompts/list failed: {why}")),
            }
        }
        let catalog = Arc::new(catalog);
        // The connection may have been replaced meanwhile (a reconnect); keep the newest.
        if let Some(current) = self.inner.servers.connection(server)
            && Arc::ptr_eq(&current, &connection)
        {
            *lock(&connection.catalog) = catalog.clone();
            let _ = self.inner.events.send(HubEvent::CatalogChanged {
                server: server.to_string().into(),
                catalog: catalog.clone(),
            });
        }
        Some(catalog)
    }

    /// A list request with the server's call timeout; the reason worded for people.
    async fn bounded<T>(
        &self,
        connection: &Connection,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, String> {
        match tokio::time::timeout(connection.call_timeout, request).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(worded(&e)),
            Err(_) => Err(timed_out(connection)),
        }
    }

    /// A request on `server` bounded by its timeout and by `cancel`; JSON-RPC errors and
    /// everything else become `Protocol` errors naming what was asked.
    async fn request<T>(
        &self,
        server: &str,
        what: &str,
        cancel: &CancellationToken,
        make: impl FnOnce(
            Peer<RoleClient>,
        )
            -> std::pin::Pin<Box<dyn Future<Output = Result<T, ServiceError>> + Send>>,
    ) -> Result<T, McpError> {
        let connection = self.inner.servers.connected(server)?;
        let request = make(connection.peer.clone());
        let outcome = tokio::select! {
            outcome = self.bounded(&connection, request) => outcome,
            () = cancel.cancelled() => return Err(McpError::Cancelled),
        };
        outcome.map_err(|why| McpError::Protocol {
            server: server.to_string().into(),
            message: format!("{what} failed: {why}"),
        })
    }

    /// `resources/read`.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<Vec<ResourcePart>, McpError> {
        let params = ReadResourceRequestParams::new(uri.to_string());
        let result = self
            .request(server, &format!("reading {uri}"), cancel, |peer| {
                Box::pin(async move { peer.read_resource(params).await })
            })
            .await?;
        Ok(result.contents.iter().map(resource_part).collect())
    }

    /// `prompts/get` with the arguments as strings (what MCP prompts take).
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &HashMap<String, String>,
        cancel: &CancellationToken,
    ) -> Result<PromptResult, McpError> {
        let mut params = GetPromptRequestParams::new(name.to_string());
        if !arguments.is_empty() {
            params.arguments = Some(
                arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
            );
        }
        let result = self
            .request(server, &format!("prompt '{name}'"), cancel, |peer| {
                Box::pin(async move { peer.get_prompt(params).await })
            })
            .await?;
        Ok(PromptResult {
            description: result.description.clone(),
            messages: result.messages.iter().map(prompt_message).collect(),
        })
    }

    /// `completion/complete` for one argument; `context` holds the arguments already
    /// chosen. A server that did not declare completions gets no request: empty answer.
    pub async fn complete(
        &self,
        server: &str,
        target: &CompletionTarget,
        argument: &str,
        value: &str,
        context: &HashMap<String, String>,
    ) -> Result<Vec<String>, McpError> {
        let declared = self.catalog(server).is_some_and(|c| c.completions);
        if !declared {
            return Ok(Vec::new());
        }
        let target_ref = match target {
            CompletionTarget::Prompt(name) => Reference::for_prompt(name.clone()),
            CompletionTarget::Template(uri) => Reference::for_resource(uri.clone()),
        };
        let mut params = CompleteRequestParams::new(
            target_ref,
            ArgumentInfo::new(argument.to_string(), value.to_string()),
        );
        if !context.is_empty() {
            params = params.with_context(CompletionContext::with_arguments(context.clone()));
        }
        let result = self
            .request(
                server,
                "completion/complete",
                &CancellationToken::new(),
                |peer| Box::pin(async move { peer.complete(params).await }),
            )
            .await?;
        Ok(result.completion.values)
    }

    /// A weak hook for `resources/list_changed` and `prompts/list_changed`.
    pub(super) fn catalog_changed_hook(&self, server: &str) -> ListChangedHook {
        // Not connected yet: the connect lists the catalog once it is registered.
        self.weak_hook(server, |hub, server, _peer| async move {
            hub.refresh_catalog(&server).await;
        })
    }
}
