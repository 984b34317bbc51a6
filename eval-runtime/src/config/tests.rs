//! Tests of the settings.

use super::*;

#[test]
fn response_limits_take_sizes_with_units() {
    assert_eq!(parse_bytes("16MiB"), Some(16 << 20));
    assert_eq!(parse_bytes(" 512 KiB "), Some(512 << 10));
    assert_eq!(parse_bytes("1048576"), Some(1 << 20));
    assert_eq!(parse_bytes("2g"), Some(2 << 30));
    assert_eq!(parse_bytes("12"), Some(12));
    assert_eq!(parse_bytes("lots"), None);
    assert_eq!(parse_bytes("99999999999G"), None, "overflow");
    let e = vars(&[("EVAL_MAX_RESPONSE_BYTES", "5GiB")]).unwrap_err();
    assert!(e.to_string().contains("a size from 1KiB to 4GiB"), "{e}");
    assert_eq!(
        vars(&[("EVAL_MAX_DATASET_BYTES", "2GiB")])
            .unwrap()
            .max_dataset_bytes,
        2 << 30
    );
    assert_eq!(parse_bytes("-1"), None);
    let c = vars(&[("EVAL_MAX_RESPONSE_BYTES", "1MiB")]).unwrap();
    assert_eq!(c.max_response_bytes, 1 << 20);
    assert_eq!(
        Config::empty().max_response_bytes,
        crate::config::DEFAULT_MAX_RESPONSE_BYTES
    );
    let e = vars(&[("EVAL_MAX_RESPONSE_BYTES", "huge")]).unwrap_err();
    assert!(
        e.to_string().contains("EVAL_MAX_RESPONSE_BYTES=`huge`"),
        "{e}"
    );
}

fn vars(pairs: &'static [(&'static str, &'static str)]) -> Result<Config, ConfigError> {
    let names: Vec<String> = pairs.iter().map(|(k, _)| k.to_string()).collect();
    Config::from_vars(
        |name| {
            Ok(pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string()))
        },
        &names,
    )
}

#[test]
fn defaults_when_nothing_is_set() {
    let c = vars(&[]).unwrap();
    assert_eq!(c.sample_timeout_or(None), DEFAULT_SAMPLE_TIMEOUT);
    assert_eq!(c.concurrency_or(None), DEFAULT_CONCURRENCY);
    assert_eq!(c.agent_timeout, DEFAULT_AGENT_TIMEOUT);
    assert!(c.cache && !c.accept_baseline && !c.under_nextest);
    assert_eq!(c.judge.url, None);
    assert_eq!(c.judge.model, "gpt-4o-mini");
    assert_eq!(c.embed.timeout, DEFAULT_SERVICE_TIMEOUT);
}

#[test]
fn agent_retries_and_adaptive_concurrency() {
    let c = vars(&[]).unwrap();
    assert_eq!(c.agent_max_retries, DEFAULT_AGENT_MAX_RETRIES);
    assert!(c.agent_adaptive, "adaptive by default");
    let c = vars(&[
        ("EVAL_AGENT_MAX_RETRIES", "0"),
        ("EVAL_AGENT_ADAPTIVE", "off"),
    ])
    .unwrap();
    assert_eq!((c.agent_max_retries, c.agent_adaptive), (0, false));
    let e = vars(&[
        ("EVAL_AGENT_MAX_RETRIES", "-1"),
        ("EVAL_AGENT_ADAPTIVE", "fixed"),
    ])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid EVAL_AGENT_ADAPTIVE=`fixed`: on or off (1/0, true/false, yes/no)\n\
         invalid EVAL_AGENT_MAX_RETRIES=`-1`: a whole number from 0 to 1000"
    );
    assert!(vars(&[("EVAL_AGENT_MAX_RETRIES", "1001")]).is_err());
}

