//! A flag means one thing, and a flag that would be ignored is refused: exit 2 and one line
//! naming the flag and why (issue 16 item 8).

use super::common::{bert_instance, elk, scratch};

/// Runs `args`, asserting exit 2 and a one-line error; returns the line.
fn refused(args: &[&str]) -> String {
    let out = elk(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    err.trim_end().to_string()
}

#[test]
fn flags_an_instance_file_fixes_are_refused_with_it() {
    let inst = bert_instance();
    let inst = inst.to_str().unwrap();
    for cmd in ["compare", "solve", "gap"] {
        for (flag, value) in [
            ("--batch", "64"),
            ("--kv", "512"),
            ("--mode", "prefill"),
            ("--num-layers", "2"),
            ("--chip", "ipu-mk2"),
            ("--layers", "0..1"),
            ("--hbm-tbps", "8"),
        ] {
            let mut args = vec![cmd, "--instance", inst, flag, value];
            if cmd == "solve" {
                args.extend(["--method", "basic"]);
            }
            let err = refused(&args);
            assert!(
                err.starts_with(&format!(
                    "error: {flag} cannot be used with --instance: the instance file already \
                     fixes"
                )),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn exact_solver_flags_are_refused_with_a_heuristic() {
    let inst = bert_instance();
    for (flag, value) in [("--time-limit", Some("5")), ("--no-warm-start", None)] {
        let mut args = vec![
            "solve",
            "--method",
            "basic",
            "--instance",
            inst.to_str().unwrap(),
            flag,
        ];
        args.extend(value);
        let err = refused(&args);
        assert_eq!(
            err,
            format!(
                "error: {flag} cannot be used with --method: {flag} is a flag of the exact \
                 solver (`solve --exact`)"
            )
        );
    }
}

#[test]
fn a_layer_count_is_num_layers_everywhere() {
    let err = refused(&["models", "show", "bert-base", "--layers", "2"]);
    assert!(err.contains("--num-layers N"), "{err}");
    let out = elk(&["models", "show", "bert-base", "--num-layers", "2"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("+ 2 x "));
}

#[test]
fn the_output_flag_is_dash_o_everywhere() {
    let d = scratch("refused");
    let out = d.join("x").to_str().unwrap().to_string();
    for args in [
        vec!["sweep", "fig17", "--out", &out],
        vec!["report", "r.jsonl", "--out", &out],
        vec!["report", "merge", "a.jsonl", "--out", &out],
        vec!["study", "gap", "--out", &out],
    ] {
        let err = refused(&args);
        assert!(err.contains("-o/--output"), "{args:?}: {err}");
        assert!(!d.join("x").exists(), "{args:?}: wrote");
    }
}

#[test]
fn flags_that_would_be_ignored_are_refused() {
    let inst = bert_instance();
    let inst = inst.to_str().unwrap();
    let sim = ["simulate", "--instance", inst, "--schedule", inst];
    // The detailed simulator's flags without --detailed.
    for extra in [
        &["--topology", "mesh"][..],
        &["--compare"],
        &["--width", "4"],
    ] {
        let out = elk(&[&sim[..], extra].concat());
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--detailed"));
    }
    // --compat is the importer's.
    let err = refused(&["plans", "--model", "bert-base", "--compat", "reference"]);
    assert!(err.contains("applies to --import FILE"), "{err}");
    // --all is for the table; --json has every operator.
    let err = refused(&["models", "show", "bert-base", "--all", "--json"]);
    assert!(
        err.contains("--json prints every operator already"),
        "{err}"
    );
}
