//! The harness's trials run as libtest runs tests — the same arguments
//! (parsed by `libtest-mimic`), the same output in the pretty, terse and
//! JSON formats, the same `--list` — without a list of trials in memory: a
//! trial is its index, its name asked for when it is printed, so a
//! million-sample dataset costs no memory here. The messages of failed
//! trials, printed at the end as libtest prints them, wait in an unlinked
//! temporary file (in memory when none can be written).

use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use anstyle::{AnsiColor, Color, Style};
use libtest_mimic::{Arguments, ColorSetting, FormatSetting};

use crate::engine::Selection;

/// What a run of trials came to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Conclusion {
    pub passed: u64,
    pub failed: u64,
    pub filtered_out: u64,
}

impl Conclusion {
    /// Whether a trial failed (libtest's exit code 101).
    pub(crate) fn has_failed(&self) -> bool {
        self.failed > 0
    }
}

/// The trials `0..count`, named by `name`, each run by `trial` (an error
/// is its failure message), as `args` say: those `args` select (the
/// engine's [`Selection`]) are run, on `--test-threads` threads (1 unless
/// told), or listed.
pub(crate) fn run(
    args: &Arguments,
    count: usize,
    name: &(dyn Fn(usize) -> String + Sync),
    trial: &(dyn Fn(usize) -> Result<(), String> + Sync),
) -> io::Result<Conclusion> {
    let started = Instant::now();
    // What is listed is what would run (no trial is ignored: `--ignored`
    // lists and runs none).
    let selection = Selection::from_arguments(&Arguments {
        list: false,
        ..args.clone()
    });
    // A name is made only where it is needed: to select when there is a
    // filter, to align the pretty format, to print it (not in the terse
    // format, unless the trial failed).
    let all = selection.takes_all();
    let selected = |i: usize| all || selection.selects(&name(i));
    let mut out = Printer::new(args)?;
    if args.list {
        for i in (0..count).filter(|i| selected(*i)) {
            writeln!(out.out, "{}: test", name(i))?;
        }
        out.out.flush()?;
        return Ok(Conclusion::default());
    }
    let (mut chosen, mut width) = (0usize, 0usize);
    if all && out.format != FormatSetting::Pretty {
        chosen = count;
    } else {
        for i in 0..count {
            let n = name(i);
            if all || selection.selects(&n) {
                chosen += 1;
                width = width.max(n.chars().count());
            }
        }
    }
    out.width = width;
    let mut conclusion = Conclusion {
        filtered_out: (count - chosen) as u64,
        ..Conclusion::default()
    };
    out.title(chosen)?;
    let mut failures = Failures::new();
    let mut outcome = |i: usize, result: Result<(), String>, out: &mut Printer| -> io::Result<()> {
        let n = if out.format == FormatSetting::Terse && result.is_ok() {
            String::new()
        } else {
            name(i)
        };
        out.start(&n)?;
        out.outcome(&n, &result)?;
        match result {
            Ok(()) => conclusion.passed += 1,
            Err(message) => {
                conclusion.failed += 1;
                failures.push(&n, &message);
            }
        }
        Ok(())
    };
    let threads = args.test_threads.unwrap_or(1).max(1);
    if threads == 1 {
        for i in (0..count).filter(|i| selected(*i)) {
            let result = contained(|| trial(i));
            outcome(i, result, &mut out)?;
        }
    } else {
        let next = AtomicUsize::new(0);
        let (done, results) = mpsc::channel();
        std::thread::scope(|scope| -> io::Result<()> {
            for _ in 0..threads {
                let done = done.clone();
                let next = &next;
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        if selected(i) && done.send((i, contained(|| trial(i)))).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done);
            for (i, result) in results {
                outcome(i, result, &mut out)?;
            }
            Ok(())
        })?;
    }
    out.failures(&mut failures)?;
    out.summary(&conclusion, started.elapsed().as_secs_f64())?;
    Ok(conclusion)
}

/// `trial()`'s result, a panic in it a failure (as libtest reports one).
fn contained(trial: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(trial)).unwrap_or_else(|panic| {
        let text = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied());
        Err(match text {
            Some(text) => format!("test panicked: {text}"),
            None => "test panicked".to_string(),
        })
    })
}

