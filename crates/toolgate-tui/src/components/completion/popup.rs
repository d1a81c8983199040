//! The completion popup over the composer (`@server:uri`, template values, prompts and
//! their arguments) and the question line of a prompt's missing argument.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::components::completion::assist::Popup;
use crate::components::draw::{above_composer, popup_frame};
use crate::sanitize::for_terminal;
use crate::theme::Theme;

pub struct CompletionPopup<'a> {
    pub popup: &'a Popup,
    pub theme: &'a Theme,
}

impl CompletionPopup<'_> {
    /// Where the popup goes: just above the composer, as tall as its choices.
    pub fn area(&self, composer: Rect, screen: Rect) -> Rect {
        let rows = self.popup.choices.len().max(1) as u16 + 2;
        above_composer(composer, screen, rows, composer.width.min(76))
    }
}

impl Widget for CompletionPopup<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height < 3 {
            return;
        }
        let t = self.theme;
        let inner = popup_frame(area, buf, t, " ↑↓ choose · Tab insert · Esc close ");
        let lines: Vec<Line> = if self.popup.choices.is_empty() {
            vec![Line::from(Span::styled("asking the server…", t.dim()))]
        } else {
            self.popup
                .choices
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let label = for_terminal(&c.label);
                    let detail = for_terminal(&c.detail);
                    let style = if i == self.popup.selected {
                        t.selected()
                    } else {
                        t.plain()
                    };
                    Line::from(vec![
                        Span::styled(label, style),
                        Span::styled(format!("  {detail}"), t.dim()),
                    ])
                })
                .collect()
        };
        Paragraph::new(lines).render(inner, buf);
    }
}

/// The question of a prompt's argument, drawn over the composer's top border.
pub struct FormQuestion<'a> {
    pub text: &'a str,
    pub theme: &'a Theme,
}

impl Widget for FormQuestion<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let row = Rect { height: 1, ..area };
        Paragraph::new(Line::from(Span::styled(self.text, self.theme.warn()))).render(row, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::completion::query::Choice;
    use crate::components::draw::testing::{render, text};

    #[test]
    fn popup_lists_choices_with_the_selected_one_highlighted() {
        let theme = Theme::new(true);
        let popup = Popup {
            word_len: 4,
            choices: vec![
                Choice {
                    insert: "@fx:fixture://readme ".into(),
                    label: "@fx:fixture://readme".into(),
                    detail: "Read me".into(),
                },
                Choice {
                    insert: "@fx:fixture://pages/".into(),
                    label: "@fx:fixture://pages/{name}".into(),
                    detail: "template: A page".into(),
                },
            ],
            selected: 1,
            waiting: false,
        };
        let buf = render(
            CompletionPopup {
                popup: &popup,
                theme: &theme,
            },
            60,
            4,
        );
        let screen = text(&buf);
        assert!(screen.contains("@fx:fixture://readme  Read me"), "{screen}");
        let reversed = |y: u16| {
            buf[(1, y)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        };
        assert!(
            reversed(2) && !reversed(1),
            "the second row is the selected one"
        );
        insta::assert_snapshot!(screen);
    }
}
