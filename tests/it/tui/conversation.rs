//! The conversation as it is drawn (markdown, escapes, tool cards, scrolling, resizing),
//! timers and frame pacing, colours, and the tool detail and help views.

use super::*;

#[test]
fn markdown_is_rendered() {
    let mut app = started_app();
    for chunk in [
        "# Plan\n\nI'll use **two** tools:\n\n",
        "1. `search` the docs\n2. read the _result_\n\n",
        "```sh\nls -la\n```\n",
    ] {
        agent(&mut app, AgentEvent::Live(Live::TextDelta(chunk.into())));
    }
    agent(&mut app, AgentEvent::Live(Live::AssistantMessageDone));
    let terminal = render(&mut app, 110, 30);
    let text = screen_of(&terminal);
    for expected in [
        "# Plan",
        "I'll use two tools:",
        "1. search the docs",
        "2. read the result",
        "  ls -la",
    ] {
        assert!(text.contains(expected), "{expected:?} missing:\n{text}");
    }
    assert!(!text.contains("**") && !text.contains("```"), "{text}");
    // Emphasis survives as a style.
    let buf = terminal.backend().buffer();
    let bold = (0..buf.area.height).any(|y| {
        (0..buf.area.width).any(|x| {
            buf[(x, y)].symbol() == "t"
                && buf[(x, y)]
                    .modifier
                    .contains(ratatui::style::Modifier::BOLD)
                && buf[((x + 1).min(buf.area.width - 1), y)].symbol() == "w"
        })
    });
    assert!(bold, "**two** is not bold");
}

#[test]
fn escape_sequences_from_models_tools_and_servers_never_reach_the_screen() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::Live(Live::TextDelta(
            "hi\u{1b}]0;pwned\u{7} there\u{1b}[2J\u{9b}31m!".into(),
        )),
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ToolStarted(ToolCallStart {
            call_id: "t1".into(),
            name: "mcp__docs__search".into(),
            server: Some("docs".into()),
            input: json!({"q": "\u{1b}[1;1H"}),
        })),
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ToolFinished {
            call_id: "t1".into(),
            outcome: ToolOutcome::Error,
            output: "bad\u{1b}[31m red\r\u{8}".into(),
            full_output_path: None,
            name: String::new(),
        }),
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ServerStatus {
            server: "fs".into(),
            status: ServerStatus::Failed {
                reason: "boom\u{1b}]52;c;ZXZpbA==\u{7}".into(),
                stderr_tail: vec![],
            },
        }),
    );
    let terminal = render(&mut app, 110, 30);
    let buf = terminal.backend().buffer();
    for cell in buf.content() {
        assert!(
            !cell.symbol().chars().any(|c| c.is_control()),
            "control character reached the screen: {:?}",
            cell.symbol()
        );
    }
    let text = screen_of(&terminal);
    assert!(text.contains("hi there!"), "{text}");
    assert!(text.contains("bad red"), "{text}");
    assert!(text.contains("boom"), "{text}");
    assert!(
        !text.contains("pwned") && !text.contains("ZXZpbA"),
        "{text}"
    );
}

#[test]
fn tool_cards_show_outcomes_and_expand() {
    let mut app = started_app();
    for (id, outcome) in [
        ("a", ToolOutcome::Ok),
        ("b", ToolOutcome::Error),
        ("c", ToolOutcome::Denied),
    ] {
        agent(
            &mut app,
            AgentEvent::Fact(Fact::ToolStarted(ToolCallStart {
                call_id: id.into(),
                name: format!("tool_{id}").into(),
                server: None,
                input: json!({"path": "src/main.rs"}),
            })),
        );
        agent(
            &mut app,
            AgentEvent::Fact(Fact::ToolFinished {
                call_id: id.into(),
                outcome,
                output: (1..=6).map(|i| format!("out {i}\n")).collect(),
                full_output_path: None,
                name: String::new(),
            }),
        );
    }
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ToolStarted(ToolCallStart {
            call_id: "d".into(),
            name: "mcp__deploy__trigger".into(),
            server: Some("deploy".into()),
            input: json!({}),
        })),
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ToolProgress {
            call_id: "d".into(),
            progress: 3.0,
            total: Some(4.0),
            message: Some("uploading".into()),
        }),
    );
    let text = screen(&mut app, 110, 40);
    assert!(text.contains("tool_a path=\"src/main.rs\""), "{text}");
    assert!(text.contains("⎿ ok") && text.contains("⎿ error") && text.contains("⎿ denied"));
    assert!(text.contains("running… 75% uploading"), "{text}");
    assert!(text.contains("… 3 more lines (ctrl+o to expand)"), "{text}");
    assert!(!text.contains("out 6"));
    key_mod(&mut app, KeyCode::Char('o'), KeyModifiers::CONTROL);
    let text = screen(&mut app, 110, 60);
    assert!(text.contains("out 6"), "{text}");
    // Cancelled turn: the running card says so.
    agent(
        &mut app,
        AgentEvent::Fact(Fact::TurnFinished {
            usage: Usage {
                input_tokens: 1200,
                output_tokens: 34,
                ..Default::default()
            },
            cancelled: true,
            exit_code: None,
            model_calls: None,
        }),
    );
    let text = screen(&mut app, 110, 60);
    assert!(text.contains("⎿ cancelled"), "{text}");
    assert!(text.contains("↑1200 ↓34 tok"), "{text}");
}

