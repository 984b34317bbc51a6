//! The end of a run, one sequence for every front end: the results file,
//! the HTML report beside it, JUnit XML, the comparison with a baseline and
//! the GitHub step summary, in that order and by the same rules. What
//! differs between the front ends is only where the run ends ([`Ending`]):
//!
//! * a test binary's process (the harness; the attribute's tests, whose file
//!   is rewritten as each dataset finishes);
//! * one nextest part (a process runs one test): its part file only, as
//!   `evals report merge` writes the report, JUnit and summary of the whole;
//! * the `evals` command, whose flags say where results go.
//!
//! The results file, the HTML report and JUnit are streamed to disk one
//! record at a time ([`write_streamed`]) unless something needs the run in
//! memory: a baseline, a step summary or the command's `--json` need it
//! whole, and then every file is written from that one [`Results`]. Either
//! way the files are written in that order, and one that cannot be written
//! fails the end with its own path.

use std::path::{Path, PathBuf};

use super::{Files, Run, results_of, write_streamed};
use crate::config::Config;
use crate::model::{DatasetSummary, Error, Results};
use crate::output::{
    BaselineOutcome, ResultsKey, RunVerdict, Shown, auto_step_summary, auto_step_summary_streamed,
    check_baseline, html_path, write_html,
};
use crate::plan::Baseline;

/// Where a run ends.
#[derive(Debug, Clone)]
pub(crate) enum Ending {
    /// A test binary's run in its own process, its results at `path`.
    /// `whole`: the process has run everything it will (the harness); the
    /// attribute's tests rewrite the file as datasets finish, and as no test
    /// knows it is the last, nothing is appended (step summary) and no
    /// baseline judged there. `missing`: datasets the file should hold and
    /// does not (the run is then incomplete).
    Process {
        path: PathBuf,
        whole: bool,
        missing: Vec<String>,
    },
    /// One nextest part: its part file at `path`, nothing else. `missing`:
    /// the datasets of the binary this part does not hold, when the front
    /// end knows them otherwise than by the run's plan (the attribute), so
    /// that a join lacking all of a dataset's parts says so.
    Part { path: PathBuf, missing: Vec<String> },
    /// The `evals` command: the results file where `--output` says (none:
    /// no file, only the summaries), the HTML report beside it when `html`.
    /// `keep`: the whole run is read back into memory (`--json` prints it);
    /// else the files are streamed and only what the summary shows is kept.
    Command {
        output: Option<PathBuf>,
        html: bool,
        keep: bool,
    },
}

/// What the end of a run is given besides the runs.
pub(crate) struct End<'a> {
    pub ending: Ending,
    /// The front end's own JUnit path (the harness's `.junit()`,
    /// `--junit`), over `EVAL_JUNIT`.
    pub junit: Option<PathBuf>,
    /// The plan's baseline.
    pub baseline: Option<&'a Baseline>,
}

/// What the end of a run wrote and concluded.
#[derive(Debug)]
pub(crate) struct Ended {
    /// The datasets' summaries and gate verdicts.
    pub datasets: Vec<DatasetSummary>,
    /// The whole run, when it was built in memory; else (streamed) its
    /// header only, for the command: summaries, gates, provenance, no samples.
    pub results: Option<Results>,
    /// What a summary shows of the samples, when they were streamed.
    pub shown: Option<Shown>,
    /// The results file written.
    pub results_path: Option<PathBuf>,
    /// The HTML report written.
    pub html: Option<PathBuf>,
    /// The JUnit file written.
    pub junit: Option<PathBuf>,
    /// The comparison with the baseline, when one was judged.
    pub baseline: Option<(PathBuf, BaselineOutcome)>,
    /// What it amounts to (regressions included).
    pub verdict: RunVerdict,
    /// Things worth saying that are not errors.
    pub notes: Vec<String>,
}

/// Ends `runs` as `end` says (see the [module docs](self)).
pub(crate) fn end_run(
    runs: &[&Run],
    key: &ResultsKey,
    end: End<'_>,
    config: &Config,
) -> Result<Ended, Error> {
    // Recorded answers are written first; a recording that cannot be
    // written fails the run once its results are written.
    let recorded: Result<(), crate::model::CassetteError> = runs
        .iter()
        .filter_map(|r| r.services().cassette.as_deref())
        .try_for_each(crate::cassette::Cassette::finish);
    let mut ended = write_end(runs, key, end, config)?;
    // Exported evaluations: each run's own span, what is queued sent.
    for run in runs {
        let names: Vec<&str> = run.dataset_names().collect();
        let notes = run.services().traces.end_run(&run.trace, &names);
        ended.notes.extend(notes);
    }
    recorded.map_err(|e| Error::Agent(e.into()))?;
    Ok(ended)
}

