//! What both readers (CSV and JSONL) give the importer: one row per token and layer, and the
//! field names they accept, with the aliases real routing logs use.

use crate::error::{ModelError, Result};

/// One token's choice in one layer, as a line of the file gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The line it was read from (1-based), for messages.
    pub line: usize,
    /// The decode step, when the file numbers them.
    pub step: Option<u64>,
    /// The sequence (request) it belongs to, when the file names them: any text, ordered by
    /// first appearance.
    pub sequence: Option<String>,
    /// The token's index: its position in its sequence, or in the file.
    pub token: u64,
    /// The layer id as the file gives it (MoE layers are these ids in sorted order).
    pub layer: u64,
    /// The k experts chosen.
    pub experts: Vec<u32>,
}

/// What a reader read: the rows, and what it read past.
#[derive(Debug, Default)]
pub struct Rows {
    /// The rows in file order.
    pub rows: Vec<Row>,
    /// Rows whose expert ids were all -1: a layer without routed experts (the dense layers
    /// SGLang's `routed_experts` pads with -1), skipped.
    pub placeholders: usize,
    /// Columns or keys the importer does not read (scores, vocabulary token ids …), sorted.
    pub ignored: Vec<String>,
}

/// A field of a row and the names it goes by in published logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// `step`.
    Step,
    /// `sequence` or `request`.
    Sequence,
    /// `token` or `position`.
    Token,
    /// `layer` or `layer_id` (SGLang).
    Layer,
    /// `experts`, `expert_ids`, `topk_ids` (SGLang) or `indices` (FLAME-MoE traces).
    Experts,
}

impl Field {
    /// Every field, in the order messages list them.
    pub const ALL: [Field; 5] = [
        Field::Step,
        Field::Sequence,
        Field::Token,
        Field::Layer,
        Field::Experts,
    ];

    /// The names it is read under; the first is the one the docs use.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Field::Step => &["step"],
            Field::Sequence => &["sequence", "request"],
            Field::Token => &["token", "position"],
            Field::Layer => &["layer", "layer_id"],
            Field::Experts => &["experts", "expert_ids", "topk_ids", "indices"],
        }
    }

    /// The field named `name`, if any.
    pub fn named(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.names().contains(&name))
    }
}

/// Where a value was read: the file, its line and the column (CSV) or key (JSONL).
#[derive(Clone, Copy, Debug)]
pub struct At<'a> {
    /// The file's name.
    pub file: &'a str,
    /// The line, 1-based.
    pub line: usize,
    /// `column` or `key`.
    pub kind: &'a str,
    /// The column's or key's name.
    pub name: &'a str,
}

impl At<'_> {
    /// The one-line error `FILE:LINE: column 'NAME': DETAIL`.
    pub fn error(&self, detail: impl std::fmt::Display) -> ModelError {
        ModelError::Invalid(format!(
            "{}:{}: {} {}: {detail}",
            self.file,
            self.line,
            self.kind,
            quoted(self.name)
        ))
    }

    /// A whole number ≥ 0 (`token`, `layer`, `step`).
    pub fn index(&self, text: &str) -> Result<u64> {
        text.trim()
            .parse::<u64>()
            .map_err(|_| self.error(format!("{} is not a whole number ≥ 0", quoted(text))))
    }
}

/// Text from the file in an error, in single quotes, with newlines and other control
/// characters escaped so the error stays one line.
pub fn quoted(text: &str) -> String {
    let escaped: String = text
        .chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect();
    format!("'{escaped}'")
}

/// The experts of one row from their ids as written: `None` when every id is -1 (a layer
/// without routed experts), an error on any other negative or non-number.
pub fn expert_ids(at: &At, ids: &[&str]) -> Result<Option<Vec<u32>>> {
    if ids.is_empty() {
        return Err(at.error("no expert ids"));
    }
    if ids.iter().all(|s| s.trim() == "-1") {
        return Ok(None);
    }
    ids.iter()
        .map(|s| {
            s.trim().parse::<u32>().map_err(|_| {
                at.error(format!(
                    "{} is not an expert id (a whole number ≥ 0)",
                    quoted(s.trim())
                ))
            })
        })
        .collect::<Result<Vec<u32>>>()
        .map(Some)
}

/// The ids of a one-cell list: `5 17`, `5;17`, `5,17` or `[5, 17]` (as pandas writes a list).
pub fn split_ids(cell: &str) -> Vec<&str> {
    let inner = cell.trim();
    let inner = inner
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(inner);
    inner
        .split(|c: char| c == ';' || c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_of_ids_splits_on_any_of_the_separators_people_use() {
        for cell in ["5 17", "5;17", " 5 ; 17 ", "[5, 17]", "5,17"] {
            assert_eq!(split_ids(cell), ["5", "17"], "{cell}");
        }
        let at = At {
            file: "t.csv",
            line: 3,
            kind: "column",
            name: "experts",
        };
        assert_eq!(expert_ids(&at, &["-1", "-1"]).unwrap(), None);
        let e = expert_ids(&at, &["-1", "4"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.csv:3: column 'experts': '-1' is not an expert id (a whole number ≥ 0)"
        );
        let e = expert_ids(&at, &["1\n2"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.csv:3: column 'experts': '1\\n2' is not an expert id (a whole number ≥ 0)"
        );
        assert_eq!(Field::named("indices"), Some(Field::Experts));
        assert_eq!(Field::named("token_id"), None);
    }
}
