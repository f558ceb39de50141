//! Bad input: one line on stderr naming what and where, exit code 2.

use super::common::{elk, elk_command, hidden_layers_graph, scratch};

fn bad(args: &[&str]) -> String {
    let out = elk(args);
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn unknown_model_and_chip_list_the_known_names() {
    assert!(bad(&["models", "show", "gpt-5"]).contains("unknown model 'gpt-5'; known: llama2-7b"));
    assert!(bad(&["chips", "show", "tpu"]).contains("unknown chip 'tpu'"));
}

#[test]
fn bad_chip_toml_names_the_key() {
    let f = scratch("errors").join("chip.toml");
    let text = include_str!("../../model/chips/ipu-mk2.toml").replace("cores = 1472", "cores = -3");
    std::fs::write(&f, text).unwrap();
    let err = bad(&["chips", "show", f.to_str().unwrap()]);
    assert!(
        err.contains("chip.toml: line ") && err.contains("key 'cores'"),
        "{err}"
    );
}

#[test]
fn corrupted_graph_names_the_entry() {
    let f = scratch("errors").join("g.json");
    std::fs::write(&f, r#"[[5, " - einstein_v2(\" output0[N] = input0[N] + ; \", input_dict={ \"input0\" : { \"dtype\" : \"float32\", \"shape\" : [4]} })", "Frob", [[1, 0]]]]"#).unwrap();
    let err = bad(&["import", f.to_str().unwrap()]);
    assert!(
        err.contains("g.json: entry id 5 (Frob): unknown op type"),
        "{err}"
    );
    assert!(
        bad(&["models", "show", "vit-h-14", "--mode", "decode"]).contains("decode does not apply")
    );
}

#[test]
fn a_layer_count_the_graph_does_not_have_names_the_file_and_the_count() {
    let g = hidden_layers_graph(&scratch("layer-count"));
    let g = g.to_str().unwrap();
    let line = format!(
        "error: {g}: cannot find 3 identical layers among its 10 operators (detection \
         without a count finds 1 × 10 operators)\n"
    );
    assert_eq!(bad(&["import", g, "--num-layers", "3"]), line);
    assert_eq!(
        bad(&["plans", "--import", g, "--num-layers", "3"]),
        line,
        "every command that takes --import"
    );
}

/// `elk-opt … | head`: a reader that stops early ends the process quietly (141, as SIGPIPE
/// ends `cat`), never with a panic and a backtrace.
#[test]
fn a_closed_pipe_is_no_panic() {
    use std::io::Read;
    let mut child = elk_command()
        // --all: ≈ 370 kB, far more than a pipe buffer holds, so the writer must meet the
        // closed end (without it the 6 kB table can be written before the reader leaves).
        .args(["models", "show", "llama2-70b", "--all"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is dropped here: the next writes fail with a broken pipe.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "{stderr}");
}
