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
    let records = std::iter::once(header.to_vec())
        .chain(rows.iter().map(|r| r.iter().map(String::as_str).collect()));
    print!("{}", elk_reports::csv_text::write(records));
}

/// Significant digits of every CSV number: beyond what the tables print (4 decimals of a
/// makespan, 2 of a percentage), short of the float noise of a sum (`0.5323779670000001`).
pub const CSV_DIGITS: i32 = 6;

/// A number for CSV: rounded to [`CSV_DIGITS`] significant digits, plain decimal notation
/// without trailing zeros (`7.69167`, `0.532378`, `15062.5`); empty when absent. The JSON
/// keeps every digit.
pub fn csv_number(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| significant(v, CSV_DIGITS))
}

/// `v` to `digits` significant digits in plain decimal notation, without trailing zeros and
/// never `-0`.
fn significant(v: f64, digits: i32) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    // A number with more whole digits than `digits` is rounded to its last significant
    // place; the others by the format's decimals.
    let rounded = if magnitude + 1 > digits {
        let scale = 10f64.powi(magnitude + 1 - digits);
        (v / scale).round() * scale
    } else {
        v
    };
    let s = format!("{rounded:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0".into()
    } else {
        s
    }
}

/// `v` with an explicit sign and `decimals` decimals, a value that rounds to zero printed
/// `+0.000` rather than `-0.000`.
pub fn signed(v: f64, decimals: usize) -> String {
    let s = format!("{v:+.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        format!("+{}", &s[1..])
    } else {
        s
    }
}

/// A CSV field of a yes/no that may not apply: `true`, `false`, or empty (`parallel_sets`
/// outside `--expert-parallel`'s union).
pub fn csv_flag(v: Option<bool>) -> String {
    v.map(|b| b.to_string()).unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::{csv_number, signed};

    #[test]
    fn csv_numbers_have_six_significant_digits_and_no_noise() {
        let csv = |v: f64| csv_number(Some(v));
        assert_eq!(csv(0.5323779670000001), "0.532378");
        assert_eq!(csv(7.6917123), "7.69171");
        assert_eq!(csv(15.0625), "15.0625");
        assert_eq!(csv(106.98765), "106.988");
        assert_eq!(csv(1234567.8), "1234570");
        assert_eq!(csv(0.000123456789), "0.000123457");
        assert_eq!(csv(2.0), "2");
        assert_eq!(csv(-0.00000001), "-0.00000001");
        assert_eq!(csv(0.0), "0");
        assert_eq!(csv_number(None), "");
    }

    #[test]
    fn a_value_that_rounds_to_zero_has_no_minus_sign() {
        assert_eq!(signed(-0.0000001, 3), "+0.000");
        assert_eq!(signed(-0.0, 3), "+0.000");
        assert_eq!(signed(-0.0006, 3), "-0.001");
        assert_eq!(signed(0.25, 2), "+0.25");
    }
}
