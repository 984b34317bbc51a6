//! Throughput and overhead benchmark: `cargo run --release --example bench`.
//!
//! Builds the two benchmark targets (`benches/bench_macro.rs`: the attribute,
//! 1,000 `#[test]`s; `benches/bench_harness.rs`: the run-time harness),
//! starts the demo agent in this process at 50 ms and at 0 ms of latency,
//! runs each target as a child process exactly as `cargo test` would, and
//! prints per run: wall time, the physical floor N·L/C, their ratio, the
//! child's CPU time per sample, and its peak RSS (from `wait4`).
//!
//! Options: `--samples-100k N` changes the size of the large in-process runs
//! (default 100000: one `.jsonl` and one `.json` dataset); `--skip-large`
//! leaves them out; `--large-only` runs only them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use eval_examples::demo::{DemoConfig, spawn};

const CONCURRENCY: usize = 16;

struct Run {
    label: String,
    samples: usize,
    latency: Duration,
    wall: Duration,
    cpu: Duration,
    /// CPU the demo agent (in this process) spent meanwhile.
    agent_cpu: Duration,
    max_rss_kib: i64,
    exit: i32,
}

fn main() {
    let mut large = 100_000usize;
    let mut large_only = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--samples-100k" => large = args.next().and_then(|v| v.parse().ok()).unwrap_or(large),
            "--skip-large" => large = 0,
            "--large-only" => large_only = true,
            other => {
                eprintln!("unknown argument {other}; see the doc comment of examples/bench.rs");
                std::process::exit(2);
            }
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (macro_bin, harness_bin, baseline_bin) = build(&root);
    let work = root.join("target/bench");
    std::fs::create_dir_all(&work).expect("create target/bench");
    let dataset_1k = root.join("benches/data/bench_1000.jsonl");

    let mut runs = Vec::new();
    let latencies: &[u64] = if large_only { &[] } else { &[50, 0] };
    for &latency_ms in latencies {
        let latency = Duration::from_millis(latency_ms);
        let server = spawn(DemoConfig { latency }).expect("start the demo agent");
        let url = server.url();
        let env = |extra: &[(&'static str, String)]| -> Vec<(&'static str, String)> {
            let mut e = vec![
                ("EVAL_AGENT_URL", url.clone()),
                ("EVAL_CONCURRENCY", CONCURRENCY.to_string()),
                (
                    "EVAL_RESULTS_DIR",
                    work.join("results").to_string_lossy().into_owned(),
                ),
            ];
            e.extend(extra.iter().cloned());
            e
        };
        let ds = dataset_1k.to_string_lossy().into_owned();
        runs.push(run(
            &format!("harness, HTTP, {latency_ms} ms"),
            &harness_bin,
            &["-q"],
            &env(&[("BENCH_DATASET", ds.clone())]),
            1000,
            latency,
        ));
        runs.push(run(
            &format!("macro (libtest, default threads), HTTP, {latency_ms} ms"),
            &macro_bin,
            &["-q"],
            &env(&[]),
            1000,
            latency,
        ));
        if latency_ms == 0 {
            runs.push(run(
                "libtest alone: 1000 trivial #[test]s (baseline)",
                &baseline_bin,
                &["-q"],
                &[],
                1000,
                Duration::ZERO,
            ));
            runs.push(run(
                "harness, in-process agent",
                &harness_bin,
                &["-q"],
                &env(&[("BENCH_DATASET", ds), ("BENCH_AGENT", "in-process".into())]),
                1000,
                Duration::ZERO,
            ));
        }
        drop(server);
    }
    if large > 0 {
        // JSON Lines, and one `.json` document (items' lines found in one pass).
        for (ext, write) in [
            ("jsonl", write_large as fn(&Path, usize)),
            ("json", write_large_json),
        ] {
            let path = work.join(format!("bench_{large}.{ext}"));
            write(&path, large);
            runs.push(run(
                &format!("harness, in-process agent, {large} samples (.{ext})"),
                &harness_bin,
                &["-q"],
                &[
                    ("BENCH_DATASET", path.to_string_lossy().into_owned()),
                    ("BENCH_AGENT", "in-process".into()),
                    ("EVAL_CONCURRENCY", CONCURRENCY.to_string()),
                    (
                        "EVAL_RESULTS_DIR",
                        work.join("results").to_string_lossy().into_owned(),
                    ),
                ],
                large,
                Duration::ZERO,
            ));
        }
    }
    report(&runs);
    if large > 0 {
        // nextest lists once, then starts one process per test with `--exact`.
        let path = work.join(format!("bench_{large}.jsonl"));
        let env = [
            ("BENCH_DATASET", path.to_string_lossy().into_owned()),
            ("BENCH_AGENT", "in-process".to_string()),
            (
                "EVAL_RESULTS_DIR",
                work.join("results").to_string_lossy().into_owned(),
            ),
        ];
        let started = Instant::now();
        let list = Command::new(&harness_bin)
            .args(["--list", "--format", "terse"])
            .envs(env.iter().cloned())
            .output()
            .expect("run --list");
        let list_wall = started.elapsed();
        let listed = String::from_utf8_lossy(&list.stdout);
        let names: Vec<&str> = listed
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .collect();
        let middle = names.get(names.len() / 2).copied().unwrap_or_default();
        let started = Instant::now();
        let exact = Command::new(&harness_bin)
            .args(["--exact", middle])
            .envs(env.iter().cloned())
            .output()
            .expect("run --exact");
        let exact_wall = started.elapsed();
        println!(
            "{large}-sample dataset: --list {} names in {:.3}s; --exact {middle} in {:.4}s (exit {})",
            names.len(),
            list_wall.as_secs_f64(),
            exact_wall.as_secs_f64(),
            exact.status.code().unwrap_or(-1)
        );
    }
}

/// Builds the benchmark targets in release mode; returns their executables.
fn build(root: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root)
        .args([
            "test",
            "--release",
            "--no-run",
            "--message-format=json",
            "--test",
            "bench_macro",
            "--test",
            "bench_harness",
            "--test",
            "libtest_baseline",
        ])
        .stderr(Stdio::inherit())
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "building the benchmark targets failed"
    );
    let mut found = (None, None, None);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(exe) = v["executable"].as_str() else {
            continue;
        };
        match v["target"]["name"].as_str() {
            Some("bench_macro") => found.0 = Some(PathBuf::from(exe)),
            Some("bench_harness") => found.1 = Some(PathBuf::from(exe)),
            Some("libtest_baseline") => found.2 = Some(PathBuf::from(exe)),
            _ => {}
        }
    }
    (
        found.0.expect("bench_macro executable"),
        found.1.expect("bench_harness executable"),
        found.2.expect("libtest_baseline executable"),
    )
}

