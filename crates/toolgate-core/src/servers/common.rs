//! What the three servers share: tool declarations validated with `jsonschema`, and one
//! `ServerHandler` that routes `tools/*` and `resources/*` to a [`Backend`].
//!
//! The handler is written by hand (not with rmcp's `#[tool]` macros) so that every call is
//! validated against the exact `inputSchema` we advertise before any tool code runs, and
//! so that an unknown tool is a JSON-RPC error rather than a result.

use std::{future::Future, sync::Arc};

use rmcp::{
    ErrorData as McpError, Peer, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        ProgressNotificationParam, ProgressToken, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
        ToolAnnotations,
    },
    service::RequestContext,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A problem building a server (bad configuration, bad root); reported before serving.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("tool '{tool}' has an invalid input schema: {reason}")]
    BadSchema { tool: String, reason: String },
    #[error("{0}")]
    Invalid(String),
}

/// One tool: what `tools/list` advertises plus the compiled validator for its schema.
pub struct ToolSpec {
    pub tool: Tool,
    validator: jsonschema::Validator,
}

impl ToolSpec {
    pub fn new(
        name: &'static str,
        description: &'static str,
        input_schema: Value,
        annotations: ToolAnnotations,
    ) -> Result<Self, SetupError> {
        let validator =
            jsonschema::validator_for(&input_schema).map_err(|e| SetupError::BadSchema {
                tool: name.to_owned(),
                reason: e.to_string(),
            })?;
        let Value::Object(schema) = input_schema else {
            return Err(SetupError::BadSchema {
                tool: name.to_owned(),
                reason: "the schema root must be an object".to_owned(),
            });
        };
        let tool = Tool::new(name, description, Arc::new(schema)).with_annotations(annotations);
        Ok(Self { tool, validator })
    }

    /// Checks `args` against the schema; the error names every offending field.
    pub fn check(&self, args: &Value) -> Result<(), InvalidArguments> {
        let problems: Vec<String> = self
            .validator
            .iter_errors(args)
            .map(|error| describe_violation(&error))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(InvalidArguments {
                tool: self.tool.name.to_string(),
                problems,
            })
        }
    }
}

/// Arguments a tool's schema refuses; the message names the tool and every offending field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid arguments for tool '{tool}': {}", problems.join("; "))]
pub struct InvalidArguments {
    pub tool: String,
    pub problems: Vec<String>,
}

/// Turns one schema violation into "field 'x': what is wrong", so a model can fix its call.
fn describe_violation(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind;
    let path = error.instance_path().as_str().trim_start_matches('/');
    let field = path.replace('/', ".");
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| property.to_string());
            let full = if field.is_empty() {
                name
            } else {
                format!("{field}.{name}")
            };
            format!("missing required field '{full}'")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected
                .iter()
                .map(|name| {
                    if field.is_empty() {
                        format!("'{name}'")
                    } else {
                        format!("'{field}.{name}'")
                    }
                })
                .collect();
            format!(
                "unexpected field {} (not in the tool's schema)",
                names.join(", ")
            )
        }
        _ if field.is_empty() => format!("arguments: {error}"),
        _ => format!("field '{field}': {error}"),
    }
}

/// What a tool produced: text for the model, optionally structured data for programs.
pub struct ToolOutput {
    pub text: String,
    pub structured: Option<Value>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            structured: None,
        }
    }

    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }
}

/// Per-call facilities a tool may use: progress reporting and cancellation.
pub struct CallContext {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    pub cancelled: CancellationToken,
}

impl CallContext {
    /// Sends `notifications/progress` when the caller asked for it (sent a progress token);
    /// otherwise does nothing. A failed send only means the client went away.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: impl Into<String>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut params = ProgressNotificationParam::new(token.clone(), progress);
        params.total = total;
        params.message = Some(message.into());
        if let Err(error) = self.peer.notify_progress(params).await {
            tracing::debug!(%error, "progress notification not delivered");
        }
    }
}

