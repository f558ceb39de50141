//! Plans worked by hand: a 2-D elementwise operator and a small MatMul on 4 and 16 cores.
//! Every number below is derived in the comments from SPEC §3.

use elk_model::cost::{CostModel, IpuMk2};
use elk_model::graph::OpKind;
use elk_model::plan::{spatial, table, temporal, Geometry, OpShape, PlanRules, TensorShape};

const IPU: IpuMk2 = IpuMk2 { comm_factor: 1.0 };

fn tensor(dims: &[usize], from_hbm: bool) -> TensorShape {
    TensorShape {
        axes: dims.iter().map(|&d| vec![d]).collect(),
        from_hbm,
        dtype_bytes: elk_model::dtype::DtypeBytes::whole(2),
    }
}

/// out[i, j] = x[i, j] + w[j]: dims [4, 8], w from HBM, fp16.
fn add_bias() -> OpShape {
    OpShape {
        kind: OpKind::Elementwise,
        dims: vec![4, 8],
        tensors: vec![
            tensor(&[0, 1], false),
            tensor(&[0, 1], false),
            tensor(&[1], true),
        ],
        dtype_bytes: elk_model::dtype::DtypeBytes::whole(2),
        rules: PlanRules::SPEC,
    }
}

/// out[n, m] = Σ_k x[n, k] · w[k, m]: dims [4, 4, 8], w from HBM, fp16.
fn matmul() -> OpShape {
    OpShape {
        kind: OpKind::MatMul,
        dims: vec![4, 4, 8],
        tensors: vec![
            tensor(&[0, 1], false),
            tensor(&[0, 2], false),
            tensor(&[2, 1], true),
        ],
        dtype_bytes: elk_model::dtype::DtypeBytes::whole(2),
        rules: PlanRules::SPEC,
    }
}

fn count_plans(shape: &OpShape, cores: u64) -> usize {
    let mut n = 0;
    for p in spatial::partitions(&shape.dims, cores) {
        temporal::for_each(shape, &p, cores, &temporal::Divisors::up_to(cores), |_| {
            n += 1
        });
    }
    n
}

#[test]
fn elementwise_on_4_cores() {
    let s = add_bias();
    // Thresholds are tiny (P = 32): every p with p0·p1 ≤ 4 qualifies.
    let parts = spatial::partitions(&s.dims, 4);
    assert_eq!(
        parts,
        [
            [1, 1],
            [1, 2],
            [1, 3],
            [1, 4],
            [2, 1],
            [2, 2],
            [3, 1],
            [4, 1]
        ]
    );
    // Only w rotates (R_w = p0): p=(2,1): t ∈ {2}; (2,2): {2}; (3,1): {3}; (4,1): {2, 4}.
    assert_eq!(count_plans(&s, 4), 8 + 5);
    // p = (4, 1), t[1][w] = 4: L = [1, 8]; z = 8, 8, ⌈8/4⌉ = 2 (w rotates, double-buffered):
    // hot = (8 + 8 + 2·2)·2 B = 40 B; cold = 2·2 B = 4 B; I = 4, step = [1, 2], X = 2.
    let t = vec![vec![1, 1, 1], vec![1, 1, 4]];
    let g = Geometry::new(&s, &[4, 1], &t, 4);
    assert_eq!(
        (g.z.clone(), g.hot_bytes, g.cold_bytes, g.iterations),
        (vec![8, 8, 2], 40, 4, 4)
    );
    let c = IPU.cost(&s, &g);
    // comp = 4 · (0.75·2 + 290) = 1166; one round of 3 shifts of 2 elements:
    // 236·3 + 0.56·6 = 711.36, plus the elementwise shuffle 118.
    assert_eq!(c.comp, 1166.0);
    assert!((c.comm - 829.36).abs() < 1e-9, "{}", c.comm);
    // The table: the smallest hot plan is p = (1, 4), L = [4, 2], z = 8, 8, 2: hot 36 B,
    // exec (0.75·8 + 290) + 118 = 414; no other plan is strictly faster, so the front is one
    // point, paired with the only cold layout of that partition (w tile 2 elements = 4 B).
    let tab = table::build(&s, 4, 1 << 20, &IPU).unwrap();
    assert_eq!(tab.front.len(), 1);
    assert_eq!(
        (tab.front[0].hot, tab.front[0].comp, tab.front[0].comm),
        (36, 296.0, 118.0)
    );
    assert_eq!(tab.options.len(), 1);
    let o = &tab.options[0];
    assert_eq!(
        (o.cold, o.hot, o.exec(), o.warm_up, o.rho, tab.c_min),
        (4, 36, 414.0, 0.0, 1.0, 4)
    );
}

