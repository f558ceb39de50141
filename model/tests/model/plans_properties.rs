//! Properties of plan tables on random small operators (proptest, shrinking).

use elk_model::cost::IpuMk2;
use elk_model::graph::OpKind;
use elk_model::plan::{table, OpShape, OptionEntry, TensorShape};
use proptest::prelude::*;

fn shape(kind: OpKind, dims: Vec<u64>, hbm_weight: bool) -> OpShape {
    let t = |axes: &[usize], from_hbm| TensorShape {
        axes: axes.iter().map(|&d| vec![d]).collect(),
        from_hbm,
    };
    let tensors = if kind == OpKind::MatMul {
        vec![t(&[0, 1], false), t(&[0, 2], false), t(&[2, 1], hbm_weight)]
    } else {
        vec![t(&[0, 1], false), t(&[0, 1], false), t(&[1], hbm_weight)]
    };
    OpShape {
        kind,
        dims,
        tensors,
        dtype_bytes: 2,
    }
}

fn dominates(a: &OptionEntry, b: &OptionEntry) -> bool {
    let (ka, kb) = (
        [a.cold as f64, a.hot as f64, a.exec(), a.comm],
        [b.cold as f64, b.hot as f64, b.exec(), b.comm],
    );
    ka.iter().zip(&kb).all(|(x, y)| x <= y) && ka.iter().zip(&kb).any(|(x, y)| x < y)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn tables_are_sound(
        matmul in any::<bool>(),
        d0 in 1u64..24, d1 in 1u64..48, d2 in 1u64..48,
        cores in prop::sample::select(vec![4u64, 16, 64]),
        sram in 64u64..4096,
        hbm in any::<bool>(),
    ) {
        let s = if matmul { shape(OpKind::MatMul, vec![d0, d1, d2], hbm) } else { shape(OpKind::Elementwise, vec![d0, d1], hbm) };
        let model = IpuMk2 { comm_factor: 1.0 };
        let Some(t) = table::build(&s, cores, sram, &model) else { return Ok(()); };
        // Every option fits SRAM; cold ≤ hot.
        for o in &t.table {
            prop_assert!(o.hot <= sram && o.cold <= o.hot);
        }
        // The hot front is strictly decreasing in time as memory grows.
        for w in t.front.windows(2) {
            prop_assert!(w[0].hot < w[1].hot);
            prop_assert!(w[1].comp + w[1].comm < w[0].comp + w[0].comm);
        }
        // Pruning keeps exactly the non-dominated table entries.
        for e in &t.table {
            let dominated = t.table.iter().any(|o| dominates(o, e));
            let kept = t.options.contains(e);
            prop_assert_eq!(kept, !dominated);
        }
        prop_assert!(!t.options.is_empty());
    }
}