/// The part that differs per server: its tools, their behaviour and its resources.
pub trait Backend: Send + Sync + 'static {
    fn implementation(&self) -> Implementation;
    fn instructions(&self) -> String;
    fn tools(&self) -> Result<Vec<ToolSpec>, SetupError>;

    /// Runs a tool whose arguments already passed schema validation. `Err` is a tool
    /// failure the caller sees as an `isError` result.
    fn call(
        &self,
        tool: &str,
        args: JsonObject,
        ctx: CallContext,
    ) -> impl Future<Output = Result<ToolOutput, String>> + Send;

    /// The first thing done with any `tools/call`, before the tool is looked up or its
    /// arguments checked: a backend that keeps a record of the calls it received writes it
    /// here. `Err` refuses the call (an `isError` result): a call that cannot be recorded
    /// is not run.
    fn received(&self, _tool: &str, _args: Option<&JsonObject>) -> Result<(), String> {
        Ok(())
    }

    fn has_resources(&self) -> bool {
        false
    }

    fn resources(&self) -> Result<Vec<Resource>, McpError> {
        Ok(Vec::new())
    }

    fn read_resource(&self, uri: &str) -> Result<ResourceContents, McpError> {
        Err(McpError::resource_not_found(
            format!("no resource '{uri}'"),
            None,
        ))
    }
}

/// The rmcp handler shared by all servers.
pub struct Server<B> {
    backend: Arc<B>,
    tools: Arc<Vec<ToolSpec>>,
}

// By hand: a derive would require `B: Clone`, but only the Arcs are cloned. The HTTP
// transport makes one handler per session over the same backend.
impl<B> Clone for Server<B> {
    fn clone(&self) -> Self {
        Self {
            backend: self.backend.clone(),
            tools: self.tools.clone(),
        }
    }
}

impl<B: Backend> Server<B> {
    pub fn new(backend: B) -> Result<Self, SetupError> {
        let tools = backend.tools()?;
        Ok(Self {
            backend: Arc::new(backend),
            tools: Arc::new(tools),
        })
    }

    fn tool_names(&self) -> String {
        self.tools
            .iter()
            .map(|spec| spec.tool.name.as_ref())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A resource request `M` to a backend without resources is an unknown method.
    fn has_resources<M: rmcp::model::ConstString>(&self) -> Result<(), McpError> {
        if self.backend.has_resources() {
            Ok(())
        } else {
            Err(McpError::method_not_found::<M>())
        }
    }
}

impl<B: Backend> ServerHandler for Server<B> {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.backend.has_resources() {
            ServerCapabilities::builder()
                .enable_resources()
                .enable_tools()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(self.backend.implementation())
            .with_instructions(self.backend.instructions())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools
            .iter()
            .find(|spec| spec.tool.name == name)
            .map(|spec| spec.tool.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.tools.iter().map(|spec| spec.tool.clone()).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if let Err(message) = self
            .backend
            .received(&request.name, request.arguments.as_ref())
        {
            return Ok(error_result(message).into());
        }
        let Some(spec) = self
            .tools
            .iter()
            .find(|spec| spec.tool.name == request.name)
        else {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool '{}'; this server has: {}",
                    request.name,
                    self.tool_names()
                ),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        let args_value = Value::Object(args);
        if let Err(message) = spec.check(&args_value) {
            return Ok(error_result(message.to_string()).into());
        }
        let Value::Object(args) = args_value else {
            // Built from an object two lines above.
            return Ok(error_result("arguments must be an object".to_owned()).into());
        };
        let ctx = CallContext {
            peer: context.peer.clone(),
            progress_token: context.meta.get_progress_token(),
            cancelled: context.ct.clone(),
        };
        let result = match self.backend.call(&spec.tool.name, args, ctx).await {
            Ok(output) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
                result.structured_content = output.structured;
                result
            }
            Err(message) => error_result(message),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.has_resources::<rmcp::model::ListResourcesRequestMethod>()?;
        Ok(ListResourcesResult::with_all_items(
            self.backend.resources()?,
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.has_resources::<rmcp::model::ReadResourceRequestMethod>()?;
        let contents = self.backend.read_resource(&request.uri)?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// Convenience for read-only tool annotations.
pub fn read_only(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .destructive(false)
}
