//! Redirections and here-documents of the walk: the files a command or a group writes,
//! and the text of a here-document, which the grammar may end elsewhere than bash does.
//! A child of `syntax` so it shares the walker's state without widening it.

use tree_sitter::Node;

use super::super::analysis::Redirect;
use super::super::classify;
use super::super::{BashError, Unit};
use super::{WORD_KINDS, Walker, named_children};

impl Walker<'_, '_> {
    pub(super) fn redirected(&mut self, n: Node) -> Result<(), BashError> {
        let mut redirects = Vec::new();
        let mut body = None;
        let mut cursor = n.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if cursor.field_name() == Some("body") {
                    body = Some(child);
                } else if child.is_named() {
                    match child.kind() {
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(child, &mut redirects)?;
                        }
                        _ => self.visit(child)?,
                    }
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        match body {
            Some(b) if b.kind() == "command" => self.command(b, redirects),
            Some(b) => {
                self.visit(b)?;
                self.redirect_only(redirects);
                Ok(())
            }
            None => {
                self.redirect_only(redirects);
                Ok(())
            }
        }
    }

    /// Redirections of a group, a loop or nothing (`> f`): a unit without words that
    /// carries the files written.
    pub(super) fn redirect_only(&mut self, redirects: Vec<Redirect>) {
        let mut unit = Unit::new(Vec::new());
        classify::apply_redirects(&mut unit, &redirects);
        if !unit.writes_to.is_empty() || unit.class != classify::Class::Ordinary {
            self.out.units.push(unit);
        }
    }

    pub(super) fn redirect(&mut self, n: Node, out: &mut Vec<Redirect>) -> Result<(), BashError> {
        let mut op = String::new();
        let mut target = None;
        let mut delimiter: Option<(String, bool)> = None;
        let mut body: Option<Node> = None;
        let mut cursor = n.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                let field = cursor.field_name();
                if !child.is_named() {
                    let t = self.text(child);
                    if t.starts_with(['<', '>', '&']) && op.is_empty() {
                        op = t.to_string();
                    }
                } else {
                    match child.kind() {
                        "file_descriptor" => {}
                        "heredoc_start" => {
                            let raw = self.text(child);
                            let quoted = raw.contains(['\'', '"', '\\']);
                            let name: String = raw
                                .chars()
                                .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                                .collect();
                            delimiter = Some((name, quoted));
                        }
                        "heredoc_body" => body = Some(child),
                        "heredoc_end" => {}
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(child, out)?;
                        }
                        kind if WORD_KINDS.contains(&kind)
                            && (field == Some("destination") || n.kind() != "heredoc_redirect") =>
                        {
                            let w = self.word(child)?;
                            if target.is_none() {
                                target = Some(w);
                            }
                        }
                        _ => self.visit(child)?,
                    }
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        if n.kind() == "herestring_redirect" && op.is_empty() {
            op = "<<<".into();
        }
        if let Some(body) = body {
            let (name, quoted) = delimiter.clone().unwrap_or_default();
            self.heredoc_body(body, &name, quoted, op == "<<-")?;
        }
        out.push(Redirect { op, target });
        Ok(())
    }

    /// A here-document's text: an unquoted one expands like a double-quoted string. The
    /// grammar's idea of where it ends is checked against bash's (a line equal to the
    /// delimiter ends it), since a later end would hide commands inside the text.
    pub(super) fn heredoc_body(
        &mut self,
        body: Node,
        delimiter: &str,
        quoted: bool,
        strip_tabs: bool,
    ) -> Result<(), BashError> {
        let text = self.text(body);
        for line in text.split('\n') {
            let line = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if line == delimiter {
                return Err(BashError::Ambiguous("here-document end"));
            }
        }
        if quoted {
            return Ok(());
        }
        if body.named_child_count() == 0 {
            return self.unparsed_text(text);
        }
        for child in named_children(body) {
            match child.kind() {
                "heredoc_content" => self.check_leaf(child)?,
                kind if WORD_KINDS.contains(&kind) => {
                    self.word(child)?;
                }
                _ => self.visit(child)?,
            }
        }
        Ok(())
    }
}
