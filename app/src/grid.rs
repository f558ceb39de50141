//! A sweep grid (SPEC §7): the cross product of model, mode, batch, KV/sequence length, chip,
//! HBM bandwidth, NoC and compute scale, topology and core count — each list in a TOML file
//! or a built-in preset (`fig17` … `fig24`). Cells are numbered in a fixed order, so a
//! shard, a resumed run and a full run agree on every cell's index.
//!
//! Models and chips are names (the zoo's, the presets) or files; a relative file path is read
//! from the grid file's directory, so a grid and its files move together.

mod cell;
mod cell_chip;
mod figure_kind;

pub use cell::Cell;
pub use cell_chip::{cell_chip, cell_chip_from};
pub use figure_kind::FigureKind;

use crate::error::{AppError, Result};
use elk_model::chip::{ChipSpec, LoadedChip};
use elk_model::zoo::ZooModel;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A grid: every combination of the lists is one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// What the results are plotted as: `bars` (Fig 17), `breakdown` (Fig 18),
    /// `vs-hbm` (Fig 19–21), `vs-noc` (Fig 22), `vs-cores` (Fig 23), `training` (Fig 24:
    /// TFLOP/s against compute speed, of whichever mode the grid names).
    pub figure: String,
    /// Zoo model names, model files (`*.toml`, docs/model-files.md) or Hugging Face
    /// `config.json` files (relative paths: from the grid file's directory).
    pub models: Vec<String>,
    /// `decode`, `prefill`, `forward-batch` or `training`.
    #[serde(default = "decode")]
    pub modes: Vec<String>,
    /// Batch sizes.
    pub batches: Vec<u64>,
    /// KV lengths (decode) or sequence lengths.
    pub kvs: Vec<u64>,
    /// Chip presets or TOML files (relative paths: from the grid file's directory).
    #[serde(default = "pod4")]
    pub chips: Vec<String>,
    /// HBM bandwidths in TB/s (empty: the chip's own).
    #[serde(default)]
    pub hbm_tbps: Vec<f64>,
    /// NoC bandwidth factors (1 = the chip's).
    #[serde(default = "one")]
    pub noc_scale: Vec<f64>,
    /// Compute speed factors (exec − comm divided by it; 1 = as planned).
    #[serde(default = "one")]
    pub compute_scale: Vec<f64>,
    /// Topologies (`all-to-all`, `mesh`) — mesh uses the chip's core count on a near-square
    /// grid (empty: the chip's own).
    #[serde(default)]
    pub topologies: Vec<String>,
    /// Core counts (empty: the chip's own). With `hbm_per_1472_cores_tbps`, HBM scales with it.
    #[serde(default)]
    pub cores: Vec<u64>,
    /// HBM bandwidth per 1,472 cores in TB/s when cores vary (Fig 23).
    #[serde(default)]
    pub hbm_per_1472_cores_tbps: Option<f64>,
    /// Methods: `basic`, `static`, `elk-dyn`, `elk-full` and the named variants (Ideal is
    /// always reported); `bound` in the list is the same as `bound = true`.
    #[serde(default = "all_methods")]
    pub methods: Vec<String>,
    /// Also compute each cell's certified lower bound (the segment relaxation's LP bound, or
    /// the roofline's where it is stronger) and every method's gap to it (`gap_le_pct`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bound: bool,
    /// MoE models: routings (`uniform`, `zipf:S`, `balanced`, `trace:FILE`; docs/moe.md), an
    /// axis of the grid; each such cell also runs the load policies over sampled steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routings: Vec<String>,
    /// `[false, true]` to run each point with and without parallel sets
    /// (`--expert-parallel`, docs/core-groups.md); a `true` cell keeps each method's faster
    /// schedule of the instances with and without sets, and the lower bound.
    #[serde(default = "all_cores", skip_serializing_if = "is_all_cores")]
    pub expert_parallel: Vec<bool>,
    /// With `routings`: the load policies (empty: load-all, on-demand, predicted-K, oracle).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<String>,
    /// With `routings`: the routing steps sampled per cell (seed 1).
    #[serde(default = "moe_steps", skip_serializing_if = "is_moe_steps")]
    pub moe_steps: usize,
    /// The grid file (or preset name) that errors name.
    #[serde(skip)]
    pub source: String,
    /// The directory relative chip and model paths resolve against: the grid file's (`None`:
    /// the current directory, for presets and text given directly).
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

