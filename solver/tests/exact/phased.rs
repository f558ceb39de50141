//! The phased NoC row (`"noc_row": "phased"`, elk_sim::phased): the MILP (both
//! linearisations) and the SMT model encode it exactly — their objectives equal the
//! simulator's makespan and they agree on the optimum — the optimum is never below SPEC
//! §4's (the phased row only adds), no heuristic beats it, the re-timing LP encodes the row
//! too, and the row bites.

use crate::solve_exact;
use elk_heuristics::{Basic, ElkDyn, ElkFull, StaticSplit};
use elk_solver::milp::Linearisation;
use elk_solver::{retime, Backend, ExactOptions, ExactReport};
use elk_stage::corpus::{random_instance, RandomSpec};
use elk_stage::instance::{Instance, NocRow};
use elk_stage::method::{Budget, Method, Verdict};
use elk_stage::units::Cycles;

fn close(a: Cycles, b: Cycles) -> bool {
    (a - b).abs().get() <= 1e-6 * a.get().abs().max(b.get().abs()).max(1.0)
}

fn solve(inst: &Instance, backend: Backend, linearisation: Linearisation) -> ExactReport {
    let opts = ExactOptions {
        backend,
        linearisation,
        ..ExactOptions::default()
    };
    solve_exact(inst, &opts).unwrap_or_else(|e| panic!("{}: {e}", inst.name))
}

#[test]
fn exact_backends_encode_the_phased_row_and_agree_with_the_simulator() {
    let (mut solved, mut bites, mut retimed) = (0, 0, 0);
    for seed in 0..40 {
        let spec = random_instance(seed, &RandomSpec::tiny(3 + (seed % 2) as usize, 3));
        let phased = Instance {
            noc_row: NocRow::Phased,
            ..spec.clone()
        };
        let runs = [
            solve(&phased, Backend::Milp, Linearisation::BigM),
            solve(&phased, Backend::Milp, Linearisation::PerOption),
            solve(&phased, Backend::Smt, Linearisation::BigM),
        ];
        let name = &phased.name;
        for r in &runs {
            assert_eq!(r.status, runs[0].status, "{name}: {:?}", r.backend);
            assert!(
                r.notes
                    .iter()
                    .all(|n| n.about != elk_solver::NoteAbout::Bug),
                "{name}: {:?}",
                r.notes
            );
        }
        if runs[0].status != Verdict::Optimal {
            assert_eq!(runs[0].status, Verdict::Infeasible, "{name}");
            continue;
        }
        let t = runs[0].makespan_cycles.unwrap();
        for r in &runs {
            let (obj, sim) = (r.objective_cycles.unwrap(), r.makespan_cycles.unwrap());
            assert!(
                close(obj, sim),
                "{name}: {:?} objective {obj} vs simulator {sim}",
                r.backend
            );
            assert!(close(sim, t), "{name}: {:?} {sim} vs MILP {t}", r.backend);
            let s = r.schedule.as_ref().unwrap();
            assert!(
                close(elk_sim::evaluate(&phased, s).makespan_cycles, sim),
                "{name}"
            );
        }
        let under_spec = solve(&spec, Backend::Milp, Linearisation::BigM)
            .makespan_cycles
            .unwrap();
        assert!(
            t.get() >= under_spec.get() * (1.0 - 1e-9),
            "{name}: {t} < SPEC {under_spec}"
        );
        if t.get() > under_spec.get() * (1.0 + 1e-6) {
            bites += 1;
        }
        let (dyn_, full) = (ElkDyn::default(), ElkFull::default());
        let methods: [&dyn Method; 4] = [&Basic, &StaticSplit, &dyn_, &full];
        for m in methods {
            if let Some(s) = m
                .schedule(&phased, &Budget::default())
                .unwrap()
                .outcome
                .schedule()
            {
                if elk_sim::validate(&phased, s).is_empty() {
                    let h = elk_sim::evaluate(&phased, s).makespan_cycles;
                    assert!(
                        h.get() >= t.get() * (1.0 - 1e-6),
                        "{name}: {} {h} < {t}",
                        m.name()
                    );
                    // The re-timing LP has the phased row too: its optimum is what the
                    // simulator makes of its schedule, and never below the optimum.
                    let r = retime(&phased, s, "retimed", None).unwrap();
                    assert!(
                        r.notes.iter().all(|n| !n.starts_with("BUG")),
                        "{name}: {:?}",
                        r.notes
                    );
                    let obj = r.objective_cycles.unwrap();
                    assert!(
                        obj.get() >= t.get() * (1.0 - 1e-6),
                        "{name}: retime {obj} < {t}"
                    );
                    if r.improved() {
                        assert!(
                            close(r.makespan_cycles, obj),
                            "{name}: retime {obj} vs {}",
                            r.makespan_cycles
                        );
                    } else {
                        assert!(
                            obj.get() >= h.get() * (1.0 - 1e-6),
                            "{name}: LP {obj} below the kept {h}"
                        );
                    }
                    retimed += 1;
                }
            }
        }
        solved += 1;
    }
    eprintln!(
        "phased row: {solved} instances solved, the optimum raised on {bites}, {retimed} re-timed"
    );
    assert!(retimed >= 40, "only {retimed} heuristic schedules re-timed");
    assert!(solved >= 25, "only {solved} feasible instances");
    assert!(
        bites >= 3,
        "the phased row raised the optimum on only {bites} of {solved}"
    );
}
