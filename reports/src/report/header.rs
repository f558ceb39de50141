//! Where a report came from ([`Header`]: its command, inputs and date, printed at its top,
//! and how its figures are drawn) and what it is made of ([`Files`]).

use crate::plot::Style;

/// Where a report came from (printed at its top), and how its figures are drawn.
#[derive(Clone, Debug)]
pub struct Header {
    /// The command that made it.
    pub command: String,
    /// Its inputs (files, presets).
    pub inputs: String,
    /// The date (YYYY-MM-DD).
    pub date: String,
    /// The figures' size and font (not printed).
    pub style: Style,
    /// The plan cache every instance of the report is planned through (`None`: afresh; not
    /// printed).
    pub plan_cache: Option<elk_model::plan::PlanCache>,
}

impl Header {
    /// The Markdown lines. Every grid cell and study builds its graphs from the zoo, model
    /// files or Hugging Face configs, so planned by the clean rules: the header says so.
    pub fn markdown(&self, title: &str) -> String {
        format!(
            "# {title}\n\n- command: `{}`\n- inputs: {}\n- date: {}\n- plan rules: {} \
             (SPEC §3: operators may run on groups of cores, gathers hold the rows they read; \
             docs/plans.md)\n\n",
            self.command,
            self.inputs,
            self.date,
            elk_model::plan::PlanRules::SPEC.name()
        )
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A report: its files (name → contents: text, or a PNG figure), `README.md` first.
pub type Files = Vec<(String, Vec<u8>)>;
