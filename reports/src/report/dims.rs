//! Which grid dimensions vary across a report's cells, so that every one that does appears
//! somewhere a reader sees it: in row and category labels, in a figure's groups or panels,
//! or (when it is constant) in the title. A report that would draw two cells under one label
//! or join them into one line is refused instead ([`Dims::refuse_duplicates`]).

use elk_app::cell::CellResult;
use elk_app::grid::Cell;
use elk_app::{AppError, Result};

/// One dimension of a sweep grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dim {
    Model,
    Mode,
    Batch,
    Kv,
    Chip,
    Hbm,
    Noc,
    Compute,
    Topology,
    Cores,
    Routing,
    ExpertParallel,
}

/// Every dimension, in the order labels print them.
pub(crate) const ALL: [Dim; 12] = [
    Dim::Model,
    Dim::Mode,
    Dim::Batch,
    Dim::Kv,
    Dim::Chip,
    Dim::Hbm,
    Dim::Noc,
    Dim::Compute,
    Dim::Topology,
    Dim::Cores,
    Dim::Routing,
    Dim::ExpertParallel,
];

/// The dimensions a CSV of `rows` has a column for: every one, but the routing and parallel
/// sets only when a cell has them (so the CSVs of grids without keep their columns).
pub(crate) fn csv_dims(rows: &[&CellResult]) -> Vec<Dim> {
    let routed = rows.iter().any(|r| r.cell.routing.is_some());
    let sets = rows.iter().any(|r| r.cell.expert_parallel);
    ALL.into_iter()
        .filter(|d| *d != Dim::Routing || routed)
        .filter(|d| *d != Dim::ExpertParallel || sets)
        .collect()
}

/// A number without a spurious ".0".
fn num(v: f64) -> String {
    if v == v.round() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The chip's own HBM bandwidth in TB/s, for built-in chips (files are not read here).
fn preset_hbm_tbps(chip: &str) -> Option<f64> {
    elk_model::chip::PRESETS
        .iter()
        .any(|(n, _)| *n == chip)
        .then(|| elk_model::chip::ChipSpec::load(chip).ok())
        .flatten()
        .map(|c| c.hbm.bandwidth_bytes_per_s / 1e12)
}

/// Whether the cell's mode attends over a KV cache (decode), whose length the grid's `kvs`
/// give; in the other modes (prefill, forward-batch, training) they are the sequence length.
/// An unknown mode is taken for decode, the grid's default.
fn has_kv_cache(c: &Cell) -> bool {
    elk_model::graph::Mode::parse(&c.mode).map_or(true, |m| !m.whole_sequences())
}

impl Dim {
    /// The cell's value of this dimension as a label prints it ("B16", "KV4096" for a KV
    /// cache, "seq2048" for a sequence length, "HBM 8 TB/s").
    pub(crate) fn value(self, c: &Cell) -> String {
        match self {
            Dim::Model => c.model.clone(),
            Dim::Mode => c.mode.clone(),
            Dim::Batch => format!("B{}", c.batch),
            Dim::Kv if has_kv_cache(c) => format!("KV{}", c.kv),
            Dim::Kv => format!("seq{}", c.kv),
            Dim::Chip => c.chip.clone(),
            Dim::Hbm => match c.hbm_tbps {
                Some(h) => format!("HBM {} TB/s", num(h)),
                None => match preset_hbm_tbps(&c.chip) {
                    Some(h) => format!("HBM {} TB/s (the chip's)", num(h)),
                    None => "the chip's HBM".into(),
                },
            },
            Dim::Noc => format!("NoC ×{}", num(c.noc_scale)),
            Dim::Compute => format!("compute ×{}", num(c.compute_scale)),
            Dim::Topology => c
                .topology
                .clone()
                .unwrap_or_else(|| "chip's topology".into()),
            Dim::Cores => match c.cores {
                Some(n) => format!("{n} cores"),
                None => "chip's cores".into(),
            },
            Dim::Routing => match &c.routing {
                Some(r) => format!("routing {r}"),
                None => "balanced routing".into(),
            },
            Dim::ExpertParallel if c.expert_parallel => "expert-parallel".into(),
            Dim::ExpertParallel => "no parallel sets".into(),
        }
    }

    /// The column a CSV names this dimension by (the grid's key, in the singular).
    pub(crate) fn column(self) -> &'static str {
        match self {
            Dim::Model => "model",
            Dim::Mode => "mode",
            Dim::Batch => "batch",
            Dim::Kv => "kv",
            Dim::Chip => "chip",
            Dim::Hbm => "hbm_tbps",
            Dim::Noc => "noc_scale",
            Dim::Compute => "compute_scale",
            Dim::Topology => "topology",
            Dim::Cores => "cores",
            Dim::Routing => "routing",
            Dim::ExpertParallel => "expert_parallel",
        }
    }

    /// The cell's value of this dimension for a CSV: the number or name as the grid gives it
    /// (empty: the chip's own).
    pub(crate) fn raw(self, c: &Cell) -> String {
        match self {
            Dim::Model => c.model.clone(),
            Dim::Mode => c.mode.clone(),
            Dim::Batch => c.batch.to_string(),
            Dim::Kv => c.kv.to_string(),
            Dim::Chip => c.chip.clone(),
            Dim::Hbm => c.hbm_tbps.map_or(String::new(), num),
            Dim::Noc => num(c.noc_scale),
            Dim::Compute => num(c.compute_scale),
            Dim::Topology => c.topology.clone().unwrap_or_default(),
            Dim::Cores => c.cores.map_or(String::new(), |n| n.to_string()),
            Dim::Routing => c.routing.clone().unwrap_or_default(),
            Dim::ExpertParallel => c.expert_parallel.to_string(),
        }
    }

    /// The cell's setting of this dimension as the grid gives it (the chip's own HBM is one
    /// setting on every chip), for telling whether the dimension varies.
    fn setting(self, c: &Cell) -> String {
        match self {
            Dim::Hbm => format!("{:?}", c.hbm_tbps),
            Dim::Kv => c.kv.to_string(),
            _ => self.value(c),
        }
    }

    /// Whether the cell keeps the chip's own setting (left out of titles: nothing to say).
    fn is_default(self, c: &Cell) -> bool {
        match self {
            Dim::Noc => c.noc_scale == 1.0,
            Dim::Compute => c.compute_scale == 1.0,
            Dim::Topology => c.topology.is_none(),
            Dim::Cores => c.cores.is_none(),
            Dim::Routing => c.routing.is_none(),
            Dim::ExpertParallel => !c.expert_parallel,
            _ => false,
        }
    }
}

