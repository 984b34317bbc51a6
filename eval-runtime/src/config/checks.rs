//! Checks made when the settings are read, over values the rest of the
//! config only carries: every URL setting (the agent's, the judge's, the
//! embeddings', the retriever's, LangSmith's) and every key sent as a
//! header value. A bad one stops the run at start, naming the variable,
//! instead of failing its first request (or, for LangSmith, after the
//! whole `evals create` flow).
//!
//! And the one way a configured URL is shown: [`shown_url`], without
//! `user:password@`, query or fragment. Every message that names a URL
//! (a setting's error, an agent, judge, embeddings, retriever, exporter or
//! LangSmith failure, a refused redirect) goes through it. The query is
//! dropped whole rather than its values masked: a query often carries a
//! key (`?code=`, `?key=`, `?sig=`) under a name no rule can list, and
//! the host and path are what a reader needs to find the endpoint.

use super::{BadVar, Config, Provider};

/// A configured URL as every message shows it: no `user:password@`, no
/// query, no fragment, escaped for a terminal
/// ([`eval_datasets::terminal::escaped`]). A value that does not parse as
/// a URL is cut the same way by its text: everything up to its last `@`
/// after the scheme is dropped, and everything from its first `?` or `#`.
pub(crate) fn shown_url(url: &str) -> String {
    let url = url.trim();
    let shown = match url::Url::parse(url) {
        Ok(mut u) if !u.cannot_be_a_base() => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        // `user:secret@host` parses as a scheme `user` and a path: cut by text.
        _ => by_text(url),
    };
    eval_datasets::terminal::escaped(&shown).into_owned()
}

/// [`shown_url`] of text that is not a URL.
fn by_text(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    // A password may hold `/`, `?` or `#` unencoded: any `@` ends it.
    let rest = rest.rfind('@').map_or(rest, |at| &rest[at + 1..]);
    let rest = &rest[..rest.find(['?', '#']).unwrap_or(rest.len())];
    format!("{scheme}{rest}")
}

/// Whether a URL setting may carry `user:password@`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Userinfo {
    /// Sent as HTTP basic authentication (an agent behind a proxy, say).
    Allowed,
    /// Refused: the service has its own key setting.
    Refused(&'static str),
}

