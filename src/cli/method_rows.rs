//! One row per method, shared by `solve`, `compare` and `gap`: the rows live in
//! [`elk_app::compare`] (the Python package computes the same ones); here is only the
//! clap parser of `--method`.

use elk_solver::RETIME_SUFFIX;

pub(super) use elk_app::compare::{
    heuristic_names, ideal_row, method_named, run_method, RETIME_LEGEND, STAGE_QUEUE_LEGEND,
};

/// The names `--method` accepts: every registered heuristic, then `ideal` (a figure) and
/// `stage-lp+queue`, then every heuristic re-timed (`NAME+retime`).
pub(super) fn method_parser() -> clap::builder::PossibleValuesParser {
    let mut names: Vec<&'static str> = heuristic_names().collect();
    names.push("ideal");
    names.push(elk_solver::STAGE_QUEUE);
    // clap keeps possible values as &'static str: the eight names are leaked once, when the
    // parser is built.
    names
        .extend(heuristic_names().map(|n| -> &'static str {
            Box::leak(format!("{n}{RETIME_SUFFIX}").into_boxed_str())
        }));
    clap::builder::PossibleValuesParser::new(names)
}
