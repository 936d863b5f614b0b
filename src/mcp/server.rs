//! The MCP server: every verb of the library's table ([`forgestate::verbs`]) whose faces include
//! MCP is a tool, generated from its spec (name, title, description, input and output schemas,
//! annotations) and run by the library over one long-lived [`Client`], so the configuration, the
//! forge connection and its caches stay warm across calls. Nothing here is per verb: even the
//! text a model reads before the structured answer is the verb's own CLI text (its `show`).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};

use forgestate::Client;
use forgestate::backend::AnyThread;
use forgestate::report::StatusPolicy;
use forgestate::verbs::{self, Context, Face, Spec};

use super::order::Order;
use super::{extras, reply};

/// What the server tells the model when it connects.
const INSTRUCTIONS: &str = "forgestate keeps an agent's progress as [CHECKPOINT] and [HEALTH] \
records in one session thread (a Forgejo/Gitea issue, or a local store), so work survives a \
crash, a restart or a handoff. At the start of a task call `resume` with your agent name and \
session id; after each step that would be costly to redo call `checkpoint` (with `next` and \
`blockers` for whoever picks the work up); long-running supervisors call `health` now and then, \
and `status` to see who has stalled. `latest`, `list` and `history` read what any agent \
recorded; `fork` starts a new session from a checkpoint. A record the forge cannot take right \
now is kept in this machine's outbox and posted later: that is not an error.";

/// The MCP server: the tools over one client.
#[derive(Clone)]
pub struct Server {
    /// The store, or why it could not be opened (exit code and message).
    client: Arc<Result<Client<AnyThread>, (u8, String)>>,
    /// The configured `[status]` thresholds and final resume points.
    policy: Arc<StatusPolicy>,
    /// The tools, generated once from the verb table.
    tools: Arc<Vec<Tool>>,
    /// The per-session queues the line gate fills in arrival order.
    order: Arc<Order>,
}

impl Server {
    /// A server over `client`, kept for the whole session; calls wait for their turn in `order`,
    /// whose tickets the line gate hands out.
    pub fn new(
        client: Result<Client<AnyThread>, (u8, String)>,
        policy: StatusPolicy,
        order: Arc<Order>,
    ) -> Server {
        let tools = verbs::table()
            .into_iter()
            .filter(|s| s.on(Face::Mcp))
            .map(tool)
            .collect();
        Server {
            client: Arc::new(client),
            policy: Arc::new(policy),
            tools: Arc::new(tools),
            order,
        }
    }

    /// Runs the verb `name` on `args` as a tool call: its result, or the exit code and message
    /// of its failure (with no client, the failure every call answers with).
    pub(super) async fn run(
        &self,
        name: &str,
        args: Map<String, Value>,
    ) -> Option<Result<CallToolResult, (u8, String)>> {
        let client = match self.client.as_ref() {
            Ok(client) => client,
            Err((code, message)) => return Some(Err((*code, message.clone()))),
        };
        let ctx = Context {
            client,
            policy: &self.policy,
        };
        let text = reply::Text::default();
        let answer = verbs::cli::shown(&ctx, name, Value::Object(args), &text).await?;
        Some(match answer {
            Ok(answer) => Ok(reply::answer(name, answer, text)),
            Err(e) => Err((crate::face::exit_code(&e), e.to_string())),
        })
    }
}

/// The tool of a verb: everything from its spec.
fn tool(spec: &Spec) -> Tool {
    let annotations = ToolAnnotations::with_title(spec.title)
        .read_only(spec.read_only)
        .destructive(spec.destructive)
        .idempotent(spec.idempotent)
        .open_world(spec.open_world);
    Tool::new(spec.name, spec.description, Arc::new((spec.request)()))
        .with_title(spec.title)
        .with_raw_output_schema(Arc::new((spec.answer)()))
        .with_annotations(annotations)
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("forgestate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Held until the answer is built: the session's next call waits for it.
        let id = serde_json::to_string(&context.id).unwrap_or_default();
        let _turn = self.order.turn(&id).await;
        let unknown = || {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
            let hint = crate::face::did_you_mean(
                &request.name,
                &names,
                |n| format!("{n:?}"),
                "tools/list names the tools",
            );
            ErrorData::invalid_params(format!("no tool named {:?}; {hint}", request.name), None)
        };
        if self.get_tool(&request.name).is_none() {
            return Err(unknown());
        }
        let args = request.arguments.clone().unwrap_or_default();
        match self.run(&request.name, args).await {
            Some(result) => Ok(result
                .unwrap_or_else(|(code, message)| reply::failure(code, &message))
                .into()),
            None => Err(unknown()),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        Ok(rmcp::model::ListResourcesResult::with_all_items(Vec::new()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        Ok(extras::templates())
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        extras::read(self, &request.uri).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        Ok(extras::prompts())
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        extras::prompt(&request)
    }
}
