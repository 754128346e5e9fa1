//! Tool schemas as the model's provider will take them. One bad tool costs only itself: a
//! tool whose `inputSchema` is missing or is not an object schema is withheld, with a reason
//! the user sees ([`unusable`]); the schemas of the others are cleaned of what strict
//! providers refuse ([`model_schema`]) — OpenAI-style validators reject an array without
//! `items`, a `required` that is not a list of the object's properties, `null` where a
//! keyword needs a value, type names that are not JSON Schema's (`int`, `str`, `dict`);
//! some reject `$schema`. Cleaning keeps what the schema means wherever it has a meaning.

use serde_json::{Map, Value};

/// Deeper than this, a sub-schema is replaced by `{}` (any value): no model needs it, and
/// some providers' schema compilers recurse without a bound.
const MAX_DEPTH: usize = 32;

/// Why a listed tool cannot be offered to the model, worded for the user; `None`: it can.
pub(crate) fn unusable(tool: &Value) -> Option<String> {
    match tool.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => {}
        _ => return Some("it has no name".to_string()),
    }
    let schema = match tool.get("inputSchema") {
        None | Some(Value::Null) => return Some("it has no `inputSchema`".to_string()),
        Some(Value::Object(map)) => map,
        Some(Value::String(s)) => {
            return Some(format!(
                "its `inputSchema` is a string (\"{}\"), not a JSON Schema object",
                shorten(s, 40)
            ));
        }
        Some(other) => {
            return Some(format!(
                "its `inputSchema` is {}, not a JSON Schema object",
                kind_of(other)
            ));
        }
    };
    let types = schema.get("type").map(type_names).unwrap_or_default();
    if !types.is_empty() && !types.iter().any(|t| t == "object") {
        return Some(format!(
            "its `inputSchema` describes {}, not an object of arguments",
            types.join(" or ")
        ));
    }
    None
}

/// The input schema the model is shown: an object schema with `properties`, cleaned of what
/// strict providers refuse. Meant for tools [`unusable`] passed; anything else becomes the
/// empty object schema.
pub(crate) fn model_schema(schema: Option<&Value>) -> Value {
    let mut map = match schema {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    map.insert("type".into(), Value::from("object"));
    if !matches!(map.get("properties"), Some(Value::Object(_))) {
        map.insert("properties".into(), Value::Object(Map::new()));
    }
    let mut schema = Value::Object(map);
    clean(&mut schema, 0);
    schema
}

/// The JSON Schema type a sloppy name means (`int` → `integer`); `None` for a name that
/// means nothing.
fn canonical_type(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_lowercase().as_str() {
        "object" | "dict" | "map" | "record" => "object",
        "array" | "list" | "tuple" => "array",
        "string" | "str" | "text" => "string",
        "integer" | "int" | "long" => "integer",
        "number" | "float" | "double" | "decimal" => "number",
        "boolean" | "bool" => "boolean",
        "null" | "none" => "null",
        _ => return None,
    })
}

