//! What a MoE run reports (`moe --json`'s results, `compare --routing`'s section, the
//! studies' tables): each policy per step, each step's bound, and each policy's summary over
//! the steps. Apart from the run in `moe.rs` because it is the contract scripts, Python and
//! the reports read, and the summary statistics are plain arithmetic over it.

use elk_model::load_policy::Policy;
use elk_solver::bounds::BoundSource;
use serde::Serialize;

/// A policy in one step.
#[derive(Clone, Debug, Serialize)]
pub struct PolicyStep {
    /// The policy.
    pub policy: String,
    /// Judged makespan, ms.
    pub makespan_ms: f64,
    /// The heuristic whose schedule it is (for the oracle, possibly another policy's
    /// schedule without its idle loads: `via load-all`).
    pub method: String,
    /// Experts whose weights it loads, over all layers.
    pub loaded_experts: usize,
    /// Their weight bytes.
    pub expert_bytes: u64,
}

/// Which certified lower bound each step gets: a bound of the oracle's instance, so it bounds
/// every policy of the step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepBound {
    /// The roofline bound (SPEC §5): instant. What `elk-opt moe` reports by default.
    #[default]
    Roofline,
    /// The better of the stage relaxation (any step up to 10,000 operators; about 4 s a step
    /// on OLMoE-1B-7B, docs/exact.md "The stage relaxation") and the roofline: `moe --bound
    /// stage`. Release windows and SRAM are left out of the LP, which only lowers it.
    Stage,
    /// The strongest the tool has ([`crate::bound::certified_bound`]): the best of the stage
    /// relaxation (any step up to 10,000 operators), the segment relaxation's coupled LP
    /// where the step's layers repeat, and the roofline. Sampled routings give every layer
    /// its own token counts, so there the segment relaxation does not apply; under the
    /// balanced routing it is tried (up to a minute; identical steps are bounded once). What `bound = true` gives a grid's MoE
    /// cells and what the MoE study draws.
    Strongest,
}

/// One sampled step.
#[derive(Clone, Debug, Serialize)]
pub struct StepResult {
    /// Step index.
    pub index: usize,
    /// Experts receiving tokens, over all layers.
    pub touched_experts: usize,
    /// The oracle instance's certified lower bound, ms: below every policy of this step.
    pub bound_ms: f64,
    /// Which bound: the roofline or the segment relaxation.
    pub bound_source: BoundSource,
    /// Each policy, in the spec's order.
    pub policies: Vec<PolicyStep>,
    /// [`crate::dominant`]'s warning on the oracle's instance, if one class of operators
    /// takes most of its best schedule (reported once, in [`MoeReport::warnings`]).
    #[serde(skip)]
    pub dominant: Option<String>,
}

/// A policy over all steps.
#[derive(Clone, Debug, Serialize)]
pub struct PolicySummary {
    /// The policy.
    pub policy: String,
    /// Mean judged makespan, ms.
    pub mean_ms: f64,
    /// Median, ms.
    pub p50_ms: f64,
    /// 99th percentile (nearest rank), ms.
    pub p99_ms: f64,
    /// Mean expert weight loaded per step, bytes.
    pub mean_expert_bytes: f64,
    /// Mean experts loaded per step and layer.
    pub mean_experts_per_layer: f64,
    /// Mean of (makespan / oracle − 1) over steps, %.
    pub mean_vs_oracle_pct: f64,
    /// Mean of (makespan / bound − 1) over steps, %: at least this far from optimal is
    /// unproven; at most this far is certified.
    pub mean_gap_pct: f64,
    /// Largest of those, %.
    pub max_gap_pct: f64,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct MoeReport {
    /// Each step.
    pub steps: Vec<StepResult>,
    /// Each policy over the steps, in the spec's order.
    pub summary: Vec<PolicySummary>,
    /// Mean experts receiving tokens per layer and step.
    pub mean_touched_experts_per_layer: f64,
    /// E·(1 − (1 − k/E)^n), the expectation under uniform routing of n tokens.
    pub uniform_expected_experts_per_layer: f64,
    /// Operator shapes planned (each once, whatever the steps).
    pub planned_shapes: usize,
    /// What a reader should know before using the numbers: one class of operators taking
    /// most of a step (the first step where it does; docs/plans.md).
    pub warnings: Vec<String>,
    /// The resident policies' sets (empty without one; docs/moe.md, "Resident experts").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resident: Vec<super::resident::ResidentReport>,
    /// With parallel sets (`--expert-parallel`): the same steps and policies with the
    /// experts with tokens side by side on groups of cores, each policy keeping the faster of
    /// its schedules with and without sets (docs/core-groups.md, CG-6); the report above is
    /// without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expert_parallel: Option<Box<MoeReport>>,
}

/// `compare --routing`'s section: the run's title, the model's experts and the report (the
/// CLI's `compare` and Python's `compare(routing=…)`).
#[derive(Serialize)]
pub struct MoeSection {
    /// What ran.
    pub title: String,
    /// `routing`, `steps`, `seed` as given.
    pub routing: String,
    /// Steps sampled (`--steps`). Named `sampled_steps` in JSON: the report's `steps` are the
    /// rows (one key each; the count under `steps` as well gave the object a key twice).
    #[serde(rename = "sampled_steps")]
    pub steps: u64,
    /// Seed.
    pub seed: u64,
    /// Experts per layer.
    pub experts: u64,
    /// Experts per token (k).
    #[serde(rename = "experts_per_token")]
    pub top_k: u64,
    /// The policies over the steps.
    #[serde(flatten)]
    pub report: MoeReport,
}

/// `elk-opt moe --json`'s results: what ran, the model's experts, and the report.
#[derive(Serialize)]
pub struct MoeResults<'a> {
    /// `mixtral-8x7b decode b32 kv2048 on ipu-pod4 @ 16 TB/s HBM, routing uniform, 100
    /// steps (seed 1)`.
    pub instance: String,
    /// Experts per layer.
    pub experts: u64,
    /// Experts per token (k).
    #[serde(rename = "experts_per_token")]
    pub top_k: u64,
    /// Tokens routed per layer (the batch).
    pub tokens_per_layer: u64,
    /// Every step and each policy's summary.
    #[serde(flatten)]
    pub report: &'a MoeReport,
}

