//! Grids take model files and Hugging Face config.json files, their relative paths read from
//! the grid file's directory as chip paths are; an MoE cell with `bound = true` has a
//! certified bound below every policy.

use super::{dir, header, texts};
use elk_app::grid::Grid;
use elk_app::sweep::{read_results, run_sweep};
use elk_reports::report::report;

/// Mixtral-8x7B's model file cut to `layers` layers and renamed (no published counts: a
/// user's file that states none is compared with nothing).
fn mixtral_with(layers: usize) -> String {
    include_str!("../../../model/zoo/mixtral-8x7b.toml")
        .lines()
        .filter(|l| !l.starts_with("published_"))
        .map(|l| match l {
            "name = \"mixtral-8x7b\"" => format!("name = \"mixtral-{layers}-layers\""),
            "layers = 32" => format!("layers = {layers}"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes `text` as `grids/g.toml` under `d` and reads it back as a grid file.
fn grid_in(d: &std::path::Path, text: &str) -> (std::path::PathBuf, Grid) {
    let grid_file = d.join("grids/g.toml");
    std::fs::write(&grid_file, text).unwrap();
    let grid = Grid::from_file(&grid_file).unwrap();
    (grid_file, grid)
}

/// A directory with `models/mixtral-2.toml`, `hf/Mistral-7B-v0.1/config.json` and
/// `grids/`, where grids name the files relative to themselves.
fn files(name: &str) -> std::path::PathBuf {
    let d = dir(name);
    for sub in ["models", "grids", "hf/Mistral-7B-v0.1"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    std::fs::write(d.join("models/mixtral-2.toml"), mixtral_with(2)).unwrap();
    std::fs::write(
        d.join("hf/Mistral-7B-v0.1/config.json"),
        include_str!("../../../model/tests/fixtures/hf/Mistral-7B-v0.1/config.json"),
    )
    .unwrap();
    d
}

#[test]
fn model_files_and_configs_resolve_against_the_grid_file() {
    let d = files("model-files");
    let text = "figure = \"bars\"\nmodels = [\"../models/mixtral-2.toml\", \"../hf/Mistral-7B-v0.1/config.json\", \"bert-base\"]\nbatches = [2]\nkvs = [64]\nchips = [\"ipu-mk2\"]\nmethods = [\"basic\"]\n";
    // The test's current directory is the crate, where ../models/mixtral-2.toml does not
    // exist: only the grid's directory finds it.
    let (_, grid) = grid_in(&d, text);
    assert_eq!(
        grid.model_path("../models/mixtral-2.toml"),
        d.join("grids/../models/mixtral-2.toml")
            .display()
            .to_string()
    );
    assert_eq!(grid.model_path("bert-base"), "bert-base");
    let models = grid.load_models().unwrap().models;
    assert_eq!(models["../models/mixtral-2.toml"].layers(), 2);
    assert_eq!(models["../hf/Mistral-7B-v0.1/config.json"].layers(), 32);
    assert_eq!(models["bert-base"].name, "bert-base");
    // The same text given directly reads from the current directory: the files are not there.
    let err = Grid::from_toml("g.toml", text).unwrap_err().to_string();
    assert!(
        err.starts_with("g.toml: key 'models': entry '../models/mixtral-2.toml': "),
        "{err}"
    );

    // A sweep runs the file's graph: two layers of Mixtral, fewer operators than the zoo's 32.
    let one = "figure = \"bars\"\nmodels = [\"../models/mixtral-2.toml\"]\nbatches = [2]\nkvs = [64]\nchips = [\"ipu-mk2\"]\nmethods = [\"basic\"]\n";
    let (_, grid) = grid_in(&d, one);
    let out = d.join("r.jsonl");
    let summary = run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    assert_eq!(summary.failed, 0);
    let r = &read_results(&out).unwrap()[&0];
    assert_eq!(r.cell.model, "../models/mixtral-2.toml");
    assert!(
        r.error.is_none() && r.methods[0].makespan_ms.is_some(),
        "{r:?}"
    );
    let zoo = elk_app::cell::cell_instance(
        &elk_app::grid::Cell {
            model: "mixtral-8x7b".into(),
            ..r.cell.clone()
        },
        None,
    )
    .unwrap();
    assert!(
        r.ops > 0 && 4 * r.ops < zoo.ops.len(),
        "{} vs {}",
        r.ops,
        zoo.ops.len()
    );
}

#[test]
fn a_bad_model_file_fails_the_grid_with_its_entry_named() {
    let d = files("bad-model-files");
    let grid_file = d.join("grids/g.toml");
    std::fs::write(
        d.join("models/broken.toml"),
        mixtral_with(2).replace("heads = 32", "heads = 0"),
    )
    .unwrap();
    let base = "figure = \"bars\"\nbatches = [2]\nkvs = [64]\nmethods = [\"basic\"]\n";
    for (entry, says) in [
        (
            "../models/missing.toml",
            "(relative model paths are read from the grid file's directory)",
        ),
        ("../models/broken.toml", "heads"),
        ("gpt-5", "unknown model 'gpt-5'"),
    ] {
        std::fs::write(&grid_file, format!("models = [{entry:?}]\n{base}")).unwrap();
        let err = Grid::from_file(&grid_file).unwrap_err().to_string();
        let head = format!("{}: key 'models': entry '{entry}': ", grid_file.display());
        assert!(err.starts_with(&head) && err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // A dense model file with routings: it has no experts.
    let mistral = "models = [\"../hf/Mistral-7B-v0.1/config.json\"]\nroutings = [\"uniform\"]\n";
    std::fs::write(&grid_file, format!("{mistral}{base}")).unwrap();
    let err = Grid::from_file(&grid_file).unwrap_err().to_string();
    assert!(err.contains("has no experts"), "{err}");
}

#[test]
fn an_moe_cell_with_bound_true_has_a_certified_bound_below_every_policy() {
    let d = files("moe-bound");
    let text = "figure = \"vs-hbm\"\nmodels = [\"../models/mixtral-2.toml\"]\nbatches = [4]\nkvs = [128]\nchips = [\"ipu-mk2\"]\nhbm_tbps = [2.0, 4.0]\nroutings = [\"uniform\"]\nmoe_steps = 4\nbound = true\n";
    let (_, grid) = grid_in(&d, text);
    let out = d.join("r.jsonl");
    run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    let results: Vec<_> = read_results(&out).unwrap().into_values().collect();
    assert_eq!(results.len(), 2);
    for r in &results {
        assert!(r.error.is_none(), "{:?}", r.error);
        let b = r
            .bound
            .as_ref()
            .expect("bound = true gives an MoE cell its bound");
        // Sampled routing: every layer has its own token counts, the segment relaxation does
        // not apply, the bound is the roofline's.
        assert_eq!(b.source, "roofline");
        let (lo, hi) = (b.min_ms.unwrap(), b.max_ms.unwrap());
        assert!(lo <= b.bound_ms && b.bound_ms <= hi, "{b:?}");
        assert_eq!(r.methods.len(), 4, "three policies and the oracle");
        for m in &r.methods {
            let t = m.makespan_ms.unwrap();
            assert!(
                b.bound_ms <= t,
                "{}: bound {} above {t}",
                m.method,
                b.bound_ms
            );
            let gap = m.gap_le_pct.unwrap();
            assert!((gap - 100.0 * (t - b.bound_ms) / b.bound_ms).abs() < 1e-9);
            assert!(lo <= m.p50_ms.unwrap(), "{m:?}");
        }
    }
    // The report's gaps table and gaps.csv carry it, with the steps' range.
    let files = texts(report(&results, "moe", &header()).unwrap());
    let md = &files[0].1;
    assert!(md.contains("## Certified gaps"), "{md}");
    let b = results[0].bound.as_ref().unwrap();
    let row = format!(
        " | {:.4} ({:.4}–{:.4}) | roofline |",
        b.bound_ms,
        b.min_ms.unwrap(),
        b.max_ms.unwrap()
    );
    assert!(md.contains(&row), "{row}\n{md}");
    let csv = &files.iter().find(|f| f.0 == "gaps.csv").unwrap().1;
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",gap_le_pct,bound_min_ms,bound_max_ms"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 2 * 4);
}
