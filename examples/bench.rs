//! Throughput and overhead benchmark: `cargo run --release --example bench`.
//!
//! Builds the benchmark targets (`benches/bench_macro.rs`: the attribute,
//! 1,000 `#[test]`s sharing one agent; `benches/bench_macro_per_sample.rs`:
//! the same, each test building its own agent as the README does;
//! `benches/bench_harness.rs`: the run-time harness;
//! `benches/bench_http_floor.rs`: the HTTP client alone, reading, sending
//! and parsing each sample and answer and nothing else, so each path's CPU
//! over HTTP is also printed less the client's own, from the same run),
//! starts the demo agent in this process at 50 ms and at 0 ms of latency,
//! runs each target as a child process exactly as `cargo test` would, and
//! prints per run: wall time, the physical floor N·L/C, their ratio, the
//! child's CPU time per sample, and its peak RSS (from `wait4`).
//!
//! Then the rate-limit runs: the demo agent limited to R requests per second
//! (`--rate R`, default 100; bursts of R/10; 50 ms per answer, `429` at once
//! above the rate), with and without `Retry-After`, 1,000 samples through
//! the harness, the `evals` command and the attribute (a shared agent, and
//! an agent per sample), adaptive under a cap of 16 and of 64 calls at once
//! (`--fixed` adds a fixed 64, `EVAL_AGENT_ADAPTIVE=off`). Per
//! run: wall time over the floor N/R, samples passed and failed (errors:
//! not answered), the client's agent calls and retries (from the results
//! file, answered samples only), and the requests the agent accepted and
//! refused.
//!
//! Then the export runs (`--export-only` runs only them): 1,000 samples at
//! 50 ms through the harness and `evals evaluate`, without exporting
//! evaluations, exporting them to a local collector, to a collector that is
//! down (nothing listens), one that answers each request after a second, and
//! one that answers `503`; and the agent's spans received
//! (`EVAL_OTLP_RECEIVER`, the demo agent sending them). Three rounds
//! (`--rounds N`), alternated; per configuration the median and fastest wall
//! times, their ratios to the run without export, and the run's own note of
//! what it sent and dropped (for the spans run: how many samples got a
//! complete trajectory).
//!
//! Options: `--samples-100k N` changes the size of the large runs (default
//! 100000: the harness with an in-process agent on one `.jsonl` and one
//! `.json` dataset, then the harness and `evals evaluate` over HTTP at 0 ms
//! on the `.jsonl`); `--skip-large`
//! leaves them out; `--large-only` runs only them; `--rate-limit-only` runs
//! only the rate-limit runs, `--skip-rate-limit` leaves them out;
//! `--targets-from DIR` builds the benchmark targets and `evals` from the
//! checkout at DIR (its own `target/`), e.g. an older commit in a worktree,
//! to measure it against this demo agent.
//!
//! The large runs leave their results file and, beside it, its HTML report
//! under `target/bench/results/` (the path and size are printed);
//! `EVAL_HTML=off` measures them without the report.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use eval_examples::demo::{DemoConfig, RateLimit, spawn};

const CONCURRENCY: usize = 16;

/// Calls in flight in the rate-limit runs (fixed, or the adaptive limit's cap).
const LIMITED_CONCURRENCY: usize = 64;

/// The executables measured.
struct Targets {
    attribute: PathBuf,
    /// The attribute with an agent built for each sample (the README's form);
    /// `None` for a checkout that lacks the target.
    attribute_per_sample: Option<PathBuf>,
    harness: PathBuf,
    baseline: PathBuf,
    /// The HTTP client alone (`benches/bench_http_floor.rs`); `None` for a
    /// checkout that lacks it.
    http_floor: Option<PathBuf>,
    cli: PathBuf,
}

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
    let Options {
        large,
        large_only,
        limited,
        limited_only,
        fixed,
        export_only,
        rounds,
        rate,
        targets_from,
    } = options();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let targets = build(targets_from.as_deref().unwrap_or(&root));
    let work = root.join("target/bench");
    std::fs::create_dir_all(&work).expect("create target/bench");
    let dataset_1k = root.join("benches/data/bench_1000.jsonl");
    if limited_only {
        limited_runs(&targets, &work, &dataset_1k, rate, fixed);
        return;
    }
    if export_only {
        export_runs(&targets, &work, &dataset_1k, rounds);
        return;
    }

    let latencies: &[u64] = if large_only { &[] } else { &[50, 0] };
    let mut runs = small_runs(&targets, &work, &dataset_1k, latencies);
    if large > 0 {
        large_runs(&targets, &work, large, &mut runs);
    }
    report(&runs);
    if large > 0 {
        // The last large run's results file and, beside it, its HTML report.
        for (path, bytes) in html_reports(&work.join("results")) {
            println!(
                "HTML report: {} ({:.1} MB)",
                path.display(),
                bytes as f64 / 1e6
            );
        }
    }
    if large > 0 {
        list_and_exact(&targets.harness, &work, large);
    }
    if limited && !large_only {
        limited_runs(&targets, &work, &dataset_1k, rate, fixed);
    }
    if !large_only {
        export_runs(&targets, &work, &dataset_1k, rounds);
    }
}