fn write_large(path: &Path, n: usize) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create dataset"));
    for i in 0..n {
        writeln!(
            f,
            r#"{{"id": "s{i}", "input": "Question {i}: what is retrieval-augmented generation?", "expected": "answer {i}", "tags": ["large"]}}"#
        )
        .expect("write dataset");
    }
}

/// The same samples as [`write_large`], as one `.json` array (one item per line).
fn write_large_json(path: &Path, n: usize) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create dataset"));
    writeln!(f, "[").expect("write dataset");
    for i in 0..n {
        let comma = if i + 1 < n { "," } else { "" };
        writeln!(
            f,
            r#"  {{"id": "s{i}", "input": "Question {i}: what is retrieval-augmented generation?", "expected": "answer {i}", "tags": ["large"]}}{comma}"#
        )
        .expect("write dataset");
    }
    writeln!(f, "]").expect("write dataset");
}

/// Runs one child to completion, measuring wall time, CPU time and peak RSS.
fn run(
    label: &str,
    exe: &Path,
    args: &[&str],
    env: &[(&str, String)],
    samples: usize,
    latency: Duration,
) -> Run {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove("NEXTEST")
        .env_remove("NEXTEST_RUN_ID");
    for (k, v) in env {
        cmd.env(k, v);
    }
    eprintln!("running: {label}");
    let agent_before = self_cpu();
    let started = Instant::now();
    // Reaped by `wait4` below (which also reports its resource usage).
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("start benchmark target");
    let (exit, cpu, max_rss_kib) = wait4(child.id() as libc::pid_t);
    let wall = started.elapsed();
    let agent_cpu = self_cpu().saturating_sub(agent_before);
    Run {
        label: label.to_string(),
        samples,
        latency,
        wall,
        cpu,
        agent_cpu,
        max_rss_kib,
        exit,
    }
}

/// CPU time of this process so far: while a child runs, the only busy
/// threads here are the demo agent's.
fn self_cpu() -> Duration {
    // SAFETY: rusage is plain old data filled by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a local.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    timeval(usage.ru_utime) + timeval(usage.ru_stime)
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000)
}

/// Waits for `pid` and returns (exit code, user+sys CPU time, peak RSS in KiB).
fn wait4(pid: libc::pid_t) -> (i32, Duration, i64) {
    let mut status = 0;
    // SAFETY: rusage is plain old data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to locals; the child is ours and not yet reaped.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid, "wait4 failed");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (
        code,
        timeval(usage.ru_utime) + timeval(usage.ru_stime),
        usage.ru_maxrss,
    )
}

fn report(runs: &[Run]) {
    println!();
    println!(
        "{:<52} {:>7} {:>9} {:>9} {:>7} {:>12} {:>12} {:>12} {:>9} {:>5}",
        "run",
        "samples",
        "wall s",
        "floor s",
        "ratio",
        "wall/sample",
        "own cpu/smp",
        "agent cpu/smp",
        "peak RSS",
        "exit"
    );
    for r in runs {
        let floor = r.samples as f64 * r.latency.as_secs_f64() / CONCURRENCY as f64;
        let wall = r.wall.as_secs_f64();
        let ratio = if floor > 0.0 {
            format!("{:.3}", wall / floor)
        } else {
            "-".into()
        };
        println!(
            "{:<52} {:>7} {:>9.3} {:>9.3} {:>7} {:>10.1}µs {:>10.1}µs {:>10.1}µs {:>7.1}MB {:>5}",
            r.label,
            r.samples,
            wall,
            floor,
            ratio,
            wall * 1e6 / r.samples as f64,
            r.cpu.as_secs_f64() * 1e6 / r.samples as f64,
            r.agent_cpu.as_secs_f64() * 1e6 / r.samples as f64,
            r.max_rss_kib as f64 / 1024.0,
            r.exit
        );
    }
    println!();
    println!(
        "floor = samples x latency / {CONCURRENCY} (EVAL_CONCURRENCY); own cpu = the child's user+sys time; \
         agent cpu = the demo agent's (in this process); {} threads available",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let cpu = |label: &str| {
        runs.iter()
            .find(|r| r.label.starts_with(label))
            .map(|r| r.cpu.as_secs_f64() * 1e6 / r.samples as f64)
    };
    if let (Some(m), Some(b)) = (
        cpu("macro (libtest, default threads), HTTP, 0 ms"),
        cpu("libtest alone"),
    ) {
        println!(
            "attribute path, own CPU per sample at 0 ms = {m:.1}µs - libtest's {b:.1}µs per test = {:.1}µs",
            m - b
        );
    }
}
