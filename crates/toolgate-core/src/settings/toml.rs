//! What every `config.toml` table reader does first: parse the file, find its table, and
//! say where a value starts.

use super::Diagnostic;

/// Where a value starts (its byte offset), for diagnostics.
pub(super) fn offset(item: &toml_edit::Item) -> usize {
    item.span().map(|s| s.start).unwrap_or(0)
}

/// The document, or the diagnostic for a file that is not TOML at all, naming what is
/// `lost` (e.g. "permission rules").
pub(super) fn parse<'t>(
    text: &'t str,
    file: &str,
    lost: &str,
) -> Result<toml_edit::Document<&'t str>, Diagnostic> {
    toml_edit::Document::parse(text).map_err(|e| {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let message = format!(
            "not valid TOML ({}); no {lost} loaded from this file",
            e.message().trim()
        );
        Diagnostic::at(text, file, offset, message)
    })
}

/// The table `[name]` of `doc`: None when there is none, a diagnostic when `name` is not a
/// table.
pub(super) fn table<'d>(
    doc: &'d toml_edit::Document<&str>,
    name: &str,
    text: &str,
    file: &str,
) -> Result<Option<&'d dyn toml_edit::TableLike>, Diagnostic> {
    let Some(item) = doc.get(name) else {
        return Ok(None);
    };
    item.as_table_like().map(Some).ok_or_else(|| {
        Diagnostic::at(
            text,
            file,
            offset(item),
            format!("expected [{name}] to be a table"),
        )
    })
}

/// Puts a value read from the file in `slot`. None (a value of the wrong shape) keeps what
/// `slot` holds and returns the `problem` made of it.
pub(super) fn set<T>(
    slot: &mut T,
    read: Option<T>,
    problem: impl FnOnce(&T) -> Diagnostic,
) -> Option<Diagnostic> {
    match read {
        Some(value) => {
            *slot = value;
            None
        }
        None => Some(problem(slot)),
    }
}

/// A whole number that fits `T` and passes `fits`; None for any other value (a string, a
/// fraction, a number out of range), which the caller reports.
pub(super) fn whole<T: TryFrom<i64>>(
    item: &toml_edit::Item,
    fits: impl FnOnce(&T) -> bool,
) -> Option<T> {
    item.as_integer()
        .and_then(|n| T::try_from(n).ok())
        .filter(fits)
}

/// `set` for a whole-number `key` (e.g. `mcp.max_message_bytes`): a value that is not one
/// that `fits` keeps `slot` and is reported as "expected {key} to be {expected}; keeping
/// {kept}".
pub(super) fn set_whole<T: TryFrom<i64> + std::fmt::Display>(
    slot: &mut T,
    item: &toml_edit::Item,
    fits: impl FnOnce(&T) -> bool,
    key: &str,
    expected: &str,
    problem: impl FnOnce(String) -> Diagnostic,
) -> Option<Diagnostic> {
    set(slot, whole(item, fits), |kept| {
        problem(format!("expected {key} to be {expected}; keeping {kept}"))
    })
}
