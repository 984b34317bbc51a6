//! `evals calibrate LABELS --metric M`: how far a metric agrees with human
//! labels, under the judge's fingerprint. Exits 0, 1 when Cohen's κ is
//! below `--min-kappa` (so a prompt or judge-model change that makes the
//! judge worse fails CI), 2 when the labels or the setup are unusable.

use std::fmt::Write as _;
use std::path::PathBuf;

use eval_datasets::terminal::escaped;
use eval_runtime::__cli::calibrate::{Calibration, calibrate};
use eval_runtime::Services;

use crate::Failure;

/// Flags of `evals calibrate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The labels: a dataset (.jsonl, .csv, .json) whose samples also hold
    /// the answer to grade (`output`, or `response`, `answer`,
    /// `actual_output`) and the human verdict: `label` (pass/fail) and/or
    /// `human_score` (on the metric's scale); when a sample gives both they
    /// must agree.
    pub labels: PathBuf,
    /// The metric and its threshold, e.g. "faithfulness >= 0.8" (its pass
    /// or fail is compared with the human's).
    #[arg(long)]
    pub metric: String,
    /// Exit 1 when Cohen's κ is below K (or cannot be computed).
    #[arg(long, value_name = "K")]
    pub min_kappa: Option<f64>,
    /// Print the calibration as JSON.
    #[arg(long)]
    pub json: bool,
    /// Where to write the calibration (default: the project's directory
    /// under calibration/ in the results directory, where runs of this
    /// project find it and show its κ beside the same metric at the same
    /// threshold scored by the same judge).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Samples scored at once (default EVAL_CONCURRENCY, else 16).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub concurrency: Option<u64>,
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let config = crate::dotenv::settings(std::path::Path::new("."))?;
    if let Some(k) = args.min_kappa
        && !(-1.0..=1.0).contains(&k)
    {
        return Err(Failure::config("--min-kappa must be a number from -1 to 1"));
    }
    let specs = eval_datasets::metric::parse_specs(&args.metric)
        .map_err(|e| Failure::config(format!("--metric: {e}")))?;
    let [spec] = specs.as_slice() else {
        return Err(Failure::config(format!(
            "--metric: give one metric, e.g. \"faithfulness >= 0.8\" (got {})",
            specs.len()
        )));
    };
    let labels = args.labels.to_string_lossy().into_owned();
    let concurrency = config.concurrency_or(args.concurrency.map(|n| n as usize));
    let calibration = calibrate(&args.labels, &labels, spec, Services::global(), concurrency)
        .map_err(|e| Failure::config(e.to_string()))?;
    // The project is the working directory's, as for `evals evaluate`.
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::config(format!("cannot read the working directory: {e}")))?;
    let path = args.output.clone().unwrap_or_else(|| {
        eval_runtime::__cli::results::project_calibration_dir(config, &cwd)
            .join(calibration.file_name())
    });
    calibration
        .write(&path)
        .map_err(|e| Failure::config(e.to_string()))?;
    if args.json {
        outjson!(
            serde_json::to_string_pretty(&calibration)
                .map_err(|e| Failure::config(e.to_string()))?
        );
    } else {
        out!("{}", render(&calibration));
        outln!("calibration: {}", escaped(&path.display().to_string()));
        if args.output.is_none() {
            outln!(
                "shown beside runs of this project that score {} with this judge",
                shown(&calibration.spec)
            );
        }
    }
    let kappa = calibration.agreement.kappa;
    match args.min_kappa {
        Some(min) if kappa.is_none_or(|k| k < min) => {
            errln!(
                "error: Cohen's κ {} is below --min-kappa {min}",
                kappa.map_or(
                    "(undefined: the metric or the humans say only one thing)".into(),
                    |k| format!("{k:.3}")
                )
            );
            Ok(1)
        }
        _ => Ok(0),
    }
}

/// `text` on one line, at most 160 characters, escaped.
fn short(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(160) {
        Some((end, _)) => format!("{}…", escaped(&flat[..end])),
        None => escaped(&flat).into_owned(),
    }
}

