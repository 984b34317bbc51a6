//! Reading a dataset (or manifest) file, checked first: it must be a regular
//! file — a FIFO, a device or a directory is refused from its metadata,
//! never opened, so nothing blocks and `/dev/zero` is not read forever —
//! and at most a size limit long.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The size limit of a dataset file unless told otherwise
/// (`EVAL_MAX_DATASET_BYTES` at run time): 1 GiB.
pub const DEFAULT_MAX_DATASET_BYTES: u64 = 1 << 30;

/// The size limit of a prompt or rubric file (`prompt_path`,
/// `rubric_file`): 16 MiB.
pub const PROMPT_MAX_BYTES: u64 = 16 << 20;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Not a regular file (`kind` says what it is: "a FIFO", "a directory"...).
    #[error("not a regular file ({kind})")]
    NotAFile {
        /// What it is instead.
        kind: &'static str,
    },
    /// Text that is not UTF-8.
    #[error("not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Where the first invalid byte is.
        offset: usize,
    },
    /// Longer than the limit.
    #[error("{size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// Its size (at least; a file still growing may be longer).
        size: u64,
        /// The limit.
        limit: u64,
    },
}

impl From<ReadError> for std::io::Error {
    /// The I/O error as it was; a refusal as `InvalidInput` (too large,
    /// not a file) or `InvalidData` (not UTF-8), with the same message.
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Io(io) => io,
            ReadError::NotUtf8 { .. } => {
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
            }
            other => std::io::Error::new(std::io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

/// Opens `path` after checking, from its metadata (symlinks followed), that
/// it is a regular file of at most `limit` bytes; checks the opened file
/// again (it may have been replaced in between). Returns the file and its size.
pub fn open_checked(path: &Path, limit: u64) -> Result<(File, u64), ReadError> {
    check_regular(&std::fs::metadata(path)?, limit)?;
    let file = File::open(path)?;
    let size = check_regular(&file.metadata()?, limit)?;
    Ok((file, size))
}

/// The bytes of `path`, checked as [`open_checked`] does; a file that grows
/// past `limit` while being read is refused too.
pub fn read_checked(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_checked(path, limit)?;
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// The text of `path`, read as [`read_checked`] reads: it must be UTF-8;
/// a byte order mark at its start is dropped.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_checked(path, limit)?;
    let text = String::from_utf8(bytes).map_err(|e| ReadError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// The size of the file `meta` describes, when it is a regular file of at
/// most `limit` bytes: the one check every reader makes.
pub fn check_regular(meta: &std::fs::Metadata, limit: u64) -> Result<u64, ReadError> {
    if !meta.is_file() {
        return Err(ReadError::NotAFile {
            kind: kind(&meta.file_type()),
        });
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    Ok(meta.len())
}

/// What a file that is not a regular file is, for messages.
pub(crate) fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}