#[test]
fn scrolling_up_keeps_the_view_and_marks_new_output_below() {
    let mut app = started_app();
    for i in 0..50 {
        agent(
            &mut app,
            AgentEvent::Fact(Fact::Notice {
                message: format!("message {i}"),
            }),
        );
    }
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("message 49"));
    key(&mut app, KeyCode::PageUp);
    let text = screen(&mut app, 110, 30);
    assert!(!text.contains("message 49"), "{text}");
    agent(
        &mut app,
        AgentEvent::Fact(Fact::Notice {
            message: "message 50".into(),
        }),
    );
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("new output below"), "{text}");
    assert!(!text.contains("message 50"));
    // The wheel scrolls too; back at the bottom the view follows again.
    for _ in 0..30 {
        let _ = update(
            &mut app,
            Msg::Terminal(Event::Mouse(MouseEvent {
                kind: MouseEventKind::ScrollDown,
                column: 5,
                row: 5,
                modifiers: KeyModifiers::NONE,
            })),
        );
    }
    let text = screen(&mut app, 110, 30);
    assert!(
        text.contains("message 50") && !text.contains("new output below"),
        "{text}"
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::Notice {
            message: "message 51".into(),
        }),
    );
    assert!(screen(&mut app, 110, 30).contains("message 51"));
}

#[test]
fn resize_reflows_text() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::Live(Live::TextDelta("word ".repeat(40).trim_end().to_string())),
    );
    let wide = screen(&mut app, 120, 30);
    let narrow = screen(&mut app, 70, 30);
    let rows = |s: &str| s.lines().filter(|l| l.contains("word")).count();
    assert!(
        rows(&narrow) > rows(&wide),
        "wide:\n{wide}\nnarrow:\n{narrow}"
    );
}

// ---------- timers and frame pacing ----------

#[test]
fn idle_console_sets_no_timer_and_a_running_turn_ticks_the_spinner() {
    let mut app = started_app();
    assert_eq!(app.next_deadline(), None);
    type_text(&mut app, "go");
    perform(key(&mut app, KeyCode::Enter));
    let first = app.next_deadline().expect("spinner deadline");
    assert!(first > app.now && first <= app.now + Duration::from_millis(100));
    advance(&mut app, Duration::from_millis(1500));
    assert!(screen(&mut app, 110, 30).contains("working 1.5s"));
    agent(
        &mut app,
        AgentEvent::Fact(Fact::TurnFinished {
            usage: Usage::default(),
            cancelled: false,
            exit_code: None,
            model_calls: None,
        }),
    );
    assert_eq!(app.next_deadline(), None);
}

#[test]
fn five_thousand_chunks_in_a_second_draw_at_most_sixty_frames() {
    let mut app = started_app();
    let mut limiter = FrameLimiter::default();
    let start = Instant::now();
    let mut draws = 0;
    let mut now = start;
    for i in 0..5000u32 {
        now = start + Duration::from_micros(200) * i;
        app.now = now;
        // As the runtime does: a frame only for what may have changed the screen.
        if update(
            &mut app,
            Msg::Agent(AgentEvent::Live(Live::TextDelta("x".into()))),
        )
        .redraw
        {
            limiter.mark_dirty();
        }
        if limiter.should_draw(now) {
            draws += 1;
            limiter.drawn(now);
        }
    }
    assert!(draws <= 60, "{draws} redraws in one second");
    assert!(draws >= 55, "only {draws} redraws: streaming looks frozen");
    // Nothing is left behind: the last chunk is drawn within one frame interval.
    let due = limiter.next_draw_at(now).expect("pending frame");
    assert!(due <= now + FRAME_INTERVAL);
    limiter.drawn(due);
    assert_eq!(
        limiter.next_draw_at(due),
        None,
        "idle limiter keeps a timer"
    );
}

fn redraw_of(app: &mut App, msg: Msg) -> bool {
    update(app, msg).redraw
}

