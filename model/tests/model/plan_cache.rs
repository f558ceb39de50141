//! The plan cache: tables read back are the tables built, a second run enumerates nothing, and
//! an entry that cannot be trusted (corrupted, another key, another format) is rebuilt.

use elk_model::chip::ChipSpec;
use elk_model::cost::for_chip;
use elk_model::graph::{Graph, Mode};
use elk_model::plan::{plan_graph, plan_graph_cached, CacheStats, GraphPlans, PlanCache};
use elk_model::zoo::{self, ZooParams};
use std::path::{Path, PathBuf};

fn bert_layer() -> Graph {
    let mut params = ZooParams::new(Mode::Decode, 8, 512);
    params.layers = Some(1);
    zoo::build("bert-base", &params).unwrap()
}

fn scratch(tag: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("plan-cache-test-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn plan(graph: &Graph, chip: &ChipSpec, cache: &PlanCache) -> GraphPlans {
    plan_graph_cached(graph, chip, for_chip(chip).as_ref(), Some(cache)).unwrap()
}

fn tables(p: &GraphPlans) -> Vec<&elk_model::plan::PlanTable> {
    p.unique.iter().map(|(_, _, t)| t).collect()
}

fn entries(cache: &PlanCache) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache.dir().join("plans"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn a_second_run_reads_every_table_back_identical() {
    let graph = bert_layer();
    let chip = ChipSpec::preset("ipu-mk2").unwrap();
    let fresh = plan_graph(&graph, &chip, for_chip(&chip).as_ref()).unwrap();
    let cache = PlanCache::at(scratch("second-run"));
    let first = plan(&graph, &chip, &cache);
    let n = first.unique.len();
    assert!(n > 3, "{n} shapes");
    let built_all = CacheStats {
        built: n,
        ..CacheStats::default()
    };
    assert_eq!(first.cache, built_all);
    let second = plan(&graph, &chip, &cache);
    let read_all = CacheStats {
        hits: n,
        ..CacheStats::default()
    };
    assert_eq!(second.cache, read_all);
    assert_eq!(tables(&second), tables(&fresh));
    assert_eq!(second.shape_of, fresh.shape_of);
    assert_eq!(
        entries(&cache).len(),
        n,
        "one file per shape, no temporary left"
    );
}

#[test]
fn another_chip_is_another_entry() {
    let graph = bert_layer();
    let cache = PlanCache::at(scratch("other-chip"));
    let mk2 = ChipSpec::preset("ipu-mk2").unwrap();
    let first = plan(&graph, &mk2, &cache);
    let mut smaller = mk2.clone();
    smaller.sram_bytes_per_core /= 2;
    let other = plan(&graph, &smaller, &cache);
    assert_eq!(other.cache.hits, 0, "{:?}", other.cache);
    assert_eq!(entries(&cache).len(), 2 * first.unique.len());
}

#[test]
fn an_untrusted_entry_is_rebuilt() {
    let graph = bert_layer();
    let chip = ChipSpec::preset("ipu-mk2").unwrap();
    let cache = PlanCache::at(scratch("untrusted"));
    let fresh = plan(&graph, &chip, &cache);
    let files = entries(&cache);
    let original = std::fs::read_to_string(&files[0]).unwrap();
    let foreign_key = original.replacen("cores ", "cores 1", 1);
    assert_ne!(foreign_key, original);
    let foreign_format = original.replacen("elk-plan-cache/2", "elk-plan-cache/0", 1);
    assert_ne!(foreign_format, original);
    let truncated = original[..original.len() / 2].to_string();
    for (what, text) in [
        ("truncated", truncated),
        ("garbage", "not json".to_string()),
        ("another key", foreign_key),
        ("another format", foreign_format),
    ] {
        std::fs::write(&files[0], text).unwrap();
        let again = plan(&graph, &chip, &cache);
        assert_eq!(again.cache.rejected, 1, "{what}: {:?}", again.cache);
        assert_eq!(again.cache.built, 1, "{what}: {:?}", again.cache);
        assert_eq!(tables(&again), tables(&fresh), "{what}");
        assert_eq!(
            std::fs::read_to_string(&files[0]).unwrap(),
            original,
            "{what}: the entry is rewritten"
        );
    }
}

#[test]
fn an_unwritable_cache_is_reported_and_the_tables_are_still_right() {
    let graph = bert_layer();
    let chip = ChipSpec::preset("ipu-mk2").unwrap();
    let dir = scratch("unwritable");
    // A file where the cache's directory would be: nothing can be created under it.
    std::fs::create_dir_all(dir.parent().unwrap()).unwrap();
    std::fs::write(&dir, "a file, not a directory").unwrap();
    let got = plan(&graph, &chip, &PlanCache::at(&dir));
    let fresh = plan_graph(&graph, &chip, for_chip(&chip).as_ref()).unwrap();
    assert_eq!(tables(&got), tables(&fresh));
    let e = got.cache.write_error.expect("the failed write is reported");
    assert!(e.contains("plan-cache-test-unwritable"), "{e}");
    std::fs::remove_file(&dir).unwrap();
}