/// The weight of [`matmul`] in a block float: its tile's bytes are sixteenths of a byte per
/// element, rounded up per tile.
#[test]
fn a_block_float_weight_tile_counts_its_exponents_rounded_up() {
    use elk_model::dtype::Dtype;
    let none = vec![vec![1; 3]; 3];
    for (d, w_tile, half) in [
        (Dtype::Fp16, 16, 32),
        (Dtype::Bfp8, 9, 17),
        (Dtype::Bfp4, 5, 9),
    ] {
        let mut s = matmul();
        s.tensors[2].dtype_bytes = d.bytes();
        // p = (1, 1, 4): z_out = 16, z_x = 8 (fp16: 32 B + 16 B) and z_w = 8 elements:
        // fp16 16 B, bfp8 8 · 17/16 = 8.5 → 9 B, bfp4 8 · 9/16 = 4.5 → 5 B.
        let g = Geometry::new(&s, &[1, 1, 4], &none, 4);
        assert_eq!((g.hot_bytes, g.cold_bytes), (48 + w_tile, w_tile), "{d}");
        // p = (1, 1, 1), w (32 elements) rotating in 2 steps along k: it holds two tiles of
        // 16 elements, `half` bytes each (bfp8: one block of 16 and its exponent, 17 B);
        // out 16 and x 32 elements at 2 B.
        let t = vec![vec![1; 3], vec![1; 3], vec![1, 1, 2]];
        let g = Geometry::new(&s, &[1, 1, 1], &t, 4);
        assert_eq!(g.z, [16, 32, 16]);
        assert_eq!((g.hot_bytes, g.cold_bytes), (96 + 2 * half, half), "{d}");
    }
}

