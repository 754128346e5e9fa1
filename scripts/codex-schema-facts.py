#!/usr/bin/env python3
"""Extracts the facts our schema test needs from a Codex app-server JSON schema dump.

Usage: scripts/codex-schema-facts.py SCHEMA_DIR METHODS_FILE > crates/app-server-protocol/tests/fixtures/codex-0.171-facts.json

SCHEMA_DIR is the output of `codex app-server generate-json-schema --experimental --out DIR`.
METHODS_FILE lists one wire method per line (the ones we implement; `method => Response`
for a method without params, to name its result), and `type NAME` lines
for the objects nested in them (Thread, Turn, ThreadItem, ...). For each method the output
keeps only field names, required sets and the fields that may be null of its params and
result (or notification params); for each type the same, or, for a union tagged by `type`,
those of each variant. That is all the tests compare: no descriptions, no nested schemas.
"""
import json
import os
import sys


def load_defs(root):
    defs = {}
    for name in ("ClientRequest.json", "ServerNotification.json", "ServerRequest.json"):
        defs.update(json.load(open(os.path.join(root, name))).get("definitions", {}))
    for sub in ("", "v1", "v2"):
        d = os.path.join(root, sub)
        if not os.path.isdir(d):
            continue
        for f in os.listdir(d):
            if f.endswith(".json"):
                doc = json.load(open(os.path.join(d, f)))
                defs.update(doc.get("definitions", {}))
                defs.setdefault(f[:-5], doc)
    return defs


def allows_null(prop):
    if not isinstance(prop, dict):
        return prop is True  # `true` accepts anything
    t = prop.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(allows_null(alt) for alt in prop.get("anyOf", []) + prop.get("oneOf", []))


def nullable(props):
    return sorted(k for k, v in props.items() if allows_null(v))


def shape(defs, name):
    d = defs.get(name)
    if d is None:
        return None
    return {
        "type": name,
        "fields": sorted(d.get("properties", {}).keys()),
        "required": sorted(d.get("required", [])),
        "nullable": nullable(d.get("properties", {})),
    }


def type_shape(defs, name):
    d = defs.get(name)
    if d is None:
        sys.exit(f"type {name} is not in the schema")
    variants = {}
    for v in d.get("oneOf", []):
        tag = v.get("properties", {}).get("type", {}).get("enum")
        if tag:
            # Fields of flattened alternatives (`anyOf`) count as fields, not as required.
            props = dict(v.get("properties", {}))
            for alt in v.get("anyOf", []):
                props.update(alt.get("properties", {}))
            variants[tag[0]] = {
                "fields": sorted(props),
                "required": sorted(v.get("required", [])),
                "nullable": nullable(props),
            }
    if variants:
        return {"variants": variants}
    return shape(defs, name)


def methods_of(root, file):
    out = {}
    for v in json.load(open(os.path.join(root, file)))["oneOf"]:
        props = v["properties"]
        method = props["method"]["enum"][0]
        ref = props.get("params", {}).get("$ref", "")
        out[method] = ref.rsplit("/", 1)[-1] if ref else None
    return out


def main():
    root, methods_file = sys.argv[1], sys.argv[2]
    lines = [l.strip() for l in open(methods_file) if l.strip() and not l.startswith("#")]
    # `method => ResponseType` names the result of a method that takes no params (whose
    # result name cannot be derived from its params type).
    results = {}
    for l in lines:
        if "=>" in l:
            m, r = (x.strip() for x in l.split("=>", 1))
            results[m] = r
    lines = [l.split("=>", 1)[0].strip() for l in lines]
    wanted = [l for l in lines if not l.startswith("type ")]
    types = [l.split(None, 1)[1] for l in lines if l.startswith("type ")]
    defs = load_defs(root)
    tables = {
        "requests": methods_of(root, "ClientRequest.json"),
        "notifications": methods_of(root, "ServerNotification.json"),
        "serverRequests": methods_of(root, "ServerRequest.json"),
    }
    facts = {"source": "codex app-server 0.171 generate-json-schema --experimental"}
    for kind, table in tables.items():
        facts[kind] = {}
        for m in wanted:
            if m not in table:
                continue
            params = table[m]
            entry = {"params": shape(defs, params) if params else None}
            if kind != "notifications" and m in results:
                entry["result"] = shape(defs, results[m])
            elif kind != "notifications" and params:
                entry["result"] = shape(defs, params.replace("Params", "Response"))
            facts[kind][m] = entry
    facts["types"] = {t: type_shape(defs, t) for t in types}
    json.dump(facts, sys.stdout, indent=1, sort_keys=True)
    print()


main()
