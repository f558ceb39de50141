//! The load-order rows: which load finishes its work before which starts (fixed, free or
//! displacement-bounded orders, via the precedence binaries `p[a][b]`), and for a displacement
//! bound, transitivity and each load's position within D of its rank.

use super::rows::Rows;
use super::Lin;
use elk_stage::instance::{LoadOrder, NamedOrder};
use good_lp::Expression;

impl Rows<'_> {
    /// `p[a][b]` for a < b by operator index: a column, or 1 when the pair is forced.
    fn p_lin(&self, a: usize, b: usize) -> Lin {
        match self.at.p[a][b] {
            Some(c) => Lin::Var(c),
            None => Lin::Const(1.0),
        }
    }

    /// "a before b when `cond` = 1": a has no work after b's start.
    fn before(&mut self, a: usize, b: usize, cond: Expression, cond_const: Option<f64>) {
        if cond_const == Some(0.0) || self.past_deadline() {
            return;
        }
        let h = self.inst.ops[a].hbm_cycles.get();
        for k in self.at.lo[a].max(1)..=a {
            let sb = self.started(b, k - 1);
            if matches!(sb, Lin::Const(c) if c == 0.0) {
                continue;
            }
            // w[a][k] ≤ H_a·(1 − s[b][k−1]) + H_a·(1 − cond)
            let row = self
                .stage_work(a, k)
                .leq(h * (2.0 - sb.expr() - cond.clone()));
            self.add(row);
        }
    }

    /// Every pair of loads in order: consecutive loads for a fixed order, both directions
    /// (by p) or the forced one for the others.
    pub(super) fn load_order(&mut self) {
        let at = self.at;
        let loads = &at.loads;
        match self.inst.load_order {
            LoadOrder::Named(NamedOrder::Fixed) => {
                for pair in loads.windows(2) {
                    self.before(pair[0], pair[1], Expression::from(1.0), Some(1.0));
                }
            }
            _ => {
                for (ra, &a) in loads.iter().enumerate() {
                    for &b in &loads[ra + 1..] {
                        match at.p[a][b] {
                            Some(c) => {
                                self.before(a, b, Expression::from(c.var), None);
                                self.before(b, a, 1.0 - Expression::from(c.var), None);
                            }
                            None => self.before(a, b, Expression::from(1.0), Some(1.0)),
                        }
                    }
                }
            }
        }
    }

    /// A displacement bound D: p transitive over every triple with a column, and each
    /// load's position (the loads before it) within D of its rank in execution order.
    pub(super) fn displacement(&mut self) {
        let LoadOrder::Displacement { max_displacement } = self.inst.load_order else {
            return;
        };
        let dmax = max_displacement as f64;
        let (at, loads) = (self.at, &self.at.loads);
        let any_var = |ls: &[Lin]| ls.iter().any(|l| matches!(l, Lin::Var(_)));
        for (ra, &a) in loads.iter().enumerate() {
            for (rb, &b) in loads.iter().enumerate().skip(ra + 1) {
                for &c in &loads[rb + 1..] {
                    let (ab, bc, ac) = (self.p_lin(a, b), self.p_lin(b, c), self.p_lin(a, c));
                    if any_var(&[ab, bc, ac]) {
                        self.add((ab.expr() + bc.expr() - ac.expr()).leq(1.0));
                        self.add((ac.expr() - ab.expr() - bc.expr()).leq(0.0));
                    }
                }
            }
            // Position of a: loads before it.
            let mut pos = Expression::from(0.0);
            let mut has_var = false;
            for &o in loads {
                if o < a {
                    pos += self.p_lin(o, a).expr();
                    has_var |= at.p[o][a].is_some();
                } else if o > a {
                    pos += 1.0 - self.p_lin(a, o).expr();
                    has_var |= at.p[a][o].is_some();
                }
            }
            if has_var {
                self.add(pos.clone().leq(ra as f64 + dmax));
                self.add(pos.geq(ra as f64 - dmax));
            }
        }
    }
}