/// The dimensions that vary across a set of cells.
#[derive(Clone, Debug)]
pub(crate) struct Dims {
    varying: Vec<Dim>,
    /// Some cells have a KV cache and others not (decode beside prefill): one length is a
    /// KV length for some and a sequence length for others.
    mixed_kv: bool,
}

impl Dims {
    /// The dimensions that take more than one value in `rows`.
    pub(crate) fn of(rows: &[&CellResult]) -> Dims {
        let varying = ALL
            .into_iter()
            .filter(|d| {
                let first = rows.first().map(|r| d.setting(&r.cell));
                rows.iter().any(|r| Some(d.setting(&r.cell)) != first)
            })
            .collect();
        let kv_cache = |want| rows.iter().any(|r| has_kv_cache(&r.cell) == want);
        Dims {
            varying,
            mixed_kv: kv_cache(true) && kv_cache(false),
        }
    }

    /// Whether `d` varies.
    pub(crate) fn varies(&self, d: Dim) -> bool {
        self.varying.contains(&d)
    }

    /// A cell's label: its model (unless skipped) and the values of the varying
    /// dimensions, except `skip` (shown elsewhere: the x axis, a group); the chip as
    /// "on CHIP". When nothing is left, the batch and KV length.
    pub(crate) fn label(&self, c: &Cell, skip: &[Dim]) -> String {
        let parts: Vec<String> = ALL
            .into_iter()
            .filter(|d| (*d == Dim::Model || self.varies(*d)) && !skip.contains(d))
            .map(|d| match d {
                Dim::Chip => format!("on {}", d.value(c)),
                _ => d.value(c),
            })
            .collect();
        if parts.is_empty() {
            format!("{} {}", Dim::Batch.value(c), Dim::Kv.value(c))
        } else {
            parts.join(" ")
        }
    }

    /// The constant dimensions of `c`, for a title: model, mode, batch, KV, chip and HBM
    /// always (when they do not vary), the others when they differ from the chip's own
    /// ("llama2-7b decode B16 KV4096 on ipu-pod4, HBM 8 TB/s").
    pub(crate) fn constant(&self, c: &Cell, skip: &[Dim]) -> String {
        let fixed: Vec<Dim> = ALL
            .into_iter()
            .filter(|d| !self.varies(*d) && !skip.contains(d) && !d.is_default(c))
            .collect();
        let mut head: Vec<String> = Vec::new();
        let mut tail: Vec<String> = Vec::new();
        for d in fixed {
            match d {
                Dim::Kv if self.mixed_kv => head.push(format!("KV/seq {}", c.kv)),
                Dim::Model | Dim::Mode | Dim::Batch | Dim::Kv => head.push(d.value(c)),
                Dim::Chip => head.push(format!("on {}", d.value(c))),
                _ => tail.push(d.value(c)),
            }
        }
        let mut s = head.join(" ");
        if !tail.is_empty() {
            if !s.is_empty() {
                s.push_str(", ");
            }
            s.push_str(&tail.join(", "));
        }
        s
    }

