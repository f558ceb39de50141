//! Progress on stderr for work that takes over a second (indicatif draws nothing when stderr
//! is not a terminal, so piped output and CI logs stay clean).

use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// A spinner with a message, ticking until finished.
pub fn spinner(message: String) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(message);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// A bar over `len` steps.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    let template = format!("{{bar:30}} {{pos}}/{{len}} {what}: {{msg}} [{{elapsed}}, ETA {{eta}}]");
    pb.set_style(
        ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}
