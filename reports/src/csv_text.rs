//! CSV text through the `csv` crate: every CSV the reports and the CLI write (a figure's
//! numbers, `gaps.csv`, `--csv` tables) and the one they read back (the HTML page's tables of
//! a figure's numbers). It exists so that quoting is never written by hand: RFC 4180, a field
//! quoted only when it holds a comma, a quote or a line break, `\n` after each record.
//!
//! ```
//! use elk_reports::csv_text;
//! let text = csv_text::write([vec!["series", "note"], vec!["basic", "B8, S128"]]);
//! assert_eq!(text, "series,note\nbasic,\"B8, S128\"\n");
//! assert_eq!(csv_text::read(&text)[1], ["basic", "B8, S128"]);
//! ```

/// `records` as CSV text, one line per record (records may differ in length).
pub fn write<R, F>(records: R) -> String
where
    R: IntoIterator,
    R::Item: IntoIterator<Item = F>,
    F: AsRef<str>,
{
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for r in records {
        w.write_record(r.into_iter().map(|f| f.as_ref().to_owned()))
            .expect("writing CSV into memory cannot fail");
    }
    let bytes = w.into_inner().expect("flushing into memory cannot fail");
    String::from_utf8(bytes).expect("UTF-8 fields give UTF-8 CSV")
}

/// The records of CSV `text`, each its fields; empty lines are skipped, records may differ
/// in length, and reading stops at the first malformed record.
pub fn read(text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .records()
        .map_while(|r| r.ok())
        .map(|r| r.iter().map(str::to_owned).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_when_they_must_be_and_read_back_whole() {
        let text = write([["a", "b, \"c\"", "", "d", "e\nf"]]);
        assert_eq!(text, "a,\"b, \"\"c\"\"\",,d,\"e\nf\"\n");
        assert_eq!(read(&text), [["a", "b, \"c\"", "", "d", "e\nf"]]);
        assert_eq!(read("x,y\n\n1,2\n"), [["x", "y"], ["1", "2"]]);
    }
}
