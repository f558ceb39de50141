//! The importer end to end on small texts: steps, layers, experts and every refusal.

use super::*;

fn opts(batch: u64) -> ImportOptions {
    ImportOptions {
        batch,
        experts: None,
    }
}

/// CSV rows `token,layer,a b` for tokens `0..n` and layers `layers`, token t of layer l
/// choosing experts (t + l) mod 8 and (t + l + 1) mod 8.
fn csv_rows(n: u64, layers: &[u64]) -> String {
    let mut s = String::from("token,layer,experts\n");
    for t in 0..n {
        for &l in layers {
            s.push_str(&format!("{t},{l},{} {}\n", (t + l) % 8, (t + l + 1) % 8));
        }
    }
    s
}

fn err(text: &str, options: &ImportOptions) -> String {
    import("t.csv", text, options).unwrap_err().to_string()
}

#[test]
fn tokens_in_order_make_steps_of_the_batch_and_a_ragged_last_step_is_dropped() {
    let i = import("t.csv", &csv_rows(10, &[0, 1]), &opts(4)).unwrap();
    assert_eq!(
        (i.trace.steps(), i.trace.layers(), i.trace.tokens()),
        (2, 2, 4)
    );
    assert_eq!(i.summary.dropped_tokens, 2);
    assert_eq!(i.summary.steps_from, "token order");
    // Step 1 is tokens 4..8; layer 1 of token 5 chose 6 and 7.
    assert_eq!(i.trace.step(1)[1][1], [6, 7]);
    assert_eq!((i.summary.experts, i.summary.top_k_experts), (8, 2));
    assert_eq!(
        err(&csv_rows(1, &[0]), &opts(2)),
        "t.csv: 1 token, fewer than --batch 2: no whole step"
    );
    assert_eq!(
        err(&csv_rows(1, &[0]), &opts(0)),
        "t.csv: --batch 0: a step needs at least one token"
    );
    assert_eq!(
        err(&csv_rows(3, &[0]), &opts(4)),
        "t.csv: 3 tokens, fewer than --batch 4: no whole step"
    );
}

#[test]
fn sequences_are_taken_a_batch_at_a_time_and_stepped_together() {
    // Sequences b (3 tokens), a (2), c (4), rows shuffled: b and a make 2 steps, c is alone.
    let mut s = String::from("request,position,layer,experts\n");
    for (q, t) in [
        ("a", 1),
        ("b", 2),
        ("b", 0),
        ("c", 0),
        ("a", 0),
        ("b", 1),
        ("c", 1),
        ("c", 2),
        ("c", 3),
    ] {
        s.push_str(&format!("{q},{t},0,{t};{}\n", if q == "a" { 7 } else { 6 }));
    }
    let i = import("t.csv", &s, &opts(2)).unwrap();
    assert_eq!(i.summary.steps_from, "sequences");
    assert_eq!((i.trace.steps(), i.summary.dropped_tokens), (2, 5));
    // First appearance orders the sequences: a, then b.
    assert_eq!(i.trace.step(0)[0], [vec![0, 7], vec![0, 6]]);
    assert_eq!(i.trace.step(1)[0], [vec![1, 7], vec![1, 6]]);
    let one = "sequence,token,layer,experts\nx,0,0,1 2\nx,1,0,1 2\n";
    assert_eq!(
        err(one, &opts(2)),
        "t.csv: 1 sequence, fewer than --batch 2: a step is one token of each of B sequences"
    );
}

#[test]
fn numbered_steps_are_kept_and_one_of_another_size_is_refused() {
    let s = "step,token,layer,experts\n1,0,0,1 2\n1,1,0,3 4\n0,5,0,5 6\n0,4,0,0 7\n";
    let i = import("t.csv", s, &opts(2)).unwrap();
    assert_eq!(i.trace.step(0)[0], [vec![0, 7], vec![5, 6]]);
    assert_eq!(i.summary.steps_from, "step column");
    assert_eq!(
        err(&format!("{s}2,0,0,1 2\n"), &opts(2)),
        "t.csv:6: step 2 has 1 tokens, --batch is 2"
    );
    assert_eq!(
        err("step,token,layer,experts\n0,0,0,1 2\n,1,0,1 2\n", &opts(1)),
        "t.csv:3: column 'step': '' is not a whole number ≥ 0"
    );
}