/// The title of a run (`MoeResults::instance`): the model, batch, KV, chip label, the
/// routing as given, steps and seed.
pub fn title(
    model: &str,
    batch: u64,
    kv: u64,
    chip_label: &str,
    routing: &str,
    steps: u64,
    seed: u64,
) -> String {
    let steps = if steps == 1 {
        "1 step".to_string()
    } else {
        format!("{steps} steps")
    };
    // MoE runs build zoo models, model files or configs: the clean plan rules.
    format!(
        "{model} decode b{batch} kv{kv} on {chip_label}, routing {routing}, {steps} (seed {seed}), {} plan rules",
        elk_model::plan::PlanRules::SPEC.name()
    )
}

/// (p50, p99) of `v`: the median (mean of the middle two for an even count) and the value at
/// nearest rank round(0.99·(n − 1)).
pub fn p50_p99(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    // The median as every study takes it (the mean of the middle two for an even count).
    let (p50, _, _) = crate::studies::summary(&v);
    (p50, v[((n - 1) as f64 * 0.99).round() as usize])
}

/// Each policy's summary over `steps` (the oracle last among `policies`).
pub(super) fn summarise(
    policies: &[Policy],
    steps: &[StepResult],
    layers: usize,
) -> Vec<PolicySummary> {
    let oracle = policies.len() - 1;
    let n_steps = steps.len().max(1) as f64;
    policies
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ms: Vec<f64> = steps.iter().map(|s| s.policies[i].makespan_ms).collect();
            let n = ms.len().max(1) as f64;
            let (p50, p99) = p50_p99(&ms);
            let gaps: Vec<f64> = steps
                .iter()
                .map(|s| 100.0 * (s.policies[i].makespan_ms / s.bound_ms - 1.0))
                .collect();
            let vs: f64 = steps
                .iter()
                .map(|s| 100.0 * (s.policies[i].makespan_ms / s.policies[oracle].makespan_ms - 1.0))
                .sum();
            PolicySummary {
                policy: p.name(),
                mean_ms: ms.iter().sum::<f64>() / n,
                p50_ms: p50,
                p99_ms: p99,
                mean_expert_bytes: steps
                    .iter()
                    .map(|s| s.policies[i].expert_bytes as f64)
                    .sum::<f64>()
                    / n_steps,
                mean_experts_per_layer: steps
                    .iter()
                    .map(|s| s.policies[i].loaded_experts as f64)
                    .sum::<f64>()
                    / (n_steps * layers.max(1) as f64),
                mean_vs_oracle_pct: vs / n,
                mean_gap_pct: gaps.iter().sum::<f64>() / n,
                max_gap_pct: gaps.iter().copied().fold(0.0, f64::max),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::p50_p99;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(p50_p99(&v), (50.0, 99.0));
        assert_eq!(p50_p99(&[1.0, 2.0]), (1.5, 2.0));
    }
}