#[test]
fn matmul_on_4_and_16_cores() {
    let s = matmul();
    // 4 cores: all (p0, p1, p2) with product ≤ 4: 1 + 3 + 3 + 6 = 13 partitions.
    assert_eq!(spatial::partitions(&s.dims, 4).len(), 13);
    // p = (1, 1, 4): L = [4, 4, 2]; z_out = 16, z_x = 8, z_w = 8: hot 64 B, cold 16 B.
    let none = vec![vec![1; 3]; 3];
    let g = Geometry::new(&s, &[1, 1, 4], &none, 4);
    assert_eq!((g.hot_bytes, g.cold_bytes, g.output_replicas), (64, 16, 4));
    let c = IPU.cost(&s, &g);
    // m = n = 4, k = 2: 24·1·1·1 + 514·1·1 + 113·1 + 173 = 824.
    assert_eq!(c.comp, 824.0);
    // k = 4 replicas of O = 16: gather 118·4 + 0.56·16 = 480.96; r = 4, a = 4, a·k = 16:
    // reduce min(295.25, 1.5·16 + 175) = 199; shuffle 0.56·16 + 236 + 472 + 480.96 + 199.
    assert!(
        (c.comm - (8.96 + 708.0 + 480.96 + 199.0)).abs() < 1e-9,
        "{}",
        c.comm
    );

    // 16 cores, p = (1, 2, 8): L = [4, 2, 1]; R_out = 8, R_x = 2, R_w = 1.
    let g = Geometry::new(&s, &[1, 2, 8], &none, 16);
    // z_out = 8, z_x = 4, z_w = 2: hot 28 B, cold 4 B; m = 4, n = 2, k = 1: 824 cycles.
    assert_eq!(
        (g.z.clone(), g.hot_bytes, g.cold_bytes),
        (vec![8, 4, 2], 28, 4)
    );
    let c = IPU.cost(&s, &g);
    assert_eq!(c.comp, 824.0);
    // k = 8, O = 8, r = 1 (not aligned below 4): gather 944 + 4.48, reduce 1.5·8 + 175 = 187.
    let shuffle = 0.56 * 8.0 + 708.0 + 948.48 + 187.0;
    assert!((c.comm - shuffle).abs() < 1e-9);
    // Rotating x along n (t[0][x] = 2, dividing R_x = 2): z_x = 2 double-buffered, hot still
    // 8 + 2·2 + 2 = 14 elements; I = 2 steps of m = 2: 2·824; one shift of 2 elements:
    // 236 + 0.56·2 = 237.12. The shuffle's O is one step's output, 2·2 = 4 elements (the
    // reference's sub-operator extents), r = 4/8: gather 944 + 0.56·4, reduce 1.5·4 + 175;
    // its first term still moves the whole tile z_out = 8.
    let t = vec![vec![1, 2, 1], vec![1; 3], vec![1; 3]];
    let g = Geometry::new(&s, &[1, 2, 8], &t, 16);
    assert_eq!((g.hot_bytes, g.iterations), (28, 2));
    let c = IPU.cost(&s, &g);
    assert_eq!(c.comp, 1648.0);
    let shuffle = 0.56 * 8.0 + 708.0 + 944.0 + 0.56 * 4.0 + 181.0;
    assert!((c.comm - (shuffle + 237.12)).abs() < 1e-9, "{}", c.comm);
    // Warm-up from a cold layout twice as split (w split 2 more): 0.56·2·z_w + 118·2.
    assert!((IPU.warm_up(&s, &[1, 1, 2], &[8, 4, 1]) - (0.56 * 2.0 + 236.0)).abs() < 1e-9);
}

/// A 1-D convolution out[o, x] = Σ_{c, k} in[c, x + k] · w[o, c, k]: the input's second axis
/// is a window over dimensions x and k, so its tile is not a product per dimension.
fn conv() -> OpShape {
    OpShape {
        kind: OpKind::Conv,
        dims: vec![8, 16, 4, 3],
        tensors: vec![
            tensor(&[0, 1], false),
            TensorShape {
                axes: vec![vec![2], vec![1, 3]],
                from_hbm: false,
                dtype_bytes: elk_model::dtype::DtypeBytes::whole(2),
            },
            tensor(&[0, 2, 3], true),
        ],
        dtype_bytes: elk_model::dtype::DtypeBytes::whole(2),
        rules: PlanRules::SPEC,
    }
}

/// What the search builds up per dimension (a [`temporal::Leaf`]) gives the same geometry as
/// computing it from the temporal partition, for every plan of a MatMul, an elementwise
/// operator and a convolution (window axes: the search leaves the tiles to the geometry).
#[test]
fn a_leaf_gives_the_geometry_of_its_temporal_partition() {
    for (shape, cores) in [(matmul(), 16), (add_bias(), 4), (conv(), 16)] {
        let divs = temporal::Divisors::up_to(cores);
        let mut leaves = 0;
        for p in spatial::partitions(&shape.dims, cores) {
            let mut g = Geometry::for_partition(&shape, &p, cores);
            temporal::for_each_leaf(&shape, &p, cores, &divs, |leaf| {
                g.set_leaf(&shape, leaf);
                g.set_rounds(&shape, leaf.t);
                assert_eq!(
                    g,
                    Geometry::new(&shape, &p, leaf.t, cores),
                    "p {p:?} t {:?}",
                    leaf.t
                );
                leaves += 1;
            });
        }
        assert!(leaves > 10, "{:?}: {leaves} plans", shape.kind);
    }
}
