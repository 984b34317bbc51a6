//! The settings as a table: each variable [`Config`](super::Config) reads,
//! whether its value is a secret, how it is read (its parser) and the field
//! of `Config` it sets. `Config::read` (`read.rs`) reads its own settings
//! through these rows; a row of a group (`Group("traces")`) is read by the
//! type in that file under `config/`. A test keeps the table and
//! `settings.md` in step: every documented variable is a row, and every row
//! is documented.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Duration;

use super::{
    BadVar, DEFAULT_AGENT_MAX_RETRIES, DEFAULT_AGENT_TIMEOUT, DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_RETRIEVER_TIMEOUT, DEFAULT_SERVICE_TIMEOUT, DEFAULT_SPILL_BYTES, MAX_AGENT_RETRIES,
    MAX_CONCURRENCY, PriceTable, Secret, parse_bytes, parse_secs, read_setting, shown_size,
};
use crate::model::CassetteMode;
use crate::stats::OnInconclusive;

/// One setting: its variable, whether its value is a secret (never shown)
/// and how it is read (the field of `Config` it sets is in [`NAMES`]).
pub(super) struct Setting<P> {
    pub(super) name: &'static str,
    pub(super) secret: bool,
    pub(super) parse: P,
}

// How each kind of value is read: `Setting<Kind>::read`. A value that does
// not read is pushed onto `bad` (what was expected, the value as written)
// and read as the default.

fn push(bad: &mut Vec<BadVar>, var: &'static str, value: String, expected: String) {
    bad.push(BadVar {
        var,
        value,
        expected,
    });
}

/// Text kept as written (a URL, a name).
pub(super) struct Text;

impl Setting<Text> {
    pub(super) fn read(&self, value: Option<String>, _: &mut Vec<BadVar>) -> Option<String> {
        value
    }
}

