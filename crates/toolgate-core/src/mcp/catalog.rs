//! A server's catalog (the protocol's type) as read from what rmcp hands the hub.

pub use crate::protocol::catalog::*;

/// The catalog a connection starts with: what the server declared, nothing listed yet.
pub(crate) fn declared(server: &str, peer: &rmcp::Peer<rmcp::RoleClient>) -> Catalog {
    let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
    let capabilities = capabilities.as_ref();
    Catalog {
        server: server.to_string().into(),
        has_resources: capabilities.is_some_and(|c| c.resources.is_some()),
        has_prompts: capabilities.is_some_and(|c| c.prompts.is_some()),
        completions: capabilities.is_some_and(|c| c.completions.is_some()),
        ..Catalog::default()
    }
}

pub(crate) fn resource_entry(r: &rmcp::model::Resource) -> ResourceEntry {
    ResourceEntry {
        uri: r.uri.clone(),
        name: r.name.clone(),
        title: r.title.clone(),
        description: r.description.clone(),
        mime_type: r.mime_type.clone(),
        size: r.size,
    }
}

pub(crate) fn template_entry(t: &rmcp::model::ResourceTemplate) -> TemplateEntry {
    TemplateEntry {
        uri_template: t.uri_template.clone(),
        name: t.name.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        mime_type: t.mime_type.clone(),
    }
}

pub(crate) fn prompt_entry(p: &rmcp::model::Prompt) -> PromptEntry {
    PromptEntry {
        name: p.name.clone(),
        title: p.title.clone(),
        description: p.description.clone(),
        arguments: p
            .arguments
            .iter()
            .flatten()
            .map(|a| PromptArg {
                name: a.name.clone(),
                description: a.description.clone(),
                required: a.required.unwrap_or(false),
            })
            .collect(),
    }
}

pub(crate) fn resource_part(c: &rmcp::model::ResourceContents) -> ResourcePart {
    use rmcp::model::ResourceContents;
    match c {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => ResourcePart::Text {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            text: text.clone(),
        },
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => ResourcePart::Blob {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            blob: blob.clone(),
        },
        // Kinds newer than this client: say so rather than drop them.
        _ => ResourcePart::Text {
            uri: String::new(),
            mime_type: None,
            text: "[resource contents of an unsupported kind]".into(),
        },
    }
}

pub(crate) fn prompt_message(m: &rmcp::model::PromptMessage) -> PromptMessage {
    use rmcp::model::ContentBlock;
    let role = match m.role {
        rmcp::model::Role::User => PromptRole::User,
        rmcp::model::Role::Assistant => PromptRole::Assistant,
    };
    let content = match &m.content {
        ContentBlock::Text(t) => PromptContent::Text(t.text.clone()),
        ContentBlock::Image(i) => PromptContent::Image {
            mime_type: i.mime_type.clone(),
            data: i.data.clone(),
        },
        ContentBlock::Resource(r) => PromptContent::Resource(resource_part(&r.resource)),
        ContentBlock::ResourceLink(link) => PromptContent::Link {
            uri: link.uri.clone(),
        },
        ContentBlock::Audio(a) => PromptContent::Other(format!(
            "[audio {} ({} bytes base64) not shown]",
            a.mime_type,
            a.data.len()
        )),
        // Content kinds newer than this client: say so rather than drop them.
        #[allow(unreachable_patterns)]
        _ => PromptContent::Other("[content of an unsupported type]".into()),
    };
    PromptMessage { role, content }
}
