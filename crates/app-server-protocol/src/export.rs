//! The schema export: every declared method (see [`super::methods`]) with the JSON Schema of
//! its params and result (see [`super::schema`]), as the schema test reads them and as
//! `interpreter app-server generate-json-schema` writes them. Apart from both so that the
//! method list and the schema helpers do not import each other.

use super::schema::{Kind, MethodSchema};
use serde_json::{Value, json};
use std::path::Path;

/// Every declared method, with its schemas.
pub fn methods() -> Vec<MethodSchema> {
    super::methods::all()
}

fn file_name(method: &str, part: &str) -> String {
    format!("{}.{part}.json", method.replace('/', "_"))
}

/// Writes one file per params/result schema and an `index.json` listing the methods.
/// Returns how many files were written; an error names the file it failed on.
pub fn write_schema(dir: &Path) -> std::io::Result<usize> {
    let at = |what: &str, path: &Path, e: std::io::Error| {
        std::io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| at("create", dir, e))?;
    let write = |name: &str, v: &Value| -> std::io::Result<()> {
        let path = dir.join(name);
        let text = serde_json::to_string_pretty(v).map_err(std::io::Error::other)?;
        std::fs::write(&path, text + "\n").map_err(|e| at("write", &path, e))
    };
    let mut index = Vec::new();
    let mut n = 0;
    for m in methods() {
        let params = file_name(m.method, "params");
        write(&params, &m.params)?;
        n += 1;
        let result = match &m.result {
            Some(r) => {
                let name = file_name(m.method, "result");
                write(&name, r)?;
                n += 1;
                Some(name)
            }
            None => None,
        };
        let kind = match m.kind {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::ServerRequest => "serverRequest",
        };
        index.push(json!({"method": m.method, "kind": kind, "params": params, "result": result}));
    }
    write("index.json", &json!({ "methods": index }))?;
    Ok(n + 1)
}
