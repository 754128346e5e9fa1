//! Thread identifiers.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// A thread (conversation) id: a UUID v7, so ids sort by creation time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThreadId(Uuid);

impl ThreadId {
    /// A fresh id, later than every id made before it here.
    pub fn new() -> Self {
        Self(Uuid::now_v7())
    }

    /// The UUID it is.
    pub fn as_uuid(&self) -> Uuid {
        self.0
    }
}

impl Default for ThreadId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for ThreadId {
    type Err = uuid::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Uuid::parse_str(s.trim()).map(Self)
    }
}

impl From<Uuid> for ThreadId {
    fn from(u: Uuid) -> Self {
        Self(u)
    }
}

/// A fresh UUID v7 string, used for submission, turn and item ids.
pub fn new_id() -> String {
    Uuid::now_v7().to_string()
}