/// The command line (see the module docs).
struct Options {
    large: usize,
    large_only: bool,
    limited: bool,
    limited_only: bool,
    fixed: bool,
    export_only: bool,
    rounds: usize,
    rate: f64,
    targets_from: Option<PathBuf>,
}

fn options() -> Options {
    let mut large = 100_000usize;
    let mut large_only = false;
    let (mut limited, mut limited_only, mut fixed) = (true, false, false);
    let mut export_only = false;
    let mut rounds = 3usize;
    let mut rate = 100.0f64;
    let mut targets_from: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--samples-100k" => large = args.next().and_then(|v| v.parse().ok()).unwrap_or(large),
            "--skip-large" => large = 0,
            "--large-only" => large_only = true,
            "--rate-limit-only" => limited_only = true,
            "--skip-rate-limit" => limited = false,
            "--fixed" => fixed = true,
            "--export-only" => export_only = true,
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(rounds)
                    .max(1)
            }
            "--rate" => rate = args.next().and_then(|v| v.parse().ok()).unwrap_or(rate),
            "--targets-from" => targets_from = args.next().map(PathBuf::from),
            other => {
                eprintln!("unknown argument {other}; see the doc comment of examples/bench.rs");
                std::process::exit(2);
            }
        }
    }
    Options {
        large,
        large_only,
        limited,
        limited_only,
        fixed,
        export_only,
        rounds,
        rate,
        targets_from,
    }
}

/// The 1,000-sample runs over HTTP at each latency (and, at 0 ms, the
/// baselines and the in-process agent).
fn small_runs(targets: &Targets, work: &Path, dataset_1k: &Path, latencies: &[u64]) -> Vec<Run> {
    let (macro_bin, harness_bin, baseline_bin) =
        (&targets.attribute, &targets.harness, &targets.baseline);
    let mut runs = Vec::new();
    for &latency_ms in latencies {
        let latency = Duration::from_millis(latency_ms);
        let server = spawn(DemoConfig {
            latency,
            ..DemoConfig::default()
        })
        .expect("start the demo agent");
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
            harness_bin,
            &["-q"],
            &env(&[("BENCH_DATASET", ds.clone())]),
            1000,
            latency,
        ));
        runs.push(run(
            &format!("macro (libtest, default threads), HTTP, {latency_ms} ms"),
            macro_bin,
            &["-q"],
            &env(&[]),
            1000,
            latency,
        ));
        if let Some(per_sample) = &targets.attribute_per_sample {
            runs.push(run(
                &format!("macro, agent per sample, HTTP, {latency_ms} ms"),
                per_sample,
                &["-q"],
                &env(&[]),
                1000,
                latency,
            ));
        }
        let cli_output = work.join("results/cli.json").to_string_lossy().into_owned();
        runs.push(run(
            &format!("evals evaluate, HTTP, {latency_ms} ms"),
            &targets.cli,
            &[
                "evaluate",
                &ds,
                "--metrics",
                "contains",
                "--output",
                &cli_output,
            ],
            &env(&[]),
            1000,
            latency,
        ));
        if let (0, Some(floor)) = (latency_ms, &targets.http_floor) {
            runs.push(run(
                "HTTP client alone (reqwest), 0 ms (floor)",
                floor,
                &[],
                &env(&[("BENCH_DATASET", ds.clone())]),
                1000,
                latency,
            ));
        }
        if latency_ms == 0 {
            runs.push(run(
                "libtest alone: 1000 trivial #[test]s (baseline)",
                baseline_bin,
                &["-q"],
                &[],
                1000,
                Duration::ZERO,
            ));
            runs.push(run(
                "harness, in-process agent",
                harness_bin,
                &["-q"],
                &env(&[("BENCH_DATASET", ds), ("BENCH_AGENT", "in-process".into())]),
                1000,
                Duration::ZERO,
            ));
        }
        drop(server);
    }
    runs
}

