//! `fuzzyFileSearch` and its session variant: params, results and notifications. The
//! match objects keep Codex's snake_case field names (`file_name`, `match_type`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `fuzzyFileSearch`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchParams {
    /// What to match, fuzzily, against paths.
    pub query: String,
    /// Folders to search (each walked with its `.gitignore` rules).
    pub roots: Vec<String>,
    /// A newer search with the same token stops this one, which answers with no files.
    #[serde(default)]
    pub cancellation_token: Option<String>,
}

/// Whether a match is a file or a folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FuzzyFileSearchMatchType {
    /// A file.
    File,
    /// A folder.
    Directory,
}

/// One match, best first in its list.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct FuzzyFileSearchResult {
    /// The root it was found under.
    pub root: String,
    /// Its path relative to `root`.
    pub path: String,
    /// File or folder.
    pub match_type: FuzzyFileSearchMatchType,
    /// The last component of `path`.
    pub file_name: String,
    /// How well it matched: higher is better.
    pub score: u32,
    /// Character positions in `path` that matched the query.
    pub indices: Vec<u32>,
}

/// The result of `fuzzyFileSearch`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct FuzzyFileSearchResponse {
    /// The matches, best first (empty when cancelled).
    pub files: Vec<FuzzyFileSearchResult>,
}

/// `fuzzyFileSearch/sessionStart`: walk these roots once for the updates that follow.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStartParams {
    /// The client's name for the session, used by the calls that follow.
    pub session_id: String,
    /// Folders to search (each walked with its `.gitignore` rules).
    pub roots: Vec<String>,
}

/// `fuzzyFileSearch/sessionUpdate`: a new query (answered by notifications).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdateParams {
    /// The session.
    pub session_id: String,
    /// The new query.
    pub query: String,
}

/// `fuzzyFileSearch/sessionStop`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStopParams {
    /// The session to end.
    pub session_id: String,
}

/// `fuzzyFileSearch/sessionUpdated`: the latest query's matches.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdatedNotification {
    /// The session.
    pub session_id: String,
    /// The query matched.
    pub query: String,
    /// Its matches, best first.
    pub files: Vec<FuzzyFileSearchResult>,
}

/// `fuzzyFileSearch/sessionCompleted`: the update's search is done.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionCompletedNotification {
    /// The session.
    pub session_id: String,
}