/// Failed trials' names and messages, until the end.
struct Failures {
    file: Option<std::fs::File>,
    /// The bytes of `file` that are whole records.
    written: u64,
    /// A write to `file` failed: the rest are held.
    full: bool,
    /// Those kept in memory: the first 64, then any after a failed write
    /// (`head` of them came before those on disk).
    held: Vec<(String, String)>,
    head: usize,
    count: usize,
    /// One record, built before its single write.
    record: Vec<u8>,
}

impl Failures {
    fn new() -> Self {
        Failures {
            file: None,
            written: 0,
            full: false,
            held: Vec::new(),
            head: 0,
            count: 0,
            record: Vec::new(),
        }
    }

    /// Keeps one (on disk: a length-prefixed name and message, in one
    /// write; if it fails, this one and the rest are held).
    fn push(&mut self, name: &str, message: &str) {
        self.count += 1;
        if self.full || (self.file.is_none() && self.held.len() < 64) {
            self.held.push((name.to_string(), message.to_string()));
            return;
        }
        if self.file.is_none() {
            match tempfile::tempfile() {
                Ok(file) => {
                    self.file = Some(file);
                    self.head = self.held.len();
                }
                Err(_) => {
                    self.full = true;
                    self.held.push((name.to_string(), message.to_string()));
                    return;
                }
            }
        }
        self.record.clear();
        self.record
            .extend_from_slice(&(name.len() as u64).to_le_bytes());
        self.record
            .extend_from_slice(&(message.len() as u64).to_le_bytes());
        self.record.extend_from_slice(name.as_bytes());
        self.record.extend_from_slice(message.as_bytes());
        match self.file.as_mut().map(|f| f.write_all(&self.record)) {
            Some(Ok(())) => self.written += self.record.len() as u64,
            _ => {
                self.full = true;
                self.held.push((name.to_string(), message.to_string()));
            }
        }
    }

    /// Calls `f` with each, in the order they failed.
    fn each(&mut self, mut f: impl FnMut(&str, &str) -> io::Result<()>) -> io::Result<()> {
        let head = if self.file.is_some() {
            self.head
        } else {
            self.held.len()
        };
        for (name, message) in &self.held[..head] {
            f(name, message)?;
        }
        if let Some(file) = &mut self.file {
            file.seek(SeekFrom::Start(0))?;
            // Whole records only: a failed write may have left a part.
            let mut file = BufReader::new(io::Read::take(&*file, self.written));
            let mut lens = [0u8; 16];
            loop {
                if file.fill_buf()?.is_empty() {
                    break;
                }
                io::Read::read_exact(&mut file, &mut lens)?;
                let name_len = u64::from_le_bytes(lens[..8].try_into().unwrap_or_default());
                let message_len = u64::from_le_bytes(lens[8..].try_into().unwrap_or_default());
                let mut name = vec![0u8; usize::try_from(name_len).unwrap_or(0)];
                let mut message = vec![0u8; usize::try_from(message_len).unwrap_or(0)];
                io::Read::read_exact(&mut file, &mut name)?;
                io::Read::read_exact(&mut file, &mut message)?;
                f(
                    &String::from_utf8_lossy(&name),
                    &String::from_utf8_lossy(&message),
                )?;
            }
        }
        for (name, message) in &self.held[head..] {
            f(name, message)?;
        }
        Ok(())
    }
}

/// libtest's output.
struct Printer {
    out: Box<dyn Write>,
    format: FormatSetting,
    width: usize,
}

impl Printer {
    fn new(args: &Arguments) -> io::Result<Printer> {
        let color = args.color.unwrap_or(ColorSetting::Auto);
        let out: Box<dyn Write> = match &args.logfile {
            Some(path) => {
                let file = std::fs::File::create(path)?;
                match color {
                    ColorSetting::Always => Box::new(anstream::AutoStream::always(file)),
                    _ => Box::new(anstream::AutoStream::never(file)),
                }
            }
            None => {
                let choice = match color {
                    ColorSetting::Auto => anstream::ColorChoice::Auto,
                    ColorSetting::Always => anstream::ColorChoice::Always,
                    ColorSetting::Never => anstream::ColorChoice::Never,
                };
                Box::new(anstream::AutoStream::new(io::stdout(), choice))
            }
        };
        let format = if args.quiet {
            FormatSetting::Terse
        } else {
            args.format.unwrap_or(FormatSetting::Pretty)
        };
        Ok(Printer {
            out,
            format,
            width: 0,
        })
    }

