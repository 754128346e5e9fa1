#!/usr/bin/env node
// The MCP conformance suite's client adapter: `conformance client --command "node
// client-adapter.mjs"` starts a scenario server and runs this with its URL as the last
// argument (MCP_CONFORMANCE_SCENARIO names the scenario; MCP_CONFORMANCE_CONTEXT carries the
// credentials an auth scenario hands the client). We write what a user would write, a
// config.toml with an [mcp_servers.conformance] table in a fresh home, and run our own client
// on it as a user would: for an auth scenario `interpreter mcp login` first (which reads the
// server's challenge, and runs the machine grant where `grant_type` says so), then
// `interpreter mcp call`, which connects (server/discover, or initialize), lists the tools,
// calls the scenario's tools (one run each), and answers whatever the server asks for during
// the session (a step-up, a moved authorization server). The scenario's authorization server
// approves at once, so the "browser" is open-url.mjs, which follows the redirects back to
// our loopback callback.
//
// INTERPRETER_BIN names the binary (default: `interpreter` on PATH).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const here = dirname(fileURLToPath(import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'oi-conformance-'));
const env = { ...process.env, OPENINTERPRETER_HOME: home };
const toml = (s) => JSON.stringify(s); // a JSON string is a valid TOML basic string

// [mcp_servers.conformance.oauth], secrets passed by variable name as a user would.
const oauth = {};
switch (context.name) {
  case 'auth/client-credentials-jwt':
    Object.assign(oauth, {
      grant_type: 'client_credentials',
      client_id: context.client_id,
      token_endpoint_auth_method: 'private_key_jwt',
      private_key_env_var: 'CONFORMANCE_PRIVATE_KEY',
    });
    env.CONFORMANCE_PRIVATE_KEY = context.private_key_pem;
    break;
  case 'auth/client-credentials-basic':
    Object.assign(oauth, {
      grant_type: 'client_credentials',
      client_id: context.client_id,
      client_secret_env_var: 'CONFORMANCE_CLIENT_SECRET',
      token_endpoint_auth_method: 'client_secret_basic',
    });
    env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
    break;
  case 'auth/pre-registration':
    Object.assign(oauth, {
      client_id: context.client_id,
      client_secret_env_var: 'CONFORMANCE_CLIENT_SECRET',
    });
    env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
    break;
  case 'auth/cross-app-access-complete-flow':
    Object.assign(oauth, {
      grant_type: 'token_exchange',
      client_id: context.client_id,
      client_secret_env_var: 'CONFORMANCE_CLIENT_SECRET',
      idp_token_endpoint: context.idp_token_endpoint,
      idp_client_id: context.idp_client_id,
      id_token_env_var: 'CONFORMANCE_ID_TOKEN',
    });
    env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
    env.CONFORMANCE_ID_TOKEN = context.idp_id_token;
    break;
  default:
    if (scenario.startsWith('auth/')) {
      // The suite's fixed Client ID Metadata Document URL: used where the server offers CIMD,
      // dynamic registration elsewhere.
      oauth.client_metadata_url = 'https://conformance-test.local/client-metadata.json';
    }
}

let config = `[mcp_servers.conformance]\nurl = ${toml(url)}\nstartup_timeout_sec = 60\n`;
if (Object.keys(oauth).length > 0) {
  config += '\n[mcp_servers.conformance.oauth]\n';
  for (const [key, value] of Object.entries(oauth)) config += `${key} = ${toml(value)}\n`;
}
writeFileSync(join(home, 'config.toml'), config);
env.BROWSER = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(here, 'open-url.mjs'))}`;

// The scenario's tool calls: the runner's own list (MCP_CONFORMANCE_CONTEXT `toolCalls`), or
// ours; `*` calls every tool our client offers (so a tool it must leave out would be called).
const calls = {
  tools_call: [['add_numbers', { a: 5, b: 3 }]],
  'elicitation-sep1034-client-defaults': [['test_client_elicitation_defaults', {}]],
  'sse-retry': [['test_reconnection', {}]],
  'sep-2322-client-request-state': [
    ['test_mrtr_echo_state', {}],
    ['test_mrtr_no_state', {}],
    ['test_mrtr_unrelated', {}],
    ['test_mrtr_no_result_type', {}],
  ],
  'http-standard-headers': [['test_headers', {}], ['my-hyphenated-tool', {}]],
  'http-invalid-tool-headers': '*',
  // Two runs, so the second connection uses the tokens the first stored (the metadata of a
  // 2025-03-26 server is at its root, with an issuer RFC 8414 would refuse).
  'auth/2025-03-26-oauth-metadata-backcompat': [['test-tool', {}], ['test-tool', {}]],
};
const bin = process.env.INTERPRETER_BIN || 'interpreter';
const base = ['mcp', 'call', 'conformance', '--authorize', '--accept-elicitations'];
const run = (argv, stdio = 'inherit') => spawnSync(bin, [...base, ...argv], { env, stdio });
const failed = (ran) => {
  if (ran.error) {
    console.error(`cannot run ${bin}: ${ran.error.message}`);
    return 2;
  }
  return ran.status ?? 1;
};

let status = 0;
if (scenario.startsWith('auth/')) {
  status = failed(spawnSync(bin, ['mcp', 'login', 'conformance'], { env, stdio: 'inherit' }));
}
let plan = Array.isArray(context.toolCalls)
  ? context.toolCalls.map((c) => [c.name, c.arguments ?? {}])
  : calls[scenario] ?? (scenario.startsWith('auth/') ? [['test-tool', {}]] : []);
if (status !== 0) {
  plan = [];
} else if (plan === '*') {
  // What our client offers, one name a line.
  const listed = run([], ['ignore', 'pipe', 'inherit']);
  const names = (listed.stdout?.toString() ?? '').split('\n').filter(Boolean);
  plan = names.map((name) => [name, { region: 'us-west1' }]);
}
if (status === 0 && plan.length === 0) {
  status = failed(run([]));
}
for (const [tool, args] of plan) {
  const called = failed(run([tool, '--arguments', JSON.stringify(args)]));
  if (called === 2) {
    status = 2;
    break;
  }
  if (called !== 0) status = called;
}
rmSync(home, { recursive: true, force: true });
process.exit(status);
