//! The SMT model's constants and assertions, one method per family, made in one fixed order:
//! one option per operator; per load its start stage and its work per stage (with its NoC
//! work, and the phased row's work beside compute); the memory of every stage; the load
//! order; every stage's duration and the makespan. z3's search depends on the order of the
//! declarations and assertions, so each is made exactly as it always was (as the MILP's
//! `milp/encode/rows.rs`).

use super::{Builder, Decisions};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder, NocRow, OpOption};
use elk_stage::units::OpId;
use z3::ast::{Ast, Bool, Int, Real};

/// Per operator, its terms per stage: (stage, term).
type PerStage<'ctx> = Vec<Vec<(usize, Real<'ctx>)>>;

/// Encodes `inst` into `b`'s solver: the decisions to read the solution back from.
pub(super) fn encode<'ctx>(inst: &Instance, b: &mut Builder<'ctx>) -> Decisions<'ctx> {
    let n = inst.ops.len();
    let mut e = Encoder {
        inst,
        b,
        loads: inst.load_indices(),
        phased: inst.noc_row == NocRow::Phased,
        option: Vec::with_capacity(n),
        start: vec![None; n],
        work: vec![Vec::new(); n],
        noc_work: vec![Vec::new(); n],
        beside: vec![Vec::new(); n],
        beside_noc: vec![Vec::new(); n],
        position: vec![None; n],
    };
    e.options();
    for j in e.loads.clone() {
        e.load_work(j);
    }
    for k in 0..=n {
        e.memory(k);
    }
    e.load_order();
    let makespan = e.durations();
    Decisions {
        option: e.option,
        work: e.work,
        position: e.position,
        makespan,
    }
}

/// The model under construction: the instance, the solver's builder and the constants made
/// so far, which the later families read.
struct Encoder<'a, 'ctx> {
    inst: &'a Instance,
    b: &'a mut Builder<'ctx>,
    loads: Vec<usize>,
    /// The phased NoC row (elk_sim::phased): y ≤ w is the work done beside stage k's compute
    /// phase, ν·y its NoC time.
    phased: bool,
    /// Per operator, its option (an integer).
    option: Vec<Int<'ctx>>,
    /// Per load, its start stage (an integer).
    start: Vec<Option<Int<'ctx>>>,
    /// Per load, its work w per stage, and ν·w.
    work: PerStage<'ctx>,
    noc_work: PerStage<'ctx>,
    /// Per load, the phased row's y per stage, and ν·y.
    beside: PerStage<'ctx>,
    beside_noc: PerStage<'ctx>,
    /// Per load, its position in the order (under a displacement bound).
    position: Vec<Option<Int<'ctx>>>,
}

