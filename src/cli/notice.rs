//! What resolving a request tells the user, on stderr: each warning as `warning: …`, and a
//! spinner while the plan tables are built.

use elk_app::request::Notice;
use indicatif::ProgressBar;

/// The CLI's [`Notice`]: warnings printed as they come, a spinner over planning.
#[derive(Default)]
pub struct Stderr {
    spinner: Option<ProgressBar>,
}

impl Notice for Stderr {
    fn warn(&mut self, line: String) {
        eprintln!("warning: {line}");
    }

    fn planning(&mut self, what: &str) {
        self.spinner = Some(super::progress::spinner(what.to_string()));
    }

    fn planned(&mut self) {
        if let Some(s) = self.spinner.take() {
            s.finish_and_clear();
        }
    }
}

/// A request's refusal as the CLI reports it: a refusal is a usage error (exit code 2), a
/// model or stage error the error it wraps (exit code 2 as well).
pub fn cli_error(e: elk_app::request::RequestError) -> anyhow::Error {
    use elk_app::request::RequestError as R;
    match e {
        R::Model(e) => e.into(),
        R::Stage(e) => e.into(),
        refused => super::flags::Usage(refused.to_string()).into(),
    }
}

/// A run's error as the CLI reports it: the error it wraps, so that the exit code and the
/// message are the ones that error has on its own (a refused request a usage error).
pub fn app_error(e: elk_app::AppError) -> anyhow::Error {
    use elk_app::AppError as A;
    match e {
        A::Request(e) => cli_error(e),
        A::Model(e) => e.into(),
        A::Solver(e) => e.into(),
        A::Method(e) => e.into(),
        A::Detailed(e) => e.into(),
        A::Stage(e) => e.into(),
        other => other.into(),
    }
}
