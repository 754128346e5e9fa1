//! Tests of `[mcp_servers]` parsing and `${VAR}` expansion.
use super::*;

fn parse(
    src: &str,
) -> (
    Result<BTreeMap<String, McpServerConfig>, String>,
    Vec<String>,
) {
    let v: toml::Value = toml::from_str(src).unwrap();
    let mut warnings = Vec::new();
    let r = parse_mcp_servers(&v["mcp_servers"], &mut warnings).map_err(|e| e.to_string());
    (r, warnings)
}

fn err(src: &str) -> String {
    parse(src).0.unwrap_err()
}

#[test]
fn full_stdio_server() {
    let (r, w) = parse(
        r#"
        [mcp_servers.local]
        command = "my-mcp"
        args = ["--stdio", "${HOME}"]
        cwd = "/tmp/project"
        env = { TOKEN = "env:MY_TOKEN", MODE = "fast" }
        env_vars = ["PATH", { name = "WORKSPACE", source = "local" }]
        required = true
        startup_timeout_sec = 2.5
        tool_timeout_sec = 60
        enabled_tools = ["search", "read"]
        disabled_tools = ["read"]
        default_tools_approval_mode = "prompt"
        [mcp_servers.local.tools.search]
        approval_mode = "approve"
        "#,
    );
    assert!(w.is_empty(), "{w:?}");
    let s = &r.unwrap()["local"];
    let McpServerTransportConfig::Stdio {
        command,
        args,
        env,
        env_vars,
        cwd,
    } = &s.transport
    else {
        panic!("not stdio")
    };
    assert_eq!(command, "my-mcp");
    assert_eq!(args, &["--stdio", "${HOME}"]);
    assert_eq!(env["TOKEN"], "env:MY_TOKEN");
    assert_eq!(env_vars[0].name, "PATH");
    assert_eq!(env_vars[0].source, None);
    assert_eq!(env_vars[1].source, Some(McpEnvVarSource::Local));
    assert_eq!(cwd.as_deref(), Some(std::path::Path::new("/tmp/project")));
    assert!(s.required && s.enabled);
    assert_eq!(s.startup_timeout, Some(Duration::from_millis(2500)));
    assert_eq!(s.tool_timeout_or_default(), Duration::from_secs(60));
    assert!(s.is_tool_enabled("search"));
    assert!(!s.is_tool_enabled("read"), "deny applies after allow");
    assert!(!s.is_tool_enabled("delete"), "not on the allow-list");
    assert_eq!(s.approval_mode_for("search"), McpApprovalMode::Approve);
    assert_eq!(s.approval_mode_for("other"), McpApprovalMode::Prompt);
}