    /// Refuses `labels` that name two cells alike: such a table or figure would be
    /// ambiguous, so the report is not written.
    pub(crate) fn refuse_duplicates(what: &str, labels: &[String]) -> Result<()> {
        for (i, l) in labels.iter().enumerate() {
            if labels[..i].contains(l) {
                return Err(AppError::Refused {
                    figure: what.into(),
                    detail: format!(
                        "two results are both '{l}': the results hold the same cell twice \
                         or a dimension the report cannot show; split the results file"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Whether `d` is a function of `x` and back in `rows` (HBM scaled with the core count): it
/// moves with the swept quantity, so it is no separate panel.
pub(crate) fn coupled(rows: &[&CellResult], x: Dim, d: Dim) -> bool {
    rows.iter().all(|a| {
        rows.iter().all(|b| {
            (x.setting(&a.cell) == x.setting(&b.cell)) == (d.setting(&a.cell) == d.setting(&b.cell))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(chip: &str, hbm: f64) -> CellResult {
        let mut cell = Cell::decode("llama2-7b", 16, 4096);
        cell.chip = chip.into();
        cell.hbm_tbps = Some(hbm);
        CellResult {
            figure: "vs-hbm".into(),
            cell,
            ops: 0,
            ideal_ms: None,
            methods: Vec::new(),
            bound: None,
            ideal_unreachable: None,
            error: None,
            does_not_fit: false,
        }
    }

    #[test]
    fn labels_name_what_varies_and_titles_what_does_not() {
        let rows = [result("a", 2.0), result("a", 4.0), result("b", 2.0)];
        let refs: Vec<&CellResult> = rows.iter().collect();
        let dims = Dims::of(&refs);
        assert!(dims.varies(Dim::Chip) && dims.varies(Dim::Hbm) && !dims.varies(Dim::Batch));
        assert_eq!(dims.label(&rows[1].cell, &[]), "llama2-7b on a HBM 4 TB/s");
        assert_eq!(dims.label(&rows[1].cell, &[Dim::Hbm]), "llama2-7b on a");
        assert_eq!(
            dims.label(&rows[1].cell, &[Dim::Model, Dim::Chip, Dim::Hbm]),
            "B16 KV4096"
        );
        assert_eq!(
            dims.constant(&rows[0].cell, &[]),
            "llama2-7b decode B16 KV4096"
        );
        let one: Vec<&CellResult> = rows[..1].iter().collect();
        assert_eq!(
            Dims::of(&one).constant(&rows[0].cell, &[]),
            "llama2-7b decode B16 KV4096 on a, HBM 2 TB/s"
        );
        let labels = ["x".to_string(), "y".into(), "x".into()];
        assert!(Dims::refuse_duplicates("bars", &labels).is_err());
        assert!(!coupled(&refs, Dim::Hbm, Dim::Chip));
    }

    #[test]
    fn a_mode_without_a_kv_cache_labels_its_length_a_sequence_length() {
        let mut rows = [result("a", 2.0), result("a", 4.0)];
        for r in &mut rows {
            r.cell.mode = "forward-batch".into();
        }
        let refs: Vec<&CellResult> = rows.iter().collect();
        let dims = Dims::of(&refs);
        assert_eq!(
            dims.constant(&rows[0].cell, &[]),
            "llama2-7b forward-batch B16 seq4096 on a"
        );
        assert_eq!(
            dims.label(&rows[0].cell, &[Dim::Model, Dim::Hbm]),
            "B16 seq4096"
        );
        for mode in ["prefill", "training"] {
            rows[1].cell.mode = mode.into();
            assert_eq!(Dim::Kv.value(&rows[1].cell), "seq4096");
        }
        // Decode beside prefill at one length: the length is both, and the title says so;
        // the mode varies, so each label names its own.
        rows[1].cell.mode = "decode".into();
        let refs: Vec<&CellResult> = rows.iter().collect();
        let dims = Dims::of(&refs);
        assert!(dims.varies(Dim::Mode) && !dims.varies(Dim::Kv));
        assert_eq!(
            dims.constant(&rows[0].cell, &[]),
            "llama2-7b B16 KV/seq 4096 on a"
        );
        assert_eq!(dims.label(&rows[1].cell, &[Dim::Hbm]), "llama2-7b decode");
    }
}
