//! `--dtype` through the CLI: weights at 1 byte halve a decode instance's weight traffic, and
//! a dtype the chip's cost model does not price, or a form the parser does not know, is one
//! line and exit 2 with no file written.

use super::common::{assert_refused, elk_ok, ops_sum, scratch};

fn hbm_cycles(path: &std::path::Path) -> f64 {
    ops_sum(path, "hbm_cycles")
}

#[test]
fn weights_at_one_byte_halve_the_weight_traffic_and_unpriced_dtypes_are_refused() {
    let dir = scratch("dtypes");
    let p = |x: &std::path::Path| x.to_str().unwrap().to_string();
    let build = |dtype: &str| {
        let out = dir.join(format!("{dtype}.json"));
        elk_ok(&[
            "instance",
            "--model",
            "llama2-7b",
            "--num-layers",
            "1",
            "--batch",
            "1",
            "--kv",
            "16",
            "--chip",
            "sn40l-like",
            "--dtype",
            dtype,
            "-o",
            &p(&out),
        ]);
        out
    };
    // Batch 1, KV 16: the traffic is almost all weights, so w8a16 is about half of fp16.
    let (fp16, w8) = (hbm_cycles(&build("fp16")), hbm_cycles(&build("w8a16")));
    let ratio = w8 / fp16;
    assert!(
        (0.49..0.52).contains(&ratio),
        "w8a16 / fp16 HBM cycles = {ratio}"
    );
    for (args, says) in [
        (vec!["--dtype", "int8"], "dtype int8 not modelled"),
        (vec!["--dtype", "w4a16"], "--dtype 'w4a16'"),
    ] {
        let out = dir.join("refused.json");
        let mut all = vec![
            "instance",
            "--model",
            "llama2-7b",
            "--num-layers",
            "1",
            "-o",
        ];
        let o = p(&out);
        all.push(&o);
        all.extend(args.iter().copied());
        assert_refused(&all, says, &out);
    }
}
