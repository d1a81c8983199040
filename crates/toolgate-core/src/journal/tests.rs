//! The session log: records written, read back, compactions redone, cut lines skipped.

use super::*;
use crate::protocol::ModelRetry;

/// A compaction is redone on resume: the model gets the summary and what came after,
/// the replay shows every message with the marker where it was compacted.
#[test]
fn a_compacted_session_resumes_compacted_and_replays_whole() {
    use crate::protocol::{CompactionReport, CompactionTrigger};
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::open(dir.path(), "s1").unwrap();
    for text in ["first", "second"] {
        log.append(Journal::Message {
            message: Message::user_text(text),
        })
        .unwrap();
        log.append(Journal::Message {
            message: Message {
                role: Role::Assistant,
                content: vec![ContentBlock::Text {
                    text: format!("{text} done"),
                }],
            },
        })
        .unwrap();
    }
    let report = CompactionReport {
        trigger: CompactionTrigger::Manual,
        tokens_before: 100,
        tokens_after: 10,
        cleared_outputs: 0,
        summarized_messages: 4,
        kept_messages: 0,
    };
    log.append(Journal::Compacted(redo::CompactionRecord {
        report: report.clone(),
        cleared: vec![],
        kept_from: 4,
        summary: Some("both done".into()),
        focus: None,
    }))
    .unwrap();
    log.append(Journal::Message {
        message: Message::user_text("third"),
    })
    .unwrap();
    let restored = load(dir.path(), "s1").unwrap();
    assert_eq!(
        restored.messages,
        vec![Message {
            role: Role::User,
            content: vec![
                ContentBlock::Text {
                    text: "both done".into()
                },
                ContentBlock::Text {
                    text: "third".into()
                }
            ],
        }]
    );
    assert_eq!(restored.shown.len(), 5);
    assert_eq!(restored.compactions, vec![(4, report)]);
}

#[test]
fn round_trip_restores_messages_and_connections() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut log = SessionLog::open(dir.path(), "s1").unwrap();
    log.append(Event::SessionStart {
        session_id: "s1".into(),
        workspace: ws.clone(),
        model: "test".into(),
        servers: None,
        pool: None,
    })
    .unwrap();
    log.append(Journal::Message {
        message: Message::user_text("hello"),
    })
    .unwrap();
    log.append(Journal::Connect {
        server: "docs".into(),
        tools: vec!["search".into()],
    })
    .unwrap();
    log.append(Journal::Connect {
        server: "deploy".into(),
        tools: vec![],
    })
    .unwrap();
    log.append(Journal::Disconnect {
        server: "docs".into(),
    })
    .unwrap();
    log.append(Journal::Message {
        message: Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "t1".into(),
                name: "bash".into(),
                input: serde_json::json!({}),
            }],
        },
    })
    .unwrap();
    // A half-written line, as after a crash.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log.path)
        .unwrap()
        .write_all(b"{\"ts\":\"2026-")
        .unwrap();

    let restored = load(dir.path(), "s1").unwrap();
    assert_eq!(restored.connected, vec!["deploy".to_string()]);
    assert_eq!(restored.skipped_lines, 1);
    assert_eq!(restored.messages.len(), 3);
    assert_eq!(
        restored.messages[2].content,
        vec![ContentBlock::ToolResult {
            tool_use_id: "t1".into(),
            content: "The session ended before this tool call finished.".into(),
            is_error: true,
            images: vec![],
        }]
    );
    assert_eq!(resolve(dir.path(), &ws, &ResumeFrom::Latest).unwrap(), "s1");
    assert!(matches!(
        resolve(dir.path(), dir.path(), &ResumeFrom::Latest),
        Err(SessionError::NoneForWorkspace(_))
    ));
    assert!(matches!(
        resolve(dir.path(), &ws, &ResumeFrom::Id("../x".into())),
        Err(SessionError::BadId(_))
    ));
    assert!(matches!(
        resolve(dir.path(), &ws, &ResumeFrom::Id("nope".into())),
        Err(SessionError::NotFound(_))
    ));
}

