// toolgate as the client under test of the MCP conformance suite (client mode).
//
// The suite runs `<command> <server-url>` once per scenario, with MCP_CONFORMANCE_SCENARIO
// set and, for scenarios that need it, MCP_CONFORMANCE_CONTEXT (pre-registered client
// credentials). This script configures that server the way a person would — an HTTP entry
// in a .mcp.json, with `oauth.clientId` / `oauth.clientSecret` (through `${VAR}`) when the
// scenario hands out credentials, and the suite's client ID metadata document URL — and
// runs the real binary:
//
//     toolgate mcp call conformance test-tool {}
//
// which connects, lists tools and calls one, signing in whenever the server asks. The core
// scenarios each serve their own tool (below); `initialize` serves none, so it only lists
// (`toolgate mcp tools`), and the elicitation scenario is answered with the form's
// defaults (`--elicitation accept-defaults`), as a script would.
// $BROWSER is tests/fixtures/browser.mjs: it opens the sign-in page and follows its
// redirects back to toolgate's loopback listener, as a person's browser would.
//
// Needs $TOOLGATE_BIN (the binary under test).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The URL the suite accepts as a client ID metadata document (it never fetches it).
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

const here = dirname(fileURLToPath(import.meta.url));
const serverUrl = process.argv[process.argv.length - 1];
const toolgate = process.env.TOOLGATE_BIN;
if (!toolgate || !serverUrl?.startsWith("http")) {
  console.error("usage: TOOLGATE_BIN=… client.mjs <server-url>");
  process.exit(2);
}

const context = process.env.MCP_CONFORMANCE_CONTEXT
  ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT)
  : {};
const oauth = { clientMetadataUrl: CLIENT_METADATA_URL };
const env = { ...process.env };
if (context.client_id) {
  oauth.clientId = context.client_id;
}
if (context.client_secret) {
  oauth.clientSecret = "${CONFORMANCE_CLIENT_SECRET}";
  env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
}

// What each core scenario's server offers; every other scenario (auth) serves test-tool.
const CORE = {
  initialize: ["mcp", "tools", "conformance"],
  tools_call: ["mcp", "call", "conformance", "add_numbers", '{"a":2,"b":3}'],
  "elicitation-sep1034-client-defaults": [
    "mcp", "call", "conformance", "test_client_elicitation_defaults", "{}",
    "--elicitation", "accept-defaults",
  ],
  "sse-retry": ["mcp", "call", "conformance", "test_reconnection", "{}"],
};
const command = CORE[process.env.MCP_CONFORMANCE_SCENARIO] ?? [
  "mcp", "call", "conformance", "test-tool", "{}",
];

const home = mkdtempSync(join(tmpdir(), "toolgate-conformance-"));
try {
  const config = join(home, "mcp.json");
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { conformance: { type: "http", url: serverUrl, oauth } },
    }),
  );
  env.TOOLGATE_STATE_DIR = join(home, "state");
  env.TOOLGATE_CONFIG_DIR = join(home, "config");
  env.TOOLGATE_SIGN_IN_TIMEOUT_SECS = "20";
  env.BROWSER = `${process.execPath} ${join(here, "..", "..", "fixtures", "browser.mjs")}`;
  const run = spawnSync(
    toolgate,
    [...command, "--mcp-config", config, "--workspace", home],
    { env, encoding: "utf8", timeout: 60_000 },
  );
  process.stdout.write(run.stdout ?? "");
  process.stderr.write(run.stderr ?? "");
  if (run.error) {
    console.error(`client.mjs: ${run.error}`);
  }
  process.exit(run.status ?? 1);
} finally {
  rmSync(home, { recursive: true, force: true });
}
