//! `elk-opt moe`: the MoE load policies over sampled routing steps (docs/moe.md), through
//! the same [`elk_app::moe`] functions the CLI calls.

use crate::errors::Failure;
use elk_app::compare::ChipLabel;
use elk_app::moe::{experts_of, run, title, MoeInputs, MoeReport, MoeResults, MoeSection, MoeSpec};
use elk_app::request::{zoo_model, Collected};
use elk_model::build::InstanceOptions;
use elk_model::dtype::Dtypes;
use elk_model::graph::Mode;
use elk_model::plan::PlanCache;
use elk_model::zoo::ZooParams;
use elk_stage::instance::{LoadOrder, NocRow};
use pyo3::prelude::*;

/// `elk-opt moe`'s flags.
#[derive(Debug, Clone, FromPyObject)]
#[pyo3(from_item_all)]
pub struct MoeChoice {
    /// `--model`.
    pub model: String,
    /// `--batch`.
    pub batch: u64,
    /// `--kv`.
    pub kv: u64,
    /// `--num-layers`.
    pub num_layers: Option<usize>,
    /// `--dtype`.
    pub dtype: Option<String>,
    /// `--chip` with `--hbm-tbps` and the other chip keys, as JSON (`ChipKeys`).
    pub chip: String,
    /// `--routing`.
    pub routing: String,
    /// `--steps`.
    pub steps: u64,
    /// `--seed`.
    pub seed: u64,
    /// `--policies` (empty: the defaults).
    pub policies: Vec<String>,
    /// `--methods`.
    pub methods: Vec<String>,
    /// `--load-order`.
    pub load_order: String,
    /// `--noc-row`.
    pub noc_row: String,
    /// The plan cache (`false`: `--no-cache`).
    pub cache: bool,
    /// `--expert-parallel`.
    pub expert_parallel: bool,
}

/// A run of the policies: what `moe --json` and `compare --routing` print of it.
struct Ran {
    title: String,
    moe: elk_model::zoo::Moe,
    routing: String,
    report: MoeReport,
    warnings: Vec<String>,
}

/// Runs the policies of `choice` (GIL released by the caller); `progress(done, steps,
/// "steps")` as steps are built and scheduled.
fn run_policies(choice: &MoeChoice, progress: Option<&Py<PyAny>>) -> Result<Ran, Failure> {
    if choice.steps == 0 {
        return Err(Failure::input("--steps 0: must be at least 1"));
    }
    let mut notice = Collected::default();
    let model = zoo_model(&choice.model, &mut notice)?;
    let moe = experts_of(&model, &choice.model)?;
    let (chip, chip_warnings) = crate::inputs::chip(&choice.chip)?;
    let mut warnings = notice.0;
    warnings.extend(chip_warnings);
    let mut params = ZooParams::new(Mode::Decode, choice.batch, choice.kv);
    params.layers = choice.num_layers;
    if let Some(d) = &choice.dtype {
        params.dtypes = Dtypes::parse(d).map_err(Failure::input)?;
    }
    let noc_row = match choice.noc_row.as_str() {
        "phased" => NocRow::Phased,
        "spec" => NocRow::Spec,
        other => {
            return Err(Failure::input(format!(
                "noc_row '{other}': one of phased, spec"
            )))
        }
    };
    let mut named = chip.spec.clone();
    named.name = chip.record.label();
    let spec = MoeSpec::new(
        &moe,
        MoeInputs {
            params,
            chip: named,
            opts: InstanceOptions {
                load_order: LoadOrder::parse(&choice.load_order)?,
                plan_cache: if choice.cache {
                    PlanCache::default_location()
                } else {
                    None
                },
                noc_row,
                parallel: choice.expert_parallel,
                ..InstanceOptions::default()
            },
            routing: choice.routing.clone(),
            steps: choice.steps as usize,
            seed: choice.seed,
            policies: choice.policies.clone(),
            methods: choice.methods.clone(),
        },
    )?;
    // Python's progress counts the steps built (the scheduling that follows is not shown).
    let report = run(&model, &spec, &|p| {
        if let elk_app::moe::MoeProgress::Built { done, of } = p {
            crate::objects::report_progress(progress, done, of, "steps");
        }
    })?;
    let label = ChipLabel {
        spec: &chip.spec,
        record: &chip.record,
    }
    .label_with_hbm();
    Ok(Ran {
        title: title(
            &model.name,
            choice.batch,
            choice.kv,
            &label,
            &choice.routing,
            choice.steps,
            choice.seed,
        ),
        moe,
        routing: spec.routing.label(),
        report,
        warnings,
    })
}

/// `moe --json`'s results as JSON (`section`: `compare --routing`'s `moe` section), and the
/// warnings the CLI prints on stderr; `progress(done, steps, "steps")` as steps are built
/// and scheduled (GIL released).
#[pyfunction]
#[pyo3(signature = (choice, progress=None, section=false))]
pub fn moe_json(
    py: Python<'_>,
    choice: MoeChoice,
    progress: Option<Py<PyAny>>,
    section: bool,
) -> PyResult<(String, Vec<String>)> {
    let out = py.detach(|| -> Result<(String, Vec<String>), Failure> {
        let ran = run_policies(&choice, progress.as_ref())?;
        let json = if section {
            serde_json::to_string(&MoeSection {
                title: ran.title,
                routing: ran.routing,
                steps: choice.steps,
                seed: choice.seed,
                experts: ran.moe.experts,
                top_k: ran.moe.top_k,
                report: ran.report,
            })?
        } else {
            serde_json::to_string(&MoeResults {
                instance: ran.title,
                experts: ran.moe.experts,
                top_k: ran.moe.top_k,
                tokens_per_layer: choice.batch,
                report: &ran.report,
            })?
        };
        Ok((json, ran.warnings))
    })?;
    Ok(out)
}
