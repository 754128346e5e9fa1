//! Model-visible tool names: `mcp__<server>__<tool>`, sanitized to `[A-Za-z0-9_]`, at most
//! 64 bytes, unique. Collisions and overflows get `_` + the first 12 hex chars of a SHA-1 of the
//! raw identity, so the result depends only on the set of (server, tool) pairs, never on the
//! order servers happened to answer in.

use sha1::{Digest, Sha1};
use std::collections::{BTreeMap, HashSet};

/// The longest name most model APIs accept for a function tool.
pub const MAX_TOOL_NAME_BYTES: usize = 64;
const HASH_HEX: usize = 12;
/// `_` + 12 hex chars.
const SUFFIX_LEN: usize = HASH_HEX + 1;

/// Replace every char outside `[A-Za-z0-9_]` with `_`; an empty string becomes `_`.
pub fn sanitize(s: &str) -> String {
    if s.is_empty() {
        return "_".to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn sha1_prefix(input: &str) -> String {
    let digest = Sha1::digest(input.as_bytes());
    let mut hex = hex::encode(digest);
    hex.truncate(HASH_HEX);
    hex
}

/// Qualified names for `(server, tool)` pairs, returned in input order.
///
/// Pairs are processed in sorted raw order: the first of a colliding group keeps the plain
/// name, later ones get a hash suffix. Exact duplicate pairs get the same name.
pub fn qualify_tools(pairs: &[(&str, &str)]) -> Vec<String> {
    // Namespaces first, so two servers whose names sanitize alike stay apart.
    let servers: std::collections::BTreeSet<&str> = pairs.iter().map(|(s, _)| *s).collect();
    let mut namespaces: BTreeMap<&str, String> = BTreeMap::new();
    let mut used_ns: HashSet<String> = HashSet::new();
    for server in servers {
        let plain = format!("mcp__{}__", sanitize(server));
        let ns = if used_ns.contains(&plain) {
            format!("mcp__{}_{}__", sanitize(server), sha1_prefix(server))
        } else {
            plain
        };
        used_ns.insert(ns.clone());
        namespaces.insert(server, ns);
    }

    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by(|a, b| pairs[*a].cmp(&pairs[*b]));
    let mut out = vec![String::new(); pairs.len()];
    let mut used: HashSet<String> = HashSet::new();
    let mut assigned: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for i in order {
        let (server, tool) = pairs[i];
        if let Some(name) = assigned.get(&(server, tool)) {
            out[i] = name.clone();
            continue;
        }
        let ns = &namespaces[server];
        let tool_part = sanitize(tool);
        let mut name = format!("{ns}{tool_part}");
        if name.len() > MAX_TOOL_NAME_BYTES || used.contains(&name) {
            let identity = format!("{server}\0{tool}");
            let mut attempt = 0usize;
            loop {
                let key = if attempt == 0 {
                    identity.clone()
                } else {
                    format!("{identity}\0{attempt}")
                };
                name = hashed_name(ns, &tool_part, &sha1_prefix(&key));
                if !used.contains(&name) {
                    break;
                }
                attempt += 1;
            }
        }
        used.insert(name.clone());
        assigned.insert((server, tool), name.clone());
        out[i] = name;
    }
    out
}

/// Bytes of the tool part kept when a long server name has to give way.
const MIN_TOOL_PART: usize = 24;

/// `ns + tool (cut) + _hash`, fitting in 64 bytes. All inputs are ASCII after sanitizing.
/// A long server name is shortened before the tool part is, so a 60-character server still
/// yields names whose tool part the model (and a person) can read.
fn hashed_name(ns: &str, tool_part: &str, hash: &str) -> String {
    let budget = MAX_TOOL_NAME_BYTES - SUFFIX_LEN;
    let tool_keep = tool_part
        .len()
        .min(budget.saturating_sub(ns.len()).max(MIN_TOOL_PART));
    let ns_room = budget - tool_keep;
    let ns = if ns.len() <= ns_room {
        ns.to_string()
    } else {
        // ns is `mcp__<server>__`: cut the server, keep the separators.
        let server = ns
            .strip_prefix("mcp__")
            .and_then(|r| r.strip_suffix("__"))
            .unwrap_or(ns);
        let keep = ns_room.saturating_sub("mcp____".len());
        format!("mcp__{}__", &server[..keep.min(server.len())])
    };
    format!("{ns}{}_{hash}", &tool_part[..tool_keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_plain() {
        assert_eq!(
            qualify_tools(&[("everything", "echo"), ("fs", "read_file")]),
            vec!["mcp__everything__echo", "mcp__fs__read_file"]
        );
    }

    #[test]
    fn sanitizes_dots_and_hyphens() {
        assert_eq!(
            qualify_tools(&[("server.one", "tool.two-three"), ("music-studio", "play")]),
            vec!["mcp__server_one__tool_two_three", "mcp__music_studio__play"]
        );
        assert_eq!(sanitize(""), "_");
        assert_eq!(sanitize("héllo"), "h_llo");
    }

    #[test]
    fn tool_collision_gets_hash_suffix_deterministically() {
        let a = qualify_tools(&[("s", "a.b"), ("s", "a-b")]);
        let b = qualify_tools(&[("s", "a-b"), ("s", "a.b")]);
        // Sorted raw order: "a-b" < "a.b", so "a-b" keeps the plain name.
        assert_eq!(a[1], "mcp__s__a_b");
        assert_eq!(b[0], "mcp__s__a_b");
        assert_eq!(a[0], b[1]);
        assert_eq!(a[0], format!("mcp__s__a_b_{}", sha1_prefix("s\0a.b")));
    }

    #[test]
    fn namespace_collision_gets_hash_suffix() {
        let names = qualify_tools(&[("a.b", "t"), ("a-b", "t")]);
        assert_eq!(names[1], "mcp__a_b__t");
        assert_eq!(names[0], format!("mcp__a_b_{}__t", sha1_prefix("a.b")));
    }

    #[test]
    fn long_names_are_cut_to_64_bytes_with_hash() {
        let tool = "x".repeat(80);
        let names = qualify_tools(&[("srv", &tool), ("srv", &format!("{tool}y"))]);
        for n in &names {
            assert_eq!(n.len(), 64, "{n}");
            assert!(n.starts_with("mcp__srv__xxx"));
        }
        assert_ne!(names[0], names[1]);
        // Exactly 64 stays plain.
        let fit = "t".repeat(64 - "mcp__srv__".len());
        assert_eq!(
            qualify_tools(&[("srv", &fit)])[0],
            format!("mcp__srv__{fit}")
        );
    }

    #[test]
    fn long_server_name_is_cut() {
        let server = "s".repeat(70);
        let n = &qualify_tools(&[(&server, "tool")])[0];
        assert!(n.len() <= 64, "{n}");
        assert!(n.starts_with("mcp__sss"));
        assert!(n.contains("__tool_"), "the tool part stays readable: {n}");
    }

    #[test]
    fn a_60_char_server_keeps_the_tool_part_readable() {
        let server = "a".repeat(60);
        let names = qualify_tools(&[
            (&server, "read_file"),
            (&server, "search_documents_by_title"),
        ]);
        assert!(names[0].contains("__read_file_"), "{}", names[0]);
        assert!(names[1].contains("__search_documents_by_"), "{}", names[1]);
        assert_ne!(names[0], names[1]);
        for n in &names {
            assert!(n.len() <= 64, "{n}");
        }
    }

    #[test]
    fn duplicate_pairs_share_a_name() {
        let names = qualify_tools(&[("s", "t"), ("s", "t")]);
        assert_eq!(names, vec!["mcp__s__t", "mcp__s__t"]);
    }

    #[test]
    fn names_are_valid_identifiers() {
        let names = qualify_tools(&[("ü", "∑"), ("a", ""), ("b", "ok")]);
        for n in names {
            assert!(n.len() <= 64);
            assert!(
                n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{n}"
            );
        }
    }
}
