//! Routing logs as CSV with a header, one row per token and layer:
//! `token,layer,experts` (the ids in one cell: `5 17`, `5;17` or `"[5, 17]"`) or
//! `token,layer,expert_0,expert_1,…`, with optional `step` or `sequence` columns.

use super::rows::{expert_ids, quoted, split_ids, At, Field, Row, Rows};
use crate::error::{ModelError, Result};

/// Where each field is in a record.
struct Columns {
    /// The header's names (for messages).
    names: Vec<String>,
    /// Field → its column.
    fields: Vec<(Field, usize)>,
    /// `expert_0 … expert_{k-1}`, in order, when the ids have a column each.
    expert_columns: Vec<usize>,
    ignored: Vec<String>,
}

/// Reads the rows of CSV `text`; `file` names it in errors.
pub fn read(file: &str, text: &str) -> Result<Rows> {
    let mut reader = ::csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| ModelError::Invalid(format!("{file}:1: the header: {e}")))?
        .clone();
    let columns = columns(file, &header)?;
    let mut rows = Rows {
        ignored: columns.ignored.clone(),
        ..Rows::default()
    };
    let mut lines = Lines::new(text);
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| lines.of(p));
            ModelError::Invalid(format!("{file}:{line}: {e}"))
        })?;
        let line = record.position().map_or(0, |p| lines.of(p));
        if record.len() == 1 && record[0].trim().is_empty() {
            continue;
        }
        if record.len() != columns.names.len() {
            return Err(ModelError::Invalid(format!(
                "{file}:{line}: {} fields, the header has {}",
                record.len(),
                columns.names.len()
            )));
        }
        let at = |c: usize| At {
            file,
            line,
            kind: "column",
            name: &columns.names[c],
        };
        let mut row = Row {
            line,
            step: None,
            sequence: None,
            token: 0,
            layer: 0,
            experts: Vec::new(),
        };
        let mut experts = None;
        for &(field, c) in &columns.fields {
            let cell = &record[c];
            match field {
                Field::Step => row.step = Some(at(c).index(cell)?),
                Field::Sequence => row.sequence = Some(cell.trim().to_string()),
                Field::Token => row.token = at(c).index(cell)?,
                Field::Layer => row.layer = at(c).index(cell)?,
                Field::Experts => experts = expert_ids(&at(c), &split_ids(cell))?,
            }
        }
        if let Some(&first) = columns.expert_columns.first() {
            let cells: Vec<&str> = columns.expert_columns.iter().map(|&c| &record[c]).collect();
            experts = expert_ids(&at(first), &cells)?;
        }
        match experts {
            Some(e) => {
                row.experts = e;
                rows.rows.push(row);
            }
            None => rows.placeholders += 1,
        }
    }
    Ok(rows)
}

/// Line numbers (1-based) of records' byte offsets, counted forward from the last one asked
/// (records come in order, so a file is scanned once). The csv crate's own line count passes
/// over blank lines, and a record's offset is where the blank lines before it start.
struct Lines<'a> {
    bytes: &'a [u8],
    /// The offset counted up to, and the line it is on.
    at: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            bytes: text.as_bytes(),
            at: 0,
            line: 1,
        }
    }

    /// The line of the record at `position` (its first non-blank line).
    fn of(&mut self, position: &::csv::Position) -> usize {
        let mut end = (position.byte() as usize).min(self.bytes.len());
        while end < self.bytes.len() && matches!(self.bytes[end], b'\n' | b'\r') {
            end += 1;
        }
        if end < self.at {
            (self.at, self.line) = (0, 1);
        }
        self.line += self.bytes[self.at..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.at = end;
        self.line
    }
}