#[test]
fn full_http_server_and_defaults() {
    let (r, w) = parse(
        r#"
        [mcp_servers.docs]
        url = "https://mcp.example.com/mcp"
        bearer_token_env_var = "DOCS_TOKEN"
        http_headers = { "X-Client" = "oi" }
        env_http_headers = { "X-Auth" = "AUTH_VAR" }
        oauth_resource = "api.example.com"
        scopes = ["read", "write"]
        [mcp_servers.docs.oauth]
        client_id = "my-client"
        "#,
    );
    assert!(w.is_empty(), "{w:?}");
    let s = &r.unwrap()["docs"];
    assert_eq!(s.transport.kind(), "streamable_http");
    let McpServerTransportConfig::StreamableHttp {
        url,
        bearer_token_env_var,
        http_headers,
        env_http_headers,
        oauth_resource,
        scopes,
        oauth,
    } = &s.transport
    else {
        panic!("not http")
    };
    assert_eq!(url, "https://mcp.example.com/mcp");
    assert_eq!(bearer_token_env_var.as_deref(), Some("DOCS_TOKEN"));
    assert_eq!(http_headers["X-Client"], "oi");
    assert_eq!(env_http_headers["X-Auth"], "AUTH_VAR");
    assert_eq!(oauth_resource.as_deref(), Some("api.example.com"));
    assert_eq!(
        scopes.as_deref(),
        Some(&["read".to_string(), "write".into()][..])
    );
    assert_eq!(oauth.client_id.as_deref(), Some("my-client"));
    assert_eq!(oauth.grant_type, McpOAuthGrant::AuthorizationCode);
    assert!(s.enabled && !s.required);
    assert_eq!(s.startup_timeout_or_default(), DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(s.tool_timeout_or_default(), DEFAULT_TOOL_TIMEOUT);
    assert_eq!(s.approval_mode_for("x"), McpApprovalMode::Auto);
    assert!(s.is_tool_enabled("anything"));
}

#[test]
fn wrong_transport_fields_are_errors() {
    assert_eq!(
        err("[mcp_servers.docs]\ncommand = \"x\"\nurl = \"http://a\""),
        "mcp_servers.docs: url is not supported for stdio"
    );
    assert_eq!(
        err("[mcp_servers.docs]\ncommand = \"x\"\nbearer_token_env_var = \"T\""),
        "mcp_servers.docs: bearer_token_env_var is not supported for stdio"
    );
    assert_eq!(
        err("[mcp_servers.docs]\ncommand = \"x\"\nhttp_headers = {}"),
        "mcp_servers.docs: http_headers is not supported for stdio"
    );
    assert_eq!(
        err("[mcp_servers.docs]\ncommand = \"x\"\noauth_resource = \"r\""),
        "mcp_servers.docs: oauth_resource is not supported for stdio"
    );
    assert_eq!(
        err("[mcp_servers.docs]\nurl = \"http://a\"\nargs = []"),
        "mcp_servers.docs: args is not supported for streamable_http"
    );
    assert_eq!(
        err("[mcp_servers.docs]\nurl = \"http://a\"\nenv_vars = [\"A\"]"),
        "mcp_servers.docs: env_vars is not supported for streamable_http"
    );
    assert_eq!(
        err("[mcp_servers.docs]\nurl = \"http://a\"\ncwd = \"/\""),
        "mcp_servers.docs: cwd is not supported for streamable_http"
    );
    assert!(err("[mcp_servers.docs]\nenabled = true").contains("invalid transport"));
}

#[test]
fn inline_bearer_token_points_at_env_var() {
    for src in [
        "[mcp_servers.docs]\nurl = \"http://a\"\nbearer_token = \"s3cret\"",
        "[mcp_servers.docs]\ncommand = \"x\"\nbearer_token = \"s3cret\"",
    ] {
        let e = err(src);
        assert!(
            e.starts_with("mcp_servers.docs.bearer_token: not supported"),
            "{e}"
        );
        assert!(e.contains("bearer_token_env_var"), "{e}");
        assert!(!e.contains("s3cret"), "never echo the secret: {e}");
    }
}

#[test]
fn bad_names_are_errors() {
    let e = err("[mcp_servers.\"my server\"]\ncommand = \"x\"");
    assert!(
        e.starts_with("mcp_servers.my server: invalid server name 'my server'"),
        "{e}"
    );
    // Quoted keys are fine, as in Codex (tool names sanitize them).
    assert!(
        parse("[mcp_servers.\"a.b\"]\ncommand = \"x\"")
            .0
            .unwrap()
            .contains_key("a.b")
    );
    assert!(err("[mcp_servers.\"a/b\"]\ncommand = \"x\"").contains("invalid server name"));
    assert!(is_valid_server_name("my-Tool_2"));
    assert!(!is_valid_server_name(""));
    assert!(!is_valid_server_name("é"));
}

#[test]
fn env_vars_source_is_checked() {
    assert_eq!(
        err("[mcp_servers.s]\ncommand = \"x\"\nenv_vars = [{ name = \"A\", source = \"cloud\" }]"),
        "mcp_servers.s.env_vars[0].source: unsupported env_vars source `cloud`; expected `local` or `remote`"
    );
    let (r, _) = parse(
        "[mcp_servers.s]\ncommand = \"x\"\nenv_vars = [{ name = \"A\", source = \"remote\" }]",
    );
    let McpServerTransportConfig::Stdio { env_vars, .. } = &r.unwrap()["s"].transport else {
        panic!()
    };
    assert_eq!(env_vars[0].source, Some(McpEnvVarSource::Remote));
    assert!(err("[mcp_servers.s]\ncommand = \"x\"\nenv_vars = [3]").contains("env_vars[0]"));
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\nenv_vars = [{ source = \"local\" }]")
            .contains("missing `name`")
    );
}

#[test]
fn type_and_value_errors_name_the_field() {
    assert_eq!(
        err("[mcp_servers.s]\ncommand = \"x\"\nargs = \"--flag\""),
        "mcp_servers.s.args: expected an array of strings, got a string"
    );
    assert_eq!(
        err("[mcp_servers.s]\ncommand = \"x\"\nargs = [\"a\", 1]"),
        "mcp_servers.s.args[1]: expected a string, got an integer"
    );
    assert_eq!(
        err("[mcp_servers.s]\ncommand = 5"),
        "mcp_servers.s.command: expected a string, got an integer"
    );
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\nenabled = \"yes\"")
            .starts_with("mcp_servers.s.enabled: expected true or false")
    );
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\nstartup_timeout_sec = -1")
            .starts_with("mcp_servers.s.startup_timeout_sec: expected a positive number")
    );
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\ntool_timeout_sec = \"10\"")
            .starts_with("mcp_servers.s.tool_timeout_sec")
    );
    assert_eq!(
        err("[mcp_servers.s]\ncommand = \"x\"\ndefault_tools_approval_mode = \"always\""),
        "mcp_servers.s.default_tools_approval_mode: unknown approval mode \"always\"; expected one of \"auto\", \"prompt\", \"approve\", \"writes\""
    );
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\n[mcp_servers.s.tools.t]\napproval_mode = \"no\"")
            .starts_with("mcp_servers.s.tools.t.approval_mode")
    );
    assert!(err("[mcp_servers.s]\nurl = \"ftp://x\"").contains("not an http(s) URL"));
    assert!(err("[mcp_servers.s]\ncommand = \"\"").contains("must not be empty"));
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\nargs = [\"${OOPS\"]")
            .starts_with("mcp_servers.s.args[0]: unterminated")
    );
    assert!(err("mcp_servers = 3").starts_with("mcp_servers: expected a table"));
    assert!(err("[mcp_servers]\ns = 3").starts_with("mcp_servers.s: expected a table"));
}