    fn title(&mut self, count: usize) -> io::Result<()> {
        match self.format {
            FormatSetting::Json => writeln!(
                self.out,
                r#"{{ "type": "suite", "event": "started", "test_count": {count} }}"#
            ),
            _ => {
                let s = if count == 1 { "" } else { "s" };
                write!(self.out, "\nrunning {count} test{s}\n")
            }
        }
    }

    fn start(&mut self, name: &str) -> io::Result<()> {
        match self.format {
            FormatSetting::Pretty => {
                write!(self.out, "test {name:<0$} ... ", self.width)?;
                self.out.flush()
            }
            FormatSetting::Terse => Ok(()),
            FormatSetting::Json => writeln!(
                self.out,
                r#"{{ "type": "test", "event": "started", "name": {} }}"#,
                json(name)
            ),
        }
    }

    fn outcome(&mut self, name: &str, result: &Result<(), String>) -> io::Result<()> {
        match self.format {
            FormatSetting::Pretty => {
                self.verdict(result.is_ok())?;
                writeln!(self.out)
            }
            FormatSetting::Terse => {
                let (style, c) = painted(result.is_ok(), if result.is_ok() { "." } else { "F" });
                write!(self.out, "{style}{c}{style:#}")
            }
            FormatSetting::Json => {
                let (event, stdout) = match result {
                    Ok(()) => ("ok", String::new()),
                    Err(message) => (
                        "failed",
                        format!(
                            r#", "stdout": {}"#,
                            json(&format!("Error: \"{message}\"\n"))
                        ),
                    ),
                };
                writeln!(
                    self.out,
                    r#"{{ "type": "test", "name": {}, "event": "{event}"{stdout} }}"#,
                    json(name)
                )
            }
        }
    }

    fn verdict(&mut self, passed: bool) -> io::Result<()> {
        let (style, word) = painted(passed, if passed { "ok" } else { "FAILED" });
        write!(self.out, "{style}{word}{style:#}")
    }

    fn failures(&mut self, failures: &mut Failures) -> io::Result<()> {
        if failures.count == 0 || self.format == FormatSetting::Json {
            return Ok(());
        }
        write!(self.out, "\nfailures:\n\n")?;
        failures.each(|name, message| write!(self.out, "---- {name} ----\n{message}\n\n"))?;
        write!(self.out, "\nfailures:\n")?;
        failures.each(|name, _| writeln!(self.out, "    {name}"))
    }

    fn summary(&mut self, c: &Conclusion, secs: f64) -> io::Result<()> {
        match self.format {
            FormatSetting::Json => writeln!(
                self.out,
                r#"{{ "type": "suite", "event": "{}", "passed": {}, "failed": {}, "ignored": 0, "measured": 0, "filtered_out": {}, "exec_time": {secs} }}"#,
                if c.has_failed() { "failed" } else { "ok" },
                c.passed,
                c.failed,
                c.filtered_out
            ),
            _ => {
                write!(self.out, "\ntest result: ")?;
                self.verdict(!c.has_failed())?;
                write!(
                    self.out,
                    ". {} passed; {} failed; 0 ignored; 0 measured; {} filtered out; finished in {secs:.2}s\n\n",
                    c.passed, c.failed, c.filtered_out
                )?;
                self.out.flush()
            }
        }
    }
}

/// `text`'s style: green when it passed, red when not.
fn painted(passed: bool, text: &str) -> (Style, &str) {
    let color = if passed {
        AnsiColor::Green
    } else {
        AnsiColor::Red
    };
    (Style::new().fg_color(Some(Color::Ansi(color))), text)
}