/// A grid's chips, read and checked before any cell runs.
#[derive(Clone, Debug)]
pub struct GridChips {
    /// Each `chips` entry as written in the grid, with its spec.
    pub specs: BTreeMap<String, ChipSpec>,
    /// Implausible values in the chip files (one line each; not errors).
    pub warnings: Vec<String>,
}

/// A grid's models, read and checked before any cell runs.
#[derive(Clone, Debug)]
pub struct GridModels {
    /// Each `models` entry as written in the grid (a cell's `model`), with its model.
    pub models: BTreeMap<String, ZooModel>,
    /// Keys of a config.json that elk-opt does not know, and published counts a model file's
    /// graph misses (one line each; not errors).
    pub warnings: Vec<String>,
}

/// Everything a grid reads before its cells run: its chips and its models.
#[derive(Clone, Debug)]
pub struct GridInputs {
    /// The chips.
    pub chips: GridChips,
    /// The models.
    pub models: GridModels,
}

impl GridInputs {
    /// Every warning, the chips' first.
    pub fn warnings(&self) -> Vec<String> {
        let chips = self.chips.warnings.iter();
        chips.chain(&self.models.warnings).cloned().collect()
    }
}

fn decode() -> Vec<String> {
    vec!["decode".into()]
}
fn pod4() -> Vec<String> {
    vec!["ipu-pod4".into()]
}
fn one() -> Vec<f64> {
    vec![1.0]
}
fn all_cores() -> Vec<bool> {
    vec![false]
}
fn is_all_cores(v: &[bool]) -> bool {
    v == [false]
}
/// Routing steps per MoE cell by default.
pub const MOE_STEPS: usize = 20;
fn moe_steps() -> usize {
    MOE_STEPS
}
fn is_moe_steps(n: &usize) -> bool {
    *n == MOE_STEPS
}
/// The "method" that asks for the certified lower bound and the gaps to it.
pub const BOUND: &str = "bound";

fn all_methods() -> Vec<String> {
    elk_heuristics::NAMES.map(String::from).to_vec()
}

impl Grid {
    /// Parses a grid TOML file's text (unknown keys are errors); relative chip and model
    /// paths are taken from the current directory.
    pub fn from_toml(file: &str, text: &str) -> Result<Grid> {
        Grid::parse(file, text, None)
    }

    /// Reads and parses a grid file; relative chip and model paths are taken from its
    /// directory, so a grid and its files can move together and be run from anywhere.
    pub fn from_file(path: &Path) -> Result<Grid> {
        let text = elk_model::error::read_file(path)?;
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        Grid::parse(&path.display().to_string(), &text, Some(dir))
    }

    /// Parses and checks `text` (named `file` in errors), relative paths resolved against
    /// `base_dir`.
    fn parse(file: &str, text: &str, base_dir: Option<PathBuf>) -> Result<Grid> {
        let mut g: Grid = toml::from_str(text).map_err(|e| AppError::Grid {
            file: file.into(),
            detail: elk_model::error::toml_error_line(text, &e),
        })?;
        // `methods = [..., "bound"]` asks for the bound as `bound = true` does.
        if g.methods.iter().any(|m| m == BOUND) {
            g.methods.retain(|m| m != BOUND);
            g.bound = true;
        }
        g.source = file.into();
        g.base_dir = base_dir;
        g.check(file)?;
        Ok(g)
    }

    /// Where an entry naming a file or a built-in (`is_builtin`) is read from: built-in names
    /// and absolute paths as written, relative paths from the grid file's directory. A bare
    /// word that is no file stays a (mistyped) name, so its error lists the built-ins rather
    /// than a path.
    fn resolve(&self, entry: &str, is_builtin: bool) -> String {
        match &self.base_dir {
            Some(dir) if !is_builtin && Path::new(entry).is_relative() => {
                let joined = dir.join(entry);
                let named_as_file = [".toml", ".json"].iter().any(|e| entry.ends_with(e));
                if joined.exists() || named_as_file || entry.contains('/') {
                    joined.display().to_string()
                } else {
                    entry.to_string()
                }
            }
            _ => entry.to_string(),
        }
    }

    /// Where a `chips` entry is read from: preset names and absolute paths as written,
    /// relative paths from the grid file's directory.
    pub fn chip_path(&self, entry: &str) -> String {
        let is_preset = elk_model::chip::PRESETS.iter().any(|(n, _)| *n == entry);
        self.resolve(entry, is_preset)
    }