#[test]
fn legacy_startup_timeout_ms_and_precedence() {
    let (r, _) = parse("[mcp_servers.s]\ncommand = \"x\"\nstartup_timeout_ms = 1500");
    assert_eq!(
        r.unwrap()["s"].startup_timeout,
        Some(Duration::from_millis(1500))
    );
    let (r, _) = parse(
        "[mcp_servers.s]\ncommand = \"x\"\nstartup_timeout_ms = 1500\nstartup_timeout_sec = 3",
    );
    assert_eq!(
        r.unwrap()["s"].startup_timeout,
        Some(Duration::from_secs(3))
    );
}

#[test]
fn unknown_keys_warn_with_suggestion() {
    let (r, w) = parse(
        "[mcp_servers.s]\ncommand = \"x\"\ndisabled_tool = [\"a\"]\nfoo = 1\nname = \"legacy\"",
    );
    assert!(r.is_ok());
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w.contains(
            &"mcp_servers.s: unknown key `disabled_tool` (ignored); did you mean `disabled_tools`?"
                .to_string()
        ),
        "{w:?}"
    );
    assert!(
        w.contains(&"mcp_servers.s: unknown key `foo` (ignored)".to_string()),
        "{w:?}"
    );
}

#[test]
fn expansion() {
    let lookup = |k: &str| match k {
        "HOME" => Some("/home/u".to_string()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    assert_eq!(expand_env_refs("${HOME}/x", &lookup).unwrap(), "/home/u/x");
    assert_eq!(
        expand_env_refs("a${NOPE:-dflt}b", &lookup).unwrap(),
        "adfltb"
    );
    assert_eq!(expand_env_refs("${EMPTY:-d}", &lookup).unwrap(), "d");
    assert_eq!(expand_env_refs("${EMPTY}", &lookup).unwrap(), "");
    assert_eq!(
        expand_env_refs("$HOME $5 plain", &lookup).unwrap(),
        "$HOME $5 plain"
    );
    let e = expand_env_refs("${NOPE}", &lookup).unwrap_err().to_string();
    assert!(e.contains("`NOPE` is not set"), "{e}");
    assert!(expand_env_refs("${A B}", &lookup).is_err());
    assert!(
        expand_env_refs("${", &lookup)
            .unwrap_err()
            .to_string()
            .contains("unterminated")
    );
    assert_eq!(resolve_env_value("env:HOME", &lookup).unwrap(), "/home/u");
    assert!(
        resolve_env_value("env:NOPE", &lookup)
            .unwrap_err()
            .to_string()
            .contains("`NOPE` is not set")
    );
    assert_eq!(
        resolve_env_value("lit-${HOME}", &lookup).unwrap(),
        "lit-/home/u"
    );
}

#[test]
fn roots_are_offered_only_when_configured() {
    let (servers, warnings) = parse(
        "[mcp_servers.plain]\ncommand = \"x\"\n\
         [mcp_servers.rooted]\ncommand = \"x\"\nroots = [\".\", \"sub\", \"/abs\"]\n",
    );
    let servers = servers.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let cwd = std::path::Path::new("/session");
    assert_eq!(servers["plain"].roots, None);
    assert!(servers["plain"].resolved_roots(cwd).is_empty());
    assert_eq!(
        servers["rooted"].resolved_roots(cwd),
        vec![
            PathBuf::from("/session"),
            PathBuf::from("/session/sub"),
            PathBuf::from("/abs")
        ]
    );
    let e = err("[mcp_servers.s]\ncommand = \"x\"\nroots = \".\"\n");
    assert!(e.contains("mcp_servers.s") && e.contains("roots"), "{e}");
}

#[test]
fn nested_unknown_keys_warn_and_name_their_table() {
    let (r, w) = parse(
        "[mcp_servers.s]\nurl = \"https://x\"\n[mcp_servers.s.oauth]\nclient_id = \"c\"\nclient_secrt_env = \"no\"\n\
         [mcp_servers.s.tools.\"a.b\"]\napproval_mode = \"prompt\"\nmode = 1\n",
    );
    let s = &r.unwrap()["s"];
    assert_eq!(s.approval_mode_for("a.b"), McpApprovalMode::Prompt);
    assert_eq!(
        w,
        [
            "mcp_servers.s.oauth: unknown key `client_secrt_env` (ignored; the keys are `client_id`, `issuer`, `client_secret_env_var`, `token_endpoint_auth_method`, `client_metadata_url`, `grant_type`, `private_key_env_var`, `idp_token_endpoint`, `idp_client_id`, `id_token_env_var`)",
            "mcp_servers.s.tools.a.b: unknown key `mode` (ignored; the only key is `approval_mode`)",
        ]
    );
    let (_, w) = parse("[mcp_servers.s]\ncommand = \"x\"\nexperimental_environment = \"remote\"\n");
    assert_eq!(
        w,
        [
            "mcp_servers.s.experimental_environment: only \"local\" is supported; the server runs locally"
        ]
    );
}

#[test]
fn ignored_keys_carry_their_path_for_the_line_lookup() {
    let v: toml::Value = toml::from_str(
        "[mcp_servers.\"a.b\"]\ncommand = \"x\"\nfoo = 1\n[mcp_servers.\"a.b\".tools.t]\nzzz = 2\n",
    )
    .unwrap();
    let (_, ignored) = parse_servers(&v["mcp_servers"]).unwrap();
    let paths: Vec<(&str, Vec<&str>)> = ignored
        .iter()
        .map(|k| {
            (
                k.server.as_str(),
                k.path.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [("a.b", vec!["foo"]), ("a.b", vec!["tools", "t", "zzz"])]
    );
}

#[test]
fn nested_type_errors_name_the_element_and_the_fix() {
    assert_eq!(
        err("[mcp_servers.s]\ncommand = \"x\"\nenv = { A = 1 }"),
        "mcp_servers.s.env.A: expected a string, got an integer"
    );
    assert_eq!(
        err("[mcp_servers.s]\ncommand = \"x\"\nenv = [\"A=1\"]"),
        "mcp_servers.s.env: expected a table of strings like { NAME = \"value\" }, got an array"
    );
    assert_eq!(
        err("[mcp_servers.s]\nurl = \"https://x\"\noauth = \"c\""),
        "mcp_servers.s.oauth: expected a table like `[mcp_servers.<name>.oauth] client_id = \"...\"`, got a string"
    );
    let e = err("[mcp_servers.s]\ncommand = \"x\"\ntools = 3");
    assert!(
        e.starts_with("mcp_servers.s.tools: expected a table, got an integer")
            && e.contains("approval_mode"),
        "{e}"
    );
    assert_eq!(
        err("[mcp_servers.s]\ncommand = \"x\"\nenv_vars = [{ name = \"A\", from = \"local\" }]"),
        "mcp_servers.s.env_vars[0].from: unknown field `from`, expected `name` or `source`"
    );
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\nenv_vars = [\"A=B\"]").starts_with(
            "mcp_servers.s.env_vars[0]: `A=B` is not a valid environment variable name"
        )
    );
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\nstartup_timeout_ms = 0")
            .starts_with("mcp_servers.s.startup_timeout_ms: expected a positive integer")
    );
    assert!(
        err("[mcp_servers.s]\ncommand = \"x\"\ntool_timeout_sec = 1e12")
            .starts_with("mcp_servers.s.tool_timeout_sec: expected a positive number of seconds")
    );
}

#[test]
fn type_errors_never_echo_string_values() {
    // A token pasted into the wrong key must not end up in an error on screen or in a log.
    for src in [
        "[mcp_servers.s]\ncommand = \"x\"\nenv = \"TOKEN=sk-s3cret\"",
        "[mcp_servers.s]\ncommand = \"x\"\nenabled = \"sk-s3cret\"",
        "[mcp_servers.s]\nurl = \"https://x\"\nhttp_headers = \"sk-s3cret\"",
    ] {
        let e = err(src);
        assert!(!e.contains("s3cret"), "{e}");
        assert!(e.contains("got a string"), "{e}");
    }
}

#[test]
fn sampling_is_off_unless_configured_and_bad_modes_name_the_choices() {
    let (servers, warnings) = parse(
        "[mcp_servers.plain]\ncommand = \"x\"\n\
         [mcp_servers.asks]\ncommand = \"x\"\nsampling = \"prompt\"\n\
         [mcp_servers.trusted]\nurl = \"https://mcp.example.com/mcp\"\nsampling = \"approve\"\n",
    );
    let servers = servers.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(servers["plain"].sampling, McpSamplingMode::Off);
    assert!(!servers["plain"].sampling.is_enabled());
    assert_eq!(servers["asks"].sampling, McpSamplingMode::Prompt);
    assert_eq!(servers["trusted"].sampling, McpSamplingMode::Approve);
    let e = err("[mcp_servers.s]\ncommand = \"x\"\nsampling = \"yes\"\n");
    assert!(e.contains("mcp_servers.s.sampling"), "{e}");
    assert!(e.contains("\"off\", \"prompt\", \"approve\""), "{e}");
    let e = err("[mcp_servers.s]\ncommand = \"x\"\nsampling = true\n");
    assert!(e.contains("mcp_servers.s.sampling"), "{e}");
    // A typo gets a hint.
    let (_, w) = parse("[mcp_servers.s]\ncommand = \"x\"\nsamplng = \"prompt\"\n");
    assert!(
        w.iter().any(|w| w.contains("did you mean `sampling`")),
        "{w:?}"
    );
}

#[test]
fn the_protocol_version_is_auto_unless_pinned_and_a_bad_one_names_the_choices() {
    let (servers, warnings) = parse(
        "[mcp_servers.plain]\ncommand = \"x\"\n\
         [mcp_servers.modern]\nurl = \"https://mcp.example.com/mcp\"\nprotocol_version = \"2026-07-28\"\n\
         [mcp_servers.legacy]\ncommand = \"x\"\nprotocol_version = \"2025-11-25\"\n\
         [mcp_servers.probe]\ncommand = \"x\"\nprotocol_version = \"auto\"\n",
    );
    let servers = servers.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(servers["plain"].protocol_version, McpProtocolVersion::Auto);
    assert_eq!(servers["probe"].protocol_version, McpProtocolVersion::Auto);
    assert_eq!(
        servers["modern"].protocol_version,
        McpProtocolVersion::V2026_07_28
    );
    assert_eq!(
        servers["legacy"].protocol_version,
        McpProtocolVersion::V2025_11_25
    );
    let e = err("[mcp_servers.s]\ncommand = \"x\"\nprotocol_version = \"2025-06-18\"\n");
    assert!(e.contains("mcp_servers.s.protocol_version"), "{e}");
    assert!(
        e.contains("\"auto\", \"2026-07-28\", \"2025-11-25\""),
        "{e}"
    );
    let e = err("[mcp_servers.s]\ncommand = \"x\"\nprotocol_version = 2026\n");
    assert!(e.contains("mcp_servers.s.protocol_version"), "{e}");
    let (_, w) = parse("[mcp_servers.s]\ncommand = \"x\"\nprotocol_versions = \"auto\"\n");
    assert!(
        w.iter()
            .any(|w| w.contains("did you mean `protocol_version`")),
        "{w:?}"
    );
}

#[test]
fn oauth_tables_name_secrets_by_variable_and_check_what_a_grant_needs() {
    let (r, w) = parse(
        r#"
        [mcp_servers.m2m]
        url = "https://mcp.example.com/mcp"
        [mcp_servers.m2m.oauth]
        grant_type = "client_credentials"
        client_id = "svc"
        client_secret_env_var = "SVC_SECRET"
        token_endpoint_auth_method = "client_secret_basic"
        "#,
    );
    assert!(w.is_empty(), "{w:?}");
    let McpServerTransportConfig::StreamableHttp { oauth, .. } = &r.unwrap()["m2m"].transport
    else {
        panic!("not http")
    };
    assert_eq!(oauth.grant_type, McpOAuthGrant::ClientCredentials);
    assert_eq!(
        oauth.token_endpoint_auth_method,
        Some(McpTokenEndpointAuth::ClientSecretBasic)
    );
    assert_eq!(oauth.client_secret_env_var.as_deref(), Some("SVC_SECRET"));

    let table = |body: &str| {
        format!("[mcp_servers.s]\nurl = \"https://x/mcp\"\n[mcp_servers.s.oauth]\n{body}")
    };
    assert_eq!(
        err(&table("client_id = \"c\"\nclient_secret = \"hunter2\"\n")),
        "mcp_servers.s.oauth.client_secret: not supported; set `client_secret_env_var` to the name of an environment variable holding the secret instead (secrets never go in config.toml)"
    );
    assert_eq!(
        err(&table(
            "grant_type = \"client_credentials\"\nclient_id = \"c\"\n"
        )),
        "mcp_servers.s.oauth.client_secret_env_var: required with grant_type = \"client_credentials\" (or token_endpoint_auth_method = \"private_key_jwt\" with private_key_env_var)"
    );
    assert_eq!(
        err(&table("grant_type = \"password\"\n")),
        "mcp_servers.s.oauth.grant_type: unknown grant `password`; use \"authorization_code\", \"client_credentials\" or \"token_exchange\""
    );
    assert_eq!(
        err(&table("token_endpoint_auth_method = \"private_key_jwt\"\n")),
        "mcp_servers.s.oauth.private_key_env_var: required with token_endpoint_auth_method = \"private_key_jwt\" (the variable holding the PEM key)"
    );
    assert_eq!(
        err(&table(
            "client_metadata_url = \"http://example.com/c.json\"\n"
        )),
        "mcp_servers.s.oauth.client_metadata_url: must be an https URL with a path, e.g. \"https://example.com/oauth/client.json\""
    );
    assert_eq!(
        err(&table("issuer = \"https://auth.example.com\"\n")),
        "mcp_servers.s.oauth.issuer: names the authorization server of `client_id`; set `client_id` too, or remove `issuer`"
    );
    assert_eq!(
        err(&table("client_id = \"c\"\nissuer = \"auth.example.com\"\n")),
        "mcp_servers.s.oauth.issuer: must be the authorization server's issuer URL, e.g. \"https://auth.example.com\""
    );
    assert_eq!(
        err(&table(
            "grant_type = \"token_exchange\"\nclient_id = \"c\"\n"
        )),
        "mcp_servers.s.oauth.idp_token_endpoint: required with grant_type = \"token_exchange\""
    );
}

/// Every TOML example in the OAuth part of docs/mcp-client.md parses, with no warnings.
#[test]
fn the_oauth_examples_in_the_guide_parse() {
    let guide = include_str!("../../../../docs/mcp-client.md");
    let section = &guide[guide.find("### OAuth settings").unwrap()..];
    let section = &section[..section.find("\n## ").unwrap()];
    let blocks: Vec<&str> = section
        .split("```toml\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    assert_eq!(blocks.len(), 5, "{section}");
    for block in blocks {
        let (r, w) = parse(block);
        assert!(w.is_empty(), "{block}: {w:?}");
        let servers = r.unwrap_or_else(|e| panic!("{block}: {e}"));
        assert_eq!(servers.len(), 1, "{block}");
    }
}

/// Every TOML example in the *Protocol versions* part of docs/mcp-client.md parses, with no
/// warnings, to the pinned versions it shows.
#[test]
fn the_protocol_examples_in_the_guide_parse() {
    let guide = include_str!("../../../../docs/mcp-client.md");
    let section = &guide[guide.find("## Protocol versions").unwrap()..];
    let section = &section[..section.find("\n## ").unwrap()];
    let blocks: Vec<&str> = section
        .split("```toml\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    assert_eq!(blocks.len(), 1, "{section}");
    let (r, w) = parse(blocks[0]);
    assert!(w.is_empty(), "{w:?}");
    let servers = r.unwrap();
    assert_eq!(
        servers["legacy"].protocol_version,
        McpProtocolVersion::V2025_11_25
    );
    assert_eq!(
        servers["modern"].protocol_version,
        McpProtocolVersion::V2026_07_28
    );
}
