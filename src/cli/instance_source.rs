//! Where `solve`, `compare` and `gap` get their instance: a file, or built from a graph
//! (zoo model or import), a chip and the instance options; and the build `instance` shares.

use super::chip_choice::{Chip, DEFAULT_CHIP};
use super::notice::{cli_error, Stderr};
use super::source::GraphSource;
use clap::Args;
use elk_app::request::{
    ChipRequest, Cut, DramReaders, InstanceInput, InstanceRequest, MoeRequest, StageChoices,
};
use elk_model::graph::Graph;
use elk_stage::instance::{Instance, InstanceFile, LoadOrder, NocRow};
use std::path::PathBuf;
use std::time::Instant;

/// Where the instance comes from.
#[derive(Args, Debug, Clone)]
pub struct InstanceSource {
    /// Read this instance (elk-instance/1) instead of building one; the flags that build
    /// one (graph, shape, chip, cut, load order) are refused with it, as it fixes them.
    #[arg(
        long,
        conflicts_with_all = [
            "model", "import", "onnx", "mode", "batch", "kv", "num_layers", "compat", "dtype",
            "optimizer_dtype"
        ]
    )]
    instance: Option<PathBuf>,
    #[command(flatten)]
    graph: GraphSource,
    /// Chip preset or TOML file.
    #[arg(long, default_value = DEFAULT_CHIP, conflicts_with = "instance")]
    chip: String,
    /// Override the chip's HBM bandwidth, TB/s (decimal); names and headers show it
    /// (`on ipu-pod4 @ 8 TB/s HBM`).
    #[arg(long, conflicts_with = "instance", allow_negative_numbers = true)]
    hbm_tbps: Option<f64>,
    /// Cores that only stream weights from DRAM into the others' SRAM and compute nothing, as
    /// Tenstorrent's prefetcher does: K (whole grid columns), or `auto` (compare only: every
    /// count worth trying, each method keeping its fastest). Chips whose file gives a reader
    /// rate (wormhole-n150, blackhole-p150) read DRAM at the interleaved rate without
    /// readers (docs/chips.md, "DRAM-reader cores").
    #[arg(
        long,
        value_name = "K|auto",
        conflicts_with = "instance",
        value_parser = super::flags::dram_readers,
        allow_negative_numbers = true
    )]
    dram_readers: Option<DramReaders>,
    /// Load-order policy of the built instance: free (Elk-Full may permute), fixed, or a
    /// maximum displacement D.
    #[arg(
        long,
        default_value = "free",
        conflicts_with = "instance",
        value_parser = super::flags::load_order
    )]
    load_order: LoadOrder,
    /// Only layers A..B of the graph, half-open: layers A to B−1 (`0..1` is layer 0), a
    /// sub-instance, e.g. for exact solving.
    #[arg(long, conflicts_with_all = ["ops", "instance"])]
    layers: Option<String>,
    /// Only operators A..B of the graph, half-open (operators A to B−1).
    #[arg(long, conflicts_with = "instance")]
    ops: Option<String>,
    /// Preload window W, 1 or more: every load starts at most W stages before its operator (1: only in the stage before it).
    #[arg(long, conflicts_with = "instance", value_parser = super::flags::window, allow_negative_numbers = true)]
    window: Option<u32>,
    /// The built instance's NoC row: `phased` (the default; what the paced detailed replay
    /// measures, docs/detailed.md) or `spec` (SPEC §4's, the reference artifact's).
    #[arg(
        long,
        value_enum,
        default_value = "phased",
        conflicts_with = "instance"
    )]
    noc_row: NocRow,
    /// Run independent chains of operators side by side, each on its own group of cores:
    /// an MoE layer's experts, a dense layer's independent projections (docs/core-groups.md).
    #[arg(long, conflicts_with = "instance")]
    expert_parallel: bool,
    /// Also write the instance used (elk-instance/1, with the chip it was built for), to
    /// `simulate` the schedule of `-o` against.
    #[arg(long, value_name = "FILE")]
    pub emit_instance: Option<PathBuf>,
}

/// An instance with what it came from, for headers and cuts.
pub struct Loaded {
    pub instance: Instance,
    /// Seconds spent reading or building it (plan tables).
    pub build_s: f64,
    /// The chip it was built for; for an instance file, the chip it records when that is a
    /// preset or a file found from here.
    pub chip: Option<Chip>,
    /// The graph it was built from (`None`: read from a file).
    pub graph: Option<Graph>,
}

impl Loaded {
    /// `, clean plan rules` (or `, reference plan rules`) for a header: the rules its plan
    /// tables were built by; empty for an instance read from a file, whose tables are given.
    pub fn rules_suffix(&self) -> String {
        self.graph.as_ref().map_or(String::new(), |g| {
            format!(", {} plan rules", g.plan_rules.name())
        })
    }
}

impl InstanceSource {
    /// The instance asked for: the file, or the instance the flags build.
    pub fn input(&self) -> InstanceInput {
        match &self.instance {
            Some(path) => InstanceInput::File(path.clone()),
            None => InstanceInput::Build(Box::new(self.request())),
        }
    }

    /// The instance asked for by the flags, with the built-in default model when none of
    /// `--model`, `--import` and `--onnx` is given.
    pub fn request(&self) -> InstanceRequest {
        InstanceRequest {
            model: self.graph.request_or_default(),
            shape: self.graph.shape.shape(),
            chip: ChipRequest {
                dram_readers: self.dram_readers,
                ..ChipRequest::with_hbm(&self.chip, self.hbm_tbps)
            },
            cut: Cut {
                layers: self.layers.clone(),
                ops: self.ops.clone(),
            },
            choices: self.choices(),
        }
    }

