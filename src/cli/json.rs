//! The one shape of every `--json` output (docs/json.md): the envelope that names the schema,
//! the tool and the effective inputs around a subcommand's results.

/// The version of every `--json` schema (bumped when a key changes meaning or goes).
pub const JSON_SCHEMA_VERSION: u32 = 1;

/// The one shape of every `--json` output (docs/json.md): which schema the results follow,
/// the tool that wrote them, the effective inputs, and the results.
#[derive(serde::Serialize)]
struct Envelope<'a, C, R> {
    /// `elk-opt/<subcommand>/<version>`, e.g. `elk-opt/compare/1`.
    schema: String,
    tool_version: &'static str,
    config: &'a C,
    /// Left out only in [`envelope_head`].
    #[serde(skip_serializing_if = "Option::is_none")]
    results: Option<&'a R>,
}

impl<'a, C, R> Envelope<'a, C, R> {
    /// The envelope of schema `elk-opt/<name>/1`, written by this version.
    fn new(name: &str, config: &'a C, results: Option<&'a R>) -> Self {
        Envelope {
            schema: format!("elk-opt/{name}/{JSON_SCHEMA_VERSION}"),
            tool_version: env!("CARGO_PKG_VERSION"),
            config,
            results,
        }
    }
}

/// Prints `results` with the inputs that produced them (`config`) as pretty JSON on stdout,
/// in the envelope of schema `elk-opt/<name>/1`.
pub fn print_json<C: serde::Serialize, R: serde::Serialize>(
    name: &str,
    config: &C,
    results: &R,
) -> anyhow::Result<()> {
    let envelope = Envelope::new(name, config, Some(results));
    println!("{}", serde_json::to_string_pretty(&envelope)?);
    Ok(())
}

/// The envelope of schema `elk-opt/<name>/1` without its results, as pretty JSON: what an
/// `--html` page records of the command that wrote it (the page is the results).
pub fn envelope_head<C: serde::Serialize>(name: &str, config: &C) -> anyhow::Result<String> {
    let envelope = Envelope::<C, ()>::new(name, config, None);
    Ok(serde_json::to_string_pretty(&envelope)?)
}

/// The `config` of a command with no inputs (`models list`, `chips list`).
pub fn no_config() -> serde_json::Map<String, serde_json::Value> {
    serde_json::Map::new()
}

/// A value as the chip TOML and `--json` spell it (`all-to-all`, `edges`), for text output.
pub fn value_name(v: impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}
