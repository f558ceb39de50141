//! ONNX models (docs/onnx.md): `import FILE.onnx` prints the importer's table, `--onnx`
//! works wherever `--import` does, and bad files get one line and exit 2.

use super::common::{elk, elk_ok, envelope, scratch};
use std::path::PathBuf;

fn onnx(file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/onnx")
        .join(file)
        .display()
        .to_string()
}

fn stdout(args: &[&str]) -> String {
    String::from_utf8(elk_ok(args).stdout).unwrap()
}

/// The totals lines of a graph table (`parameters:`, `weight bytes:`, `KV-cache bytes:`).
fn totals(table: &str) -> Vec<String> {
    table
        .lines()
        .filter(|l| {
            ["parameters:", "weight bytes:", "KV-cache bytes:"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn import_prints_the_table_of_an_onnx_file_and_its_zoo_twins_totals() {
    let f = onnx("tiny-llama-decode.onnx");
    let args = ["import", f.as_str(), "--batch", "2", "--kv", "64"];
    let text = stdout(&args);
    assert!(
        text.starts_with("tiny-llama-decode decode b2 kv64: 101 operators\n"),
        "{text}"
    );
    assert!(
        text.contains("layers: 1 prologue + 2 x 46 + 8 epilogue operators"),
        "{text}"
    );
    assert_eq!(text, stdout(&args), "the same file twice, byte for byte");
    let twin = onnx("tiny-llama.toml");
    let zoo = stdout(&[
        "models",
        "show",
        twin.as_str(),
        "--batch",
        "2",
        "--kv",
        "64",
    ]);
    assert_eq!(totals(&text), totals(&zoo));
    assert_eq!(totals(&text).len(), 3, "{text}");
}

#[test]
fn grouped_query_tied_and_sdpa_exports_print_their_zoo_twins_totals() {
    for (file, twin) in [
        ("tiny-llama-gqa-decode.onnx", "tiny-llama-gqa.toml"),
        ("tiny-gpt2-tied-decode.onnx", "tiny-gpt2-tied.toml"),
        ("tiny-llama3-sdpa-decode.onnx", "tiny-llama3-sdpa.toml"),
    ] {
        let (f, twin) = (onnx(file), onnx(twin));
        let shape = ["--batch", "4", "--kv", "100"];
        let text = stdout(&[&["import", f.as_str()][..], &shape].concat());
        let zoo = stdout(&[&["models", "show", twin.as_str()][..], &shape].concat());
        assert_eq!(totals(&text), totals(&zoo), "{file}");
        assert_eq!(totals(&text).len(), 3, "{text}");
    }
}

#[test]
fn onnx_is_accepted_wherever_import_is_whatever_the_file_is_called() {
    let f = onnx("tiny-gpt2-decode.onnx");
    let common = ["--batch", "2", "--kv", "64"];
    let with = |flag: &str, file: &str, extra: &[&str]| {
        let mut a = vec!["plans", flag, file];
        a.extend(common);
        a.extend(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| stdout(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let by_onnx = run(with("--onnx", &f, &[]));
    assert!(
        by_onnx.starts_with("tiny-gpt2-decode decode b2 kv64 on "),
        "{by_onnx}"
    );
    assert_eq!(by_onnx, run(with("--import", &f, &[])));
    // --onnx reads ONNX by content: a file not named .onnx still imports; --import takes
    // it for the reference JSON format.
    let d = scratch("onnx");
    let renamed = d.join("gpt2.bin");
    std::fs::copy(&f, &renamed).unwrap();
    let renamed = renamed.display().to_string();
    let j = envelope(
        &elk_ok(
            &with("--onnx", &renamed, &["--json"])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )
        .stdout,
    );
    assert_eq!(j["config"]["onnx"], renamed.as_str());
    assert_eq!(j["results"]["graph"], "gpt2 decode b2 kv64");
    let out = elk(&["plans", "--import", &renamed, "--batch", "2"]);
    assert_eq!(out.status.code(), Some(2));
    // --onnx and --model are one graph source: both is a usage error.
    let out = elk(&["plans", "--onnx", &f, "--model", "llama2-7b"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_vision_model_has_no_sequence_to_bind() {
    let f = onnx("tiny-vit.onnx");
    let text = stdout(&["import", f.as_str(), "--mode", "prefill", "--batch", "4"]);
    assert!(
        text.starts_with("tiny-vit prefill b4: 114 operators\n"),
        "{text}"
    );
    assert!(text.contains("2 x "), "two layers: {text}");
}

#[test]
fn bad_onnx_files_get_one_line_and_exit_2() {
    let d = scratch("onnx-bad");
    let whole = std::fs::read(onnx("tiny-llama-prefill.onnx")).unwrap();
    let cut = d.join("cut.onnx");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let cut = cut.display().to_string();
    let (bad_op, no_shape, prefill, expanded) = (
        onnx("unsupported-op.onnx"),
        onnx("missing-shape.onnx"),
        onnx("tiny-llama-prefill.onnx"),
        onnx("expanded-kv.onnx"),
    );
    let cases: [(Vec<&str>, String); 6] = [
        (
            vec!["import", &bad_op, "--mode", "prefill"],
            format!("error: {bad_op}: node '/head/Hardmax' (Hardmax): unsupported op type"),
        ),
        (
            vec!["import", &no_shape, "--mode", "prefill"],
            format!(
                "error: {no_shape}: input 'x' has no shape for dimension 1 (neither a number \
                 nor a name)"
            ),
        ),
        (
            // Grouped-query attention's repeat_kv imports; a cache broadcast on two axes
            // does not.
            vec!["import", &expanded, "--batch", "2", "--kv", "64"],
            format!(
                "error: {expanded}: node '/attn/Expand' (Expand): a broadcast of the KV cache \
                 other than repeat_kv's (one head axis repeated, read by the attention MatMul) \
                 is not supported"
            ),
        ),
        (
            vec!["import", &cut, "--mode", "prefill"],
            // … of N bytes at byte 22 with M left: the graph field's length, checked
            // against what is left before anything is read or allocated.
            format!("error: {cut}: not a valid ONNX model: truncated: a field of "),
        ),
        (
            vec!["import", &prefill],
            format!(
                "error: {prefill}: no past key/value inputs: a prefill graph; import it with \
                 --mode prefill"
            ),
        ),
        (
            vec![
                "import",
                &prefill,
                "--mode",
                "prefill",
                "--compat",
                "reference",
            ],
            "error: --compat reference applies to the reference JSON format, not to ONNX"
                .to_string(),
        ),
    ];
    for (args, expected) in cases {
        let out = elk(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        // The whole line, but for the truncated file, whose numbers follow the fixture.
        let line = err.trim_end();
        assert!(line.starts_with(&expected), "{args:?}: {line}");
        if !expected.ends_with("a field of ") {
            assert_eq!(line, expected, "{args:?}");
        }
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn an_onnx_forward_pass_gets_its_training_step_and_a_decode_graph_is_no_batch() {
    let f = onnx("tiny-llama-prefill.onnx");
    let flops = |mode: &str| {
        let text = stdout(&[
            "import",
            f.as_str(),
            "--mode",
            mode,
            "--batch",
            "2",
            "--kv",
            "64",
        ]);
        let line = text
            .lines()
            .find(|l| l.starts_with("FLOPs:"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string();
        (line, text.contains("optimizer bytes:"))
    };
    let (forward, fw_state) = flops("forward-batch");
    let (step, step_state) = flops("training");
    assert!(!fw_state && step_state, "only the step has Adam state");
    // The step's contractions are three times the forward's (docs/training.md): its total
    // FLOPs lie near 3× (elementwise gradients add a little).
    let mflop = |l: &str| -> f64 { l.split_whitespace().nth(1).unwrap().parse().unwrap() };
    let ratio = mflop(&step) / mflop(&forward);
    assert!((2.8..3.3).contains(&ratio), "{step} vs {forward}: {ratio}");
    // A decode export (past key/value inputs) is not a forward batch.
    let d = onnx("tiny-llama-decode.onnx");
    let out = elk(&["import", d.as_str(), "--mode", "forward-batch"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("a decode graph") && err.lines().count() == 1,
        "{err}"
    );
}