/// [`end_run`]'s files and checks.
fn write_end(
    runs: &[&Run],
    key: &ResultsKey,
    end: End<'_>,
    config: &Config,
) -> Result<Ended, Error> {
    let mut notes = Vec::new();
    let (results_path, html, whole, missing): (Option<&Path>, Option<PathBuf>, bool, &[String]) =
        match &end.ending {
            Ending::Process {
                path,
                whole,
                missing,
            } => (
                Some(path),
                config.html.then(|| html_path(path)),
                *whole,
                missing,
            ),
            Ending::Part { path, missing } => (Some(path), None, false, missing),
            Ending::Command { output, html, .. } => (
                output.as_deref(),
                output
                    .as_deref()
                    .filter(|_| *html && config.html)
                    .map(html_path),
                true,
                &[],
            ),
        };
    let part = matches!(end.ending, Ending::Part { .. });
    // Said once per run where it ends whole (not as each of the
    // attribute's datasets finishes, not per nextest process).
    if whole {
        for run in runs {
            for note in run.calibration_notes() {
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
    let keep = matches!(end.ending, Ending::Command { keep: true, .. });
    // Where the samples' relative paths start, for JUnit's `file=`: the
    // command's are the working directory's (CARGO_MANIFEST_DIR, which
    // `cargo run` sets, is not theirs); the attribute's and the harness's
    // the crate's.
    let base = match end.ending {
        Ending::Command { .. } => std::env::current_dir().unwrap_or_else(|_| config.base_dir()),
        _ => config.base_dir(),
    };
    let junit = (!part)
        .then(|| end.junit.clone().or_else(|| config.junit.clone()))
        .flatten();
    let step_summary = whole && config.step_summary.is_some() && config.step_summary_auto;
    let baseline = match end.baseline {
        Some(b) if part => {
            notes.push(format!(
                "baseline {} is not compared under nextest; merge the parts (`evals report merge`) and run `evals report diff {} <merged>`",
                b.path.display(),
                b.path.display()
            ));
            None
        }
        Some(b) if whole => Some(b),
        _ => None,
    };

    if !(keep || baseline.is_some()) {
        // Nothing needs the run whole: stream it.
        // The command prints what the samples were; a step summary too.
        let command = matches!(end.ending, Ending::Command { .. });
        let mut shown = (command || step_summary).then(Shown::default);
        let files = Files {
            results: results_path,
            html: html.as_deref(),
            junit: junit.as_deref(),
            base: Some(&base),
        };
        let header = write_streamed(runs, key, missing, files, shown.as_mut())?;
        if step_summary && let Some(gathered) = &shown {
            auto_step_summary_streamed(config, &header, gathered);
        }
        let shown = shown.filter(|_| command);
        return Ok(Ended {
            verdict: RunVerdict::of(&header.datasets),
            datasets: header.datasets.clone(),
            results: command.then_some(header),
            shown,
            results_path: results_path.map(Path::to_path_buf),
            html,
            junit,
            baseline: None,
            notes,
        });
    }

    let results = results_of(runs, key, missing)?;
    if let Some(path) = results_path {
        results.write(path)?;
    }
    let mut verdict = RunVerdict::of(&results.datasets);
    let compared = match baseline {
        Some(b) => {
            let outcome = check_baseline(
                &results,
                &b.path,
                b.epsilon,
                config.accept_baseline,
                b.allow,
            )?;
            verdict.regressions = outcome.regressions();
            Some((b.path.clone(), outcome))
        }
        None => None,
    };
    if let Some(html) = &html {
        // Compared with a baseline: the report shows what changed since.
        let old = compared
            .as_ref()
            .and_then(|(old, _)| Results::read(old).ok());
        write_html(html, std::slice::from_ref(&results), old.as_ref())?;
    }
    if let Some(junit) = &junit {
        results.write_junit_from(junit, Some(&base))?;
    }
    if step_summary {
        auto_step_summary(
            config,
            &results,
            compared.as_ref().map(|(p, b)| (p.as_path(), b)),
        );
    }
    Ok(Ended {
        datasets: results.datasets.clone(),
        results: Some(results),
        shown: None,
        results_path: results_path.map(Path::to_path_buf),
        html,
        junit,
        baseline: compared,
        verdict,
        notes,
    })
}