/// Text from the labels file, the judge or a server, escaped for a
/// terminal (sample ids, file names, metric names, errors).
fn shown(text: &dyn std::fmt::Display) -> String {
    escaped(&text.to_string()).into_owned()
}

/// The calibration for a terminal.
fn render(c: &Calibration) -> String {
    let a = &c.agreement;
    let m = &a.confusion;
    let mut out = format!(
        "calibration of {} against {} human label(s) ({}, sha256 {})\n",
        shown(&c.spec),
        m.total(),
        shown(&c.labels),
        c.labels_sha256.get(..12).unwrap_or(&c.labels_sha256)
    );
    match &c.judge {
        Some(j) => {
            let _ = write!(
                out,
                "judge: {} at {} (temperature {}, seed {}",
                shown(&j.model),
                shown(&j.host),
                j.temperature,
                j.seed
            );
            if let Some(v) = j.metrics.get(&c.metric) {
                for (prompt, version) in &v.prompts {
                    let _ = write!(out, "; {} {}", shown(prompt), shown(version));
                }
                let _ = write!(out, "; definition {}", shown(&v.definition));
            }
            out.push_str(")\n");
        }
        None => out.push_str("judge: none (the metric is not scored by a judge)\n"),
    }
    let pct = |x: Option<f64>| x.map_or("—".to_string(), |x| format!("{:.1}%", 100.0 * x));
    let kappa = match (a.kappa, a.kappa_interval) {
        (Some(k), Some(i)) => format!("{k:.3} (95% {:.3}..{:.3})", i.low, i.high),
        (Some(k), None) => format!("{k:.3}"),
        _ => "undefined (the metric or the humans say only one thing)".into(),
    };
    let _ = writeln!(out, "Cohen's κ {kappa}");
    let _ = writeln!(
        out,
        "accuracy {} ({} of {}), true-pass rate {} ({} of {} human passes), true-fail rate {} ({} of {} human fails)",
        pct(Some(a.accuracy)),
        m.true_pass + m.true_fail,
        m.total(),
        pct(a.true_pass_rate),
        m.true_pass,
        m.true_pass + m.false_fail,
        pct(a.true_fail_rate),
        m.true_fail,
        m.true_fail + m.false_pass
    );
    let _ = writeln!(out, "                human pass  human fail");
    let _ = writeln!(
        out,
        "  metric pass   {:>10}  {:>10}",
        m.true_pass, m.false_pass
    );
    let _ = writeln!(
        out,
        "  metric fail   {:>10}  {:>10}",
        m.false_fail, m.true_fail
    );
    if let Some(s) = &c.spearman {
        let interval = s.interval.map_or(String::new(), |i| {
            format!(" (95% {:.3}..{:.3})", i.low, i.high)
        });
        let _ = writeln!(
            out,
            "Spearman's ρ {:.3}{interval} over {} human score(s)",
            s.rho, s.pairs
        );
    }
    if !c.unscored.is_empty() {
        let _ = writeln!(out, "not scored ({}), left out:", c.unscored.len());
        for u in c.unscored.iter().take(20) {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                shown(&u.source),
                shown(&u.id),
                shown(&u.error)
            );
        }
    }
    if !c.disagreements.is_empty() {
        let _ = writeln!(out, "disagreements ({}):", c.disagreements.len());
        for d in c.disagreements.iter().take(20) {
            let _ = writeln!(
                out,
                "  {} {}: human {}, {} {:.3}{}",
                shown(&d.source),
                shown(&d.id),
                if d.human_passes { "pass" } else { "fail" },
                shown(&c.metric),
                d.score,
                d.reason
                    .as_deref()
                    .map(|r| format!(" ({})", short(r)))
                    .unwrap_or_default()
            );
        }
        if c.disagreements.len() > 20 {
            let _ = writeln!(out, "  ... and {} more", c.disagreements.len() - 20);
        }
    }
    out
}