/// `value` as an `http` or `https` URL with a host, or what was expected
/// (never the value itself: the caller shows it with [`shown_url`]).
pub(super) fn http_url(value: &str, example: &str, userinfo: Userinfo) -> Result<url::Url, String> {
    let expected = |why: String| format!("an http:// or https:// URL, e.g. {example}: {why}");
    let url = url::Url::parse(value.trim()).map_err(|e| expected(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(expected(format!("the scheme is `{}`", url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(expected("it names no host".into()));
    }
    if let Userinfo::Refused(instead) = userinfo
        && (!url.username().is_empty() || url.password().is_some())
    {
        return Err(format!(
            "a URL without `user:password@` ({instead}); it is not shown here"
        ));
    }
    Ok(url)
}

/// Every URL setting of `config`: `(variable, value, example, userinfo)`.
fn urls(config: &Config) -> Vec<(&'static str, &str, &'static str, Userinfo)> {
    let langsmith = Userinfo::Refused("the key goes in LANGSMITH_API_KEY, sent as `x-api-key`");
    [
        (
            "EVAL_AGENT_URL",
            config.agent_url.as_deref(),
            "http://127.0.0.1:8080",
            Userinfo::Allowed,
        ),
        (
            "EVAL_JUDGE_URL",
            config.judge.url.as_deref(),
            "http://127.0.0.1:8000/v1",
            Userinfo::Allowed,
        ),
        (
            "EVAL_EMBED_URL",
            config.embed.url.as_deref(),
            "http://127.0.0.1:8000/v1",
            Userinfo::Allowed,
        ),
        (
            "EVAL_RETRIEVER_URL",
            config.retriever_url.as_deref(),
            "http://127.0.0.1:8080/retrieval",
            Userinfo::Allowed,
        ),
        (
            "LANGSMITH_ENDPOINT",
            config.langsmith_endpoint.as_deref(),
            "https://api.smith.langchain.com",
            langsmith,
        ),
    ]
    .into_iter()
    .filter_map(|(var, value, example, userinfo)| Some((var, value?, example, userinfo)))
    .collect()
}

/// Which keys were set by the service's own variable (else the provider's
/// fallback, if any, gave it).
pub(super) struct OwnKeys {
    pub(super) judge: bool,
    pub(super) embed: bool,
}

/// The variable a service's key came from: its own, else its provider's.
fn key_var(own: &'static str, is_own: bool, provider: Provider) -> &'static str {
    match (is_own, provider) {
        (true, _) => own,
        (false, Provider::Azure) => "AZURE_OPENAI_API_KEY",
        (false, Provider::Anthropic) => "ANTHROPIC_API_KEY",
        (false, _) => "OPENAI_API_KEY",
    }
}

/// Checks `config`'s URLs and keys, each bad one into `bad`.
pub(super) fn check(config: &Config, own: &OwnKeys, bad: &mut Vec<BadVar>) {
    for (var, value, example, userinfo) in urls(config) {
        if let Err(expected) = http_url(value, example, userinfo) {
            bad.push(BadVar {
                var,
                value: shown_url(value),
                expected,
            });
        }
    }
    // Anthropic has no embeddings API: said now, not at the first call.
    if let Some(url) = config.embed.url.as_deref()
        && Provider::resolve(config.providers.embed, url) == Provider::Anthropic
    {
        let (var, value) = match config.providers.embed {
            Some(_) => ("EVAL_EMBED_PROVIDER", "anthropic".to_string()),
            None => ("EVAL_EMBED_URL", shown_url(url)),
        };
        bad.push(BadVar {
            var,
            value,
            expected: "an OpenAI-compatible or Azure OpenAI embeddings server: Anthropic has no embeddings API".into(),
        });
    }
    // A key is sent as a header value: one that cannot be would fail
    // every request. A service's fallback key is checked only when the
    // service is configured (it is not used otherwise).
    let judge = config.judge.url.as_deref().map(|url| {
        let provider = Provider::resolve(config.providers.judge, url);
        key_var("EVAL_JUDGE_API_KEY", own.judge, provider)
    });
    let embed = config.embed.url.as_deref().map(|url| {
        let provider = Provider::resolve(config.providers.embed, url);
        key_var("EVAL_EMBED_API_KEY", own.embed, provider)
    });
    let keys = [
        (Some("EVAL_AGENT_API_KEY"), config.agent_api_key.as_ref()),
        (judge, config.judge.api_key.as_ref()),
        (embed, config.embed.api_key.as_ref()),
        (Some("LANGSMITH_API_KEY"), config.langsmith_api_key.as_ref()),
    ];
    for (var, key) in keys {
        let (Some(var), Some(key)) = (var, key) else {
            continue;
        };
        if key.expose().chars().any(|c| c.is_control() && c != '\t') {
            bad.push(BadVar {
                var,
                value: "<redacted>".into(),
                expected: "a key that can be sent in an HTTP header: it holds a line break or another control character".into(),
            });
        }
    }
}

/// The settings [`Config`] reads that are not `EVAL_*` (the other tools'
/// standard variables it follows).
const OTHER: &[&str] = &[
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "LANGSMITH_API_KEY",
    "LANGSMITH_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_SDK_DISABLED",
    "OTEL_TRACES_EXPORTER",
    "GITHUB_STEP_SUMMARY",
];

impl Config {
    /// Every variable read as a setting (the `EVAL_*` ones and the other
    /// tools' standard ones: `OPENAI_API_KEY`, `LANGSMITH_*`,
    /// `OTEL_EXPORTER_OTLP_*`, ...), for a reader of settings files to
    /// name what it does not know (`evals` and `.env.local`).
    pub fn setting_names() -> impl Iterator<Item = &'static str> {
        super::KNOWN
            .iter()
            .chain(super::providers::VARS)
            .chain(OTHER)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_url_has_no_credentials_query_or_fragment() {
        for (given, shown) in [
            ("http://user:SECRET@h:1/p?k=SECRET#SECRET", "http://h:1/p"),
            ("https://SECRET@h/", "https://h/"),
            ("ftp://user:SECRET@ftp.example/x", "ftp://ftp.example/x"),
            // Not URLs: cut by their text.
            ("user:SECRET@h:4318", "h:4318"),
            ("http://user:SE/CRET@h/p", "http://h/p"),
            ("http://user:SE?CRET@h:99999/", "http://h:99999/"),
            ("http://h:99999/?key=SECRET", "http://h:99999/"),
            ("http://[::1/?SECRET", "http://[::1/"),
        ] {
            assert_eq!(shown_url(given), shown, "{given}");
            assert!(!shown_url(given).contains("SECRET"), "{given}");
        }
        assert_eq!(shown_url("http://h/\u{1b}[2J"), "http://h/%1B[2J");
        assert!(!shown_url("no\u{1b}url").contains('\u{1b}'));
    }

    #[test]
    fn a_url_setting_is_an_http_url_with_a_host() {
        let ok = |v: &str| http_url(v, "http://x", Userinfo::Allowed);
        assert!(ok("http://127.0.0.1:8080").is_ok());
        assert!(ok(" https://h/v1?api-version=1 ").is_ok());
        assert!(ok("http://u:p@h/").is_ok(), "basic authentication");
        for bad in [
            "127.0.0.1:8080",
            "ftp://h/",
            "http://",
            "file:///etc",
            "mailto:a@b",
        ] {
            let e = ok(bad).unwrap_err();
            assert!(e.contains("http:// or https://"), "{bad}: {e}");
        }
        let e = http_url("https://u:SECRET@h", "x", Userinfo::Refused("use the key")).unwrap_err();
        assert!(e.contains("user:password@") && !e.contains("SECRET"), "{e}");
    }

    fn read(vars: &[(&str, &str)]) -> Result<Config, String> {
        let var = |name: &str| {
            Ok(vars
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string()))
        };
        Config::from_vars(var, &[]).map_err(|e| e.to_string())
    }

    /// The reproducer: `LANGSMITH_ENDPOINT=ftp://user:SECRET@...`
    /// was printed whole, after the whole `evals create` flow.
    #[test]
    fn every_url_setting_is_checked_when_read_and_shown_without_credentials() {
        let vars = [
            "EVAL_AGENT_URL",
            "EVAL_JUDGE_URL",
            "EVAL_EMBED_URL",
            "EVAL_RETRIEVER_URL",
            "LANGSMITH_ENDPOINT",
            // (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, which wins over it
            // when both are set, is checked in traces.rs's tests.)
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ];
        for url in [
            "ftp://user:SECRET@host.example/",
            "http://user:SECRET@",
            "user:SECRET@host.example:8080",
            "http://user:SE/CRET@host.example:99999/",
            "http://host.example:99999/?key=SECRET",
        ] {
            let set: Vec<(&str, &str)> = vars.iter().map(|v| (*v, url)).collect();
            let said = read(&set).unwrap_err();
            for var in vars {
                assert!(said.contains(&format!("invalid {var}=")), "{url}: {said}");
            }
            assert!(
                !said.contains("SECRET") && !said.contains("CRET"),
                "{url}: {said}"
            );
        }
        // Good ones pass; LangSmith alone refuses credentials in its URL.
        let url = "https://user:SECRET@host.example/v1";
        let set: Vec<(&str, &str)> = vars.iter().map(|v| (*v, url)).collect();
        let said = read(&set).unwrap_err();
        assert!(
            said.contains("invalid LANGSMITH_ENDPOINT=`https://host.example/v1`: a URL without `user:password@`"),
            "{said}"
        );
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(!said.contains("SECRET"), "{said}");
        let config = read(&set[..4]).unwrap();
        assert!(
            read(&set[5..]).is_ok(),
            "an exporter may use basic authentication"
        );
        assert_eq!(config.agent_url.as_deref(), Some(url));
    }

    #[test]
    fn a_bad_value_is_shown_escaped() {
        let said =
            read(&[("EVAL_CONCURRENCY", "\u{1b}]0;title\u{7}\u{9b}2J\u{202e}")]).unwrap_err();
        assert!(said.starts_with("invalid EVAL_CONCURRENCY=`"), "{said}");
        assert!(
            !said.contains(['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}']),
            "{said:?}"
        );
    }

    #[test]
    fn a_key_that_cannot_be_a_header_value_is_refused_at_start() {
        let said = read(&[
            ("EVAL_AGENT_API_KEY", "sk-SECRET\n"),
            ("LANGSMITH_API_KEY", "ls-SECRET\r\nX: y"),
            ("EVAL_JUDGE_URL", "http://127.0.0.1:8000/v1"),
            ("OPENAI_API_KEY", "sk-SECRET\u{7f}"),
            // Not used (no embeddings URL), not checked.
            ("ANTHROPIC_API_KEY", "sk-SECRET\n"),
        ])
        .unwrap_err();
        for var in ["EVAL_AGENT_API_KEY", "LANGSMITH_API_KEY", "OPENAI_API_KEY"] {
            assert!(
                said.contains(&format!("invalid {var}=`<redacted>`")),
                "{said}"
            );
        }
        assert_eq!(said.lines().count(), 3, "{said}");
        assert!(!said.contains("SECRET"), "{said}");
        assert!(read(&[("EVAL_AGENT_API_KEY", "sk-a\tb")]).is_ok());
    }

    #[test]
    fn an_embeddings_server_that_cannot_serve_embeddings_is_refused_at_start() {
        let said = read(&[("EVAL_EMBED_URL", "https://api.anthropic.com/?k=SECRET")]).unwrap_err();
        assert!(
            said.starts_with(
                "invalid EVAL_EMBED_URL=`https://api.anthropic.com/`: an OpenAI-compatible"
            ),
            "{said}"
        );
        let said = read(&[
            ("EVAL_EMBED_URL", "http://127.0.0.1:8000/v1"),
            ("EVAL_EMBED_PROVIDER", "anthropic"),
        ])
        .unwrap_err();
        assert!(
            said.starts_with("invalid EVAL_EMBED_PROVIDER=`anthropic`"),
            "{said}"
        );
        assert!(read(&[("EVAL_JUDGE_URL", "https://api.anthropic.com")]).is_ok());
    }
}
