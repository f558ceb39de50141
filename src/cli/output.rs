//! Writing output files atomically: a temporary file in the same directory, then a rename, so
//! an interrupted or failed run never leaves a half-written file or clobbers a good one.

use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use std::path::Path;

/// Writes `schedule` to `path` atomically, stamped with `inst`'s name and content hash so
/// `simulate` can tell when it is given another instance.
pub fn write_schedule(path: &Path, inst: &Instance, schedule: &Schedule) -> anyhow::Result<()> {
    let mut s = schedule.clone();
    s.stamp(inst);
    write_atomic(path, &s.to_json()?)
}

/// Writes `contents` to `path` atomically.
pub fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    write_atomic_bytes(path, contents.as_bytes())
}

/// Writes `contents` (text, or a PNG figure) to `path` atomically
/// ([`elk_stage::error::write_atomic`]).
pub fn write_atomic_bytes(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    Ok(elk_stage::error::write_atomic(path, contents)?)
}

/// A table as CSV on stdout (RFC 4180 quoting): `header`, then one line per row. Numbers are
/// best given through [`csv_number`], so they read back to the value printed elsewhere.
pub fn print_csv(header: &[&str], rows: &[Vec<String>]) {
    use elk_reports::plot::csv_field;
    let line = |fields: &mut dyn Iterator<Item = &str>| {
        fields.map(csv_field).collect::<Vec<_>>().join(",")
    };
    println!("{}", line(&mut header.iter().copied()));
    for r in rows {
        println!("{}", line(&mut r.iter().map(String::as_str)));
    }
}

/// A number for CSV: Rust's shortest round-trip form; empty when absent.
pub fn csv_number(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// The first fields of every CSV row of `compare` and `gap`: where (instance, chip), which
/// method, its makespan and its gap.
pub fn csv_row_head(
    instance: &str,
    chip: &str,
    method: &str,
    makespan_ms: Option<f64>,
    gap_pct: Option<f64>,
) -> Vec<String> {
    vec![
        instance.to_string(),
        chip.to_string(),
        method.to_string(),
        csv_number(makespan_ms),
        csv_number(gap_pct),
    ]
}