fn key_event(code: KeyCode) -> Msg {
    Msg::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

#[test]
fn keys_that_change_nothing_do_not_cost_a_frame() {
    let mut app = started_app();
    resize(&mut app, 110, 30);
    for i in 0..3 {
        agent(
            &mut app,
            AgentEvent::Fact(Fact::Notice {
                message: format!("message {i}"),
            }),
        );
    }
    let before = screen(&mut app, 110, 30);
    let mouse = |kind| {
        Msg::Terminal(Event::Mouse(MouseEvent {
            kind,
            column: 5,
            row: 5,
            modifiers: KeyModifiers::NONE,
        }))
    };
    let mut release = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    release.kind = crossterm::event::KeyEventKind::Release;
    let nothing = [
        ("Esc in the composer", key_event(KeyCode::Esc)),
        ("a mouse move", mouse(MouseEventKind::Moved)),
        ("a key release", Msg::Terminal(Event::Key(release))),
        ("focus regained", Msg::Terminal(Event::FocusGained)),
        // Following the bottom already: there is nothing further down.
        ("PageDown at the bottom", key_event(KeyCode::PageDown)),
        ("the wheel at the bottom", mouse(MouseEventKind::ScrollDown)),
        ("Left in an empty composer", key_event(KeyCode::Left)),
        ("an unbound key", key_event(KeyCode::F(5))),
    ];
    for (what, msg) in nothing {
        assert!(!redraw_of(&mut app, msg), "{what} asked for a frame");
    }
    // And indeed the screen is what it was.
    assert_eq!(screen(&mut app, 110, 30), before);

    // The pool: moving past the last tool changes nothing; moving does.
    key(&mut app, KeyCode::Tab);
    assert!(redraw_of(&mut app, key_event(KeyCode::Down)));
    for _ in 0..10 {
        key(&mut app, KeyCode::Down);
    }
    assert!(!redraw_of(&mut app, key_event(KeyCode::Down)));
    // Short details do not page.
    assert!(!redraw_of(&mut app, key_event(KeyCode::PageDown)));
    key(&mut app, KeyCode::Tab);

    // Whatever shows: typing, the wheel moving the view, output, ticks, a resize.
    assert!(redraw_of(&mut app, key_event(KeyCode::Char('h'))));
    assert!(redraw_of(&mut app, key_event(KeyCode::Left)), "cursor move");
    assert!(redraw_of(&mut app, mouse(MouseEventKind::ScrollUp)));
    assert!(redraw_of(
        &mut app,
        Msg::Agent(AgentEvent::Live(Live::TextDelta("more".into())))
    ));
    assert!(redraw_of(&mut app, Msg::Tick));
    assert!(redraw_of(&mut app, Msg::Terminal(Event::Resize(90, 20))));
}

#[test]
fn paging_counts_in_the_size_the_terminal_reported() {
    let mut app = started_app();
    for i in 0..60 {
        agent(
            &mut app,
            AgentEvent::Fact(Fact::Notice {
                message: format!("message {i}"),
            }),
        );
    }
    // 30 rows: conversation of 30 - 3 (composer) - 1 (status) = 26 rows, 13 messages;
    // a page is 24 rows, 12 messages.
    resize(&mut app, 110, 30);
    key(&mut app, KeyCode::PageUp);
    let tall = screen(&mut app, 110, 30);
    assert!(
        tall.contains("message 35") && !tall.contains("message 48"),
        "{tall}"
    );
    // A smaller terminal: the same key pages by its smaller page (10 rows = 5 messages).
    let mut small = started_app();
    for i in 0..60 {
        agent(
            &mut small,
            AgentEvent::Fact(Fact::Notice {
                message: format!("message {i}"),
            }),
        );
    }
    resize(&mut small, 110, 16);
    key(&mut small, KeyCode::PageUp);
    let short = screen(&mut small, 110, 16);
    assert!(
        short.contains("message 49") && !short.contains("message 55"),
        "{short}"
    );
}

#[test]
fn no_color_keeps_meaning_without_colours() {
    let mut app = App::new(
        ConsoleInfo {
            no_color: true,
            ..info()
        },
        Instant::now(),
    );
    // The starting pool first: only what arrives after it is marked new.
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot: builtin_entries(),
            added: vec![],
            removed: vec![],
            ..Default::default()
        })),
    );
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot,
            added: vec!["mcp__docs__search".into()],
            removed: vec![],
            ..Default::default()
        })),
    );
    let terminal = render(&mut app, 110, 30);
    let buf = terminal.backend().buffer();
    for cell in buf.content() {
        assert_eq!(cell.fg, Color::Reset, "colour drawn under NO_COLOR");
        assert_eq!(cell.bg, Color::Reset, "colour drawn under NO_COLOR");
    }
    // The new tool is still marked, by reverse video.
    let reversed = buf
        .content()
        .iter()
        .any(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED));
    assert!(reversed);
    assert!(screen_of(&terminal).contains("mcp__docs__search new"));
}

