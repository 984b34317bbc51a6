//! A loaded dataset's samples and test names, kept small. A `.jsonl` file's
//! samples are read again from the file, one at a time, when each runs (16
//! bytes a sample held: where it is), so a run of a million samples never
//! holds them all; other datasets (a `.json` document, a `.csv`, samples
//! given inline, the attribute's embedded bytes) are held. Test names live
//! in one string.
//!
//! The file is kept open from the load on: a file replaced since (an editor
//! writes a new one) is still the one loaded; one changed in place (another
//! length or modification time) makes each sample read after the change an
//! error that says so, never another sample.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use eval_datasets::{Dataset, Sample};

/// Test names (their sample part), in one string.
#[derive(Debug, Default)]
pub(crate) struct Names {
    text: String,
    /// Where each name ends in `text` (4 bytes a name: names of one
    /// dataset beyond 4 GiB in all are refused at the load).
    ends: Vec<u32>,
}

impl Names {
    /// The `i`th name.
    pub(crate) fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    /// Adds `name`; `false` (and nothing added) past 4 GiB of names.
    #[must_use]
    pub(crate) fn push(&mut self, name: &str) -> bool {
        let Ok(end) = u32::try_from(self.text.len() + name.len()) else {
            return false;
        };
        self.text.push_str(name);
        self.ends.push(end);
        true
    }

    /// The names of `keep` (indexes into these, in order), with `renamed`
    /// ones replaced; `None` past 4 GiB of them.
    pub(crate) fn picked(
        &self,
        keep: impl Iterator<Item = usize>,
        renamed: &[(usize, String)],
    ) -> Option<Names> {
        Names::of(
            keep.map(|i| match renamed.binary_search_by_key(&i, |(r, _)| *r) {
                Ok(at) => renamed[at].1.as_str(),
                Err(_) => self.get(i),
            }),
        )
    }

    /// `names`, or `None` past 4 GiB of them ([`too_long`] says so).
    pub(crate) fn of<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Option<Names> {
        let mut out = Names::default();
        for n in names {
            if !out.push(n.as_ref()) {
                return None;
            }
        }
        Some(out)
    }
}

/// A dataset's samples: held, or read from their file when asked for.
#[derive(Debug)]
pub(crate) enum Samples {
    Held(Vec<Sample>),
    OnDisk(OnDisk),
}

impl Samples {
    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        match self {
            Samples::Held(v) => v.len(),
            Samples::OnDisk(d) => d.len(),
        }
    }

    /// Sample `i` (read from its file when not held); an error says why it
    /// cannot be read (the file changed since the load).
    pub(crate) fn get(&self, i: usize) -> Result<Cow<'_, Sample>, String> {
        match self {
            Samples::Held(v) => Ok(Cow::Borrowed(&v[i])),
            Samples::OnDisk(d) => d.read(i).map(Cow::Owned),
        }
    }

    /// A stand-in for sample `i` when it cannot be read: no input, its
    /// place in its file (for the report that says why).
    pub(crate) fn placeholder(&self, i: usize) -> Sample {
        match self {
            Samples::Held(v) => v[i].clone(),
            Samples::OnDisk(d) => {
                let mut s = Sample::new("");
                s.source.file = d.shown.clone();
                s.source.line = d.at[i].line as usize;
                s.source.offset = d.at[i].offset;
                s
            }
        }
    }
}

/// Where a sample's line is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pos {
    pub offset: u64,
    pub line: u32,
    /// Its index among the file's samples.
    pub index: u32,
}

/// Samples of a `.jsonl` file, read again one at a time.
#[derive(Debug)]
pub(crate) struct OnDisk {
    file: Mutex<BufReader<File>>,
    shown: Arc<str>,
    /// The file's length and modification time when it was loaded.
    stamp: (u64, Option<SystemTime>),
    at: Vec<Pos>,
}

/// A file's length and modification time.
pub(crate) fn stamp(file: &File) -> std::io::Result<(u64, Option<SystemTime>)> {
    let meta = file.metadata()?;
    Ok((meta.len(), meta.modified().ok()))
}

impl OnDisk {
    /// The samples at `at` of `file` (named `shown`), whose state at the
    /// load was `stamp`.
    pub(crate) fn new(
        file: File,
        shown: &str,
        stamp: (u64, Option<SystemTime>),
        at: Vec<Pos>,
    ) -> OnDisk {
        OnDisk {
            file: Mutex::new(BufReader::with_capacity(4096, file)),
            shown: shown.into(),
            stamp,
            at,
        }
    }

    /// How many samples there are.
    pub(crate) fn len(&self) -> usize {
        self.at.len()
    }

    /// Where sample `i` is.
    pub(crate) fn pos(&self, i: usize) -> Pos {
        self.at[i]
    }

    /// The same file, with only the samples at `keep` (indexes, in order).
    pub(crate) fn keeping(self, keep: &[usize]) -> OnDisk {
        OnDisk {
            at: keep.iter().map(|&i| self.at[i]).collect(),
            ..self
        }
    }

    /// Sample `i`, read from the file.
    pub(crate) fn read(&self, i: usize) -> Result<Sample, String> {
        let pos = self.at[i];
        let mut raw = Vec::new();
        {
            let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
            let now = stamp(file.get_ref()).map_err(|e| format!("{}: {e}", self.shown))?;
            if now != self.stamp {
                return Err(format!(
                    "{}:{}: the dataset file changed during the run; this sample was not read",
                    self.shown, pos.line
                ));
            }
            file.seek(SeekFrom::Start(pos.offset))
                .and_then(|_| file.read_until(b'\n', &mut raw))
                .map_err(|e| format!("{}:{}: {e}", self.shown, pos.line))?;
        }
        // The line ends at its first `\n` or `\r` (as the load split it).
        if let Some(end) = raw.iter().position(|&b| b == b'\n' || b == b'\r') {
            raw.truncate(end);
        }
        Dataset::jsonl_sample(
            &self.shown,
            &raw,
            (pos.offset, pos.line as usize, pos.index as usize),
        )
        .map_err(|e| e.to_string())
    }
}

/// The problem of a dataset whose test names take more than 4 GiB.
pub(crate) fn too_long(shown: &str) -> Vec<String> {
    vec![format!(
        "{shown}: its test names take more than 4 GiB; split the dataset"
    )]
}