#[test]
fn every_bad_value_is_named_with_its_value() {
    let e = vars(&[
        ("EVAL_CONCURRENCY", "lots"),
        ("EVAL_SAMPLE_TIMEOUT_SECS", "0"),
        ("EVAL_CACHE", "maybe"),
        ("EVAL_JUDGE_TIMEOUT_SECS", "soon"),
    ])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid EVAL_SAMPLE_TIMEOUT_SECS=`0`: a number of seconds between 0.001 and 10^9\n\
         invalid EVAL_JUDGE_TIMEOUT_SECS=`soon`: a number of seconds between 0.001 and 10^9\n\
         invalid EVAL_CONCURRENCY=`lots`: a whole number from 1 to 100000\n\
         invalid EVAL_CACHE=`maybe`: on or off (1/0, true/false, yes/no)"
    );
    assert!(vars(&[("EVAL_CONCURRENCY", "0")]).is_err());
    assert!(vars(&[("EVAL_CONCURRENCY", "100001")]).is_err());
    let e = vars(&[
        ("EVAL_JUDGE_CONCURRENCY", "-1"),
        ("EVAL_AGENT_CASSETTE_MODE", "rec"),
    ])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid EVAL_JUDGE_CONCURRENCY=`-1`: a whole number from 1 to 100000\n\
         invalid EVAL_AGENT_CASSETTE_MODE=`rec`: `record` or `replay`"
    );
}

#[test]
fn judge_calls_in_flight_default_to_four_per_sample_in_flight() {
    assert_eq!(
        vars(&[]).unwrap().judge_concurrency(),
        4 * DEFAULT_CONCURRENCY
    );
    assert_eq!(
        vars(&[("EVAL_CONCURRENCY", "3")])
            .unwrap()
            .judge_concurrency(),
        12
    );
    let c = vars(&[("EVAL_JUDGE_CONCURRENCY", "5")]).unwrap();
    assert_eq!(c.judge_concurrency(), 5);
    let c = vars(&[("EVAL_AGENT_CASSETTE", "a.jsonl")]).unwrap();
    assert_eq!(c.agent_cassette_mode, crate::model::CassetteMode::Replay);
}

#[test]
fn front_end_settings_win_then_the_environment_then_defaults() {
    let c = vars(&[
        ("EVAL_CONCURRENCY", "4"),
        ("EVAL_SAMPLE_TIMEOUT_SECS", "2.5"),
    ])
    .unwrap();
    assert_eq!(c.concurrency_or(None), 4);
    assert_eq!(c.concurrency_or(Some(9)), 9);
    assert_eq!(c.sample_timeout_or(None), Duration::from_millis(2500));
    assert_eq!(
        c.sample_timeout_or(Some(Duration::from_secs(1))),
        Duration::from_secs(1)
    );
}

#[test]
fn keys_fall_back_to_openai_and_never_show() {
    let c = vars(&[
        ("EVAL_JUDGE_URL", "http://127.0.0.1:9/v1"),
        ("EVAL_JUDGE_API_KEY", "sk-own"),
        ("OPENAI_API_KEY", "sk-fallback"),
        ("EVAL_EMBED_URL", "http://127.0.0.1:9/v1"),
    ])
    .unwrap();
    assert_eq!(c.judge.api_key.as_ref().unwrap().expose(), "sk-own");
    assert_eq!(c.embed.api_key.as_ref().unwrap().expose(), "sk-fallback");
    let shown = format!("{c:?}");
    assert!(
        !shown.contains("sk-own") && !shown.contains("sk-fallback"),
        "{shown}"
    );
}

#[test]
fn the_dataset_size_limit_is_a_setting() {
    let c = vars(&[]).unwrap();
    assert_eq!(c.max_dataset_bytes, 1 << 30);
    let c = vars(&[("EVAL_MAX_DATASET_BYTES", "4096")]).unwrap();
    assert_eq!(c.max_dataset_bytes, 4096);
    let c = vars(&[("EVAL_MAX_DATASET_BYTES", "1GiB")]).unwrap();
    assert_eq!(c.max_dataset_bytes, 1 << 30);
    for bad in ["0", "-1", "1TiB"] {
        let e = vars(Box::leak(Box::new([("EVAL_MAX_DATASET_BYTES", bad)]))).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "invalid EVAL_MAX_DATASET_BYTES=`{bad}`: a size from 1 byte to any size, e.g. 16MiB, 512KiB or 1048576"
            )
        );
    }
}