/// Text, else a default (a model).
pub(super) struct TextOr(&'static str);

impl Setting<TextOr> {
    pub(super) fn read(&self, value: Option<String>, _: &mut Vec<BadVar>) -> String {
        value.unwrap_or_else(|| self.parse.0.to_string())
    }
}

/// A key, held as a [`Secret`].
pub(super) struct Key;

impl Setting<Key> {
    pub(super) fn read(&self, value: Option<String>, _: &mut Vec<BadVar>) -> Option<Secret> {
        value.map(Secret::new)
    }
}

/// A file or directory.
pub(super) struct FilePath;

impl Setting<FilePath> {
    pub(super) fn read(&self, value: Option<String>, _: &mut Vec<BadVar>) -> Option<PathBuf> {
        value.filter(|p| !p.trim().is_empty()).map(PathBuf::from)
    }
}

/// A comma-separated list, blanks dropped.
pub(super) struct List;

impl Setting<List> {
    pub(super) fn read(&self, value: Option<String>, _: &mut Vec<BadVar>) -> Vec<String> {
        value
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Seconds from 0.001 to 10⁹, else the default (`None`: none when not
/// set). `None` for a bad value.
pub(super) struct Secs(Option<Duration>);

impl Setting<Secs> {
    pub(super) fn read(&self, value: Option<String>, bad: &mut Vec<BadVar>) -> Option<Duration> {
        let name = self.name;
        let Some(v) = value else {
            return self.parse.0;
        };
        let parsed = parse_secs(&v);
        if parsed.is_none() {
            let expected = "a number of seconds between 0.001 and 10^9".into();
            push(bad, name, v, expected);
        }
        parsed
    }
}

/// Calls in flight at once, 1 to [`MAX_CONCURRENCY`] (`None`: not set, or
/// bad).
pub(super) struct InFlight;

impl Setting<InFlight> {
    pub(super) fn read(&self, value: Option<String>, bad: &mut Vec<BadVar>) -> Option<usize> {
        let name = self.name;
        let v = value?;
        match v.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_CONCURRENCY).contains(&n) => Some(n),
            _ => {
                let expected = format!("a whole number from 1 to {MAX_CONCURRENCY}");
                push(bad, name, v, expected);
                None
            }
        }
    }
}

/// A size in bytes (`16MiB`, `512KiB`, `1048576`) within a range, else the
/// default.
pub(super) struct Size {
    range: RangeInclusive<u64>,
    default: u64,
}

impl Setting<Size> {
    pub(super) fn read(&self, value: Option<String>, bad: &mut Vec<BadVar>) -> u64 {
        let name = self.name;
        let Some(v) = value else {
            return self.parse.default;
        };
        match parse_bytes(&v).filter(|n| self.parse.range.contains(n)) {
            Some(n) => n,
            None => {
                let expected = format!(
                    "a size from {} to {}, e.g. 16MiB, 512KiB or 1048576",
                    shown_size(*self.parse.range.start()),
                    shown_size(*self.parse.range.end())
                );
                push(bad, name, v, expected);
                self.parse.default
            }
        }
    }
}

/// On or off (`1`/`0`, `true`/`false`, `yes`/`no`), else the default.
pub(super) struct Switch(bool);

impl Setting<Switch> {
    pub(super) fn read(&self, value: Option<String>, bad: &mut Vec<BadVar>) -> bool {
        let name = self.name;
        let Some(v) = value else {
            return self.parse.0;
        };
        match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => {
                let expected = "on or off (1/0, true/false, yes/no)".into();
                push(bad, name, v, expected);
                self.parse.0
            }
        }
    }
}

/// Retries of an agent call, 0 to [`MAX_AGENT_RETRIES`].
pub(super) struct Retries;

impl Setting<Retries> {
    pub(super) fn read(&self, value: Option<String>, bad: &mut Vec<BadVar>) -> u32 {
        let name = self.name;
        let Some(v) = value else {
            return DEFAULT_AGENT_MAX_RETRIES;
        };
        match v.trim().parse::<u32>() {
            Ok(n) if n <= MAX_AGENT_RETRIES => n,
            _ => {
                let expected = format!("a whole number from 0 to {MAX_AGENT_RETRIES}");
                push(bad, name, v, expected);
                DEFAULT_AGENT_MAX_RETRIES
            }
        }
    }
}

/// `record` or `replay` (the default).
pub(super) struct Cassette;

impl Setting<Cassette> {
    pub(super) fn read(&self, value: Option<String>, bad: &mut Vec<BadVar>) -> CassetteMode {
        let name = self.name;
        let Some(v) = value else {
            return CassetteMode::Replay;
        };
        match v.trim().to_ascii_lowercase().as_str() {
            "record" => CassetteMode::Record,
            "replay" | "" => CassetteMode::Replay,
            _ => {
                push(bad, name, v, "`record` or `replay`".into());
                CassetteMode::Replay
            }
        }
    }
}

/// `estimate`, `fail` or `pass`.
pub(super) struct Inconclusive;

impl Setting<Inconclusive> {
    pub(super) fn read(
        &self,
        value: Option<String>,
        bad: &mut Vec<BadVar>,
    ) -> Option<OnInconclusive> {
        let name = self.name;
        let v = value?;
        let parsed = OnInconclusive::parse(&v);
        if parsed.is_none() {
            let expected = "estimate (the point estimate decides), fail or pass".into();
            push(bad, name, v, expected);
        }
        parsed
    }
}

/// A JSON price table's file, read now (so a bad one is reported with the
/// other settings).
pub(super) struct Prices;

impl Setting<Prices> {
    pub(super) fn read(&self, value: Option<String>, bad: &mut Vec<BadVar>) -> Option<PriceTable> {
        let name = self.name;
        let path = value?;
        match read_setting(&path) {
            Ok(table) => Some(table),
            Err(reason) => {
                let expected = format!(
                    "a JSON price table ({{\"model\": {{\"input\": USD per million tokens, \"output\": ...}}}}): {reason}"
                );
                push(bad, name, path, expected);
                None
            }
        }
    }
}

/// The table: `ROW: parser type = parser, "VARIABLE" (secret) -> "field"`
/// for the settings `Config::read` reads itself, then `"VARIABLE" =>
/// "group" -> "field"` for those a group of settings reads (the type in
/// `config/<group>.rs`).
macro_rules! table {
    (
        own { $($row:ident: $ty:ty = $parse:expr, $name:literal $(($secret:ident))? -> $field:literal;)* }
        groups { $($gname:literal => $group:literal -> $gfield:literal;)* }
    ) => {
        $(
            pub(super) const $row: Setting<$ty> = Setting {
                name: $name,
                secret: table!(@secret $($secret)?),
                parse: $parse,
            };
        )*
        /// Every row `Config::read` reads itself: (variable, field).
        #[cfg_attr(not(test), allow(dead_code))]
        pub(super) const NAMES: &[(&str, &str)] = &[$(($name, $field)),*];
        /// Every row a group reads: (variable, group, field).
        #[cfg_attr(not(test), allow(dead_code))]
        pub(super) const GROUPED: &[(&str, &str, &str)] = &[$(($gname, $group, $gfield)),*];
    };
    (@secret secret) => { true };
    (@secret) => { false };
}

table! {
    own {
        AGENT_URL: Text = Text, "EVAL_AGENT_URL" -> "agent_url";
        AGENT_TIMEOUT: Secs = Secs(Some(DEFAULT_AGENT_TIMEOUT)), "EVAL_AGENT_TIMEOUT_SECS" -> "agent_timeout";
        AGENT_API_KEY: Key = Key, "EVAL_AGENT_API_KEY" (secret) -> "agent_api_key";
        AGENT_MAX_RETRIES: Retries = Retries, "EVAL_AGENT_MAX_RETRIES" -> "agent_max_retries";
        AGENT_ADAPTIVE: Switch = Switch(true), "EVAL_AGENT_ADAPTIVE" -> "agent_adaptive";
        SAMPLE_TIMEOUT: Secs = Secs(None), "EVAL_SAMPLE_TIMEOUT_SECS" -> "sample_timeout";
        CONCURRENCY: InFlight = InFlight, "EVAL_CONCURRENCY" -> "concurrency";
        JUDGE_CONCURRENCY: InFlight = InFlight, "EVAL_JUDGE_CONCURRENCY" -> "judge_concurrency";
        AGENT_CASSETTE: FilePath = FilePath, "EVAL_AGENT_CASSETTE" -> "agent_cassette";
        AGENT_CASSETTE_MODE: Cassette = Cassette, "EVAL_AGENT_CASSETTE_MODE" -> "agent_cassette_mode";
        JUNIT: FilePath = FilePath, "EVAL_JUNIT" -> "junit";
        HTML: Switch = Switch(true), "EVAL_HTML" -> "html";
        LANGSMITH_API_KEY: Key = Key, "LANGSMITH_API_KEY" (secret) -> "langsmith_api_key";
        LANGSMITH_ENDPOINT: Text = Text, "LANGSMITH_ENDPOINT" -> "langsmith_endpoint";
        DELETE_SCOPES: List = List, "EVAL_DELETE_SCOPES" -> "delete_scopes";
        INCONCLUSIVE: Inconclusive = Inconclusive, "EVAL_INCONCLUSIVE" -> "inconclusive";
        RESULTS_DIR: FilePath = FilePath, "EVAL_RESULTS_DIR" -> "results_dir";
        CACHE: Switch = Switch(true), "EVAL_CACHE" -> "cache";
        CACHE_DIR: FilePath = FilePath, "EVAL_CACHE_DIR" -> "cache_dir";
    OPENAI_API_KEY: Text = Text, "OPENAI_API_KEY" (secret) -> "judge";
        JUDGE_URL: Text = Text, "EVAL_JUDGE_URL" -> "judge";
        JUDGE_MODEL: TextOr = TextOr("gpt-4o-mini"), "EVAL_JUDGE_MODEL" -> "judge";
        JUDGE_API_KEY: Text = Text, "EVAL_JUDGE_API_KEY" (secret) -> "judge";
        JUDGE_TIMEOUT: Secs = Secs(Some(DEFAULT_SERVICE_TIMEOUT)), "EVAL_JUDGE_TIMEOUT_SECS" -> "judge";
        EMBED_URL: Text = Text, "EVAL_EMBED_URL" -> "embed";
        EMBED_MODEL: TextOr = TextOr("text-embedding-3-small"), "EVAL_EMBED_MODEL" -> "embed";
        EMBED_API_KEY: Text = Text, "EVAL_EMBED_API_KEY" (secret) -> "embed";
        EMBED_TIMEOUT: Secs = Secs(Some(DEFAULT_SERVICE_TIMEOUT)), "EVAL_EMBED_TIMEOUT_SECS" -> "embed";
        RETRIEVER_URL: Text = Text, "EVAL_RETRIEVER_URL" -> "retriever_url";
        RETRIEVER_TIMEOUT: Secs = Secs(Some(DEFAULT_RETRIEVER_TIMEOUT)), "EVAL_RETRIEVER_TIMEOUT_SECS" -> "retriever_timeout";
        ACCEPT_BASELINE: Switch = Switch(false), "EVAL_ACCEPT_BASELINE" -> "accept_baseline";
        MAX_RESPONSE_BYTES: Size = Size { range: 1 << 10..=4 << 30, default: DEFAULT_MAX_RESPONSE_BYTES }, "EVAL_MAX_RESPONSE_BYTES" -> "max_response_bytes";
        MAX_DATASET_BYTES: Size = Size { range: 1..=u64::MAX, default: eval_datasets::files::DEFAULT_MAX_DATASET_BYTES }, "EVAL_MAX_DATASET_BYTES" -> "max_dataset_bytes";
        SPILL_BYTES: Size = Size { range: 1..=u64::MAX, default: DEFAULT_SPILL_BYTES }, "EVAL_SPILL_BYTES" -> "spill_bytes";
        PRICES: Prices = Prices, "EVAL_PRICES" -> "prices";
        STEP_SUMMARY_FILE: FilePath = FilePath, "GITHUB_STEP_SUMMARY" -> "step_summary";
        STEP_SUMMARY: Switch = Switch(true), "EVAL_STEP_SUMMARY" -> "step_summary_auto";
    }
    groups {
        "EVAL_AGENT_PROTOCOL" => "values" -> "agent_protocol";
        "EVAL_AGENT_MODEL" => "values" -> "agent_model";
        "EVAL_AGENT_STREAM" => "values" -> "agent_stream";
        "EVAL_AGENT_TEMPERATURE" => "values" -> "agent_sampling";
        "EVAL_AGENT_TOP_P" => "values" -> "agent_sampling";
        "EVAL_AGENT_MAX_TOKENS" => "values" -> "agent_sampling";
        "EVAL_AGENT_SEED" => "values" -> "agent_sampling";
        "EVAL_AGENT_REQUEST" => "agent_http" -> "agent_http";
        "EVAL_AGENT_METHOD" => "agent_http" -> "agent_http";
        "EVAL_AGENT_QUERY" => "agent_http" -> "agent_http";
        "EVAL_AGENT_HEADERS" => "agent_http" -> "agent_http";
        "EVAL_AGENT_OUTPUT" => "agent_http" -> "agent_http";
        "EVAL_AGENT_CONTEXT" => "agent_http" -> "agent_http";
        "EVAL_AGENT_TOOL_CALLS" => "agent_http" -> "agent_http";
        "EVAL_AGENT_USAGE_PROMPT_TOKENS" => "agent_http" -> "agent_http";
        "EVAL_AGENT_USAGE_COMPLETION_TOKENS" => "agent_http" -> "agent_http";
        "EVAL_OTLP_RECEIVER" => "traces" -> "traces";
        "EVAL_TRACE_WAIT_MS" => "traces" -> "traces";
        "EVAL_OTLP_QUEUE" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_ENDPOINT" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_PROTOCOL" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_HEADERS" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_TIMEOUT" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_COMPRESSION" => "traces" -> "traces";
        "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION" => "traces" -> "traces";
        "OTEL_SERVICE_NAME" => "traces" -> "traces";
        "OTEL_RESOURCE_ATTRIBUTES" => "traces" -> "traces";
        "OTEL_SDK_DISABLED" => "traces" -> "traces";
        "OTEL_TRACES_EXPORTER" => "traces" -> "traces";
        "EVAL_RERANK_URL" => "rerank" -> "rerank";
        "EVAL_RERANK_MODEL" => "rerank" -> "rerank";
        "EVAL_RERANK_API_KEY" => "rerank" -> "rerank";
        "EVAL_JUDGE_MAX_TOKENS" => "judge_answers" -> "judge_answers";
        "EVAL_JUDGE_STRUCTURED" => "judge_answers" -> "judge_answers";
        "EVAL_JUDGE_PROVIDER" => "providers" -> "providers";
        "EVAL_EMBED_PROVIDER" => "providers" -> "providers";
        "EVAL_AGENT_PROVIDER" => "providers" -> "providers";
        "EVAL_AZURE_API_VERSION" => "providers" -> "providers";
        "EVAL_JUDGE_HEADERS" => "providers" -> "providers";
        "EVAL_EMBED_HEADERS" => "providers" -> "providers";
        "EVAL_RETRIEVER_HEADERS" => "providers" -> "providers";
        "AZURE_OPENAI_API_KEY" => "providers" -> "judge";
        "ANTHROPIC_API_KEY" => "providers" -> "judge";
    }
}

#[cfg(test)]
mod tests {
    use super::{GROUPED, NAMES};

    /// Documented, but read by `Paint`, not `Config`.
    const NOT_CONFIG: &[&str] = &["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"];

    /// The variables `settings.md`'s first column names (`VAR`), and the
    /// `_TRACES_` forms a row says it has.
    fn documented() -> Vec<String> {
        let mut out = Vec::new();
        for line in include_str!("settings.md").lines().skip(2) {
            let first = line.trim_start_matches('|').split('|').next().unwrap_or("");
            let names: Vec<&str> = first
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|n| n.starts_with(|c: char| c.is_ascii_uppercase()))
                .collect();
            let traces = first.contains("`_TRACES_` forms");
            for n in names {
                out.push(n.to_string());
                if traces && let Some(rest) = n.strip_prefix("OTEL_EXPORTER_OTLP_") {
                    out.push(format!("OTEL_EXPORTER_OTLP_TRACES_{rest}"));
                }
            }
        }
        out
    }

    #[test]
    fn every_documented_setting_is_a_row_and_every_row_is_documented() {
        let documented = documented();
        assert!(documented.len() > 50, "read {} names", documented.len());
        let rows: Vec<&str> = NAMES
            .iter()
            .map(|(n, _)| *n)
            .chain(GROUPED.iter().map(|(n, _, _)| *n))
            .collect();
        let missing: Vec<&String> = documented
            .iter()
            .filter(|d| !rows.contains(&d.as_str()) && !NOT_CONFIG.contains(&d.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "documented in settings.md, not in the table: {missing:?}"
        );
        let undocumented: Vec<&&str> = rows
            .iter()
            .filter(|r| !documented.iter().any(|d| d == *r))
            .collect();
        assert!(
            undocumented.is_empty(),
            "in the table, not in settings.md: {undocumented:?}"
        );
        let mut unique = rows.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), rows.len(), "a variable has two rows");
    }

    #[test]
    fn every_field_is_a_field_of_config() {
        let source = include_str!("../config.rs");
        for (name, field) in NAMES {
            assert!(
                source.contains(&format!("    pub {field}: ")),
                "{name}: `{field}` is not a field of Config"
            );
        }
    }

    #[test]
    fn a_group_row_is_read_by_its_group() {
        let groups = [
            ("values", include_str!("values.rs")),
            ("agent_http", include_str!("agent_http.rs")),
            ("traces", include_str!("traces.rs")),
            ("rerank", include_str!("rerank.rs")),
            ("judge_answers", include_str!("judge_answers.rs")),
            ("providers", include_str!("providers.rs")),
        ];
        for (name, group, field) in GROUPED {
            let source = groups.iter().find(|(g, _)| g == group).map(|(_, s)| *s);
            assert!(
                source.is_some_and(|s| s.contains(&format!("\"{name}\""))),
                "{name}: the `{group}` group (config/{group}.rs) does not read it"
            );
            assert!(
                include_str!("../config.rs").contains(&format!("    pub {field}: ")),
                "{name}: `{field}` is not a field of Config"
            );
        }
    }

    #[test]
    fn the_names_settings_files_may_hold_are_the_tables() {
        // `Config::setting_names` (what a `.env` file may set; `KNOWN` the
        // near-miss warnings' list) is every row, and only rows.
        let rows: Vec<&str> = NAMES
            .iter()
            .map(|(n, _)| *n)
            .chain(GROUPED.iter().map(|(n, _, _)| *n))
            .collect();
        let names: Vec<&str> = super::super::Config::setting_names().collect();
        let missing: Vec<&&str> = rows.iter().filter(|r| !names.contains(r)).collect();
        assert!(
            missing.is_empty(),
            "rows not in Config::setting_names: {missing:?}"
        );
        let extra: Vec<&&str> = names.iter().filter(|n| !rows.contains(n)).collect();
        assert!(extra.is_empty(), "setting names without a row: {extra:?}");
    }
}
