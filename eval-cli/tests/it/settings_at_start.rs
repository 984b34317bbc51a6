//! Issue 37's settings reproducers, end to end: a bad setting stops the
//! command at start with an error naming the variable (exit 2), never
//! showing a credential, before anything is done or written.

use crate::common;

use common::{code, evals, evals_with, scratch, text};

/// Was: every OTLP batch dropped ("builder error"), the run exiting 0.
#[test]
fn an_otlp_header_with_a_line_break_stops_the_run_at_start() {
    let dir = scratch("otlp-header");
    assert_eq!(code(&evals(&dir, &["init"])), 0);
    for var in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        let out = evals_with(
            &dir,
            &["evaluate", "--url", "http://127.0.0.1:9"],
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
                (var, "x-api-key=SECRET%0D%0Ab"),
            ],
        );
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 2, "{stdout}{stderr}");
        assert!(
            stderr.contains(&format!("invalid {var}=`<redacted>`")),
            "{stderr}"
        );
        assert!(stderr.contains("`x-api-key`"), "{stderr}");
        assert!(!format!("{stdout}{stderr}").contains("SECRET"), "{stderr}");
    }
}

/// Was: printed with its password, after the whole create flow had run.
#[test]
fn a_langsmith_endpoint_with_credentials_stops_create_before_its_first_step() {
    let dir = scratch("langsmith-endpoint");
    for endpoint in [
        "ftp://user:SECRET@smith.example/",
        "https://user:SECRET@smith.example/",
    ] {
        let out = evals_with(
            &dir,
            &["create", "--domain", "docs", "--types", "mixed", "--yes"],
            &[
                ("LANGSMITH_API_KEY", "ls-test-key-0123456789"),
                ("LANGSMITH_ENDPOINT", endpoint),
            ],
        );
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 2, "{stdout}{stderr}");
        assert!(
            stderr.contains("invalid LANGSMITH_ENDPOINT=`") && stderr.contains("smith.example/`"),
            "{stderr}"
        );
        assert!(
            !format!("{stdout}{stderr}").contains("SECRET"),
            "{stdout}{stderr}"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "nothing made before the check"
        );
    }
}

#[test]
fn a_url_setting_is_checked_at_start_and_shown_without_credentials() {
    let dir = scratch("url-settings");
    for (var, url) in [
        ("EVAL_AGENT_URL", "ftp://user:SECRET@agent.example/"),
        ("EVAL_JUDGE_URL", "http://user:SECRET@"),
        ("EVAL_EMBED_URL", "user:SECRET@embed.example:8000"),
        ("EVAL_RETRIEVER_URL", "http://user:SE/CRET@r.example:99999/"),
    ] {
        let out = evals_with(&dir, &["evaluate"], &[(var, url)]);
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 2, "{var}: {stdout}{stderr}");
        assert!(stderr.contains(&format!("invalid {var}=`")), "{stderr}");
        assert!(!format!("{stdout}{stderr}").contains("CRET"), "{stderr}");
    }
}

/// Was: a dangling link was as if there were no file; an unknown name was
/// listed as read.
#[cfg(unix)]
#[test]
fn env_local_problems_are_said_plainly() {
    let dir = scratch("env-local-problems");
    std::os::unix::fs::symlink("../nowhere/.env.shared", dir.join(".env.local")).unwrap();
    let out = evals(&dir, &["evaluate", "--url", "http://127.0.0.1:9"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "error: .env.local is a symbolic link to `../nowhere/.env.shared`, which does not exist"
        ),
        "{stderr}"
    );
    std::fs::remove_file(dir.join(".env.local")).unwrap();
    std::fs::write(dir.join(".env.local"), "EVAL_CONCURENCY=4\n").unwrap();
    let out = evals(&dir, &["evaluate", "--url", "http://127.0.0.1:9"]);
    let (stdout, stderr) = text(&out);
    let said = format!("{stdout}{stderr}");
    assert!(
        said.contains(
            "warning: .env.local: EVAL_CONCURENCY is not a setting of evals, ignored (did you mean `EVAL_CONCURRENCY`?)"
        ),
        "{said}"
    );
    assert!(
        !said.contains("note: .env.local: EVAL_CONCURENCY"),
        "{said}"
    );
    assert_eq!(
        said.matches("EVAL_CONCURENCY").count(),
        1,
        "said once, not again as the environment's near miss: {said}"
    );
}
