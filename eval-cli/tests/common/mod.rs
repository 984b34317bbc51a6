//! Helpers of the `evals` binary's tests: run it, read what it printed,
//! a demo agent on loopback, scratch directories.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn evals(dir: &Path, args: &[&str]) -> Output {
    evals_with(dir, args, &[])
}

pub fn evals_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("EVAL_AGENT_URL")
        .env_remove("EVAL_JUDGE_URL")
        .env_remove("EVAL_EMBED_URL")
        .env_remove("EVAL_CONCURRENCY")
        .env_remove("EVAL_SAMPLE_TIMEOUT_SECS")
        .env("EVAL_CACHE", "off");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run evals")
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn demo_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let server =
            eval_examples::demo::spawn(eval_examples::demo::DemoConfig::default()).unwrap();
        let url = server.url();
        std::mem::forget(server);
        url
    })
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("evals-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixtures() -> PathBuf {
    repo().join("tests/fixtures/public")
}
