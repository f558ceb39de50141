//! How a study's report states the work budget its exact solves were given
//! (`elk_app::studies::budget`), and which rows the time stopped first.

use elk_app::studies::budget::ExactBudget;

/// What a study's exact solves were given, and the rows (`cut`, by name) whose solve the time
/// stopped first: a work budget makes the rows the same on any machine, except those
/// (docs/exact.md, "Reproducible certificates").
pub fn budget_paragraph(study: &str, budget: ExactBudget, cut: &[&str]) -> String {
    let mut md = format!(
        "Each exact solve was given {}: counted in solver work, not seconds, so `elk-opt study \
         {study}` gives these makespans and bounds again on any machine (only timings, where \
         shown, differ).",
        budget.describe()
    );
    if cut.is_empty() {
        md.push_str(" The time stop cut none of them.\n\n");
    } else {
        md.push_str(&format!(
            " The time stop cut {} of them first, so their rows depend on the machine's speed \
             and are **not reproducible**: {}.\n\n",
            cut.len(),
            cut.join(", ")
        ));
    }
    md
}

/// The names of the gap study's rows whose exact solve the time stopped first.
pub fn cut_by_time(rows: &[elk_app::studies::gap::Row]) -> Vec<&str> {
    rows.iter()
        .filter(|r| r.cut_by_time())
        .map(|r| r.name.as_str())
        .collect()
}