    /// Where a `models` entry is read from: zoo names and absolute paths as written, relative
    /// paths (a model file, a config.json) from the grid file's directory.
    pub fn model_path(&self, entry: &str) -> String {
        let in_zoo = elk_model::zoo::models().iter().any(|m| m.name == entry);
        self.resolve(entry, in_zoo)
    }

    /// Reads one `models` entry: the model and its warnings, or an error naming the grid
    /// file, the key and the entry.
    fn load_model(&self, entry: &str) -> Result<(ZooModel, Vec<String>)> {
        let path = self.model_path(entry);
        let bad = |detail: String| AppError::Grid {
            file: self.source.clone(),
            detail: format!("key 'models': entry '{entry}': {detail}"),
        };
        let (model, mut warnings) = ZooModel::load_with_warnings(&path).map_err(|e| {
            let hint = match e {
                elk_model::ModelError::Io { .. } if path != entry => {
                    " (relative model paths are read from the grid file's directory)"
                }
                _ => "",
            };
            bad(format!("{e}{hint}"))
        })?;
        if let std::borrow::Cow::Owned(own) = &model {
            let mismatches = own.count_mismatches().map_err(|e| bad(e.to_string()))?;
            warnings.extend(mismatches.into_iter().map(|m| format!("{entry}: {m}")));
        }
        Ok((model.into_owned(), warnings))
    }

    /// Reads every model of the grid (zoo names, model files, config.json files), so a bad
    /// file fails the sweep before any cell runs.
    pub fn load_models(&self) -> Result<GridModels> {
        let mut out = GridModels {
            models: BTreeMap::new(),
            warnings: Vec::new(),
        };
        for entry in &self.models {
            let (model, warnings) = self.load_model(entry)?;
            out.warnings.extend(warnings);
            out.models.insert(entry.clone(), model);
        }
        Ok(out)
    }

    /// Reads every chip and model of the grid ([`Grid::load_chips`], [`Grid::load_models`]).
    pub fn load_inputs(&self) -> Result<GridInputs> {
        Ok(GridInputs {
            chips: self.load_chips()?,
            models: self.load_models()?,
        })
    }

    /// Reads every chip of the grid and checks every cell's chip variant (HBM, cores,
    /// topology applied), so a bad chip file fails the sweep before any cell runs. Errors
    /// name the grid file and the entry or cell.
    pub fn load_chips(&self) -> Result<GridChips> {
        let bad = |detail: String| AppError::Grid {
            file: self.source.clone(),
            detail,
        };
        let mut chips = GridChips {
            specs: BTreeMap::new(),
            warnings: Vec::new(),
        };
        for entry in &self.chips {
            let path = self.chip_path(entry);
            let loaded = LoadedChip::load(&path).map_err(|e| {
                let hint = match e {
                    elk_model::ModelError::Io { .. } if path != *entry => {
                        " (relative chip paths are read from the grid file's directory)"
                    }
                    _ => "",
                };
                bad(format!("key 'chips': entry '{entry}': {e}{hint}"))
            })?;
            chips.warnings.extend(loaded.warnings);
            chips.specs.insert(entry.clone(), loaded.spec);
        }
        for cell in self.cells() {
            if let Some(base) = chips.specs.get(&cell.chip) {
                cell_chip_from(base.clone(), &cell).map_err(|e| bad(e.to_string()))?;
            }
        }
        Ok(chips)
    }

