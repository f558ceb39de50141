//! One certified bound whatever the command: `compare --bound segment`, a sweep cell with
//! `bound = true` and `gap` hold the same coupled segment LP bits for one instance (and
//! `compare` and `gap` the same stage relaxation bits), and `gap` reads the bound cache
//! instead of solving the LP again.

use elk_app::bound::{coupled_bound, BoundCache, COUPLED_LIMIT};
use elk_app::gap::{gap_report, CoupledStatus, ExactSettings};
use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::zoo::{self, ZooParams};
use elk_solver::BoundSource;
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::units::Cycles;

/// OPT-1.3B (24 layers), decode B32 KV2048 on ipu-pod4, free load order: too large for the
/// MILP, so `gap` takes the whole-model road, and its coupled LP (a few seconds of one core)
/// beats the roofline.
fn whole_model() -> Instance {
    let graph = zoo::build("opt-1.3b", &ZooParams::new(Mode::Decode, 32, 2048)).unwrap();
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let opts = InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Free),
        ..InstanceOptions::default()
    };
    build_instance(&graph, &chip, &opts).unwrap()
}

/// `gap` without the window search: the coupled LP (up to 90 % of the limit, ample), then
/// nothing that takes time, so the test does not wait for the limit.
fn gap_settings() -> ExactSettings {
    ExactSettings {
        window_search: false,
        ..ExactSettings::milp_within(300.0)
    }
}

#[test]
fn compare_a_sweep_cell_and_gap_hold_the_same_bound_bits() {
    let inst = whole_model();
    assert!(elk_solver::too_large(&inst, elk_solver::Backend::Milp));
    let roof = elk_solver::bounds::roofline(&inst).best();
    // `compare --bound segment`: the coupled LP, then the table's bound.
    let coupled = coupled_bound(&inst, COUPLED_LIMIT, None, &|_| {}).unwrap();
    let seg = coupled.bound.expect("two layers: the coupled LP applies");
    let bits = seg.bound_cycles.to_bits();
    assert!(
        Cycles(seg.bound_cycles) > roof,
        "{} vs {roof}",
        seg.bound_cycles
    );
    let beyond = elk_app::bound::Beyond {
        segment: Some(Cycles(seg.bound_cycles)),
        stage: None,
    };
    let compared = elk_app::compare::compare(&inst, None, true, beyond, &mut |_, _, _| {}).unwrap();
    assert_eq!(compared.bound_source, BoundSource::SegmentRelaxation);
    assert_eq!(
        compared.bound_ms.to_bits(),
        inst.ms(Cycles(seg.bound_cycles)).to_bits()
    );
    // A sweep cell with `bound = true`.
    let (cell, source) = elk_app::bound::certified_bound(&inst, None).unwrap();
    assert_eq!(source, BoundSource::SegmentRelaxation);
    assert_eq!(cell.get().to_bits(), bits);
    // `gap`, in this process: the same LP before the exact part, its bound the reference.
    let gap = gap_report(&inst, &gap_settings(), true, None, &|_| {}).unwrap();
    let held = gap.exact.bounds.segment_cycles.map(|c| c.get().to_bits());
    assert_eq!(held, Some(bits), "{:?}", gap.exact.notes);
    assert_eq!(gap.exact.coupled, CoupledStatus::Held);
    assert_eq!(gap.reference_cycles.get().to_bits(), bits);
    assert_eq!(gap.exact.bound_source, BoundSource::SegmentRelaxation);
    // `compare`'s default, the stage relaxation: below the coupled LP here, and held by
    // `gap` with the same bits.
    let stage = elk_app::bound::stage(&inst).unwrap().cycles().unwrap();
    assert!(Cycles(stage) > roof && stage < seg.bound_cycles, "{stage}");
    let staged = elk_app::bound::Beyond {
        segment: None,
        stage: Some(Cycles(stage)),
    };
    let compared = elk_app::compare::compare(&inst, None, true, staged, &mut |_, _, _| {}).unwrap();
    assert_eq!(compared.bound_source, BoundSource::StageRelaxation);
    let held = gap.exact.bounds.stage_cycles.map(|c| c.get().to_bits());
    assert_eq!(held, Some(stage.to_bits()), "{:?}", gap.exact.notes);
}

#[test]
fn gap_reads_the_coupled_bound_from_the_cache_instead_of_solving_it() {
    let inst = whole_model();
    let dir = std::env::temp_dir().join(format!("elk-bound-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = BoundCache::at(&dir);
    let first = coupled_bound(&inst, COUPLED_LIMIT, Some(&cache), &|_| {}).unwrap();
    assert!(!first.cached && first.write_error.is_none());
    let solved = first.bound.unwrap().bound_cycles;
    // The next reader takes the entry as it is: one whose bound no LP gives shows it was
    // read, not solved again. Planted between the roofline and the stage relaxation, it
    // leaves the stage relaxation the bound.
    let roof = elk_solver::bounds::roofline(&inst).best().get();
    let stage = elk_app::bound::stage(&inst).unwrap().cycles().unwrap();
    assert!(roof < stage && stage < solved, "{roof} {stage} {solved}");
    let planted = 0.5 * (roof + stage);
    let file = cache.path(&inst);
    let mut entry: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for key in ["bound_cycles_bits", "coupled_cycles_bits"] {
        entry["bound"][key] = planted.to_bits().into();
    }
    std::fs::write(&file, entry.to_string()).unwrap();
    let again = coupled_bound(&inst, COUPLED_LIMIT, Some(&cache), &|_| {}).unwrap();
    assert!(again.cached);
    assert_eq!(
        again.bound.unwrap().bound_cycles.to_bits(),
        planted.to_bits()
    );
    // `gap` with the cache: the planted bound, from the bound cache.
    let settings = ExactSettings {
        bound_cache: Some(cache),
        ..gap_settings()
    };
    let gap = gap_report(&inst, &settings, false, None, &|_| {}).unwrap();
    assert_eq!(gap.exact.coupled, CoupledStatus::Held);
    let held = gap.exact.bounds.segment_cycles.map(|c| c.get().to_bits());
    assert_eq!(held, Some(planted.to_bits()), "{:?}", gap.exact.notes);
    assert_eq!(gap.exact.bound_source, BoundSource::StageRelaxation);
    assert_eq!(gap.reference_cycles.get().to_bits(), stage.to_bits());
    let phases = gap.exact.phases.unwrap();
    // The stage relaxation, then the coupled LP read from the cache.
    let named: Vec<&str> = phases.iter().map(|p| p.what.as_str()).collect();
    assert_eq!(named[0], "stage relaxation", "{named:?}");
    assert!(
        named[1].ends_with("(read from the bound cache)"),
        "{named:?}"
    );
    let note = format!(
        "coupled by ν (one LP, the prices' constraints kept): {:.4} ms",
        inst.ms(Cycles(planted))
    );
    assert!(
        gap.exact.notes.iter().any(|n| n.text.ends_with(&note)),
        "{:?}",
        gap.exact.notes
    );
    let _ = std::fs::remove_dir_all(&dir);
}
