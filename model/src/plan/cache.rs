//! The plan cache: plan tables kept on disk, so a second run on the same model does not
//! enumerate again (enumeration is most of the time of every command on a large model).
//!
//! One file per (operator shape, chip), `<dir>/plans/<hash of key>.json`, holding its whole
//! key and the table. The key is everything a table depends on: the cache format, a
//! fingerprint of the planner's source code (so a changed enumeration or cost model never
//! reads tables the old code made), the operator's [`OpShape`] (dims, tensors, dtype, rules),
//! the cores, the SRAM per core and the cost model with its parameters. An entry is used only
//! when its stored key equals the wanted key byte for byte; a missing, unreadable, corrupted
//! or foreign entry is rebuilt and overwritten, never trusted. Writes go to a temporary file
//! renamed into place, so a reader (another shard of a sweep, say) sees a whole entry or none.
//! Floats are written shortest-round-trip, so a table read back is identical to the one built.

use super::shape::OpShape;
use super::table::PlanTable;
use super::CostModel;
use elk_stage::hash::Fnv1a64;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The entry format; bump it when the file layout (format, key, table) changes.
pub const CACHE_FORMAT: &str = "elk-plan-cache/2";

/// The source files whose code decides a table. A file added to planning or to a cost model
/// belongs here; the cache then ignores entries made before the change.
const PLANNER_SOURCES: [&str; 11] = [
    include_str!("../plan.rs"),
    include_str!("cost_model.rs"),
    include_str!("geometry.rs"),
    include_str!("rules.rs"),
    include_str!("shape.rs"),
    include_str!("spatial.rs"),
    include_str!("table.rs"),
    include_str!("temporal.rs"),
    include_str!("../cost.rs"),
    include_str!("../cost/ipu_mk2.rs"),
    include_str!("../cost/roofline.rs"),
];

/// `fnv1a64:…` of the planner's and cost models' source files (listed in this module).
pub fn planner_fingerprint() -> &'static str {
    static FINGERPRINT: OnceLock<String> = OnceLock::new();
    FINGERPRINT.get_or_init(|| {
        let mut h = Fnv1a64::default();
        for s in PLANNER_SOURCES {
            h.update(s.as_bytes());
            h.update(&[0]);
        }
        h.finish()
    })
}

/// A directory of cached plan tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanCache {
    dir: PathBuf,
}

/// One cache file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    format: String,
    key: String,
    /// `None`: no plan of the shape fits the chip.
    table: Option<PlanTable>,
}

/// What a lookup found.
pub(crate) enum Lookup {
    /// A valid entry: the table (or `None`: no plan fits).
    Hit(Option<PlanTable>),
    /// No entry.
    Miss,
    /// An entry that cannot be trusted (unreadable, corrupted, another key or format).
    Rejected,
}

/// How the tables of one [`plan_graph_cached`](super::plan_graph_cached) call were obtained.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Unique shapes read from the cache.
    pub hits: usize,
    /// Unique shapes enumerated (no cache, no entry, or a rejected one).
    pub built: usize,
    /// Entries found but rejected (corrupted or foreign) and rebuilt; counted in `built` too.
    pub rejected: usize,
    /// The first error writing an entry, if any (the tables are still right: only the cache
    /// was not updated).
    pub write_error: Option<String>,
}

impl PlanCache {
    /// A cache in `dir` (created on the first write).
    pub fn at(dir: impl Into<PathBuf>) -> PlanCache {
        PlanCache { dir: dir.into() }
    }

    /// `$XDG_CACHE_HOME/elk-opt`, else `$HOME/.cache/elk-opt`; `None` when neither variable is
    /// set to an absolute path.
    pub fn default_location() -> Option<PlanCache> {
        let absolute = |v: &str| {
            std::env::var_os(v)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        absolute("XDG_CACHE_HOME")
            .or_else(|| absolute("HOME").map(|h| h.join(".cache")))
            .map(|base| PlanCache::at(base.join("elk-opt")))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Everything a table of `shape` depends on, as one string.
    pub(crate) fn key(shape: &OpShape, cores: u64, sram: u64, model: &dyn CostModel) -> String {
        format!(
            "{CACHE_FORMAT}\nplanner {}\nshape {shape:?}\ncores {cores}\nsram_bytes_per_core {sram}\ncost_model {model:?}",
            planner_fingerprint()
        )
    }

    fn path_of(&self, key: &str) -> PathBuf {
        let mut h = Fnv1a64::default();
        h.update(key.as_bytes());
        let hash = h.finish();
        let hex = hash.trim_start_matches(elk_stage::hash::PREFIX);
        self.dir.join("plans").join(format!("{hex}.json"))
    }

    /// The entry for `key`.
    pub(crate) fn load(&self, key: &str) -> Lookup {
        let text = match std::fs::read_to_string(self.path_of(key)) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Miss,
            Err(_) => return Lookup::Rejected,
        };
        match serde_json::from_str::<Entry>(&text) {
            Ok(e) if e.format == CACHE_FORMAT && e.key == key => Lookup::Hit(e.table),
            _ => Lookup::Rejected,
        }
    }

    /// Writes the entry for `key` atomically (temporary file, then rename).
    pub(crate) fn store(&self, key: &str, table: Option<&PlanTable>) -> Result<(), String> {
        static SEQUENCE: AtomicUsize = AtomicUsize::new(0);
        let path = self.path_of(key);
        let dir = path.parent().unwrap_or(&self.dir);
        let fail = |what: &str, e: std::io::Error| format!("{what} {}: {e}", dir.display());
        std::fs::create_dir_all(dir).map_err(|e| fail("cannot create", e))?;
        let entry = Entry {
            format: CACHE_FORMAT.into(),
            key: key.into(),
            table: table.cloned(),
        };
        let text = serde_json::to_string(&entry).map_err(|e| format!("cannot encode: {e}"))?;
        let tmp = dir.join(format!(
            ".{}.tmp-{}-{}",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
            std::process::id(),
            SEQUENCE.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&tmp, text).map_err(|e| fail("cannot write in", e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            fail("cannot write in", e)
        })
    }
}
