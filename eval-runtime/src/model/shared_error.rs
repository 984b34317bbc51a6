//! An error shared as the source of a `Clone`, `PartialEq` error.

use std::sync::Arc;

/// An error kept as the [`source`](std::error::Error::source) of one that
/// must stay `Clone` and `PartialEq` (the errors a sample report holds):
/// shared behind an `Arc`, and equal to another when their messages are.
/// It shows the inner error's message, and its `source()` is the inner
/// error's; [`downcast_ref`](Self::downcast_ref) gives the inner error
/// itself (a [`std::io::Error`], a [`serde_json::Error`]...).
#[derive(Debug, Clone)]
pub struct SharedError(Arc<dyn std::error::Error + Send + Sync>);

impl SharedError {
    /// Shares `error`.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        SharedError(Arc::new(error))
    }

    /// The inner error.
    pub fn get(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }

    /// The inner error, when it is an `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }
}

impl PartialEq for SharedError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl Eq for SharedError {}

impl std::fmt::Display for SharedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SharedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_errors_compare_by_message_and_give_the_inner_error() {
        let a = SharedError::new(std::io::Error::other("disk on fire"));
        let b = SharedError::new(std::io::Error::other("disk on fire"));
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "disk on fire");
        assert!(a.downcast_ref::<std::io::Error>().is_some());
        assert_ne!(a, SharedError::new(std::io::Error::other("other")));
    }
}