/// The runs of a large generated dataset: in process (`.jsonl` and
/// `.json`), and over HTTP at 0 ms.
fn large_runs(targets: &Targets, work: &Path, large: usize, runs: &mut Vec<Run>) {
    let harness_bin = &targets.harness;
    // JSON Lines, and one `.json` document (items' lines found in one pass).
    for (ext, write) in [
        ("jsonl", write_large as fn(&Path, usize)),
        ("json", write_large_json),
    ] {
        let path = work.join(format!("bench_{large}.{ext}"));
        write(&path, large);
        runs.push(run(
            &format!("harness, in-process agent, {large} samples (.{ext})"),
            harness_bin,
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
    // Over HTTP at 0 ms: the harness and `evals evaluate` (the `.jsonl`).
    let server = spawn(DemoConfig {
        latency: Duration::ZERO,
        ..DemoConfig::default()
    })
    .expect("start the demo agent");
    let ds = work.join(format!("bench_{large}.jsonl"));
    let ds = ds.to_string_lossy().into_owned();
    let env = vec![
        ("EVAL_AGENT_URL", server.url()),
        ("EVAL_CONCURRENCY", CONCURRENCY.to_string()),
        (
            "EVAL_RESULTS_DIR",
            work.join("results").to_string_lossy().into_owned(),
        ),
    ];
    let mut harness_env = env.clone();
    harness_env.push(("BENCH_DATASET", ds.clone()));
    runs.push(run(
        &format!("harness, HTTP, 0 ms, {large} samples (.jsonl)"),
        harness_bin,
        &["-q"],
        &harness_env,
        large,
        Duration::ZERO,
    ));
    let cli_output = work.join("results/cli-large.json");
    let cli_output = cli_output.to_string_lossy().into_owned();
    runs.push(run(
        &format!("evals evaluate, HTTP, 0 ms, {large} samples (.jsonl)"),
        &targets.cli,
        &[
            "evaluate",
            &ds,
            "--metrics",
            "contains",
            "--output",
            &cli_output,
        ],
        &env,
        large,
        Duration::ZERO,
    ));
    drop(server);
}

/// What nextest does with a large dataset: list every test once, then run
/// one by `--exact`.
fn list_and_exact(harness_bin: &Path, work: &Path, large: usize) {
    // nextest lists once, then starts one process per test with `--exact`.
    let path = work.join(format!("bench_{large}.jsonl"));
    // Its own results directory: the large run's results and report stay.
    let env = [
        ("BENCH_DATASET", path.to_string_lossy().into_owned()),
        ("BENCH_AGENT", "in-process".to_string()),
        (
            "EVAL_RESULTS_DIR",
            work.join("results-exact").to_string_lossy().into_owned(),
        ),
    ];
    let started = Instant::now();
    let list = Command::new(harness_bin)
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
    let exact = Command::new(harness_bin)
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

/// One run against the rate-limited demo agent.
struct Limited {
    label: String,
    wall: Duration,
    exit: i32,
    totals: Totals,
    accepted: u64,
    refused: u64,
}

/// What the results files of one run say.
#[derive(Default)]
struct Totals {
    samples: u64,
    passed: u64,
    errors: u64,
    calls: u64,
    retries: u64,
}

/// The rate-limit runs (see the module docs): 1,000 samples at 50 ms
/// against an agent answering at most `rate` requests per second.
/// The export runs (see the module docs).
fn export_runs(targets: &Targets, work: &Path, dataset: &Path, rounds: usize) {
    use eval_examples::collector::{CollectorConfig, spawn as collector};
    let latency = Duration::from_millis(50);
    let server = spawn(DemoConfig::default().with_latency(latency)).expect("start the demo agent");
    let ds = dataset.to_string_lossy().into_owned();
    let (live, live_spans) = collector(CollectorConfig::default()).expect("a collector");
    let (slow, _) = collector(CollectorConfig {
        delay: Duration::from_secs(1),
        ..CollectorConfig::default()
    })
    .expect("a slow collector");
    let (refusing, _) = collector(CollectorConfig {
        status: Some(503),
        ..CollectorConfig::default()
    })
    .expect("a refusing collector");
    // Nothing listens there.
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        format!("http://{}", l.local_addr().expect("its address"))
    };
    // `None` with spans: no export, the agent's spans received instead.
    let configs: Vec<(&str, Option<String>)> = vec![
        ("no export", None),
        ("spans in (EVAL_OTLP_RECEIVER), no export", None),
        ("collector up", Some(live.url())),
        ("collector down", Some(down)),
        ("collector slow (1 s per request)", Some(slow.url())),
        ("collector answering 503", Some(refusing.url())),
    ];
    let fronts: [(&str, &Path); 2] = [
        ("harness", &targets.harness),
        ("evals evaluate", &targets.cli),
    ];
    // (front, config) -> wall times, and the last run's note.
    let mut walls: std::collections::BTreeMap<(usize, usize), Vec<Duration>> = Default::default();
    let mut notes: std::collections::BTreeMap<(usize, usize), String> = Default::default();
    for round in 0..rounds {
        for (f, (front, exe)) in fronts.iter().enumerate() {
            for (c, (config, endpoint)) in configs.iter().enumerate() {
                let dir = work.join(format!("export-{f}-{c}"));
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).expect("create the results directory");
                // The spans run: an agent sending its spans to a receiver of
                // its own (a fresh port: the last run's is gone).
                let traced = config.starts_with("spans in").then(|| {
                    let port = std::net::TcpListener::bind("127.0.0.1:0")
                        .and_then(|l| l.local_addr())
                        .expect("a free port")
                        .port();
                    let receiver = format!("127.0.0.1:{port}");
                    let agent = spawn(
                        DemoConfig::default()
                            .with_latency(latency)
                            .with_otlp(format!("http://{receiver}")),
                    )
                    .expect("start the demo agent");
                    (agent, receiver)
                });
                let mut env = vec![
                    (
                        "EVAL_AGENT_URL",
                        traced
                            .as_ref()
                            .map_or_else(|| server.url(), |(a, _)| a.url()),
                    ),
                    ("EVAL_CONCURRENCY", CONCURRENCY.to_string()),
                    ("EVAL_RESULTS_DIR", dir.to_string_lossy().into_owned()),
                    ("BENCH_DATASET", ds.clone()),
                ];
                if let Some((_, receiver)) = &traced {
                    env.push(("EVAL_OTLP_RECEIVER", receiver.clone()));
                }
                if let Some(e) = endpoint {
                    env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", e.clone()));
                }
                let output = dir.join("cli.json").to_string_lossy().into_owned();
                let metrics = if traced.is_some() {
                    "contains, steps <= 3"
                } else {
                    "contains"
                };
                let args: Vec<&str> = match *front {
                    "evals evaluate" => {
                        vec!["evaluate", &ds, "--metrics", metrics, "--output", &output]
                    }
                    _ => vec!["-q"],
                };
                let log = dir.join("output.txt");
                let mut cmd = Command::new(exe);
                cmd.args(&args)
                    .env_remove("NEXTEST")
                    .env_remove("NEXTEST_RUN_ID")
                    .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
                    .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                    .stdout(std::fs::File::create(&log).expect("the output file"))
                    .stderr(std::fs::File::create(dir.join("errors.txt")).expect("the error file"));
                for (k, v) in &env {
                    cmd.env(k, v);
                }
                eprintln!("running: {front}, {config} (round {})", round + 1);
                let started = Instant::now();
                let status = cmd.status().expect("run the benchmark target");
                let wall = started.elapsed();
                assert!(status.success(), "{front}, {config}: {status}");
                walls.entry((f, c)).or_default().push(wall);
                let printed = std::fs::read_to_string(&log).unwrap_or_default()
                    + &std::fs::read_to_string(dir.join("errors.txt")).unwrap_or_default();
                if let Some(note) = printed
                    .lines()
                    .find(|l| l.contains("evaluation results exported"))
                {
                    notes.insert((f, c), note.trim().to_string());
                }
                if traced.is_some() {
                    notes.insert((f, c), trajectory_note(front, &output, &dir));
                }
            }
        }
    }
    print_export_table(&fronts, &configs, &walls, &notes);
    println!(
        "\nfloor = 1000 x 50 ms / {CONCURRENCY} = 3.125 s; the live collector received {} spans in all",
        live_spans.spans().len()
    );
}

/// What an export run's spans gave: how many samples have a complete
/// trajectory, read from the results file.
fn trajectory_note(front: &str, output: &str, dir: &Path) -> String {
    // What the spans gave: every sample's steps, complete.
    let file = if front == "evals evaluate" {
        std::path::PathBuf::from(output)
    } else {
        dir.join("eval-examples/bench_harness.json")
    };
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let run: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let samples = run["samples"].as_array().cloned().unwrap_or_default();
    let with_steps = samples
        .iter()
        .filter(|s| {
            s["trajectory"]["steps"]
                .as_array()
                .is_some_and(|v| !v.is_empty())
                && s["trajectory"]["incomplete"].is_null()
        })
        .count();
    format!(
        "{with_steps} of {} samples with a complete trajectory from spans ({})",
        samples.len(),
        file.display()
    )
}

/// The export runs' table: each front end and configuration's median and
/// fastest wall time, against the run without export.
fn print_export_table(
    fronts: &[(&str, &Path)],
    configs: &[(&str, Option<String>)],
    walls: &std::collections::BTreeMap<(usize, usize), Vec<Duration>>,
    notes: &std::collections::BTreeMap<(usize, usize), String>,
) {
    let median = |v: &Vec<Duration>| {
        let mut v = v.clone();
        v.sort();
        v[v.len() / 2]
    };
    println!();
    let fastest = |v: &Vec<Duration>| v.iter().min().copied().unwrap_or_default();
    println!(
        "{:<16} {:<42} {:>9} {:>9} {:>9} {:>9}   rounds s",
        "front end", "run", "median s", "vs none", "fastest s", "vs none"
    );
    for (f, (front, _)) in fronts.iter().enumerate() {
        let base = median(&walls[&(f, 0)]).as_secs_f64();
        let base_min = fastest(&walls[&(f, 0)]).as_secs_f64();
        for (c, (config, _)) in configs.iter().enumerate() {
            let w = &walls[&(f, c)];
            let m = median(w).as_secs_f64();
            let low = fastest(w).as_secs_f64();
            let all: Vec<String> = w
                .iter()
                .map(|d| format!("{:.3}", d.as_secs_f64()))
                .collect();
            println!(
                "{front:<16} {config:<42} {m:>9.3} {:>8.3}x {low:>9.3} {:>8.3}x   {}",
                m / base,
                low / base_min,
                all.join(" ")
            );
            if let Some(note) = notes.get(&(f, c)) {
                println!("{:<16}   {note}", "");
            }
        }
    }
}

fn limited_runs(targets: &Targets, work: &Path, dataset: &Path, rate: f64, fixed: bool) {
    let latency = Duration::from_millis(50);
    let ds = dataset.to_string_lossy().into_owned();
    let mut runs = Vec::new();
    // Adaptive at 16 and 64 calls at once; with `--fixed`, also a fixed 64
    // (`EVAL_AGENT_ADAPTIVE=off`), to see what adapting saves.
    let mut settings = vec![(16, true), (LIMITED_CONCURRENCY, true)];
    if fixed {
        settings.push((LIMITED_CONCURRENCY, false));
    }
    for retry_after in [true, false] {
        for &(concurrency, adaptive) in &settings {
            let mut fronts: Vec<(&str, &Path)> = vec![
                ("harness", &targets.harness),
                ("evals evaluate", &targets.cli),
                ("attribute, shared agent", &targets.attribute),
            ];
            if let Some(per_sample) = &targets.attribute_per_sample {
                fronts.push(("attribute, agent per sample", per_sample));
            }
            for (front, exe) in fronts {
                let label = format!(
                    "{front}, {} {concurrency}, {} Retry-After",
                    if adaptive { "adaptive" } else { "fixed" },
                    if retry_after { "with" } else { "no" }
                );
                let limit = RateLimit::new(rate).retry_after(retry_after);
                let config = DemoConfig::default()
                    .with_latency(latency)
                    .with_rate_limit(Some(limit));
                let server = spawn(config).expect("start the demo agent");
                let dir = work.join(format!("limited-{}", runs.len()));
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).expect("create the results directory");
                let mut env = vec![
                    ("EVAL_AGENT_URL", server.url()),
                    ("EVAL_CONCURRENCY", concurrency.to_string()),
                    (
                        "EVAL_AGENT_ADAPTIVE",
                        if adaptive { "on" } else { "off" }.into(),
                    ),
                    ("EVAL_RESULTS_DIR", dir.to_string_lossy().into_owned()),
                ];
                let output = dir.join("cli.json").to_string_lossy().into_owned();
                let args: Vec<&str> = match front {
                    "evals evaluate" => {
                        vec![
                            "evaluate",
                            &ds,
                            "--metrics",
                            "contains",
                            "--output",
                            &output,
                        ]
                    }
                    _ => vec!["-q"],
                };
                if front == "harness" {
                    env.push(("BENCH_DATASET", ds.clone()));
                }
                let r = run(&label, exe, &args, &env, 1000, latency);
                let counts = server.limit_counts().unwrap_or_default();
                let _ = server.shutdown();
                runs.push(Limited {
                    label,
                    wall: r.wall,
                    exit: r.exit,
                    totals: totals(&dir),
                    accepted: counts.accepted,
                    refused: counts.refused,
                });
            }
        }
    }
    let floor = 1000.0 / rate;
    println!();
    println!(
        "rate limit {rate} requests/s (bursts of {}), 50 ms per answer, 1000 samples: floor N/R = {floor:.1} s",
        RateLimit::new(rate).burst
    );
    println!(
        "{:<58} {:>8} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>9} {:>8} {:>5}",
        "run",
        "wall s",
        "wall/N/R",
        "samples",
        "passed",
        "errors",
        "calls",
        "retries",
        "accepted",
        "refused",
        "exit"
    );
    for r in &runs {
        let t = &r.totals;
        println!(
            "{:<58} {:>8.3} {:>8.3} {:>7} {:>7} {:>7} {:>8} {:>8} {:>9} {:>8} {:>5}",
            r.label,
            r.wall.as_secs_f64(),
            r.wall.as_secs_f64() / floor,
            t.samples,
            t.passed,
            t.errors,
            t.calls,
            t.retries,
            r.accepted,
            r.refused,
            r.exit
        );
    }
    println!(
        "errors = samples not answered (failed samples); calls, retries = the client's agent calls of answered samples \
         (results file); accepted, refused = requests the demo agent answered and refused with 429"
    );
}

/// The HTML reports under `dir` (at any depth), with their sizes in bytes.
fn html_reports(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(html_reports(&path));
        } else if path.extension().is_some_and(|x| x == "html") {
            let bytes = entry.metadata().map_or(0, |m| m.len());
            found.push((path, bytes));
        }
    }
    found
}

