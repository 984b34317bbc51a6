//! A run's finished records, out of memory: each sample's record is
//! serialized once, when its sample finishes, and held in a bounded buffer;
//! a full buffer is sorted and written to a temporary file (a sorted run,
//! unlinked at once, so a killed process leaves nothing behind). The end of
//! the run reads every record back in (dataset, test name) order — the
//! results file's order — by merging the buffer with those files, as often
//! as it needs (the attribute rewrites its file as datasets finish).
//!
//! Memory is the buffer's bound (`EVAL_SPILL_BYTES`, 4 MiB by default) plus one bit per trial,
//! whatever the run's size; a run whose records fit in the buffer never
//! touches the disk. When no temporary file can be written the records stay
//! in memory (nothing is lost) and a note says so once.
//!
//! The sorted runs are merged as they pile up ([`FAN_IN`] runs of one size
//! into one run of the next), so a run of any size holds a few dozen files
//! open, and reading them back buffers at most [`MERGE_BUFFERS`] bytes in
//! all (a million samples made 270 runs and 17 MiB of read buffers at the
//! end before).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::{Mutex, MutexGuard};

/// Read buffer per sorted run while merging, at most.
const READ_BUFFER: usize = 64 << 10;
/// Read buffer per sorted run while merging, at least.
const MIN_READ_BUFFER: usize = 4 << 10;
/// All the read buffers of one merge together (when each has at least
/// [`MIN_READ_BUFFER`]).
pub(crate) const MERGE_BUFFERS: usize = 1 << 20;
/// How many sorted runs of one size are merged into one.
pub(crate) const FAN_IN: usize = 32;

/// The read buffer of each of `sources` sorted runs merged together.
fn read_buffer(sources: usize) -> usize {
    (MERGE_BUFFERS / sources.max(1)).clamp(MIN_READ_BUFFER, READ_BUFFER)
}

/// Finished records of one run. See the [module docs](self).
pub(crate) struct Spool {
    inner: Mutex<Inner>,
}

struct Inner {
    /// Records held in memory (sorted only when read).
    held: Vec<Entry>,
    held_bytes: usize,
    /// Sorted runs written to temporary files, oldest first.
    spilled: Vec<Spilled>,
    /// Which trials have a record (one bit each).
    stored: Vec<u64>,
    trials: usize,
    count: usize,
    limit: usize,
    /// Spilling failed once: everything stays in memory from then on.
    cannot_spill: bool,
}

/// A sorted run in a temporary file.
struct Spilled {
    file: File,
    /// How many records it holds.
    entries: usize,
    /// How many merges made it (0: written from the buffer).
    level: u32,
}

/// One record and its sort key (`<dataset>\0<sample name>`).
pub(crate) struct Entry {
    bytes: Box<[u8]>,
    key_len: u32,
}

impl Entry {
    fn key(&self) -> &[u8] {
        &self.bytes[..self.key_len as usize]
    }

    /// The record, as compact JSON.
    pub(crate) fn record(&self) -> &[u8] {
        &self.bytes[self.key_len as usize..]
    }
}

impl Spool {
    /// A spool for `trials` trials, spilling above the default bound.
    pub(crate) fn new(trials: usize) -> Spool {
        let limit = usize::try_from(crate::config::DEFAULT_SPILL_BYTES).unwrap_or(usize::MAX);
        Self::with_limit(trials, limit)
    }

    /// The same, spilling above `limit` bytes.
    pub(crate) fn with_limit(trials: usize, limit: usize) -> Spool {
        Spool {
            inner: Mutex::new(Inner {
                held: Vec::new(),
                held_bytes: 0,
                spilled: Vec::new(),
                stored: vec![0; trials.div_ceil(64)],
                trials,
                count: 0,
                limit,
                cannot_spill: false,
            }),
        }
    }

