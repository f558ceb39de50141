//! `elk-opt routing import`: the fixture's two formats give one trace that `moe` runs, the
//! summary matches the file counted here, and bad input is refused in one line.

use super::common::{assert_refused, elk_json, elk_ok, fixtures, results, scratch};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `tests/fixtures/routing/<name>`: one synthetic OLMoE-shaped routing (64 experts, top-8,
/// 3 layers, 4 requests × 16 positions) as CSV in token order and as JSON lines by request
/// (its README tells how it was made).
fn fixture(name: &str) -> PathBuf {
    fixtures().join("routing").join(name)
}

/// Runs `routing import FILE --batch 4 -o OUT` and returns OUT's bytes.
fn import_to(file: &Path, out: &Path) -> Vec<u8> {
    let (f, o) = (file.to_str().unwrap(), out.to_str().unwrap());
    elk_ok(&["routing", "import", f, "--batch", "4", "-o", o]);
    std::fs::read(out).unwrap()
}

/// The fixture CSV's rows `(token, layer, experts)`, read here without the importer.
fn csv_rows() -> Vec<(usize, usize, Vec<u32>)> {
    let text = std::fs::read_to_string(fixture("olmoe-synthetic.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let ids = f[2].split(';').map(|e| e.parse().unwrap()).collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap(), ids)
        })
        .collect()
}

#[test]
fn both_formats_give_one_trace_and_moe_routes_its_steps_as_recorded() {
    let dir = scratch("routing-import");
    let (a, b, again) = (dir.join("a.json"), dir.join("b.json"), dir.join("c.json"));
    let from_csv = import_to(&fixture("olmoe-synthetic.csv"), &a);
    assert_eq!(from_csv, import_to(&fixture("olmoe-synthetic.jsonl"), &b));
    assert_eq!(from_csv, import_to(&fixture("olmoe-synthetic.csv"), &again));
    let routing = format!("trace:{}", a.display());
    let r = elk_json(&[
        "moe",
        "--model",
        "olmoe-1b-7b",
        "--num-layers",
        "3",
        "--batch",
        "4",
        "--steps",
        "3",
        "--routing",
        &routing,
        "--json",
    ]);
    // Step s is tokens 4s..4s+4: its experts with tokens, summed over the 3 layers.
    let rows = csv_rows();
    let steps = r["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    for (s, step) in steps.iter().enumerate() {
        let touched: usize = (0..3)
            .map(|l| {
                let used: BTreeSet<u32> = rows
                    .iter()
                    .filter(|(t, layer, _)| t / 4 == s && *layer == l)
                    .flat_map(|(_, _, e)| e.iter().copied())
                    .collect();
                used.len()
            })
            .sum();
        assert_eq!(step["touched_experts"], touched, "step {s}");
    }
}

#[test]
fn the_summary_counts_what_the_file_holds() {
    let f = fixture("olmoe-synthetic.csv");
    let out = elk_ok(&[
        "routing",
        "import",
        f.to_str().unwrap(),
        "--batch",
        "4",
        "--json",
    ]);
    let s = results(&out.stdout);
    assert_eq!(s["tokens"], 64);
    assert_eq!(s["steps"], 16);
    assert_eq!(s["dropped_tokens"], 0);
    assert_eq!(
        (s["experts"].clone(), s["top_k_experts"].clone()),
        (64.into(), 8.into())
    );
    assert_eq!(s["file_layers"], serde_json::json!([0, 1, 2]));
    // Layer 1's most chosen expert and its share of 64 tokens × 8 choices.
    let mut counts = [0u32; 64];
    for (_, _, e) in csv_rows().iter().filter(|(_, l, _)| *l == 1) {
        for &x in e {
            counts[x as usize] += 1;
        }
    }
    let max = *counts.iter().max().unwrap();
    let top = counts.iter().position(|&c| c == max).unwrap();
    assert_eq!(s["layers"][1]["top_experts"][0]["index"], top);
    assert_eq!(
        s["layers"][1]["top_experts"][0]["share_pct"],
        100.0 * f64::from(max) / 512.0
    );
    // Four requests cannot fill a batch of 5: refused, naming why.
    let j = fixture("olmoe-synthetic.jsonl");
    let out = dir_out("five");
    assert_refused(
        &[
            "routing",
            "import",
            j.to_str().unwrap(),
            "--batch",
            "5",
            "-o",
            out.to_str().unwrap(),
        ],
        "olmoe-synthetic.jsonl: 4 sequences, fewer than --batch 5",
        &out,
    );
}

/// A fresh output path in the scratch directory.
fn dir_out(name: &str) -> PathBuf {
    let p = scratch("routing-import").join(format!("{name}.json"));
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn bad_input_is_refused_in_one_line_and_a_good_file_is_left_as_it_was() {
    let dir = scratch("routing-import");
    let bad = dir.join("bad.csv");
    let text = std::fs::read_to_string(fixture("olmoe-synthetic.csv")).unwrap();
    // Line 9 (token 2, layer 1): its last id is not a number.
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let head = lines[8].rsplit_once(';').unwrap().0.to_string();
    lines[8] = format!("{head};x7");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out = dir_out("bad");
    let b = bad.to_str().unwrap();
    assert_refused(
        &[
            "routing",
            "import",
            b,
            "--batch",
            "4",
            "-o",
            out.to_str().unwrap(),
        ],
        "bad.csv:9: column 'experts': 'x7' is not an expert id",
        &out,
    );
    // An expert id at or above --experts, with a good trace already at the output path.
    std::fs::write(&out, "kept").unwrap();
    let f = fixture("olmoe-synthetic.csv");
    let r = super::common::elk(&[
        "routing",
        "import",
        f.to_str().unwrap(),
        "--batch",
        "4",
        "--experts",
        "32",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("olmoe-synthetic.csv:2: experts [28, 0, 45, 18, 59, 9, 47, 7]: expert 45 is not below --experts 32"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "kept");
}