#[test]
fn tool_detail_and_help_at_80x24() {
    let mut app = started_app();
    let mut snapshot = builtin_entries();
    snapshot.push(trigger_entry());
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot,
            added: vec![],
            removed: vec![],
            ..Default::default()
        })),
    );
    key(&mut app, KeyCode::Tab);
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("policy: ask — rule `mcp__deploy__trigger`"),
        "{text}"
    );
    insta::assert_snapshot!("tool_detail_80x24", text);
    key(&mut app, KeyCode::Tab);
    ch(&mut app, '?');
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("Ctrl+C"), "{text}");
    insta::assert_snapshot!("help_80x24", text);
}

#[test]
fn the_starting_pool_is_not_marked_new() {
    // The agent reports its first pool with every tool as "added"; that is the start
    // screen, not a change, so nothing is highlighted and no highlight timer runs.
    let mut app = App::new(info(), Instant::now());
    let snapshot = builtin_entries();
    let added: Vec<String> = snapshot.iter().map(|e| e.tool.name.clone()).collect();
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot,
            added,
            removed: vec![],
            ..Default::default()
        })),
    );
    let terminal = render(&mut app, 110, 30);
    let text = screen_of(&terminal);
    assert!(text.contains("read_file"), "{text}");
    assert!(!text.contains(" new"), "starting pool marked new:\n{text}");
    let buf = terminal.backend().buffer();
    assert!(
        buf.content().iter().all(|c| c.bg != Color::Green),
        "starting pool highlighted:\n{text}"
    );
    assert_eq!(app.next_deadline(), None, "a highlight timer runs at start");

    // A tool arriving afterwards is marked.
    let mut snapshot = builtin_entries();
    snapshot.extend(docs_entries());
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot,
            added: vec!["mcp__docs__search".into()],
            removed: vec![],
            ..Default::default()
        })),
    );
    let text = screen(&mut app, 110, 30);
    assert!(text.contains("mcp__docs__search new"), "{text}");
}

