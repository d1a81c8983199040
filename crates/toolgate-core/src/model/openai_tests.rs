use super::*;

fn decode(chunks: &[Value]) -> Vec<StreamEvent> {
    let mut decoder = OpenAiDecoder::default();
    let mut out = Vec::new();
    for chunk in chunks {
        let event = SseEvent {
            event: "message".into(),
            data: chunk.to_string(),
        };
        out.extend(decoder.on_event(&event).unwrap());
    }
    if !decoder.is_done() {
        out.extend(decoder.on_body_end().unwrap());
    }
    out
}

/// A sampling request's temperature and stop sequences reach the endpoint, within
/// what Chat Completions accepts; the agent's own calls send neither.
#[test]
fn sampling_options_are_sent_within_the_apis_limits() {
    let mut request = ModelRequest {
        system: String::new(),
        messages: Vec::new(),
        tools: Vec::new(),
        max_tokens: 10,
        sampling: Default::default(),
    };
    let plain = request_body("m", &request, false);
    assert!(plain.get("temperature").is_none() && plain.get("stop").is_none());
    request.sampling = crate::model::SamplingOptions {
        temperature: Some(3.5),
        stop_sequences: ["a", "b", "c", "d", "e"].map(String::from).to_vec(),
    };
    let body = request_body("m", &request, false);
    assert_eq!(body["temperature"], json!(2.0));
    assert_eq!(body["stop"], json!(["a", "b", "c", "d"]));
}

fn chart_png() -> crate::model::ImageData {
    crate::model::ImageData {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    }
}

/// The result of tool call `c1`: "a chart" and its image.
fn chart_result(png: crate::model::ImageData) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: "c1".into(),
        content: "a chart".into(),
        is_error: false,
        images: vec![png],
    }
}

/// The request messages for one user turn made of `blocks`.
fn user_messages(blocks: &[ContentBlock], images_ok: bool) -> Vec<Value> {
    let mut out = Vec::new();
    append_messages(&mut out, Role::User, blocks, images_ok);
    out
}

#[test]
fn tool_images_follow_the_tool_messages_as_image_parts() {
    let out = user_messages(
        &[
            chart_result(chart_png()),
            ContentBlock::Text {
                text: "what does it show?".into(),
            },
        ],
        true,
    );
    assert_eq!(
        out[0],
        json!({"role": "tool", "tool_call_id": "c1", "content": "a chart"})
    );
    assert_eq!(
        out[1],
        json!({"role": "user", "content": [
            {"type": "text", "text": "what does it show?"},
            {"type": "text", "text": "Images returned by tool call c1:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ]})
    );
    assert_eq!(out.len(), 2);
}

#[test]
fn without_image_support_images_become_placeholder_text() {
    let png = chart_png();
    let out = user_messages(
        &[chart_result(png.clone()), ContentBlock::Image(png.clone())],
        false,
    );
    assert_eq!(
        out,
        vec![
            json!({"role": "tool", "tool_call_id": "c1", "content": format!("a chart\n{}", png.placeholder())}),
            json!({"role": "user", "content": png.placeholder()}),
        ]
    );
}

#[test]
fn ollama_style_whole_tool_call_with_stop_and_no_done() {
    let events = decode(&[
        json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"",
        "tool_calls":[{"function":{"name":"glob","arguments":{"pattern":"*.rs"}}}]},"finish_reason":"stop"}]}),
    ]);
    assert_eq!(events.len(), 3, "{events:?}");
    let StreamEvent::ToolUse { id, name, input } = &events[1] else {
        panic!("{events:?}")
    };
    assert!(id.starts_with("call_0_"), "a generated id: {id}");
    assert_eq!(
        (name.as_str(), input),
        ("glob", &json!({"pattern": "*.rs"}))
    );
    assert_eq!(events[2], StreamEvent::Stop(StopReason::ToolUse));
}

#[test]
fn reasoning_content_streams_as_thinking() {
    let events = decode(&[
        json!({"choices":[{"index":0,"delta":{"reasoning_content":"let me see"}}]}),
        json!({"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}),
    ]);
    assert_eq!(events[0], StreamEvent::ThinkingDelta("let me see".into()));
    assert_eq!(events[1], StreamEvent::TextDelta("Hi".into()));
}

#[test]
fn broken_arguments_reach_the_agent_as_raw_text() {
    let events = decode(&[
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"bash","arguments":"{\"command\": "}}]}}]}),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"bash"}}]},"finish_reason":"tool_calls"}]}),
    ]);
    assert_eq!(
        events[1],
        StreamEvent::ToolUse {
            id: "c1".into(),
            name: "bash".into(),
            input: Value::String("{\"command\": ".into())
        }
    );
}

#[test]
fn an_error_chunk_is_reported() {
    let mut decoder = OpenAiDecoder::default();
    let event = SseEvent {
        event: "message".into(),
        data: json!({"error": {"message": "context length exceeded"}}).to_string(),
    };
    let err = decoder.on_event(&event).unwrap_err().to_string();
    assert_eq!(
        err,
        "openai stream broken: the server reported an error: context length exceeded"
    );
}
