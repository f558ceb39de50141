//! `elk_opt._native`: the Rust half of the `elk_opt` Python package. It calls the library
//! crates the CLI calls (no subprocess) and hands results back as the JSON the CLI's
//! `--json` prints, which `python/elk_opt/__init__.py` turns into dicts and DataFrames.
//!
//! The CLI's rules are kept: the same defaults (applied by the Python layer: batch 32, KV
//! 2048, decode, ipu-pod4, load order free, the phased NoC row), the same plan cache
//! (`$XDG_CACHE_HOME/elk-opt`, else `~/.cache/elk-opt`; `cache=False` is `--no-cache`), the
//! same one-line error messages (bad input raises `ValueError`, everything else
//! `elk_opt.SolverError`), and every solve runs with the GIL released.

mod errors;
mod exact;
mod inputs;
mod moe;
mod objects;
mod study;
mod sweep;

use pyo3::prelude::*;

/// The module: functions for the zoo and presets, and the instance and schedule classes.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SolverError", m.py().get_type::<errors::SolverError>())?;
    m.add("TOOL_VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("AUTO_OF_ONE_CHIP", elk_app::compare::run::AUTO_OF_ONE_CHIP)?;
    m.add_function(wrap_pyfunction!(inputs::models_json, m)?)?;
    m.add_function(wrap_pyfunction!(inputs::chips_json, m)?)?;
    m.add_function(wrap_pyfunction!(inputs::chip_json, m)?)?;
    m.add_function(wrap_pyfunction!(inputs::check_model, m)?)?;
    m.add_function(wrap_pyfunction!(inputs::request_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(inputs::model_kind, m)?)?;
    m.add_function(wrap_pyfunction!(inputs::method_names, m)?)?;
    m.add_function(wrap_pyfunction!(objects::build_instance, m)?)?;
    m.add_function(wrap_pyfunction!(objects::compare_reader_counts, m)?)?;
    m.add_function(wrap_pyfunction!(moe::moe_json, m)?)?;
    m.add_function(wrap_pyfunction!(moe::check_compare_moe, m)?)?;
    m.add_function(wrap_pyfunction!(moe::moe_section_json, m)?)?;
    m.add_function(wrap_pyfunction!(exact::exact_worker, m)?)?;
    m.add_function(wrap_pyfunction!(exact::backends, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_json, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep_json, m)?)?;
    m.add_class::<objects::NativeInstance>()?;
    m.add_class::<objects::NativeSchedule>()?;
    Ok(())
}
