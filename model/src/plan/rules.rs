//! Where planning may follow the reference artifact instead of SPEC §3.
//!
//! The default, [`PlanRules::SPEC`], is SPEC §3. [`PlanRules::REFERENCE`] reproduces the
//! reference artifact's option tables bug for bug; the importer selects it with
//! `--compat reference` (and says so in the graph's name). Each field is one departure of the
//! artifact from SPEC §3, measured in `docs/plans-vs-reference.md`; together they make our
//! tables identical to the artifact's on bert-base, Llama2-7B and OPT-6.7B.

use serde::{Deserialize, Serialize};

/// The departures from SPEC §3 that planning applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlanRules {
    /// The artifact sorts the list of per-dimension candidate rows in place before building its
    /// search tree, so dimension d is enumerated with the candidates of whichever dimension's
    /// list sorts d-th — including splits of tensors that d does not index (SPEC §3: a bug).
    pub sorted_candidate_lists: bool,
    /// The artifact never removes a plan that was the fastest of its hot size when enumerated,
    /// so the hot front can hold several plans of one hot size (each faster than the one
    /// before), and cold layouts are paired with all of them. SPEC §3 keeps the fastest.
    pub superseded_front_plans: bool,
    /// MatMul per-iteration cost: after ordering m ≥ n, the artifact swaps them back when
    /// m ≤ 16, so the smaller extent is the one counted in sixes. SPEC §3: m ≥ n.
    pub small_matmul_order: bool,
    /// The artifact plans every operator on the whole chip: a plan must use at least the
    /// utilisation floor of all its cores, so a 4,096-element reduction at batch 1 spreads
    /// over about a quarter of 5,888 cores and pays to gather that many partial sums. SPEC §3's
    /// clean rules also plan each operator on smaller groups of cores (the chip's cores
    /// halved, rounded up, down to one core; each group with its own floor) and keep a plan
    /// on a group where the table finds it faster, the other cores idle ([`super::spatial`]).
    pub whole_chip_only: bool,
    /// The artifact plans an embedding lookup with its whole table as an operand, so the
    /// table (262 MB for Mistral-7B) is spread over the cores and held while the lookup waits,
    /// although only the rows it reads cross from HBM. SPEC §3's clean rules plan the rows it
    /// reads ([`super::OpShape::of`]).
    pub gather_holds_table: bool,
}

impl PlanRules {
    /// SPEC §3.
    pub const SPEC: PlanRules = PlanRules {
        sorted_candidate_lists: false,
        superseded_front_plans: false,
        small_matmul_order: false,
        whole_chip_only: false,
        gather_holds_table: false,
    };

    /// The reference artifact, bug for bug.
    pub const REFERENCE: PlanRules = PlanRules {
        sorted_candidate_lists: true,
        superseded_front_plans: true,
        small_matmul_order: true,
        whole_chip_only: true,
        gather_holds_table: true,
    };

    /// The name of these rules in outputs: `clean` (SPEC §3, the default), `reference` (the
    /// artifact's, `--compat reference`), or `mixed` (any other combination, which only the
    /// tests build).
    pub fn name(&self) -> &'static str {
        match *self {
            PlanRules::SPEC => "clean",
            PlanRules::REFERENCE => "reference",
            _ => "mixed",
        }
    }

    /// Whether these are the SPEC §3 rules.
    pub fn is_spec(&self) -> bool {
        *self == PlanRules::SPEC
    }
}
