//! `elk-opt study NAME -o DIR`: one reviewer question answered into a Markdown report with
//! plots, through [`elk_reports::studies::run_with`] as the CLI runs it.

use crate::errors::Failure;
use elk_app::studies::Step;
use elk_model::plan::PlanCache;
use elk_reports::plot::{Format, Style};
use elk_reports::report::{today, Header};
use elk_reports::studies::{run_with, STUDIES};
use pyo3::prelude::*;
use std::path::PathBuf;

/// Runs study `name` into `output` (GIL released), the figures as the CLI draws them by
/// default (SVG); `progress(done, total, what)` as its steps finish. Returns `study --json`'s
/// results (`output`, `files`) as JSON. An unknown name raises `ValueError` with the CLI's
/// message, before anything runs.
#[pyfunction]
#[pyo3(signature = (name, output, progress=None))]
pub fn study_json(
    py: Python<'_>,
    name: &str,
    output: PathBuf,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let out = py.detach(|| -> Result<String, Failure> {
        if !STUDIES.contains(&name) {
            return Err(Failure::input(format!(
                "study '{name}': expected one of {}",
                STUDIES.join(", ")
            )));
        }
        let header = Header {
            command: format!("elk-opt study {name} -o {}", output.display()),
            inputs: "built-in corpus and models (see the text)".into(),
            date: today(),
            style: Style {
                width: None,
                height: None,
                font_size: None,
                format: Format::Svg,
            },
            plan_cache: PlanCache::default_location(),
        };
        let shown = |step: Step<'_>| {
            crate::objects::report_progress(progress.as_ref(), step.done, step.total, step.what)
        };
        let files = run_with(name, &header, &shown)
            .ok_or_else(|| Failure::input(format!("study '{name}': unknown")))??;
        std::fs::create_dir_all(&output)
            .map_err(|e| Failure::runtime(format!("{}: {e}", output.display())))?;
        for (file, bytes) in &files {
            elk_stage::error::write_atomic(&output.join(file), bytes)
                .map_err(|e| Failure::runtime(format!("{e}: {}", e.error)))?;
        }
        let written = serde_json::json!({
            "output": output,
            "files": files.iter().map(|(f, _)| f).collect::<Vec<_>>(),
        });
        Ok(serde_json::to_string(&written)?)
    })?;
    Ok(out)
}