#[test]
fn file_layers_map_to_moe_layers_in_order_and_a_gap_is_reported() {
    let i = import("t.csv", &csv_rows(4, &[5, 2, 3]), &opts(4)).unwrap();
    assert_eq!(i.summary.file_layers, [2, 3, 5]);
    assert_eq!(i.summary.missing_layers, [4]);
    // MoE layer 2 is file layer 5: token 0 chose 5 and 6.
    assert_eq!(i.trace.step(0)[2][0], [5, 6]);
    // A stray id costs no memory: the gap lists its first 1,000 ids.
    let far = "token,layer,experts\n0,0,1 2\n0,4000000000,1 4000000000\n";
    let i = import("t.csv", far, &opts(1)).unwrap();
    assert_eq!(i.summary.missing_layers.len(), 1000);
    assert_eq!(i.summary.layers[1].top_experts[1].index, 4_000_000_000);
    let mut missing = csv_rows(2, &[0, 1]);
    missing.push_str("2,0,1 2\n3,0,1 2\n3,1,1 2\n");
    assert_eq!(
        err(&missing, &opts(2)),
        "t.csv:6: token 2 has no row for layer 1 (other tokens have one)"
    );
    let twice = format!("{}0,1,3 4\n", csv_rows(2, &[0, 1]));
    assert_eq!(
        err(&twice, &opts(2)),
        "t.csv:6: token 0 layer 1 again (first on line 3)"
    );
}

#[test]
fn experts_and_k_come_from_the_file_unless_a_flag_gives_the_experts() {
    let text = csv_rows(4, &[0]);
    let flagged = ImportOptions {
        batch: 4,
        experts: Some(16),
    };
    assert_eq!(
        import("t.csv", &text, &flagged).unwrap().trace.experts(),
        16
    );
    let few = ImportOptions {
        batch: 4,
        experts: Some(4),
    };
    assert_eq!(
        err(&text, &few),
        "t.csv:5: experts [3, 4]: expert 4 is not below --experts 4"
    );
    let k3 = format!("{text}4,0,1 2 3\n");
    assert_eq!(
        err(&k3, &opts(1)),
        "t.csv:6: experts [1, 2, 3]: 3 ids, line 2 has 2: k must be the same everywhere"
    );
    assert_eq!(
        err("token,layer,experts\n0,0,2 2\n", &opts(1)),
        "t.csv:2: experts [2, 2]: an expert twice"
    );
    assert_eq!(
        err("token,layer,experts\n0,0,-1 -1\n", &opts(1)),
        "t.csv: no routed token (no row with expert ids)"
    );
}

#[test]
fn csv_and_jsonl_of_one_routing_give_the_same_bytes_and_the_file_reads_back() {
    let csv = csv_rows(8, &[0, 1]);
    let mut jsonl = String::new();
    for t in 0..8u64 {
        let l = |l: u64| format!("[{}, {}]", (t + l) % 8, (t + l + 1) % 8);
        jsonl.push_str(&format!(
            "{{\"token\": {t}, \"experts\": [{}, {}]}}\n",
            l(0),
            l(1)
        ));
    }
    let a = import("t.csv", &csv, &opts(4)).unwrap();
    let b = import("t.csv", &jsonl, &opts(4)).unwrap();
    assert_eq!(a.trace.to_json(), b.trace.to_json());
    assert_eq!((a.summary.format, b.summary.format), ("csv", "jsonl"));
    let back = RoutingTrace::from_json("t.csv", &a.trace.to_json()).unwrap();
    assert_eq!(back, a.trace);
    // Layer 0: tokens 0..8 chose (t, t+1) mod 8, so every expert twice in 16 choices.
    assert_eq!(a.summary.layers[0].used_experts, 8);
    assert_eq!(a.summary.layers[0].top_experts[0].index, 0);
    assert_eq!(
        a.summary.layers[0].top_experts[0].share_pct,
        100.0 * 2.0 / 16.0
    );
}

#[test]
fn rows_that_disagree_on_steps_or_sequences_are_refused() {
    let s = "{\"step\": 0, \"token\": 0, \"layer\": 0, \"experts\": [1, 2]}\n\
             {\"token\": 1, \"layer\": 0, \"experts\": [1, 2]}\n";
    assert_eq!(
        import("t.jsonl", s, &opts(2)).unwrap_err().to_string(),
        "t.jsonl:2: no step, line 1 has one: give every row one or none"
    );
}