    /// Keeps trial `t`'s `record` (compact JSON) under `(dataset, name)`;
    /// a trial's first record is kept, a later one is not.
    pub(crate) fn put(&self, t: usize, (dataset, name): (&str, &str), record: &[u8]) {
        let mut bytes = Vec::with_capacity(dataset.len() + 1 + name.len() + record.len());
        bytes.extend_from_slice(dataset.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(name.as_bytes());
        let key_len = bytes.len() as u32;
        bytes.extend_from_slice(record);
        let mut inner = self.lock();
        if t >= inner.trials {
            return;
        }
        let (word, bit) = (t / 64, 1u64 << (t % 64));
        match inner.stored.get_mut(word) {
            Some(w) if *w & bit == 0 => *w |= bit,
            _ => return,
        }
        inner.count += 1;
        inner.held_bytes += bytes.len() + std::mem::size_of::<Entry>();
        inner.held.push(Entry {
            bytes: bytes.into_boxed_slice(),
            key_len,
        });
        if inner.held_bytes > inner.limit && !inner.cannot_spill {
            inner.spill();
        }
    }

    /// The records, held while the guard lives (see [`merged`]).
    pub(crate) fn hold(&self) -> Held<'_> {
        Held(self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Inner {
    /// Sorts the held records into a temporary file; on failure keeps them
    /// (and says so once).
    fn spill(&mut self) {
        self.held.sort_unstable_by(|a, b| a.key().cmp(b.key()));
        match write_run(&self.held) {
            Ok(file) => {
                self.spilled.push(Spilled {
                    file,
                    entries: self.held.len(),
                    level: 0,
                });
                self.held = Vec::new();
                self.held_bytes = 0;
                self.compact();
            }
            Err(e) => {
                self.cannot_spill = true;
                super::warn(&format!(
                    "cannot write finished records to the temporary directory ({e}); they stay in memory"
                ));
            }
        }
    }
}

impl Inner {
    /// Merges the last [`FAN_IN`] sorted runs into one while they are of
    /// one level (a run merged `k` times holds about `FAN_IN^k` buffers):
    /// the files open stay a few dozen, each record is rewritten once per
    /// level. A merge that fails leaves the runs as they were.
    fn compact(&mut self) {
        while self.spilled.len() >= FAN_IN {
            let last = &self.spilled[self.spilled.len() - FAN_IN..];
            let level = last[0].level;
            if last.iter().any(|s| s.level != level) {
                return;
            }
            match merge_files(last) {
                Ok(merged) => {
                    self.spilled.truncate(self.spilled.len() - FAN_IN);
                    self.spilled.push(Spilled {
                        level: level + 1,
                        ..merged
                    });
                }
                Err(e) => {
                    super::warn(&format!(
                        "cannot merge finished records in the temporary directory ({e}); they stay in {} files",
                        self.spilled.len()
                    ));
                    return;
                }
            }
        }
    }
}

/// The sorted runs `files` merged into one new temporary file.
fn merge_files(files: &[Spilled]) -> io::Result<Spilled> {
    let buffer = read_buffer(files.len());
    let mut sources = Vec::with_capacity(files.len());
    for s in files {
        sources.push(Source::File(reader(&s.file, buffer)?, s.entries));
    }
    let mut out = BufWriter::with_capacity(READ_BUFFER, tempfile::tempfile()?);
    let mut entries = 0;
    for entry in Merged::of(sources)? {
        write_entry(&mut out, &entry?)?;
        entries += 1;
    }
    Ok(Spilled {
        file: out.into_inner().map_err(io::IntoInnerError::into_error)?,
        entries,
        level: 0,
    })
}

/// A reader of `file` from its start, through its own handle.
fn reader(file: &File, buffer: usize) -> io::Result<BufReader<File>> {
    let mut file = file.try_clone()?;
    file.seek(SeekFrom::Start(0))?;
    Ok(BufReader::with_capacity(buffer, file))
}

fn write_entry(out: &mut impl Write, e: &Entry) -> io::Result<()> {
    out.write_all(&e.key_len.to_le_bytes())?;
    out.write_all(&(e.bytes.len() as u32).to_le_bytes())?;
    out.write_all(&e.bytes)
}

/// Writes `entries` (sorted) to a new unlinked temporary file.
fn write_run(entries: &[Entry]) -> io::Result<File> {
    let mut out = BufWriter::with_capacity(READ_BUFFER, tempfile::tempfile()?);
    for e in entries {
        write_entry(&mut out, e)?;
    }
    out.into_inner().map_err(io::IntoInnerError::into_error)
}

/// A spool's records, locked.
pub(crate) struct Held<'a>(MutexGuard<'a, Inner>);

impl Held<'_> {
    /// How many records there are.
    pub(crate) fn len(&self) -> usize {
        self.0.count
    }
}

/// Every record of `held` (several runs' spools), in key order.
pub(crate) fn merged<'a>(held: &'a mut [Held<'_>]) -> io::Result<Merged<'a>> {
    let buffer = read_buffer(held.iter().map(|h| h.0.spilled.len()).sum());
    let mut sources = Vec::new();
    for h in held.iter_mut() {
        let inner = &mut *h.0;
        inner.held.sort_unstable_by(|a, b| a.key().cmp(b.key()));
        for s in &inner.spilled {
            sources.push(Source::File(reader(&s.file, buffer)?, s.entries));
        }
        sources.push(Source::Held(inner.held.iter()));
    }
    Merged::of(sources)
}

enum Source<'a> {
    Held(std::slice::Iter<'a, Entry>),
    /// A sorted run and the entries left in it.
    File(BufReader<File>, usize),
}

impl Source<'_> {
    fn next(&mut self) -> io::Result<Option<Entry>> {
        match self {
            Source::Held(entries) => Ok(entries.next().map(|e| Entry {
                bytes: e.bytes.clone(),
                key_len: e.key_len,
            })),
            Source::File(_, 0) => Ok(None),
            Source::File(file, left) => {
                *left -= 1;
                let mut lens = [0u8; 8];
                file.read_exact(&mut lens)?;
                let key_len = u32::from_le_bytes([lens[0], lens[1], lens[2], lens[3]]);
                let len = u32::from_le_bytes([lens[4], lens[5], lens[6], lens[7]]) as usize;
                let mut bytes = vec![0u8; len];
                file.read_exact(&mut bytes)?;
                Ok(Some(Entry {
                    bytes: bytes.into_boxed_slice(),
                    key_len,
                }))
            }
        }
    }
}

/// Records of several sorted sources, in key order (see [`merged`]).
pub(crate) struct Merged<'a> {
    sources: Vec<Source<'a>>,
    heads: BinaryHeap<Reverse<Head>>,
}