    fn check(&self, file: &str) -> Result<()> {
        let bad = |detail: String| AppError::Grid {
            file: file.into(),
            detail,
        };
        if FigureKind::parse(&self.figure).is_none() {
            let names: Vec<&str> = FigureKind::ALL.iter().map(|k| k.name()).collect();
            return Err(bad(format!(
                "key 'figure': '{}' is not one of {}",
                self.figure,
                names.join(", ")
            )));
        }
        for (key, empty) in [
            ("models", self.models.is_empty()),
            ("batches", self.batches.is_empty()),
            ("kvs", self.kvs.is_empty()),
            ("methods", self.methods.is_empty()),
            ("expert_parallel", self.expert_parallel.is_empty()),
        ] {
            if empty {
                return Err(bad(format!("key '{key}': must list at least one value")));
            }
        }
        for m in &self.methods {
            if elk_heuristics::by_name(m).is_none() {
                let valid: Vec<&str> = elk_heuristics::all_names().chain([BOUND]).collect();
                return Err(bad(format!(
                    "key 'methods': unknown method '{m}': expected one of {} (Ideal is always reported; the exact solver is `elk-opt gap`, per configuration)",
                    valid.join(", ")
                )));
            }
        }
        let positive = |key: &str, v: &[f64]| -> Result<()> {
            match v.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
                Some(x) => Err(bad(format!("key '{key}': {x} must be positive"))),
                None => Ok(()),
            }
        };
        positive("hbm_tbps", &self.hbm_tbps)?;
        positive("noc_scale", &self.noc_scale)?;
        positive("compute_scale", &self.compute_scale)?;
        for t in &self.topologies {
            if !["all-to-all", "mesh"].contains(&t.as_str()) {
                return Err(bad(format!("key 'topologies': unknown topology '{t}'")));
            }
        }
        for (key, v) in [
            ("batches", &self.batches),
            ("kvs", &self.kvs),
            ("cores", &self.cores),
        ] {
            if v.contains(&0) {
                return Err(bad(format!("key '{key}': 0 must be ≥ 1")));
            }
        }
        let models = self.load_models()?;
        self.check_moe(&bad, &models)?;
        for (m, model) in &models.models {
            for mode in &self.modes {
                let parsed = elk_model::graph::Mode::parse(mode)
                    .map_err(|e| bad(format!("key 'modes': entry '{mode}': {e}")))?;
                if parsed == elk_model::graph::Mode::Decode && !model.supports_decode() {
                    return Err(bad(format!(
                        "key 'models': entry '{m}' is a vision model: mode 'decode' does not apply"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The MoE keys: routings that parse, policies that exist, MoE models in decode only, no
    /// NoC or compute scaling (the policies' instances are built per step).
    fn check_moe(&self, bad: &dyn Fn(String) -> AppError, models: &GridModels) -> Result<()> {
        if self.routings.is_empty() {
            for (key, set) in [
                ("policies", !self.policies.is_empty()),
                ("moe_steps", self.moe_steps != MOE_STEPS),
            ] {
                if set {
                    return Err(bad(format!(
                        "key '{key}': applies to MoE cells: give `routings` too"
                    )));
                }
            }
            return Ok(());
        }
        for r in &self.routings {
            elk_model::routing::Routing::parse(r)
                .map_err(|e| bad(format!("key 'routings': entry '{r}': {e}")))?;
        }
        for p in &self.policies {
            elk_model::load_policy::Policy::parse(p)
                .map_err(|e| bad(format!("key 'policies': {e}")))?;
        }
        if self.moe_steps == 0 {
            return Err(bad("key 'moe_steps': must be ≥ 1".into()));
        }
        for (m, model) in &models.models {
            let Some(moe) = model.moe() else {
                return Err(bad(format!(
                    "key 'models': entry '{m}' has no experts: `routings` applies to MoE models \
                     (mixtral-8x7b, qwen3-30b-a3b, olmoe-1b-7b, or a model file with [moe])"
                )));
            };
            // What each cell's MoeSpec refuses, refused here before any cell runs.
            for p in &self.policies {
                elk_model::load_policy::Policy::parse_for(p, moe.experts)
                    .map_err(|e| bad(format!("key 'policies': model '{m}': {e}")))?;
            }
        }
        if self.modes.iter().any(|m| m != "decode") {
            return Err(bad(
                "key 'modes': `routings` runs the load policies in decode only".into(),
            ));
        }
        if self
            .noc_scale
            .iter()
            .chain(&self.compute_scale)
            .any(|&x| x != 1.0)
        {
            return Err(bad(
                "key 'noc_scale'/'compute_scale': not with `routings` (the policies' instances \
                 are built per step, unscaled)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Every cell, in the fixed order (models outermost, cores innermost).
    pub fn cells(&self) -> Vec<Cell> {
        let opt_f = |v: &[f64]| -> Vec<Option<f64>> {
            if v.is_empty() {
                vec![None]
            } else {
                v.iter().copied().map(Some).collect()
            }
        };
        let topologies: Vec<Option<String>> = if self.topologies.is_empty() {
            vec![None]
        } else {
            self.topologies.iter().cloned().map(Some).collect()
        };
        let cores: Vec<Option<u64>> = if self.cores.is_empty() {
            vec![None]
        } else {
            self.cores.iter().copied().map(Some).collect()
        };
        let routings: Vec<Option<String>> = if self.routings.is_empty() {
            vec![None]
        } else {
            self.routings.iter().cloned().map(Some).collect()
        };
        let mut cells = Vec::new();
        for model in &self.models {
            for mode in &self.modes {
                for &batch in &self.batches {
                    for &kv in &self.kvs {
                        for chip in &self.chips {
                            for hbm in opt_f(&self.hbm_tbps) {
                                for &noc in &self.noc_scale {
                                    for &comp in &self.compute_scale {
                                        for topo in &topologies {
                                            for &c in &cores {
                                                let hbm = match (c, self.hbm_per_1472_cores_tbps) {
                                                    (Some(c), Some(per)) => {
                                                        Some(per * c as f64 / 1472.0)
                                                    }
                                                    _ => hbm,
                                                };
                                                for routing in &routings {
                                                    for &sets in &self.expert_parallel {
                                                        cells.push(Cell {
                                                            index: cells.len(),
                                                            model: model.clone(),
                                                            mode: mode.clone(),
                                                            batch,
                                                            kv,
                                                            chip: chip.clone(),
                                                            hbm_tbps: hbm,
                                                            noc_scale: noc,
                                                            compute_scale: comp,
                                                            topology: topo.clone(),
                                                            cores: c,
                                                            routing: routing.clone(),
                                                            expert_parallel: sets,
                                                        });
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        cells
    }
}

/// A grid by preset name (`fig17` … `fig24`) or TOML file path, as `elk-opt sweep GRID`
/// takes it.
pub fn load(name: &str) -> Result<Grid> {
    if let Some(text) = preset(name) {
        return Grid::from_toml(name, text);
    }
    let path = std::path::Path::new(name);
    if !path.exists() {
        return Err(AppError::NoGrid {
            name: name.into(),
            presets: PRESETS.join(", "),
        });
    }
    Grid::from_file(path)
}

/// The built-in presets (SPEC §7, the reference grids), as TOML text.
pub fn preset(name: &str) -> Option<&'static str> {
    Some(match name {
        "fig17" => FIG17,
        "fig18" => FIG18,
        "fig19" => FIG19,
        "fig20" => FIG20,
        "fig21" => FIG21,
        "fig22" => FIG22,
        "fig23" => FIG23,
        "fig24" => FIG24,
        _ => return None,
    })
}

/// Names of the presets.
pub const PRESETS: [&str; 8] = [
    "fig17", "fig18", "fig19", "fig20", "fig21", "fig22", "fig23", "fig24",
];

const FIG17: &str = r#"figure = "bars"
models = ["llama2-13b", "gemma2-27b", "opt-30b", "llama2-70b"]
batches = [16, 32, 64]
kvs = [2048, 4096]
"#;
const FIG18: &str = r#"figure = "breakdown"
models = ["llama2-13b", "gemma2-27b", "opt-30b", "llama2-70b"]
batches = [32]
kvs = [2048]
"#;
const FIG19: &str = r#"figure = "vs-hbm"
models = ["llama2-13b", "llama2-70b"]
batches = [32]
kvs = [2048]
hbm_tbps = [4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]
"#;
const FIG20: &str = r#"figure = "breakdown"
models = ["llama2-13b"]
batches = [32]
kvs = [2048]
hbm_tbps = [4.0, 8.0, 12.0, 16.0]
"#;
const FIG21: &str = r#"figure = "vs-hbm"
models = ["llama2-13b", "llama2-70b"]
batches = [32]
kvs = [2048]
hbm_tbps = [4.0, 8.0, 12.0, 16.0]
topologies = ["mesh"]
"#;
const FIG22: &str = r#"figure = "vs-noc"
models = ["llama2-70b"]
batches = [32]
kvs = [2048]
hbm_tbps = [8.0, 10.0, 12.0, 14.0]
noc_scale = [0.75, 1.0, 1.25, 1.5]
"#;
const FIG23: &str = r#"figure = "vs-cores"
models = ["llama2-13b", "llama2-70b"]
batches = [32]
kvs = [2048]
cores = [2208, 2944, 3680, 4416, 5152]
hbm_per_1472_cores_tbps = 4.0
"#;
// The reference artifact's Fig 24 runs the forward pass of a training batch: forward-batch.
const FIG24: &str = r#"figure = "training"
models = ["llama2-13b"]
modes = ["forward-batch"]
batches = [2]
kvs = [2048]
hbm_tbps = [0.3, 0.4]
compute_scale = [0.75, 1.0, 1.25, 1.5]
"#;
