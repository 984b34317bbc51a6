//! A loaded dataset's samples and test names, kept small. A `.jsonl` file's
//! samples are read again from the file, one at a time, when each runs (16
//! bytes a sample held: where it is), so a run of a million samples never
//! holds them all; other datasets (a `.json` document, a `.csv`, samples
//! given inline, the attribute's embedded bytes) are held. Test names live
//! in one string.
//!
//! The file is kept open from the load on: a file replaced since (an editor
//! writes a new one) is still the one loaded; one changed in place (another
//! length or modification time) makes each sample read after the change is
//! seen an error that says so, never another sample. The file is read in
//! blocks (samples run in file order, so most reads are a buffer's) and
//! checked before each block is read.

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
    file: Mutex<Reader>,
    shown: Arc<str>,
    /// The file's length and modification time when it was loaded.
    stamp: (u64, Option<SystemTime>),
    at: Vec<Pos>,
}

/// The file, where its buffer stands, and whether it was seen changed.
#[derive(Debug)]
struct Reader {
    file: BufReader<File>,
    /// The offset the next byte of `file`'s buffer is at.
    at: u64,
    /// Seen changed since the load: every later read fails.
    changed: bool,
}

/// The size of a block read from the file.
const BLOCK: usize = 64 * 1024;

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
            file: Mutex::new(Reader {
                file: BufReader::with_capacity(BLOCK, file),
                at: 0,
                changed: false,
            }),
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
            let mut r = self.file.lock().unwrap_or_else(|p| p.into_inner());
            let failed = |e: std::io::Error| format!("{}:{}: {e}", self.shown, pos.line);
            let held = r.file.buffer().len() as u64;
            if pos.offset >= r.at && pos.offset - r.at < held {
                // Within the buffer: no read of the file.
                let skip = (pos.offset - r.at) as usize;
                r.file.consume(skip);
            } else {
                r.file.seek(SeekFrom::Start(pos.offset)).map_err(failed)?;
            }
            r.at = pos.offset;
            // Whatever is read from the file from here on is checked first.
            if !r.file.buffer().contains(&b'\n') && !r.changed {
                r.changed = stamp(r.file.get_ref()).map_err(failed)? != self.stamp;
            }
            if r.changed {
                return Err(format!(
                    "{}:{}: the dataset file changed during the run; this sample was not read",
                    self.shown, pos.line
                ));
            }
            let n = r.file.read_until(b'\n', &mut raw).map_err(failed)?;
            r.at += n as u64;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples read in any order (ahead within the buffer, back, past its
    /// end, lines across a block's edge) are the file's, each its own line.
    #[test]
    fn samples_read_in_any_order_are_their_own_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.jsonl");
        let (mut text, mut at) = (String::new(), Vec::new());
        for i in 0..3000u32 {
            at.push(Pos {
                offset: text.len() as u64,
                line: i + 1,
                index: i,
            });
            // Lines of varied length, so block edges fall inside lines.
            let pad = "x".repeat((i as usize * 7) % 61);
            text.push_str(&format!("{{\"input\": \"q{i} {pad}\"}}\r\n"));
        }
        assert!(text.len() > 2 * BLOCK);
        std::fs::write(&path, &text).unwrap();
        let file = File::open(&path).unwrap();
        let disk = OnDisk::new(
            file.try_clone().unwrap(),
            "d.jsonl",
            stamp(&file).unwrap(),
            at,
        );
        let input = |i: usize| disk.read(i).unwrap().input.turns()[0].clone();
        let mut order: Vec<usize> = (0..3000).collect();
        // In order, then backwards, then strided both ways.
        order.extend((0..3000).rev());
        order.extend((0..3000).step_by(97));
        order.extend((0..3000).rev().step_by(13));
        for i in order {
            let got = input(i);
            assert!(got.starts_with(&format!("q{i} ")), "sample {i}: {got:?}");
            assert_eq!(
                got.len(),
                format!("q{i} ").len() + (i * 7) % 61,
                "sample {i}"
            );
        }
    }
}
