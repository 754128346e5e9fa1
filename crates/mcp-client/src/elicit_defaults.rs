//! SEP-1034: an accepted elicitation carries the form's defaults for every field the user
//! left alone, so a server sees the values the form showed, not a gap.

use serde_json::{Map, Value};

/// `content` with each omitted property of `requested_schema` set to its `default`.
pub(crate) fn with_defaults(requested_schema: &Value, content: Option<Value>) -> Option<Value> {
    let properties = requested_schema
        .get("properties")
        .and_then(Value::as_object);
    let mut answer = match content {
        Some(Value::Object(map)) => map,
        Some(other) => return Some(other),
        None => Map::new(),
    };
    for (name, property) in properties.into_iter().flatten() {
        if let Some(default) = property.get("default")
            && !answer.contains_key(name)
        {
            answer.insert(name.clone(), default.clone());
        }
    }
    Some(Value::Object(answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn omitted_fields_get_their_defaults_and_answers_stay() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "plain": {"type": "string"}}});
        assert_eq!(
            with_defaults(&schema, Some(json!({"name": "Ada"}))),
            Some(json!({"name": "Ada", "age": 30}))
        );
        assert_eq!(
            with_defaults(&schema, None),
            Some(json!({"name": "John Doe", "age": 30}))
        );
    }
}
