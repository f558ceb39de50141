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
}

impl PlanRules {
    /// SPEC §3.
    pub const SPEC: PlanRules = PlanRules {
        sorted_candidate_lists: false,
        superseded_front_plans: false,
        small_matmul_order: false,
    };

    /// The reference artifact, bug for bug.
    pub const REFERENCE: PlanRules = PlanRules {
        sorted_candidate_lists: true,
        superseded_front_plans: true,
        small_matmul_order: true,
    };

    /// Whether these are the SPEC §3 rules.
    pub fn is_spec(&self) -> bool {
        *self == PlanRules::SPEC
    }
}