#[test]
fn agent_protocol_settings_are_read_and_checked() {
    let c = vars(&[]).unwrap();
    assert_eq!(
        (c.agent_protocol, c.agent_model.as_deref(), c.agent_stream),
        (None, None, false)
    );
    assert_eq!(c.agent_sampling, crate::model::Sampling::default());
    let c = vars(&[
        ("EVAL_AGENT_PROTOCOL", "OpenAI"),
        ("EVAL_AGENT_MODEL", " qwen2.5 "),
        ("EVAL_AGENT_STREAM", "yes"),
        ("EVAL_AGENT_TEMPERATURE", "0"),
        ("EVAL_AGENT_TOP_P", "0.9"),
        ("EVAL_AGENT_MAX_TOKENS", "256"),
        ("EVAL_AGENT_SEED", "-7"),
    ])
    .unwrap();
    assert_eq!(c.agent_protocol, Some(eval_datasets::Protocol::OpenAi));
    assert_eq!(c.agent_model.as_deref(), Some("qwen2.5"));
    assert!(c.agent_stream);
    let s = c.agent_sampling;
    assert_eq!(
        (s.temperature, s.top_p, s.max_tokens, s.seed),
        (Some(0.0), Some(0.9), Some(256), Some(-7))
    );
    let e = vars(&[
        ("EVAL_AGENT_PROTOCOL", "grpc"),
        ("EVAL_AGENT_STREAM", "maybe"),
        ("EVAL_AGENT_TEMPERATURE", "3"),
        ("EVAL_AGENT_TOP_P", "x"),
        ("EVAL_AGENT_MAX_TOKENS", "0"),
        ("EVAL_AGENT_SEED", "1.5"),
    ])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid EVAL_AGENT_PROTOCOL=`grpc`: json (the JSON contract) or openai (OpenAI chat completions)\n\
         invalid EVAL_AGENT_STREAM=`maybe`: on or off (1/0, true/false, yes/no)\n\
         invalid EVAL_AGENT_TEMPERATURE=`3`: a number from 0 to 2\n\
         invalid EVAL_AGENT_TOP_P=`x`: a number from 0 to 1\n\
         invalid EVAL_AGENT_MAX_TOKENS=`0`: a whole number from 1 to 10000000\n\
         invalid EVAL_AGENT_SEED=`1.5`: a whole number (64-bit)"
    );
}

#[test]
fn the_price_table_is_read_with_the_settings() {
    let dir = std::env::temp_dir().join(format!("eval-prices-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("prices.json");
    std::fs::write(&good, r#"{"m": {"input": 1, "output": 2}}"#).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"m": {"output": 2}}"#).unwrap();
    let path = good.to_string_lossy().into_owned();
    let c = Config::from_vars(
        |n| {
            Ok(match n {
                "EVAL_PRICES" => Some(path.clone()),
                "EVAL_AGENT_MODEL" => Some("m".into()),
                _ => None,
            })
        },
        &[],
    )
    .unwrap();
    assert_eq!(
        c.prices.unwrap().price("m"),
        Some(crate::config::Price::new(1.0, Some(2.0)))
    );
    assert_eq!(c.agent_model.as_deref(), Some("m"));
    let path = bad.to_string_lossy().into_owned();
    let e = Config::from_vars(|n| Ok((n == "EVAL_PRICES").then(|| path.clone())), &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("invalid EVAL_PRICES=`{path}`: a JSON price table"))
            && e.ends_with(&format!(
                "{path}: `m`: missing `input` (USD per million prompt tokens)"
            )),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn near_misses_are_warned_about() {
    let c = vars(&[("EVAL_CONCURENCY", "4"), ("EVAL_MY_OWN", "x")]).unwrap();
    assert_eq!(
        c.warnings(),
        ["EVAL_CONCURENCY is not a setting of this tool (did you mean `EVAL_CONCURRENCY`?)"]
    );
    assert_eq!(c.concurrency_or(None), DEFAULT_CONCURRENCY);
}

#[test]
fn the_step_summary_is_github_s_file_unless_turned_off() {
    let read = |summary: Option<&str>, switch: Option<&str>| {
        Config::from_vars(
            |n| {
                Ok(match n {
                    "GITHUB_STEP_SUMMARY" => summary.map(str::to_string),
                    "EVAL_STEP_SUMMARY" => switch.map(str::to_string),
                    _ => None,
                })
            },
            &[],
        )
    };
    let c = read(Some("/runner/_temp/step_summary_1"), None).unwrap();
    assert_eq!(
        c.step_summary.as_deref(),
        Some(std::path::Path::new("/runner/_temp/step_summary_1"))
    );
    assert!(c.step_summary_auto);
    let c = read(Some("/s"), Some("off")).unwrap();
    assert!(c.step_summary.is_some() && !c.step_summary_auto);
    assert!(read(Some("  "), None).unwrap().step_summary.is_none());
    assert_eq!(
        read(None, Some("sometimes")).unwrap_err().to_string(),
        "invalid EVAL_STEP_SUMMARY=`sometimes`: on or off (1/0, true/false, yes/no)"
    );
}