#[test]
fn tool_cards_say_who_let_the_call_run_or_stopped_it() {
    let mut app = started_app();
    let decided = [
        (
            "a1",
            "read_file",
            Permit::Allow,
            Decider::Rule {
                rule: "Read(src/**)".into(),
                source: RuleSource::ProjectConfig("/home/dev/project/.toolgate/config.toml".into()),
            },
        ),
        (
            "a2",
            "mcp__deploy__trigger",
            Permit::Allow,
            Decider::Person {
                answer: UserDecision::AllowOnce,
                asked_by: "mcp__deploy__trigger".into(),
            },
        ),
        (
            "a3",
            "mcp__deploy__trigger",
            Permit::Allow,
            Decider::SessionGrant {
                tool: "mcp__deploy__trigger".into(),
            },
        ),
        (
            "a4",
            "bash",
            Permit::Deny,
            Decider::Rule {
                rule: "Bash(rm:*)".into(),
                source: RuleSource::UserConfig("/home/dev/.config/toolgate/config.toml".into()),
            },
        ),
        (
            "a5",
            "glob",
            Permit::Allow,
            Decider::Default {
                rule: "default: built-in".into(),
            },
        ),
        (
            "a6",
            "mcp__deploy__trigger",
            Permit::Deny,
            Decider::Expired {
                asked_by: "mcp__deploy__trigger".into(),
            },
        ),
    ];
    for (id, name, decision, decider) in decided {
        agent(
            &mut app,
            AgentEvent::Fact(Fact::ToolStarted(ToolCallStart {
                call_id: id.into(),
                name: name.into(),
                server: None,
                input: json!({}),
            })),
        );
        agent(
            &mut app,
            AgentEvent::Fact(Fact::PermissionDecided(PermissionLine {
                call_id: id.into(),
                record: AuditRecord::new(name, &json!({}), decision, None, decider),
            })),
        );
        let outcome = if decision == Permit::Allow {
            ToolOutcome::Ok
        } else {
            ToolOutcome::Denied
        };
        agent(
            &mut app,
            AgentEvent::Fact(Fact::ToolFinished {
                call_id: id.into(),
                outcome,
                output: String::new(),
                full_output_path: None,
                name: String::new(),
            }),
        );
    }
    let text = screen(&mut app, 120, 36);
    for expected in [
        "⎿ ok · allowed by rule Read(src/**) (project config)",
        "⎿ ok · you answered: allow once",
        "⎿ ok · allowed for this session (your earlier answer)",
        "⎿ denied · denied by rule Bash(rm:*) (user config)",
        "⎿ ok · allowed by default: built-in",
        "⎿ denied · denied: nobody answered before the deadline",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn long_tool_details_scroll_with_page_keys() {
    let mut app = started_app();
    let properties: serde_json::Map<String, serde_json::Value> = (0..60)
        .map(|i| (format!("prop_{i:02}"), json!({"type": "string"})))
        .collect();
    let mut big = mcp_entry(
        "warehouse",
        "query",
        Verdict {
            decision: Decision::Ask {
                why: "unlisted MCP tool".into(),
            },
            rule: "default: unlisted MCP tool".into(),
            source: RuleSource::Default,
        },
        ToolClaims::default(),
    );
    big.tool.input_schema = object_schema(serde_json::Value::Object(properties)).into();
    agent(
        &mut app,
        AgentEvent::View(View::PoolChanged(PoolUpdate {
            snapshot: vec![big],
            added: vec![],
            removed: vec![],
            ..Default::default()
        })),
    );
    key(&mut app, KeyCode::Tab);
    let text = screen(&mut app, 120, 36);
    assert!(text.contains("prop_00"), "{text}");
    assert!(!text.contains("prop_59"), "{text}");
    assert!(
        text.contains("↓ · PgUp/PgDn"),
        "more below is marked: {text}"
    );
    for _ in 0..10 {
        key(&mut app, KeyCode::PageDown);
    }
    let text = screen(&mut app, 120, 36);
    assert!(text.contains("prop_59"), "{text}");
    assert!(
        text.contains("PgUp/PgDn") && !text.contains("↓ · PgUp/PgDn"),
        "{text}"
    );
    // Paging past the end does not need to be undone: as many pages up reach the top.
    for _ in 0..10 {
        key(&mut app, KeyCode::PageUp);
    }
    let text = screen(&mut app, 120, 36);
    assert!(text.contains("lines 1–"), "{text}");
    assert!(text.contains("mcp__warehouse__query"), "{text}");
}

#[test]
fn a_tool_card_names_the_images_the_call_returned() {
    let mut app = started_app();
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ToolStarted(ToolCallStart {
            call_id: "i1".into(),
            name: "mcp__charts__render".into(),
            server: Some("charts".into()),
            input: json!({}),
        })),
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ToolImages {
            call_id: "i1".into(),
            images: vec![toolgate::protocol::ImageSummary {
                media_type: "image/png\u{1b}[2J".into(),
                bytes: 5_380,
            }],
        }),
    );
    agent(
        &mut app,
        AgentEvent::Fact(Fact::ToolFinished {
            call_id: "i1".into(),
            outcome: ToolOutcome::Ok,
            output: "a chart of last week".into(),
            full_output_path: None,
            name: String::new(),
        }),
    );
    let text = screen_of(&render(&mut app, 100, 24));
    assert!(
        text.contains("[image returned: image/png, 5.4 kB]"),
        "{text}"
    );
    assert!(text.contains("a chart of last week"), "{text}");
}

/// A fenced block that names its language is coloured by syntax (keywords, strings and
/// plain words differ); one without a language keeps the single code style, and so does
/// every block without colour.
#[test]
fn code_blocks_are_highlighted_by_language() {
    let reply =
        "```rust\nfn main() { let greeting = \"hello\"; }\n```\n\n```\nfn plain() {}\n```\n";
    let colours_of = |app: &mut App, needle: &str| {
        agent(app, AgentEvent::Live(Live::TextDelta(reply.into())));
        agent(app, AgentEvent::Live(Live::AssistantMessageDone));
        colours_of(&render(app, 110, 30), needle)
    };
    let mut app = started_app();
    let highlighted = colours_of(&mut app, "fn main() { let greeting = \"hello\"; }");
    assert!(
        highlighted.len() >= 3,
        "keywords, strings, names: {highlighted:?}"
    );
    let plain = colours_of(&mut started_app(), "fn plain() {}");
    assert_eq!(plain.len(), 1, "no language, one style: {plain:?}");
    assert!(plain.is_disjoint(&highlighted), "{plain:?} {highlighted:?}");

    let mut info = info();
    info.no_color = true;
    let mut colourless = App::new(info, Instant::now());
    let none = colours_of(&mut colourless, "fn main()");
    assert_eq!(none, [Color::Reset].into_iter().collect(), "NO_COLOR");
}
