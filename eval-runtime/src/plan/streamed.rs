//! A `.jsonl` dataset file loaded without holding it. One pass reads every
//! sample once, checked as a full load checks it (the file's problems,
//! duplicate ids, a manifest's fields), and keeps its position and test
//! name; the names are made unique as a full load makes them (the few
//! samples whose names collide are read again); the plan's subset is
//! picked and the file's index written. The samples are read again, one at
//! a time, when they run ([`OnDisk`]).

use std::path::Path;

use eval_datasets::error::MAX_PROBLEMS;
use eval_datasets::{Dataset, DatasetError, Format, Sample, index, naming};

use super::DatasetPlan;
use super::read::{Read, apply_plan, digest, given};
use super::samples::{Names, OnDisk, Pos, Samples, stamp};
use super::specs::SpecSets;

/// `d`'s samples from the `.jsonl` file at `path` (named `shown`); `None`
/// for a file of another format (read whole).
pub(super) fn load(
    d: &DatasetPlan,
    path: &Path,
    shown: &str,
    index_dir: Option<&Path>,
) -> Option<Result<Read, Vec<String>>> {
    (Format::from_path(shown).ok()? == Format::Jsonl).then(|| load_jsonl(d, path, shown, index_dir))
}

fn load_jsonl(
    d: &DatasetPlan,
    path: &Path,
    shown: &str,
    index_dir: Option<&Path>,
) -> Result<Read, Vec<String>> {
    let refused = |e| DatasetError::read(shown, e).problems();
    let changed = || vec![format!("{shown}: the file changed while it was being read")];
    // The handle samples are read through later, opened first: the file
    // must be the one scanned.
    let (file, _) =
        eval_datasets::files::open_checked(path, d.max_dataset_bytes).map_err(refused)?;
    let before = stamp(&file).map_err(|e| refused(e.into()))?;

    let everything = d.subset.is_all();
    let mut names = Names::default();
    let mut at: Vec<Pos> = Vec::new();
    let mut tagged: Vec<usize> = Vec::new();
    let mut specs = SpecSets::new(given(d));
    let (mut retrieval, mut ordinary) = (false, false);
    let mut lacking = Vec::new();
    let mut too_long = false;
    let mut each = |mut s: Sample| {
        if let Some(m) = &d.manifest
            && lacking.len() <= MAX_PROBLEMS
        {
            m.check_sample(&s, &mut lacking);
        }
        let (Ok(line), Ok(index)) = (u32::try_from(s.source.line), u32::try_from(s.index)) else {
            too_long = true;
            return;
        };
        if everything {
            apply_plan(d, &mut s);
            specs.add(&s);
            retrieval |= s.retrieval.is_some();
            ordinary |= s.retrieval.is_none();
        } else if d.subset.keeps(&s) {
            tagged.push(at.len());
        }
        if !names.push(&naming::base_name(&s)) {
            too_long = true;
            return;
        }
        at.push(Pos {
            offset: s.source.offset,
            line,
            index,
        });
    };
    Dataset::scan_limited(path, shown, d.max_dataset_bytes, &mut each).map_err(|e| e.problems())?;
    if too_long {
        return Err(vec![format!(
            "{shown}: more than {} lines, or more than 4 GiB of test names; split the dataset",
            u32::MAX
        )]);
    }
    if !lacking.is_empty() {
        return Err(DatasetError::Invalid {
            path: shown.to_string(),
            problems: lacking,
        }
        .problems());
    }
    if stamp(&file).ok() != Some(before) {
        return Err(changed());
    }
    let len = at.len();
    let disk = OnDisk::new(file, shown, before, at);

    // Names made unique as a full load makes them.
    let mut unreadable = Vec::new();
    let renamed = naming::renames(len, &|i| names.get(i), &mut |i| {
        disk.read(i).unwrap_or_else(|e| {
            unreadable.push(e);
            Sample::new("")
        })
    });
    if !unreadable.is_empty() {
        return Err(unreadable);
    }
    let name = |i: usize| match renamed.binary_search_by_key(&i, |(r, _)| *r) {
        Ok(at) => renamed[at].1.as_str(),
        Err(_) => names.get(i),
    };
    let sha256 = digest(d, &[]);
    if let Some(dir) = index_dir
        && let Ok(idx) = index::path_for(dir, path)
        && !idx.exists()
    {
        let row = |i: usize| {
            let p = disk.pos(i);
            (name(i), p.offset, p.line as usize, p.index as usize)
        };
        // A cache: failing to write it only costs speed later.
        let _ = index::write_rows(&idx, len, &row, sha256.as_deref());
    }

    let (disk, names) = if everything {
        let names = if renamed.is_empty() {
            names
        } else {
            names
                .picked(0..len, &renamed)
                .ok_or_else(|| super::samples::too_long(shown))?
        };
        (disk, names)
    } else {
        let keep = d.subset.pick_from(tagged);
        for &i in &keep {
            let mut s = disk.read(i).map_err(|e| vec![e])?;
            apply_plan(d, &mut s);
            specs.add(&s);
            retrieval |= s.retrieval.is_some();
            ordinary |= s.retrieval.is_none();
        }
        let names = names
            .picked(keep.iter().copied(), &renamed)
            .ok_or_else(|| super::samples::too_long(shown))?;
        (disk.keeping(&keep), names)
    };
    Ok(Read {
        planned: disk.len(),
        samples: Samples::OnDisk(disk),
        names,
        specs,
        retrieval,
        ordinary,
        sha256,
        // A `.jsonl` file says nothing of itself; a manifest may.
        description: d.manifest.as_ref().and_then(|m| m.description.clone()),
    })
}