/// The next entry of source `from`.
struct Head {
    entry: Entry,
    from: usize,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.entry.key(), self.from).cmp(&(other.entry.key(), other.from))
    }
}

impl<'a> Merged<'a> {
    fn of(sources: Vec<Source<'a>>) -> io::Result<Merged<'a>> {
        let mut merged = Merged {
            sources,
            heads: BinaryHeap::new(),
        };
        for i in 0..merged.sources.len() {
            merged.advance(i)?;
        }
        Ok(merged)
    }

    fn advance(&mut self, from: usize) -> io::Result<()> {
        if let Some(entry) = self.sources[from].next()? {
            self.heads.push(Reverse(Head { entry, from }));
        }
        Ok(())
    }
}

impl Iterator for Merged<'_> {
    type Item = io::Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        let Reverse(Head { entry, from }) = self.heads.pop()?;
        Some(self.advance(from).map(|()| entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(spools: &[&Spool]) -> Vec<(String, String)> {
        let mut held: Vec<Held<'_>> = spools.iter().map(|s| s.hold()).collect();
        merged(&mut held)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    String::from_utf8(e.key().to_vec()).unwrap(),
                    String::from_utf8(e.record().to_vec()).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn records_come_back_in_key_order_whether_held_or_spilled() {
        // A limit of 200 bytes spills every few records; 1,000 records in a
        // scrambled order come back sorted, each once, twice over.
        let n = 1000;
        let spool = Spool::with_limit(n, 200);
        let other = Spool::new(10);
        for k in 0..n {
            let i = (k * 7919) % n;
            spool.put(
                i,
                ("a", &format!("s{i:04}")),
                format!("{{\"i\":{i}}}").as_bytes(),
            );
        }
        other.put(3, ("b", "x"), b"{}");
        other.put(1, ("a", "s0500_"), b"{\"o\":1}");
        {
            let inner = spool.lock();
            assert!(inner.spilled.len() > 10, "it spilled");
            // Runs were merged as they piled up: fewer files than spills.
            assert!(inner.spilled.iter().any(|s| s.level > 0), "merged");
            assert!(inner.spilled.len() < 2 * FAN_IN, "{}", inner.spilled.len());
            let held: usize = inner.spilled.iter().map(|s| s.entries).sum();
            assert_eq!(held + inner.held.len(), n);
        }
        for _ in 0..2 {
            let got = all(&[&spool, &other]);
            assert_eq!(got.len(), n + 2);
            let mut want: Vec<String> = (0..n).map(|i| format!("a\0s{i:04}")).collect();
            want.push("a\0s0500_".into());
            want.push("b\0x".into());
            want.sort();
            let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, want);
            let (_, record) = got.iter().find(|(k, _)| k == "a\0s0042").unwrap();
            assert_eq!(record, "{\"i\":42}");
        }
    }

    #[test]
    fn a_trial_keeps_its_first_record() {
        let spool = Spool::new(70);
        spool.put(65, ("d", "n"), b"1");
        spool.put(65, ("d", "n"), b"2");
        spool.put(70, ("d", "beyond"), b"3");
        assert_eq!(all(&[&spool]), vec![("d\0n".to_string(), "1".to_string())]);
        assert_eq!(spool.hold().len(), 1);
    }
}
