//! A key's path as the config's messages show it (`model_providers."my box"`): a leaf the
//! schema, the error messages and the MCP table's reader share.

/// `serde_ignored`'s path as its keys, leaving out the `Option`/newtype steps it records.
pub(crate) fn segments(path: &serde_ignored::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = path;
    loop {
        match cur {
            serde_ignored::Path::Root => break,
            serde_ignored::Path::Seq { parent, index } => {
                out.push(index.to_string());
                cur = parent;
            }
            serde_ignored::Path::Map { parent, key } => {
                out.push(key.clone());
                cur = parent;
            }
            serde_ignored::Path::Some { parent }
            | serde_ignored::Path::NewtypeStruct { parent }
            | serde_ignored::Path::NewtypeVariant { parent } => cur = parent,
        }
    }
    out.reverse();
    out
}

/// A key path as TOML writes it: bare keys joined by dots, any other key quoted
/// (`projects."/home/me/app".trust_level`), so a name containing a dot stays one name.
pub(crate) fn dotted<S: AsRef<str>>(parts: &[S]) -> String {
    parts
        .iter()
        .map(|p| {
            let p = p.as_ref();
            let bare = !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if bare {
                p.to_string()
            } else {
                format!("{p:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}
