//! The results summary (`results/README.md`), assembled from the findings the reports wrote
//! beside them ([`crate::finding`]) — so the summary is never hand-copied: every number in it
//! is one a report computed.

use crate::finding::Finding;
use elk_app::{AppError, Result};
use std::path::Path;

/// The reports of the checked-in summary, in the order it lists them: the three sweeps, then
/// every study.
pub fn summary_order() -> impl Iterator<Item = &'static str> {
    ["fig17", "fig19", "expert-parallel"]
        .into_iter()
        .chain(crate::studies::STUDIES)
}

/// The hand-written file, beside the reports, that says what a change to the code moved in
/// them and by how much (newest first); [`summary`] appends it after the table.
pub const CHANGES: &str = "CHANGES.md";

/// The results summary for the reports in `dir` (each in `dir/NAME/`), as Markdown, with
/// `dir/`[`CHANGES`] after the table when there is one.
pub fn summary(dir: &Path, preamble: &str) -> Result<String> {
    let mut md = String::from("# elk-opt results\n\n");
    md.push_str(preamble);
    md.push_str("\n\n| question | finding | number | report |\n|---|---|---|---|\n");
    for name in summary_order() {
        let f = Finding::read(&dir.join(name))?;
        md.push_str(&format!(
            "| {} | {} | {} | [{name}]({name}/README.md) |\n",
            cell(&f.question),
            cell(&f.finding),
            cell(&f.number)
        ));
    }
    let changes = dir.join(CHANGES);
    if changes.exists() {
        let text = std::fs::read_to_string(&changes).map_err(|e| AppError::Io {
            path: changes.display().to_string(),
            detail: e.to_string(),
        })?;
        md.push('\n');
        md.push_str(&text);
    }
    Ok(md)
}

/// Text safe inside a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "/").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::FILE;

    #[test]
    fn the_summary_lists_every_report_in_order_and_names_a_missing_one() {
        let dir = std::env::temp_dir().join(format!("elk-finding-{}", std::process::id()));
        for (k, name) in summary_order().enumerate() {
            std::fs::create_dir_all(dir.join(name)).unwrap();
            let f = Finding {
                question: format!("q{k}"),
                finding: format!("f{k} | with a bar"),
                number: format!("{k} %"),
            };
            std::fs::write(dir.join(name).join(FILE), f.file().1).unwrap();
        }
        let md = summary(&dir, "pre").unwrap();
        let rows: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| q") && !l.starts_with("| question"))
            .collect();
        assert_eq!(rows.len(), summary_order().count());
        assert!(rows[3].contains("f3 / with a bar") && rows[3].contains("[gap](gap/README.md)"));
        assert!(!md.contains("## What moved"));
        std::fs::write(dir.join(CHANGES), "## What moved\n\nx 1 → 2 ms\n").unwrap();
        let md = summary(&dir, "pre").unwrap();
        assert!(md.ends_with("|\n\n## What moved\n\nx 1 → 2 ms\n"), "{md}");
        std::fs::remove_file(dir.join("ablation").join(FILE)).unwrap();
        let err = summary(&dir, "pre").unwrap_err().to_string();
        assert!(err.contains("ablation") && err.contains(FILE), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
