//! The one error type of elk-app, which elk-reports returns too: the runs fail with its
//! input and engine variants, the reports with [`AppError::Plot`] and [`AppError::Refused`].
//! One type for both crates, so that the CLI and Python classify every failure of a sweep, a
//! study or a report in one place (bad input or not: `exit_code` in the CLI, `Failure` in
//! Python).

/// Why a run (compare, gap, MoE, a sweep, a study) or a report failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// A grid file or preset is malformed (file, key, what).
    #[error("{file}: {}", elk_model::error::one_line(.detail))]
    Grid {
        /// The file or preset name.
        file: String,
        /// What is wrong.
        detail: String,
    },
    /// A grid name that is neither a preset nor a file.
    #[error("grid '{name}': not a preset ({presets}) and no such file")]
    NoGrid {
        /// The name given.
        name: String,
        /// The presets, comma-separated.
        presets: String,
    },
    /// A results file is malformed (file, line, what).
    #[error("{file}:{line}: {}", elk_model::error::one_line(.detail))]
    Results {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {detail}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        detail: String,
    },
    /// A request refused (a flag or keyword, or a combination of them).
    #[error(transparent)]
    Request(#[from] crate::request::error::RequestError),
    /// A model, plan or instance error.
    #[error(transparent)]
    Model(#[from] elk_model::ModelError),
    /// An exact solve failed.
    #[error(transparent)]
    Solver(#[from] elk_solver::SolverError),
    /// A method failed (an invalid schedule, a crashed backend).
    #[error(transparent)]
    Method(#[from] elk_stage::method::MethodError),
    /// A detailed replay could not finish.
    #[error(transparent)]
    Detailed(#[from] elk_sim::detailed::DetailedError),
    /// An instance or schedule is malformed.
    #[error(transparent)]
    Stage(#[from] elk_stage::StageError),
    /// Plotting failed (elk-reports' figures).
    #[error("plot {name}: {detail}")]
    Plot {
        /// The plot.
        name: String,
        /// What failed.
        detail: String,
    },
    /// A report (elk-reports') that cannot show its grid honestly (two cells under one label,
    /// a swept quantity the grid does not sweep) is refused rather than drawn wrongly.
    #[error("report ({figure}): cannot draw these results honestly: {detail}")]
    Refused {
        /// The figure type.
        figure: String,
        /// Why, and what to do instead.
        detail: String,
    },
}

/// Results of elk-app and elk-reports.
pub type Result<T> = std::result::Result<T, AppError>;

/// An I/O error with its path.
pub fn io(path: &std::path::Path, e: impl std::fmt::Display) -> AppError {
    AppError::Io {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}