#[test]
fn cut_replies_come_back_in_place_and_old_logs_without_them_still_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = SessionLog::open(dir.path(), "s2").unwrap();
    let cut = |text: &str| {
        Event::ReplyCut(ReplyCut {
            text: text.into(),
            retrying: true,
        })
    };
    log.append(cut("before the clear")).unwrap();
    log.append(Journal::Cleared).unwrap();
    log.append(Journal::Message {
        message: Message::user_text("hello"),
    })
    .unwrap();
    log.append(cut("Half of")).unwrap();
    log.append(Event::ModelRetry(ModelRetry {
        attempt: 2,
        max_attempts: 10,
        wait_ms: 300,
        reason: crate::model::RetryReason::Cut,
        detail: "connection lost mid-response".into(),
    }))
    .unwrap();
    log.append(Journal::Message {
        message: Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Text {
                text: "The whole answer.".into(),
            }],
        },
    })
    .unwrap();
    let restored = load(dir.path(), "s2").unwrap();
    assert_eq!(restored.messages.len(), 2);
    assert_eq!(restored.skipped_lines, 0);
    assert_eq!(
        restored.cut_replies,
        vec![(
            1,
            ReplyCut {
                text: "Half of".into(),
                retrying: true
            }
        )]
    );

    // A log written before these records existed.
    let old = "{\"ts\":\"2026-11-01T10:00:00Z\",\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n";
    std::fs::write(log_path(dir.path(), "old"), old).unwrap();
    let restored = load(dir.path(), "old").unwrap();
    assert_eq!((restored.messages.len(), restored.skipped_lines), (1, 0));
    assert!(restored.cut_replies.is_empty());
}

/// A log written before decision 0097 named three facts differently (`tool_call`,
/// `tool_result` without `name`, `permission`); they read as the events that replaced them,
/// and the journal's own `compacted` record still wins over the event of that name.
#[test]
fn a_log_written_before_one_event_type_reads_as_events() {
    let dir = tempfile::tempdir().unwrap();
    let old = [
        r#"{"ts":"2026-12-01T00:00:00Z","type":"session_start","session_id":"s","workspace":"/w","model":"m","seq":1,"prev":"x","chain":"sha256-v1"}"#,
        r#"{"ts":"2026-12-01T00:00:01Z","type":"tool_call","call_id":"c1","name":"bash","server":null,"input":{"command":"ls"}}"#,
        r#"{"ts":"2026-12-01T00:00:02Z","type":"permission","call_id":"c1","time":"2026-12-01T00:00:02.000Z","tool":"bash","input_digest":"0123456789abcdef","decision":"allow","decider":{"by":"default","rule":"bash guard"}}"#,
        r#"{"ts":"2026-12-01T00:00:03Z","type":"tool_result","call_id":"c1","outcome":"ok","output":"a.txt"}"#,
        r#"{"ts":"2026-12-01T00:00:04Z","type":"compacted","trigger":"manual","tokens_before":9,"tokens_after":1,"cleared_outputs":0,"summarized_messages":0,"kept_messages":0}"#,
        r#"{"ts":"2026-12-01T00:00:05Z","type":"turn_finished","usage":{"input_tokens":1,"output_tokens":2},"cancelled":false,"model_calls":1}"#,
    ];
    let text: String = old.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(log_path(dir.path(), "s"), text).unwrap();
    let records = read_records(dir.path(), "s").unwrap();
    assert_eq!(records.len(), old.len(), "{records:#?}");
    assert!(matches!(
        &records[0],
        Record::Fact(Event::SessionStart {
            servers: None,
            pool: None,
            ..
        })
    ));
    assert!(matches!(&records[1], Record::Fact(Event::ToolStarted(s)) if s.name == "bash"));
    assert!(
        matches!(&records[2], Record::Fact(Event::PermissionDecided(p)) if p.record.tool == "bash")
    );
    assert!(matches!(
        &records[3],
        Record::Fact(Event::ToolFinished { name, output, .. }) if name.is_empty() && output == "a.txt"
    ));
    assert!(matches!(
        &records[4],
        Record::Journal(Journal::Compacted(_))
    ));
    assert!(matches!(
        &records[5],
        Record::Fact(Event::TurnFinished {
            model_calls: Some(1),
            exit_code: None,
            ..
        })
    ));
    let restored = load(dir.path(), "s").unwrap();
    assert_eq!(restored.skipped_lines, 0);
    assert_eq!(restored.turns, 1);
}