/// The canonical type names a `type` keyword holds (a string or a list of them).
fn type_names(value: &Value) -> Vec<String> {
    let names: Vec<&str> = match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<String> = Vec::new();
    for t in names.into_iter().filter_map(canonical_type) {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

/// Keywords whose value is a schema.
const SCHEMA_KEYS: &[&str] = &[
    "items",
    "additionalProperties",
    "additionalItems",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LIST_KEYS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to schemas (`properties` is handled on its own).
const SCHEMA_MAP_KEYS: &[&str] = &[
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];
/// Keywords for which `null` is a meaningful value.
const NULL_OK: &[&str] = &["default", "const", "examples"];

fn clean(node: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        *node = Value::Object(Map::new());
        return;
    }
    // `true` (any value) as the object form every provider reads.
    if *node == Value::Bool(true) {
        *node = Value::Object(Map::new());
        return;
    }
    let Value::Object(map) = node else {
        return;
    };
    map.retain(|k, v| !v.is_null() || NULL_OK.contains(&k.as_str()));
    map.remove("$schema");
    clean_type(map);
    clean_properties(map, depth);
    clean_required(map);
    if !map.contains_key("type") {
        if map.contains_key("properties") {
            map.insert("type".into(), Value::from("object"));
        } else if map.contains_key("items") {
            map.insert("type".into(), Value::from("array"));
        }
    }
    let is_array = map
        .get("type")
        .map(type_names)
        .is_some_and(|t| t.iter().any(|n| n == "array"));
    if is_array && !map.contains_key("items") && !map.contains_key("prefixItems") {
        map.insert("items".into(), Value::Object(Map::new()));
    }
    if !matches!(map.get("enum"), Some(Value::Array(values)) if !values.is_empty()) {
        map.remove("enum");
    }
    for key in SCHEMA_KEYS {
        if let Some(sub) = map.get_mut(*key) {
            match sub {
                // Draft-4 tuple form of `items`.
                Value::Array(list) => list.iter_mut().for_each(|s| clean(s, depth + 1)),
                other => clean(other, depth + 1),
            }
        }
    }
    for key in SCHEMA_LIST_KEYS {
        match map.get_mut(*key) {
            Some(Value::Array(list)) => {
                list.retain(|s| s.is_object() || s.is_boolean());
                list.iter_mut().for_each(|s| clean(s, depth + 1));
                if list.is_empty() {
                    map.remove(*key);
                }
            }
            Some(_) => {
                map.remove(*key);
            }
            None => {}
        }
    }
    for key in SCHEMA_MAP_KEYS {
        match map.get_mut(*key) {
            Some(Value::Object(schemas)) => {
                schemas.values_mut().for_each(|s| clean(s, depth + 1));
            }
            Some(_) => {
                map.remove(*key);
            }
            None => {}
        }
    }
}

/// `type` as JSON Schema names: sloppy names mapped, unknown ones dropped (any type).
fn clean_type(map: &mut Map<String, Value>) {
    let Some(value) = map.get("type") else {
        return;
    };
    let names = type_names(value);
    match names.len() {
        0 => {
            map.remove("type");
        }
        1 => {
            map.insert("type".into(), Value::from(names[0].clone()));
        }
        _ => {
            map.insert("type".into(), Value::from(names));
        }
    }
}

/// `properties` as a map of schemas: a `false` property (never allowed) is dropped, any
/// other non-schema becomes `{}`.
fn clean_properties(map: &mut Map<String, Value>, depth: usize) {
    match map.get_mut("properties") {
        Some(Value::Object(props)) => {
            props.retain(|_, s| *s != Value::Bool(false));
            for schema in props.values_mut() {
                if !schema.is_object() && !schema.is_boolean() {
                    *schema = Value::Object(Map::new());
                }
                clean(schema, depth + 1);
            }
        }
        Some(_) => {
            map.remove("properties");
        }
        None => {}
    }
}

/// `required` as a list of the object's own property names, each once.
fn clean_required(map: &mut Map<String, Value>) {
    let Some(Value::Array(names)) = map.get("required") else {
        map.remove("required");
        return;
    };
    let known = map.get("properties").and_then(Value::as_object);
    let mut kept: Vec<Value> = Vec::new();
    for name in names.iter().filter_map(Value::as_str) {
        let declared = known.is_none_or(|props| props.contains_key(name));
        if declared && !kept.iter().any(|k| k.as_str() == Some(name)) {
            kept.push(Value::from(name));
        }
    }
    if kept.is_empty() {
        map.remove("required");
    } else {
        map.insert("required".into(), Value::Array(kept));
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_without_an_object_schema_are_unusable_with_the_reason() {
        assert_eq!(unusable(&json!({"name": "ok", "inputSchema": {}})), None);
        assert_eq!(
            unusable(&json!({"name": "ok", "inputSchema": {"type": ["object", "null"]}})),
            None
        );
        assert_eq!(
            unusable(&json!({"name": "a"})).as_deref(),
            Some("it has no `inputSchema`")
        );
        assert_eq!(
            unusable(&json!({"name": "a", "inputSchema": "object"})).as_deref(),
            Some("its `inputSchema` is a string (\"object\"), not a JSON Schema object")
        );
        assert_eq!(
            unusable(&json!({"name": "a", "inputSchema": true})).as_deref(),
            Some("its `inputSchema` is a boolean, not a JSON Schema object")
        );
        assert_eq!(
            unusable(&json!({"name": "a", "inputSchema": {"type": "string"}})).as_deref(),
            Some("its `inputSchema` describes string, not an object of arguments")
        );
        assert_eq!(
            unusable(&json!({"inputSchema": {}})).as_deref(),
            Some("it has no name")
        );
    }

    #[test]
    fn schemas_get_an_object_type_and_properties() {
        assert_eq!(
            model_schema(Some(&json!({"type":"object"}))),
            json!({"type":"object","properties":{}})
        );
        let full = json!({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]});
        assert_eq!(model_schema(Some(&full)), full);
        assert_eq!(model_schema(None), json!({"type":"object","properties":{}}));
    }

    #[test]
    fn what_strict_providers_refuse_is_cleaned_and_the_meaning_kept() {
        let messy = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "tags": {"type": "array", "description": null},
                "count": {"type": "int", "minimum": 0},
                "ratio": {"type": ["float", "null"]},
                "mode": {"enum": []},
                "any": true,
                "never": false,
                "weird": 7,
                "nested": {"properties": {"x": {"type": "str"}}, "required": ["x", "y", 3]},
                "choice": {"anyOf": [{"type": "dict"}, "junk"]}
            },
            "required": ["count", "missing", "count", "never"],
            "additionalProperties": false
        });
        assert_eq!(
            model_schema(Some(&messy)),
            json!({
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {}},
                    "count": {"type": "integer", "minimum": 0},
                    "ratio": {"type": ["number", "null"]},
                    "mode": {},
                    "any": {},
                    "weird": {},
                    "nested": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
                    "choice": {"anyOf": [{"type": "object"}]}
                },
                "required": ["count"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn recursion_is_bounded() {
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"type": "object", "properties": {"d": deep}});
        }
        let cleaned = model_schema(Some(&deep));
        let text = cleaned.to_string();
        assert!(
            text.matches("properties").count() <= MAX_DEPTH + 2,
            "{text}"
        );
    }
}