/// `text` as a JSON string.
fn json(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use libtest_mimic::{Arguments, Failed, FormatSetting, Trial};

    /// Failed trials' messages come back in the order they failed: the
    /// first 64 held, the next on disk, and after a failed write to disk
    /// the rest held again, no half record read.
    #[cfg(target_os = "linux")]
    #[test]
    fn failures_come_back_in_order_whatever_the_disk_does() {
        use std::os::fd::AsRawFd;
        let mut failures = super::Failures::new();
        let name = |i: usize| format!("t{i}");
        let message = |i: usize| "x".repeat(i % 7) + &i.to_string();
        for i in 0..100 {
            failures.push(&name(i), &message(i));
        }
        // The same file, read-only: writes to it fail from here on.
        let fd = failures.file.as_ref().unwrap().as_raw_fd();
        failures.file = Some(std::fs::File::open(format!("/proc/self/fd/{fd}")).unwrap());
        for i in 100..150 {
            failures.push(&name(i), &message(i));
        }
        let mut seen = Vec::new();
        failures
            .each(|n, m| {
                seen.push((n.to_string(), m.to_string()));
                Ok(())
            })
            .unwrap();
        let expected: Vec<_> = (0..150).map(|i| (name(i), message(i))).collect();
        assert_eq!(seen, expected);
        assert_eq!(failures.count, 150);
    }

    const NAMES: [&str; 5] = ["rag::a", "rag::bb__x", "rag::c", "qa::d", "qa::e__x"];

    /// Fails the trials whose name ends in `c` or `x`, with a two-line message.
    fn verdict(name: &str) -> Result<(), String> {
        if name.ends_with('c') || name.ends_with('x') {
            Err(format!("{name} failed\n  because"))
        } else {
            Ok(())
        }
    }

    /// What libtest-mimic and this runner write for `args` (times blanked).
    fn both(args: &Arguments) -> (String, String, u64, u64) {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("eval-trials-{}-{call}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let read = |path: &std::path::Path| {
            let text = std::fs::read_to_string(path).unwrap();
            let time = regex::Regex::new(r#"finished in [0-9.]+s|"exec_time": [0-9.e-]+"#).unwrap();
            time.replace_all(&text, "TIME").into_owned()
        };
        let theirs_path = dir.join("theirs.log");
        let mine_path = dir.join("mine.log");
        let trials = NAMES
            .iter()
            .map(|n| {
                let n = n.to_string();
                Trial::test(n.clone(), move || verdict(&n).map_err(Failed::from))
            })
            .collect();
        let theirs_args = Arguments {
            logfile: Some(theirs_path.to_string_lossy().into_owned()),
            ..args.clone()
        };
        let theirs = libtest_mimic::run(&theirs_args, trials);
        let mine_args = Arguments {
            logfile: Some(mine_path.to_string_lossy().into_owned()),
            ..args.clone()
        };
        let mine = super::run(&mine_args, NAMES.len(), &|i| NAMES[i].to_string(), &|i| {
            verdict(NAMES[i])
        })
        .unwrap();
        assert_eq!(theirs.num_passed, mine.passed);
        assert_eq!(theirs.num_failed, mine.failed);
        assert_eq!(theirs.num_filtered_out, mine.filtered_out);
        (
            read(&theirs_path),
            read(&mine_path),
            mine.passed,
            mine.failed,
        )
    }

    #[test]
    fn the_output_is_libtests_in_every_format() {
        let one = Arguments {
            test_threads: Some(1),
            ..Arguments::default()
        };
        let cases = [
            one.clone(),
            Arguments {
                quiet: true,
                ..one.clone()
            },
            Arguments {
                format: Some(FormatSetting::Json),
                ..one.clone()
            },
            Arguments {
                filter: Some("rag::".into()),
                skip: vec!["bb".into()],
                ..one.clone()
            },
            Arguments {
                filter: Some("qa::d".into()),
                exact: true,
                ..one.clone()
            },
            Arguments {
                list: true,
                filter: Some("__x".into()),
                ..one.clone()
            },
            Arguments {
                list: true,
                ignored: true,
                ..one.clone()
            },
        ];
        let mut failed = 0;
        for args in cases {
            let (theirs, mine, _, f) = both(&args);
            assert_eq!(mine, theirs, "{args:?}");
            failed += f;
        }
        assert!(failed > 0, "the cases include failures");
    }

    #[test]
    fn trials_on_several_threads_all_run_once() {
        let args = Arguments {
            test_threads: Some(3),
            ..Arguments::default()
        };
        let (theirs, mine, passed, failed) = both(&args);
        assert_eq!((passed, failed), (2, 3));
        // Completion order may differ; the lines are the same.
        let sorted = |s: &str| {
            let mut v: Vec<&str> = s.lines().collect();
            v.sort_unstable();
            v.join("\n")
        };
        assert_eq!(sorted(&mine), sorted(&theirs));
    }
}