/// Sums the results files under `dir`.
fn totals(dir: &Path) -> Totals {
    let mut t = Totals::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let Some(v) = std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            else {
                continue;
            };
            let n = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap_or(0);
            for d in v["datasets"].as_array().into_iter().flatten() {
                t.samples += n(d, "samples");
                t.passed += n(d, "passed");
                t.errors += n(d, "errors");
            }
            for s in v["samples"].as_array().into_iter().flatten() {
                t.calls += n(&s["agent"], "calls");
                t.retries += n(&s["agent"], "retries");
            }
        }
    }
    t
}

/// Builds the benchmark targets and `evals` in release mode, in the checkout
/// at `root`; returns their executables.
fn build(root: &Path) -> Targets {
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
        .args(
            ["bench_macro_per_sample", "bench_http_floor"]
                .into_iter()
                .filter(|t| root.join(format!("benches/{t}.rs")).exists())
                .flat_map(|t| ["--test", t]),
        )
        .stderr(Stdio::inherit())
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "building the benchmark targets failed"
    );
    let mut found = (None, None, None, None, None);
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
            Some("bench_macro_per_sample") => found.3 = Some(PathBuf::from(exe)),
            Some("bench_http_floor") => found.4 = Some(PathBuf::from(exe)),
            _ => {}
        }
    }
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "eval-cli",
            "--message-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()
        .expect("run cargo");
    assert!(out.status.success(), "building evals failed");
    let cli = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["target"]["name"] == "evals" && v["executable"].is_string())
        .and_then(|v| v["executable"].as_str().map(PathBuf::from))
        .expect("evals executable");
    Targets {
        attribute: found.0.expect("bench_macro executable"),
        attribute_per_sample: found.3,
        harness: found.1.expect("bench_harness executable"),
        baseline: found.2.expect("libtest_baseline executable"),
        http_floor: found.4,
        cli,
    }
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
    // What the harness and the command spend beyond the HTTP client's own
    // work, same run. (Not the attribute: libtest's thread per test and the
    // client's work overlap, so the two do not subtract.)
    if let Some(floor) = cpu("HTTP client alone") {
        for label in ["harness, HTTP, 0 ms", "evals evaluate, HTTP, 0 ms"] {
            if let Some(c) = cpu(label) {
                println!(
                    "{label}: own CPU per sample {c:.1}µs - the HTTP client's {floor:.1}µs = {:.1}µs the tool's own",
                    c - floor
                );
            }
        }
    }
}
