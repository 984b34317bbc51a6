//! The entry of a test-name index ([`crate::index`]): where one sample's
//! record is. Its own module so that `dataset` (which reads the record an
//! entry points at) does not depend on `index` (which loads datasets).

/// Where one sample's record is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Entry {
    /// Test name (sample part).
    pub name: String,
    /// Byte offset of the record.
    pub offset: u64,
    /// 1-based line of the record.
    pub line: usize,
    /// 0-based position of the sample in the file.
    pub index: usize,
}
