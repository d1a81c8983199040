//! `tools/list` to the last page, read tool by tool (see [`tools_page`]): a tool whose
//! schema cannot go to a model API is left out with the reason, and the server's other
//! tools stay usable (decision 0069).

use crate::mcp::convert::{ToolsPage, tools_page};
use crate::pool::InvalidTool;
use rmcp::model::{ClientRequest, CustomRequest, CustomResult, ServerResult, Tool};
use rmcp::{Peer, RoleClient, ServiceError};

/// Every page of a server's tool list.
#[derive(Debug, Default)]
pub struct Listing {
    pub tools: Vec<Tool>,
    /// Tools the listing had but no pool can take.
    pub invalid: Vec<InvalidTool>,
}

/// Lists every page. The request is sent untyped so that one unreadable tool does not make
/// rmcp refuse the whole page; a page rmcp could read is taken as it is.
pub async fn list_all_tools(peer: &Peer<RoleClient>) -> Result<Listing, ServiceError> {
    let mut listing = Listing::default();
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor
            .as_ref()
            .map(|cursor| serde_json::json!({ "cursor": cursor }));
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", params));
        let page = match peer.send_request(request).await? {
            ServerResult::ListToolsResult(result) => ToolsPage {
                tools: result.tools,
                invalid: Vec::new(),
                next_cursor: result.next_cursor.filter(|c| !c.is_empty()),
            },
            ServerResult::CustomResult(CustomResult(raw)) => {
                tools_page(&raw).ok_or(ServiceError::UnexpectedResponse)?
            }
            // The untagged result matched some other shape first: read it back as JSON.
            other => serde_json::to_value(&other)
                .ok()
                .as_ref()
                .and_then(tools_page)
                .ok_or(ServiceError::UnexpectedResponse)?,
        };
        listing.tools.extend(page.tools);
        listing.invalid.extend(page.invalid);
        match page.next_cursor {
            // A server that hands back the cursor it was given would page forever.
            Some(next) if cursor.as_ref() != Some(&next) => cursor = Some(next),
            _ => return Ok(listing),
        }
    }
}