/// The columns of `header`: each field's, the `expert_j` ones, the ignored ones.
fn columns(file: &str, header: &::csv::StringRecord) -> Result<Columns> {
    let bad = |detail: String| ModelError::Invalid(format!("{file}:1: {detail}"));
    let names: Vec<String> = header.iter().map(|s| s.trim().to_string()).collect();
    let mut fields: Vec<(Field, usize)> = Vec::new();
    let mut numbered: Vec<(usize, usize)> = Vec::new();
    let mut ignored = Vec::new();
    for (c, name) in names.iter().enumerate() {
        if let Some(field) = Field::named(name) {
            if let Some(&(_, other)) = fields.iter().find(|(f, _)| *f == field) {
                return Err(bad(format!(
                    "columns {} and {} both give the {}",
                    quoted(&names[other]),
                    quoted(name),
                    field.names()[0]
                )));
            }
            fields.push((field, c));
        } else if let Some(j) = name
            .strip_prefix("expert_")
            .and_then(|j| j.parse::<usize>().ok())
        {
            numbered.push((j, c));
        } else {
            ignored.push(name.clone());
        }
    }
    numbered.sort_unstable();
    if let Some((j, c)) = numbered
        .iter()
        .enumerate()
        .find(|(i, (j, _))| i != j)
        .map(|(_, p)| *p)
    {
        return Err(bad(format!(
            "column {}: expert_{j} without expert_0 … expert_{} before it",
            quoted(&names[c]),
            j.saturating_sub(1)
        )));
    }
    let has_cell = fields.iter().any(|(f, _)| *f == Field::Experts);
    match (has_cell, numbered.is_empty()) {
        (true, false) => {
            return Err(bad(
                "both an 'experts' column and expert_0 … columns: give one".into(),
            ))
        }
        (false, true) => {
            return Err(bad(
                "no column 'experts' (or expert_ids, topk_ids, indices) and no expert_0, \
                 expert_1 … columns"
                    .into(),
            ))
        }
        _ => {}
    }
    for required in [Field::Token, Field::Layer] {
        if !fields.iter().any(|(f, _)| *f == required) {
            return Err(bad(format!(
                "no column '{}' (or {})",
                required.names()[0],
                required.names()[1..].join(", ")
            )));
        }
    }
    ignored.sort();
    Ok(Columns {
        names,
        fields,
        expert_columns: numbered.into_iter().map(|(_, c)| c).collect(),
        ignored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_of_the_ids_read_alike_and_placeholders_are_skipped() {
        let cell = read(
            "a.csv",
            "token,layer,experts,score\n0,3,5 17,0.5\n1,3,\"[2, 4]\",x\n",
        )
        .unwrap();
        let split = read(
            "b.csv",
            "layer,token,expert_1,expert_0\n3,0,17,5\n3,1,4,2\n4,1,-1,-1\n",
        )
        .unwrap();
        assert_eq!(cell.rows[0].experts, [5, 17]);
        assert_eq!(cell.rows[1].experts, [2, 4]);
        assert_eq!(cell.ignored, ["score"]);
        let ids = |r: &Rows| r.rows.iter().map(|r| r.experts.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&cell), ids(&split));
        assert_eq!((split.rows.len(), split.placeholders), (2, 1));
        assert_eq!(split.rows[1].line, 3);
    }

    #[test]
    fn a_bad_header_or_cell_is_named_by_line_and_column() {
        let e = |text: &str| read("t.csv", text).unwrap_err().to_string();
        assert_eq!(
            e("token,layer,expert_0,expert_2\n"),
            "t.csv:1: column 'expert_2': expert_2 without expert_0 … expert_1 before it"
        );
        assert_eq!(
            e("token,layer\n"),
            "t.csv:1: no column 'experts' (or expert_ids, topk_ids, indices) and no expert_0, \
             expert_1 … columns"
        );
        assert_eq!(
            e("token,position,layer,experts\n"),
            "t.csv:1: columns 'token' and 'position' both give the token"
        );
        assert_eq!(
            e("token,layer,experts\n0,0,1 2\n1,x,1 2\n"),
            "t.csv:3: column 'layer': 'x' is not a whole number ≥ 0"
        );
        assert_eq!(
            e("token,layer,experts\n0,0,1 2\n\n1,0\n"),
            "t.csv:4: 2 fields, the header has 3"
        );
    }
}