    /// The stage-model flags.
    fn choices(&self) -> StageChoices {
        StageChoices {
            load_order: self.load_order,
            window: self.window,
            noc_row: self.noc_row,
            expert_parallel: self.expert_parallel,
        }
    }

    /// `--expert-parallel`: build with parallel sets.
    pub fn expert_parallel(&self) -> bool {
        self.expert_parallel
    }

    /// The instance `--expert-parallel` is compared with: the same, without parallel sets
    /// (`--emit-instance` is left to [`InstanceSource::load_full`]).
    pub fn load_without_sets(&self) -> anyhow::Result<Loaded> {
        let start = Instant::now();
        let choices = StageChoices {
            expert_parallel: false,
            ..self.choices()
        };
        let (file, chip, graph) = self.build_with(choices)?;
        Ok(Loaded {
            instance: file.instance,
            build_s: start.elapsed().as_secs_f64(),
            chip: Some(chip),
            graph: Some(graph),
        })
    }

    /// `solve` and `gap` with `--expert-parallel`: the instance with parallel sets and the one
    /// without, neither written to `--emit-instance` yet: the caller writes the one its kept
    /// schedule is of ([`InstanceSource::emit`]).
    pub fn load_both(&self) -> anyhow::Result<(Loaded, Loaded)> {
        let start = Instant::now();
        let (file, chip, graph) = self.build()?;
        let with_sets = Loaded {
            instance: file.instance,
            build_s: start.elapsed().as_secs_f64(),
            chip: Some(chip),
            graph: Some(graph),
        };
        Ok((with_sets, self.load_without_sets()?))
    }

    /// Of [`InstanceSource::load_both`]'s pair, the instance a kept schedule is of (`sets`
    /// with parallel sets, else `plain`), written to `--emit-instance` when given.
    pub fn keep(&self, sets: Loaded, plain: Loaded, parallel_sets: bool) -> anyhow::Result<Loaded> {
        let kept = if parallel_sets { sets } else { plain };
        self.emit(&kept)?;
        Ok(kept)
    }

    /// Writes `loaded`, a built instance, to `--emit-instance` when given (with the chip it
    /// was built for, as [`InstanceSource::load_full`] writes it).
    pub fn emit(&self, loaded: &Loaded) -> anyhow::Result<()> {
        if let Some(path) = &self.emit_instance {
            let file = InstanceFile {
                instance: loaded.instance.clone(),
                chip: loaded.chip.as_ref().map(|c| c.record.clone()),
            };
            super::output::write_atomic(path, &file.to_json()?)?;
        }
        Ok(())
    }

    /// The instance and the seconds spent building it (plan tables); written to
    /// `--emit-instance` when given. With no instance, model or import given: the built-in
    /// default, Llama2-13B decode B32 KV2048.
    pub fn load(&self) -> anyhow::Result<(Instance, f64)> {
        self.load_full().map(|l| (l.instance, l.build_s))
    }

    /// [`InstanceSource::load`] with the chip and graph.
    pub fn load_full(&self) -> anyhow::Result<Loaded> {
        let start = Instant::now();
        let (file, chip, graph) = match &self.instance {
            Some(path) => {
                let file = InstanceFile::read(path)?;
                let chip = file
                    .chip
                    .as_ref()
                    .and_then(|r| super::chip_choice::for_replay(None, None, Some(r)).ok());
                (file, chip, None)
            }
            None => {
                let (file, chip, graph) = self.build()?;
                (file, Some(chip), Some(graph))
            }
        };
        let build_s = start.elapsed().as_secs_f64();
        if let Some(path) = &self.emit_instance {
            super::output::write_atomic(path, &file.to_json()?)?;
        }
        Ok(Loaded {
            instance: file.instance,
            build_s,
            chip,
            graph,
        })
    }

    fn build(&self) -> anyhow::Result<(InstanceFile, Chip, Graph)> {
        self.build_with(self.choices())
    }

    fn build_with(&self, choices: StageChoices) -> anyhow::Result<(InstanceFile, Chip, Graph)> {
        let request = InstanceRequest {
            choices,
            ..self.request()
        };
        let built = request
            .build(super::plan_cache::get(), &mut Stderr::default())
            .map_err(cli_error)?;
        super::plan_cache::warn_on_write_error(&built.cache);
        Ok((built.file(), built.chip, built.graph))
    }
}

impl InstanceSource {
    /// The `elk-opt moe` run of the model this builds, for `compare --routing`
    /// ([`MoeRequest::of_compare`]: refused for anything but a zoo model in decode, whole).
    pub fn moe_request(&self, m: &super::moe::CompareMoe) -> anyhow::Result<MoeRequest> {
        MoeRequest::of_compare(
            &self.input(),
            &m.routing.clone().unwrap_or_default(),
            m.steps,
            m.seed,
            &m.policies,
        )
        .map_err(cli_error)
    }
}

#[cfg(test)]
mod tests {
    //! The flags' defaults are the requests' (clap states them as literals): a command line
    //! with no flags asks for exactly the request layer's default, as Python's no keyword does.

    use clap::Parser;
    use elk_app::request::{InstanceRequest, MoeRequest};

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        source: super::InstanceSource,
    }

    #[derive(Parser)]
    struct Moe {
        #[command(flatten)]
        moe: super::super::moe::MoeArgs,
    }

    #[test]
    fn no_flag_is_the_default_request() {
        let flags = Flags::parse_from(["elk-opt"]);
        assert_eq!(flags.source.request(), InstanceRequest::default());
        let moe = Moe::parse_from(["elk-opt"]);
        assert_eq!(moe.moe.request(), MoeRequest::default());
    }
}
