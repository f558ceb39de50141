//! `moe` (and `compare --routing`): an MoE model's load policies over sampled routing steps.

use super::chip::{ChipRequest, ChosenChip, KeysInOrder};
use super::compare::BoundChoice;
use super::error::{RequestError, Result};
use super::input::InstanceInput;
use super::model::{zoo_model, ModelSource};
use super::notice::Notice;
use crate::moe::{
    experts_of, title, MoeInputs, MoeReport, MoeResults, MoeSection, MoeSpec, StepBound,
};
use elk_model::build::InstanceOptions;
use elk_model::dtype::Dtypes;
use elk_model::graph::Mode;
use elk_model::load_policy::Policy;
use elk_model::plan::PlanCache;
use elk_model::zoo::{Moe, ZooModel, ZooParams};
use elk_stage::instance::{LoadOrder, NamedOrder, NocRow};
use serde::Serialize;
use std::borrow::Cow;

/// The model `moe` runs without `--model`.
pub const DEFAULT_MOE_MODEL: &str = "mixtral-8x7b";

/// A run of the load policies: every flag of `elk-opt moe` (and Python's `moe()`).
#[derive(Clone, Debug, PartialEq)]
pub struct MoeRequest {
    /// An MoE model of the zoo or a model file with a `[moe]` table.
    pub model: String,
    /// Batch size: the tokens routed per layer (decode).
    pub batch: u64,
    /// KV length, tokens.
    pub kv: u64,
    /// The model's layer count (`None`: its own).
    pub num_layers: Option<usize>,
    /// Element types (`None`: fp16).
    pub dtype: Option<Dtypes>,
    /// The chip.
    pub chip: ChipRequest,
    /// How tokens choose experts: `uniform`, `zipf:S`, `balanced`, `grouped[:S]` or
    /// `trace:FILE`.
    pub routing: String,
    /// Routing steps sampled.
    pub steps: u64,
    /// The samples' seed.
    pub seed: u64,
    /// The policies (empty: load-all, on-demand, predicted-k and the oracle).
    pub policies: Vec<String>,
    /// The heuristics scheduling each policy's instance.
    pub methods: Vec<String>,
    /// The instances' load order.
    pub load_order: LoadOrder,
    /// The instances' NoC row.
    pub noc_row: NocRow,
    /// Also every step with its experts side by side on groups of cores.
    pub expert_parallel: bool,
    /// Each step's certified lower bound: the roofline (the default: instant), the stage
    /// relaxation, or the strongest the tool has (`segment`: the coupled segment LP too,
    /// where the step's layers repeat).
    pub bound: BoundChoice,
}

impl Default for MoeRequest {
    /// `elk-opt moe` without flags.
    fn default() -> Self {
        MoeRequest {
            model: DEFAULT_MOE_MODEL.into(),
            batch: 32,
            kv: 2048,
            num_layers: None,
            dtype: None,
            chip: ChipRequest::default(),
            routing: "uniform".into(),
            steps: 100,
            seed: 1,
            policies: Vec::new(),
            methods: crate::moe::DEFAULT_METHODS.map(String::from).to_vec(),
            load_order: LoadOrder::Named(NamedOrder::Free),
            noc_row: NocRow::Phased,
            expert_parallel: false,
            bound: BoundChoice::Roofline,
        }
    }
}

/// A request resolved: the model, its experts, the run's spec and title.
pub struct PreparedMoe {
    /// The model.
    pub model: Cow<'static, ZooModel>,
    /// Its experts.
    pub moe: Moe,
    /// What runs.
    pub spec: MoeSpec,
    /// `mixtral-8x7b decode b32 kv2048 on ipu-pod4 @ 16 TB/s HBM, routing uniform, …`.
    pub title: String,
    /// The chip.
    pub chip: ChosenChip,
}

impl MoeRequest {
    /// `compare --routing`: the load policies of the model `input` builds, in decode, the
    /// whole model, with the same chip and instance options. Refused for an instance file,
    /// an imported graph, a cut, a window or another mode.
    pub fn of_compare(
        input: &InstanceInput,
        routing: &str,
        steps: u64,
        seed: u64,
        policies: &[String],
    ) -> Result<MoeRequest> {
        let refuse = |what: &str| {
            Err(RequestError::refused(format!(
                "--routing runs the MoE load policies of a whole model (--model) in decode: not \
                 with {what}"
            )))
        };
        let build = match input {
            InstanceInput::Build(b) => b,
            InstanceInput::File(_) => return refuse("--instance, --import or --onnx"),
        };
        let ModelSource::Zoo(model) = &build.model.source else {
            return refuse("--instance, --import or --onnx");
        };
        if build.cut.layers.is_some() || build.cut.ops.is_some() || build.choices.window.is_some() {
            return refuse("--layers, --ops or --window");
        }
        if build.shape.mode != Mode::Decode {
            return refuse(&format!("--mode {}", build.shape.mode.as_str()));
        }
        // A model without experts is refused now, before the methods run (its warnings are
        // told when the run prepares it).
        experts_of(&*ZooModel::load(model)?, model)?;
        Ok(MoeRequest {
            model: model.clone(),
            batch: build.shape.batch,
            kv: build.shape.kv,
            num_layers: build.shape.num_layers,
            dtype: build.model.dtype,
            chip: build.chip.clone(),
            routing: routing.to_string(),
            steps,
            seed,
            policies: policies.to_vec(),
            load_order: build.choices.load_order,
            noc_row: build.choices.noc_row,
            expert_parallel: build.choices.expert_parallel,
            ..MoeRequest::default()
        })
    }

