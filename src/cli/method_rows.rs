//! One row per method, shared by `solve`, `compare` and `gap`: the rows live in
//! [`elk_app::compare`] (the Python package computes the same ones); here is only the
//! clap parser of `--method`.

pub(super) use elk_app::compare::{
    ideal_row, method_named, run_method, RETIME_LEGEND, STAGE_QUEUE_LEGEND,
};

/// The names `--method` accepts ([`elk_app::compare::solve_method_names`], the list Python's
/// `methods()` reads too).
pub(super) fn method_parser() -> clap::builder::PossibleValuesParser {
    // clap keeps possible values as &'static str: the names are leaked once, when the parser
    // is built.
    let names: Vec<&'static str> = elk_app::compare::solve_method_names()
        .into_iter()
        .map(|n| -> &'static str { Box::leak(n.into_boxed_str()) })
        .collect();
    clap::builder::PossibleValuesParser::new(names)
}
