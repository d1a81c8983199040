//! The Messages API's request body and stream decoder: blocks, thinking, images, errors.

use super::*;

fn feed(decoder: &mut AnthropicDecoder, data: Value) -> Result<Vec<StreamEvent>, ModelError> {
    decoder.on_event(&SseEvent {
        event: data["type"].as_str().unwrap_or("").to_string(),
        data: data.to_string(),
    })
}

#[test]
fn tool_results_come_before_text_in_a_user_message() {
    let request = ModelRequest {
        system: String::new(),
        messages: vec![Message {
            role: Role::User,
            content: vec![
                ContentBlock::Text {
                    text: "not now".into(),
                },
                ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "Permission denied: the user declined".into(),
                    is_error: true,
                    images: vec![],
                },
                ContentBlock::Text {
                    text: String::new(),
                },
            ],
        }],
        tools: vec![],
        max_tokens: 0,
        sampling: Default::default(),
    };
    let body = request_body("m", &request);
    assert_eq!(body["max_tokens"], FALLBACK_MAX_TOKENS);
    assert!(body.get("system").is_none() && body.get("tools").is_none());
    let content = &body["messages"][0]["content"];
    assert_eq!(content.as_array().map(Vec::len), Some(2));
    assert_eq!(content[0]["type"], "tool_result");
    assert_eq!(
        content[1],
        json!({"type": "text", "text": "not now", "cache_control": {"type": "ephemeral"}})
    );
}

/// A sampling request's temperature and stop sequences reach the API, the temperature
/// within Anthropic's 0–1; the agent's own calls send neither.
#[test]
fn sampling_options_are_sent_within_the_apis_limits() {
    let mut request = ModelRequest {
        system: String::new(),
        messages: Vec::new(),
        tools: vec![],
        max_tokens: 10,
        sampling: Default::default(),
    };
    let plain = request_body("m", &request);
    assert!(plain.get("temperature").is_none() && plain.get("stop_sequences").is_none());
    request.sampling = crate::model::SamplingOptions {
        temperature: Some(1.5),
        stop_sequences: vec!["END".into()],
    };
    let body = request_body("m", &request);
    assert_eq!(body["temperature"], json!(1.0));
    assert_eq!(body["stop_sequences"], json!(["END"]));
}

#[test]
fn images_go_as_image_blocks_in_tool_results_and_user_messages() {
    let png = crate::model::ImageData {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    };
    let request = ModelRequest {
        system: String::new(),
        messages: vec![Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "a chart".into(),
                    is_error: false,
                    images: vec![png.clone()],
                },
                ContentBlock::Image(png),
            ],
        }],
        tools: vec![],
        max_tokens: 10,
        sampling: Default::default(),
    };
    let body = request_body("m", &request);
    let content = &body["messages"][0]["content"];
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}});
    assert_eq!(
        content[0]["content"],
        json!([{"type": "text", "text": "a chart"}, image])
    );
    // The last block of the conversation carries the prompt-cache breakpoint.
    let mut last = image;
    last["cache_control"] = json!({"type": "ephemeral"});
    assert_eq!(content[1], last);
}

#[test]
fn tool_input_given_whole_in_block_start_is_kept() {
    let mut decoder = AnthropicDecoder::default();
    feed(
        &mut decoder,
        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"glob","input":{"pattern":"*"}}}),
    )
    .unwrap();
    let events = feed(&mut decoder, json!({"type":"content_block_stop","index":0})).unwrap();
    assert_eq!(
        events,
        vec![StreamEvent::ToolUse {
            id: "t1".into(),
            name: "glob".into(),
            input: json!({"pattern": "*"})
        }]
    );
    // No stop_reason given: inferred from the tool call.
    let events = feed(&mut decoder, json!({"type":"message_stop"})).unwrap();
    assert_eq!(events.last(), Some(&StreamEvent::Stop(StopReason::ToolUse)));
}

#[test]
fn broken_tool_json_and_stray_deltas_are_errors() {
    let mut decoder = AnthropicDecoder::default();
    let err = feed(
        &mut decoder,
        json!({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{"}}),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("not an open tool_use block"),
        "{err}"
    );

    feed(
        &mut decoder,
        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"bash","input":{}}}),
    )
    .unwrap();
    feed(
        &mut decoder,
        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\": "}}),
    )
    .unwrap();
    let err = feed(&mut decoder, json!({"type":"content_block_stop","index":0})).unwrap_err();
    assert!(
        err.to_string()
            .contains("tool input for 'bash' is not valid JSON"),
        "{err}"
    );
}

#[test]
fn thinking_streams_and_comes_back_with_its_signature() {
    let mut decoder = AnthropicDecoder::default();
    let mut events = Vec::new();
    for data in [
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm, "}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"glob first"}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig=="}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}),
        json!({"type":"content_block_stop","index":1}),
        json!({"type":"some_future_event"}),
    ] {
        events.extend(feed(&mut decoder, data).unwrap());
    }
    let thinking = ContentBlock::Thinking {
        thinking: "hmm, glob first".into(),
        signature: "sig==".into(),
    };
    let redacted = ContentBlock::RedactedThinking {
        data: "opaque".into(),
    };
    assert_eq!(
        events,
        vec![
            StreamEvent::ThinkingDelta("hmm, ".into()),
            StreamEvent::ThinkingDelta("glob first".into()),
            StreamEvent::ThinkingBlock(thinking.clone()),
            StreamEvent::ThinkingBlock(redacted.clone()),
        ]
    );
    let request = ModelRequest {
        system: String::new(),
        messages: vec![Message {
            role: Role::Assistant,
            content: vec![thinking, redacted],
        }],
        tools: vec![],
        max_tokens: 100,
        sampling: Default::default(),
    };
    let mut body = request_body("m", &request);
    with_thinking(&mut body, 2000, &request);
    assert_eq!(
        body["messages"][0]["content"],
        json!([
            {"type": "thinking", "thinking": "hmm, glob first", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "opaque"},
        ])
    );
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2000})
    );
    assert_eq!(body["max_tokens"], json!(2100));
}