    /// The bound each step gets ([`MoeRequest::bound`]), for [`crate::moe::run_with_bound`].
    pub fn step_bound(&self) -> StepBound {
        match self.bound {
            BoundChoice::Roofline => StepBound::Roofline,
            BoundChoice::Stage => StepBound::Stage,
            BoundChoice::Segment => StepBound::Strongest,
        }
    }

    /// Refuses a run of no steps, no tokens or no KV cache.
    pub fn validate(&self) -> Result<()> {
        for (flag, value) in [
            ("--steps", self.steps),
            ("--batch", self.batch),
            ("--kv", self.kv),
        ] {
            if value == 0 {
                return Err(RequestError::refused(format!(
                    "{flag} 0: must be at least 1"
                )));
            }
        }
        Ok(())
    }

    /// Reads the model (refused without experts) and the chip, and parses the routing, the
    /// policies and the methods; warnings go to `notice`.
    pub fn prepare(
        &self,
        plan_cache: Option<PlanCache>,
        notice: &mut dyn Notice,
    ) -> Result<PreparedMoe> {
        self.validate()?;
        let model = zoo_model(&self.model, notice)?;
        let moe = experts_of(&model, &self.model)?;
        let chip = self.chip.resolve(notice)?;
        let mut params = ZooParams::new(Mode::Decode, self.batch, self.kv);
        params.layers = self.num_layers;
        params.dtypes = match self.dtype {
            Some(d) => d,
            None => {
                let (d, why) = model.default_dtypes_on(&chip.spec);
                why.into_iter().for_each(|w| notice.warn(w));
                d
            }
        };
        // As a dense model is built for the chip: separate gate and up matmuls where the
        // chip needs them, and the warnings of the output operators its steps cut.
        super::model::fit_to_chip(&model, &mut params, &chip.spec, notice)?;
        let inputs = MoeInputs {
            params,
            chip: chip.named(),
            opts: InstanceOptions {
                load_order: self.load_order,
                plan_cache,
                noc_row: self.noc_row,
                parallel: self.expert_parallel,
                ..InstanceOptions::default()
            },
            routing: self.routing.clone(),
            steps: self.steps as usize,
            seed: self.seed,
            policies: self.policies.clone(),
            methods: self.methods.clone(),
        };
        let spec = MoeSpec::new(&moe, inputs)?;
        let title = title(
            &model.name,
            self.batch,
            self.kv,
            &chip.label_with_hbm(),
            &self.routing,
            self.steps,
            self.seed,
        );
        Ok(PreparedMoe {
            model,
            moe,
            spec,
            title,
            chip,
        })
    }

    /// The inputs as `moe --json` prints them in `config`: the routing and the policies as
    /// `prepared` parsed them.
    pub fn config(&self, prepared: &PreparedMoe) -> MoeConfig {
        MoeConfig {
            model: self.model.clone(),
            mode: Mode::Decode,
            batch: self.batch,
            kv_tokens: self.kv,
            num_layers: self.num_layers,
            chip: self.chip.given.clone(),
            chip_keys: KeysInOrder(self.chip.keys.clone()),
            hbm_tbps: self.chip.hbm_tbps,
            dram_readers: self
                .chip
                .dram_readers
                .and_then(super::chip::DramReaders::count),
            routing: prepared.spec.routing.label(),
            steps: self.steps,
            seed: self.seed,
            policies: prepared.spec.policies.iter().map(Policy::name).collect(),
            methods: self.methods.clone(),
            load_order: self.load_order,
            noc_row: self.noc_row,
            expert_parallel: self.expert_parallel,
            bound: self.bound,
        }
    }
}

impl PreparedMoe {
    /// `moe --json`'s results of `report`.
    pub fn results<'a>(&self, report: &'a MoeReport) -> MoeResults<'a> {
        MoeResults {
            instance: self.title.clone(),
            experts: self.moe.experts,
            top_k: self.moe.top_k,
            tokens_per_layer: self.spec.params.batch,
            report,
        }
    }

    /// `compare --routing`'s `moe` section of `report`.
    pub fn section(self, report: MoeReport) -> MoeSection {
        MoeSection {
            title: self.title,
            routing: self.spec.routing.label(),
            steps: self.spec.steps as u64,
            seed: self.spec.seed,
            experts: self.moe.experts,
            top_k: self.moe.top_k,
            report,
        }
    }
}

/// `moe --json`: the inputs.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct MoeConfig {
    model: String,
    mode: Mode,
    batch: u64,
    kv_tokens: u64,
    num_layers: Option<usize>,
    chip: String,
    /// The chip keys set besides the file's (Python's `Chip(**keys)`); left out when none is.
    #[serde(skip_serializing_if = "KeysInOrder::is_empty")]
    chip_keys: KeysInOrder,
    hbm_tbps: Option<f64>,
    /// `--dram-readers K` (left out when not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    dram_readers: Option<u64>,
    routing: String,
    steps: u64,
    seed: u64,
    policies: Vec<String>,
    methods: Vec<String>,
    load_order: LoadOrder,
    noc_row: NocRow,
    expert_parallel: bool,
    bound: BoundChoice,
}
