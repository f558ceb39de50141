//! What an exact solve is asked to do: the backend, its settings, and how a model too
//! large for the backend is handled instead (bound and search).

use crate::bounds::BoundSource;
use crate::milp::Linearisation;
use crate::segments::CoupledLp;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Which exact encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// HiGHS MILP.
    #[default]
    Milp,
    /// z3 SMT.
    #[cfg_attr(feature = "clap", value(help = "z3 SMT (tiny instances)"))]
    Smt,
}

/// Every name a backend goes by, in one place (a new backend adds its arm to each, and to
/// `max_size`).
impl Backend {
    /// Every backend (for callers that list them by name, as the Python package does).
    pub const ALL: [Backend; 2] = [Backend::Milp, Backend::Smt];

    /// `milp` or `smt` (the CLI's `--backend`, the report's `backend`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Milp => "milp",
            Backend::Smt => "smt",
        }
    }

    /// The method's name in every table and schedule file: `exact-milp` or `exact-smt`.
    pub fn method_name(self) -> &'static str {
        match self {
            Backend::Milp => "exact-milp",
            Backend::Smt => "exact-smt",
        }
    }

    /// The phase a solve reports while the backend runs.
    pub fn phase(self) -> &'static str {
        match self {
            Backend::Milp => "MILP (HiGHS)",
            Backend::Smt => "SMT (z3)",
        }
    }

    /// What the backend solves, in prose ("no MILP ran").
    pub fn model_noun(self) -> &'static str {
        match self {
            Backend::Milp => "MILP",
            Backend::Smt => "SMT model",
        }
    }

    /// The library the backend runs: `HiGHS` or `z3`.
    pub fn solver(self) -> &'static str {
        match self {
            Backend::Milp => "HiGHS",
            Backend::Smt => "z3",
        }
    }

    /// Why this build cannot run the backend, or `None` when it can. HiGHS is always in;
    /// z3 is the `smt` feature, which the Python wheel leaves out so that it installs on a
    /// machine without libz3.
    pub fn missing(self) -> Option<&'static str> {
        match self {
            Backend::Milp => None,
            Backend::Smt if cfg!(feature = "smt") => None,
            Backend::Smt => Some(
                "not in this build: it was compiled without z3 (elk-solver's `smt` feature, \
                 left out of the Python wheel so that it needs no libz3); use the milp \
                 backend, or the CLI, which has both",
            ),
        }
    }

    /// What the backend's proven lower bound is.
    pub fn dual_bound(self) -> BoundSource {
        match self {
            Backend::Milp => BoundSource::MilpDual,
            Backend::Smt => BoundSource::SmtUnsat,
        }
    }
}

/// How to solve.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactOptions {
    /// The encoding.
    pub backend: Backend,
    /// MILP memory-row linearisation.
    #[serde(default)]
    pub linearisation: Linearisation,
    /// Wall-clock time the backend may run (its own limit; [`crate::worker`] enforces a
    /// hard one).
    pub time_limit: Option<Duration>,
    /// A schedule to start from; the result is never worse.
    pub warm_start: Option<Schedule>,
    /// Also solve the LP relaxation for a bound (with a quarter of the time limit), and try
    /// its options as a schedule (docs/exact.md, "The LP relaxation's options").
    #[serde(default)]
    pub lp_bound: bool,
    /// How a model too large for the backend is bounded beyond the roofline.
    #[serde(default)]
    pub whole_model: WholeModelBound,
    /// Whether the warm start of a model too large for the backend is improved by the
    /// window search ([`crate::lns`]).
    #[serde(default)]
    pub whole_model_search: WholeModelSearch,
    /// The coupled segment relaxation LP ([`crate::segments::coupled_segment_bound`], one
    /// layer per segment) of a model too large for the backend: solved on the whole-model
    /// road (`solve`), or dealt with by the caller first (`elk-opt gap` reads it from the
    /// bound cache or solves it before the worker starts, so a kill cannot lose it): a
    /// `known` bound holds from the solve's start, on any road, and is never solved again; a
    /// `skip`ped one (the caller ran out of time) is not tried again.
    #[serde(default)]
    pub coupled: CoupledLp,
    /// The stage relaxation's bound ([`crate::bounds::stage_bound`]), computed by the caller
    /// (`elk-opt gap` on a model too large for the backend, before the worker starts): it
    /// holds from the solve's start, a killed worker's report included.
    #[serde(default)]
    pub stage: Option<Cycles>,
    /// A deterministic budget ([`crate::exact::Work`]; `--work-limit`): branch-and-bound
    /// nodes on an instance the MILP can build, window MILPs on a model too large for it.
    /// Where it splits the solve into phases, the split is by work, not by time, and the
    /// time limit is only a hard stop on top.
    #[serde(default)]
    pub work_limit: Option<u64>,
}

/// What improves the schedule of a model too large for the exact backends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WholeModelSearch {
    /// The window search of [`crate::lns`], from the warm start, with the time the bound
    /// leaves.
    #[default]
    Window,
    /// Nothing: the warm start is returned as it is.
    Off,
}

/// The bound computed when the instance is too large for the exact backends: the segment
/// relaxation of [`crate::segments`], each segment solved as an LP or a MILP (dual bound).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum WholeModelBound {
    /// Segment LP relaxations (fast).
    #[default]
    #[cfg_attr(feature = "clap", value(help = "Segment LP relaxations"))]
    Lp,
    /// Segment MILPs, their dual bounds (tighter, slower).
    #[cfg_attr(feature = "clap", value(help = "Segment MILP dual bounds"))]
    Milp,
    /// The roofline only.
    #[cfg_attr(feature = "clap", value(help = "Roofline only"))]
    Off,
}

/// The largest model `backend` is given (rows and columns, as
/// [`crate::milp::estimated_size`] counts them): z3 is far slower per constraint than HiGHS,
/// so it gets a tenth.
pub(crate) fn max_size(backend: Backend) -> usize {
    match backend {
        Backend::Milp => crate::milp::MAX_SIZE,
        Backend::Smt => crate::milp::MAX_SIZE / 10,
    }
}

/// `inst` is too large for `backend`: an exact solve bounds it by the segment relaxation and
/// improves its warm start by the window search instead.
pub fn too_large(inst: &Instance, backend: Backend) -> bool {
    crate::milp::estimated_size(inst) > max_size(backend)
}
