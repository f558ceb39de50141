//! [`InstanceBuilder`]: the one way to make an [`Instance`] in code that is checked like a
//! file is (`build()` runs [`Instance::check`]), so no literal skips the rules.

use super::{Instance, InstanceOp, LoadOrder, NamedOrder, NocRow, OpOption, INSTANCE_FORMAT};
use crate::error::Result;
use crate::units::{Bytes, Cycles};

/// Builds an [`Instance`]: `Instance::builder(name, sram, clock).op(..).build()`.
#[derive(Clone, Debug)]
pub struct InstanceBuilder {
    inst: Instance,
}

impl InstanceBuilder {
    pub(super) fn new(name: &str, sram: Bytes, clock_hz: f64) -> InstanceBuilder {
        InstanceBuilder {
            inst: Instance {
                format: INSTANCE_FORMAT.into(),
                name: name.into(),
                sram_bytes: sram,
                clock_hz,
                load_order: LoadOrder::Named(NamedOrder::Fixed),
                preload_window: None,
                noc_row: NocRow::Spec,
                ops: Vec::new(),
            },
        }
    }

    /// The load-order policy (default: fixed).
    pub fn load_order(mut self, order: LoadOrder) -> InstanceBuilder {
        self.inst.load_order = order;
        self
    }

    /// The preload window W (default: none).
    pub fn preload_window(mut self, window: Option<u32>) -> InstanceBuilder {
        self.inst.preload_window = window;
        self
    }

    /// Appends an operator with `hbm` cycles of load and its options.
    pub fn op(mut self, name: &str, hbm: Cycles, options: Vec<OpOption>) -> InstanceBuilder {
        self.inst.ops.push(InstanceOp {
            name: name.into(),
            hbm_cycles: hbm,
            options: options.into(),
            flops: None,
            preload_window: None,
            parallel: None,
        });
        self
    }

    /// Appends a whole operator (with FLOPs, say). A parallel set makes the instance
    /// `elk-instance/2`, as instance files with sets are.
    pub fn push(mut self, op: InstanceOp) -> InstanceBuilder {
        if op.parallel.is_some() {
            self.inst.format = super::INSTANCE_FORMAT_PARALLEL.into();
        }
        self.inst.ops.push(op);
        self
    }

    /// The instance, checked as a file would be.
    pub fn build(self) -> Result<Instance> {
        self.inst.check(&self.inst.name)?;
        Ok(self.inst)
    }
}

impl OpOption {
    /// An option: cold and hot bytes per core, execution and NoC cycles, ν.
    pub fn new(cold: u64, hot: u64, exec: f64, comm: f64, noc_per_hbm: f64) -> OpOption {
        OpOption {
            cold: Bytes(cold),
            hot: Bytes(hot),
            exec_cycles: Cycles(exec),
            comm_cycles: Cycles(comm),
            noc_per_hbm,
            groups: None,
            members: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{OpId, Stage};

    #[test]
    fn build_checks_like_a_file() {
        let opt = OpOption::new(1, 2, 10.0, 0.0, 0.0);
        let ok = Instance::builder("t", Bytes(10), 1e9)
            .op("a", Cycles(5.0), vec![opt.clone()])
            .preload_window(Some(1))
            .build()
            .unwrap();
        assert_eq!(ok.window_start(OpId(0)), Stage(0));
        assert!(ok.is_load(OpId(0)));
        let bad = Instance::builder("t", Bytes(10), 1e9)
            .op("a", Cycles(-1.0), vec![opt])
            .build();
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("hbm_cycles must be ≥ 0"));
        let none = Instance::builder("t", Bytes(10), 1e9)
            .op("a", Cycles(1.0), vec![])
            .build();
        assert!(none.unwrap_err().to_string().contains("no options"));
    }

    #[test]
    fn the_window_counts_back_from_the_stage_an_operator_runs_in() {
        let opt = OpOption::new(1, 2, 10.0, 0.0, 0.0);
        let mut b = Instance::builder("w", Bytes(10), 1e9).preload_window(Some(2));
        for name in ["a", "b", "c", "d"] {
            b = b.op(name, Cycles(1.0), vec![opt.clone()]);
        }
        let inst = b.build().unwrap();
        // op 3 runs in stage 4; W = 2 lets its load start at stage 2.
        let starts: Vec<usize> = inst.op_ids().map(|j| inst.window_start(j).0).collect();
        assert_eq!(starts, [0, 0, 1, 2]);
    }
}
