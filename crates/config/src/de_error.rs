//! serde's errors about TOML values, in TOML's words and at a key a user can find.
//!
//! serde says "invalid type: string \"x\", expected a sequence"; a user wrote a TOML array,
//! and the string may be a secret. [`toml_message`] turns that into "expected an array, got
//! a string" (never the value itself). [`key_of`] names where it happened as a TOML key, with
//! quoted names kept whole (`projects."/src/my.app".trust_level`), and [`key_parts`] reads
//! such a key back into its parts.

use crate::key_path::dotted;

/// The error's message with serde's type words replaced by TOML's; other messages (our own
/// value types write theirs) unchanged.
pub(crate) fn toml_message(e: &toml::de::Error) -> String {
    let message = e.message();
    match message
        .strip_prefix("invalid type: ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        Some((found, expected)) => format!(
            "expected {}, got {}",
            toml_expected(expected),
            toml_found(found)
        ),
        None => message.to_string(),
    }
}

/// serde's name for what it wanted, as TOML calls it.
fn toml_expected(expected: &str) -> &str {
    match expected {
        "a boolean" => "true or false",
        "a sequence" => "an array",
        "a map" => "a table",
        other => other,
    }
}

/// serde's description of the value found (`string "x"`, ``integer `3` ``), as a TOML type.
fn toml_found(found: &str) -> &'static str {
    let kind = found.split([' ', '`', '"']).next().unwrap_or_default();
    match kind {
        "string" | "char" => "a string",
        "integer" => "an integer",
        "floating" => "a float",
        "boolean" => "a boolean",
        "sequence" => "an array",
        "map" => "a table",
        _ => "a value of another type",
    }
}

/// The TOML key of the value at `path`: `notify[1]`, `model_providers."gpu.box".base_url`.
pub(crate) fn key_of(path: &serde_path_to_error::Path) -> String {
    let mut key = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key: name }
            | serde_path_to_error::Segment::Enum { variant: name } => {
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(&dotted(&[name]));
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    key
}

/// The parts of a key written by [`key_of`] (array indices left out), for finding which
/// layer set it; `None` if it is not a TOML key.
pub(crate) fn key_parts(key: &str) -> Option<Vec<String>> {
    let mut key = key;
    // Indices only follow the last name (`exclude[1]`): arrays of tables are not in the schema.
    while let Some(open) = key.strip_suffix(']').and_then(|k| k.rfind('[')) {
        key = &key[..open];
    }
    let parsed = toml_edit::Key::parse(key).ok()?;
    Some(parsed.iter().map(|k| k.get().to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_values_are_named_by_type() {
        assert_eq!(toml_found("string \"s3cret\""), "a string");
        assert_eq!(toml_found("integer `3`"), "an integer");
        assert_eq!(toml_found("floating point `1.5`"), "a float");
        assert_eq!(toml_found("boolean `true`"), "a boolean");
        assert_eq!(toml_found("sequence"), "an array");
        assert_eq!(toml_found("map"), "a table");
    }

    #[test]
    fn keys_keep_quoted_names_whole() {
        let text = "[projects.\"/src/my.app\"]\ntrust_level = 1\n";
        let de = toml::de::Deserializer::parse(text).unwrap();
        let e = serde_path_to_error::deserialize::<_, crate::schema::ConfigToml>(de).unwrap_err();
        let key = key_of(e.path());
        assert_eq!(key, "projects.\"/src/my.app\".trust_level");
        assert_eq!(
            key_parts(&key).unwrap(),
            ["projects", "/src/my.app", "trust_level"]
        );
        assert_eq!(key_parts("notify[1]").unwrap(), ["notify"]);
        let message = toml_message(e.inner());
        assert!(message.contains("got an integer"), "{message}");
    }
}