impl<'ctx> Encoder<'_, 'ctx> {
    /// The first stage load `j` may work in.
    fn lo(&self, j: usize) -> usize {
        self.inst.window_start(OpId(j)).index()
    }

    /// `f` of each of operator `i`'s options.
    fn column(&self, i: usize, f: &dyn Fn(&OpOption) -> f64) -> Vec<f64> {
        self.inst.ops[i].options.iter().map(f).collect()
    }

    /// One option per operator: an integer in 0..options.
    fn options(&mut self) {
        for (i, op) in self.inst.ops.iter().enumerate() {
            let b = &mut *self.b;
            let o = b.new_int(format!("opt_{i}"));
            let range = Bool::and(b.ctx, &[&o.ge(&b.int(0)), &o.lt(&b.int(op.options.len()))]);
            b.assert(&range);
            self.option.push(o);
        }
    }

    /// Load `j`: its start stage in its window, its work per stage from the start on (and
    /// ν·w, linear in every branch of the option; with the phased row, y ≤ w and ν·y), the
    /// work adding up to its H.
    fn load_work(&mut self, j: usize) {
        let (lo, nu) = (self.lo(j), self.column(j, &|o| o.noc_per_hbm));
        let b = &mut *self.b;
        let st = b.new_int(format!("start_{j}"));
        let range = Bool::and(b.ctx, &[&st.ge(&b.int(lo)), &st.le(&b.int(j))]);
        b.assert(&range);
        for k in lo..=j {
            let w = b.new_real(format!("w_{j}_{k}"));
            b.assert(&w.ge(&b.real(0.0)));
            // No work before the start.
            let early = st.gt(&b.int(k));
            b.assert(&early.implies(&w._eq(&b.real(0.0))));
            // ν·w: linear in every branch of the option.
            let nw = b.new_real(format!("nocw_{j}_{k}"));
            // ν(option)·w is linear in each branch of the option: one implication per option.
            for (o, &v) in nu.iter().enumerate() {
                let chosen = self.option[j]._eq(&b.int(o));
                let scaled = Real::mul(b.ctx, &[&b.real(v), &w]);
                b.assert(&chosen.implies(&nw._eq(&scaled)));
            }
            if self.phased && k >= 1 {
                let y = b.new_real(format!("y_{j}_{k}"));
                b.assert(&y.ge(&b.real(0.0)));
                b.assert(&y.le(&w));
                let ny = b.new_real(format!("nocy_{j}_{k}"));
                for (o, &v) in nu.iter().enumerate() {
                    let chosen = self.option[j]._eq(&b.int(o));
                    let scaled = Real::mul(b.ctx, &[&b.real(v), &y]);
                    b.assert(&chosen.implies(&ny._eq(&scaled)));
                }
                self.beside[j].push((k, y));
                self.beside_noc[j].push((k, ny));
            }
            self.work[j].push((k, w));
            self.noc_work[j].push((k, nw));
        }
        let all: Vec<Real> = self.work[j].iter().map(|(_, w)| w.clone()).collect();
        let total = b.sum(&all);
        b.assert(&total._eq(&b.real(self.inst.ops[j].hbm_cycles.get())));
        self.start[j] = Some(st);
    }

    /// Stage `k`'s memory: the hot bytes of the operator it runs and the cold bytes of every
    /// load resident by then (started, not yet run) fit the SRAM.
    fn memory(&mut self, k: usize) {
        let mut used = Vec::new();
        if k >= 1 {
            let hot = self.column(k - 1, &|o| o.hot.get() as f64);
            used.push(self.b.select(&self.option[k - 1], &hot));
        }
        for &j in self.loads.iter().filter(|&&j| j >= k) {
            if let Some(st) = &self.start[j] {
                let cold = self.column(j, &|o| o.cold.get() as f64);
                let resident = st.le(&self.b.int(k));
                let b = &*self.b;
                used.push(resident.ite(&b.select(&self.option[j], &cold), &b.real(0.0)));
            }
        }
        let total = self.b.sum(&used);
        let sram = self.b.real(self.inst.sram_bytes.get() as f64);
        self.b.assert(&total.le(&sram));
    }

    /// "a before `later`" (when `when` holds) ⇒ a has no work in stages after `later`'s start.
    fn precedes(&mut self, a: usize, later: usize, when: &Bool<'ctx>) {
        if let Some(st) = self.start[later].clone() {
            for (k, w) in self.work[a].clone() {
                let b = &mut *self.b;
                let after = st.lt(&b.int(k));
                let cond = Bool::and(b.ctx, &[when, &after]);
                b.assert(&cond.implies(&w._eq(&b.real(0.0))));
            }
        }
    }

    /// The load order: fixed (the instance's), free (a Boolean per pair), or positions
    /// within a displacement of the instance's order.
    fn load_order(&mut self) {
        let loads = self.loads.clone();
        match self.inst.load_order {
            LoadOrder::Named(NamedOrder::Fixed) => {
                let yes = Bool::from_bool(self.b.ctx, true);
                for (ra, &a) in loads.iter().enumerate() {
                    for &c in &loads[ra + 1..] {
                        self.precedes(a, c, &yes);
                    }
                }
            }
            LoadOrder::Named(NamedOrder::Free) => {
                for (ra, &a) in loads.iter().enumerate() {
                    for &c in &loads[ra + 1..] {
                        let first = self.b.new_bool(format!("before_{a}_{c}"));
                        self.precedes(a, c, &first);
                        self.precedes(c, a, &first.not());
                    }
                }
            }
            LoadOrder::Displacement { max_displacement } => {
                self.displacement(&loads, max_displacement as i64);
            }
        }
    }

    /// Each load's position within `d` of its rank, all distinct; a lower position is earlier.
    fn displacement(&mut self, loads: &[usize], d: i64) {
        let b = &mut *self.b;
        for (rank, &j) in loads.iter().enumerate() {
            let p = b.new_int(format!("pos_{j}"));
            let r = rank as i64;
            let lo_pos = Int::from_i64(b.ctx, (r - d).max(0));
            let hi_pos = Int::from_i64(b.ctx, (r + d).min(loads.len() as i64 - 1));
            let range = Bool::and(b.ctx, &[&p.ge(&lo_pos), &p.le(&hi_pos)]);
            b.assert(&range);
            self.position[j] = Some(p);
        }
        let all: Vec<&Int> = loads
            .iter()
            .filter_map(|&j| self.position[j].as_ref())
            .collect();
        if all.len() > 1 {
            let distinct = Int::distinct(b.ctx, &all);
            b.assert(&distinct);
        }
        for &a in loads {
            for &c in loads {
                if a != c {
                    if let (Some(pa), Some(pc)) = (&self.position[a], &self.position[c]) {
                        let first = pa.lt(pc);
                        self.precedes(a, c, &first);
                    }
                }
            }
        }
    }

    /// `per`'s terms in stage `k`, load by load.
    fn in_stage(&self, per: &PerStage<'ctx>, k: usize) -> Vec<Real<'ctx>> {
        self.loads
            .iter()
            .flat_map(|&j| {
                per[j]
                    .iter()
                    .filter(|(s, _)| *s == k)
                    .map(|(_, w)| w.clone())
            })
            .collect()
    }

    /// Every stage's duration (at least its HBM work, its NoC time and its operator's exec,
    /// and with the phased row, exec + the NoC time not beside compute); their sum, the
    /// makespan.
    fn durations(&mut self) -> Real<'ctx> {
        let n = self.inst.ops.len();
        let mut durations = Vec::with_capacity(n + 1);
        for k in 0..=n {
            let d = self.b.new_real(format!("d_{k}"));
            let hbm = self.b.sum(&self.in_stage(&self.work, k));
            let mut noc_terms = self.in_stage(&self.noc_work, k);
            if k >= 1 {
                let option = &self.option[k - 1];
                let exec = self
                    .b
                    .select(option, &self.column(k - 1, &|o| o.exec_cycles.get()));
                self.b.assert(&d.ge(&exec));
                noc_terms.push(
                    self.b
                        .select(option, &self.column(k - 1, &|o| o.comm_cycles.get())),
                );
                if self.phased {
                    let comp = self.b.select(
                        option,
                        &self.column(k - 1, &|o| (o.exec_cycles - o.comm_cycles).get().max(0.0)),
                    );
                    let y = self.b.sum(&self.in_stage(&self.beside, k));
                    let ny = self.b.sum(&self.in_stage(&self.beside_noc, k));
                    self.b.assert(&y.le(&comp));
                    self.b.assert(&ny.le(&comp));
                    // d ≥ exec + Σ ν·w − Σ ν·y.
                    let left = self.b.sum(&self.in_stage(&self.noc_work, k));
                    let row = Real::add(self.b.ctx, &[&exec, &left]);
                    let row = Real::sub(self.b.ctx, &[&row, &ny]);
                    self.b.assert(&d.ge(&row));
                }
            }
            let noc = self.b.sum(&noc_terms);
            self.b.assert(&d.ge(&noc));
            self.b.assert(&d.ge(&hbm));
            let zero = self.b.real(0.0);
            self.b.assert(&d.ge(&zero));
            durations.push(d);
        }
        self.b.sum(&durations)
    }
}
