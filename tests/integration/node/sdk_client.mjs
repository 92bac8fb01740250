// A client nobody here wrote: the TypeScript MCP SDK, over stdio, checking what such a client
// relies on. Run from the node tools cache (tools/node_tools.sh) with the server command as
// arguments; prints one JSON object of findings for the Python test to assert on.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
const client = new Client({ name: "rookhaven-ts-check", version: "1" });
await client.connect(transport);

// Strict Ajv refuses unknown keywords (such as pydantic's raw "ge") and loose types.
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const schemaErrors = {};
const { tools } = await client.listTools();
for (const tool of tools) {
  for (const [which, schema] of [["input", tool.inputSchema], ["output", tool.outputSchema]]) {
    try { ajv.compile(schema); } catch (e) { schemaErrors[`${tool.name}.${which}`] = String(e); }
  }
}

const progress = [];
const out = await client.callTool(
  { name: "retrieve", arguments: { query: "crane faults and tide windows", recallBudget: 3, seed: "ts-1" } },
  undefined,
  { onprogress: (p) => progress.push([p.progress, p.total]) });
const sc = out.structuredContent;

const bogus = await client.callTool({ name: "retrieve", arguments: { query: "crane", bogus: 1 } });
let unknownTool = null;
try { await client.callTool({ name: "no_such_tool", arguments: {} }); }
catch (e) { unknownTool = e.code; }

const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
const listed = (await client.listResources()).resources.map((r) => r.uri);
const corpus = await client.readResource({ uri: listed[0] });
await client.setLoggingLevel("warning");

// With Redis (RH_TS_RUN set): a long call, a verification run waited on with progress.
let run = null;
if (process.env.RH_TS_RUN) {
  const started = (await client.callTool({ name: "start_verification", arguments: { all: true } }))
    .structuredContent;
  const runProgress = [];
  const waited = await client.callTool(
    { name: "get_run", arguments: { runId: started.run_id, wait: 120 } },
    undefined,
    { onprogress: (p) => runProgress.push([p.progress, p.total]), timeout: 180000 });
  run = { started: started.state, runProgress, ...waited.structuredContent };
}

console.log(JSON.stringify({
  run,
  tools: tools.map((t) => t.name),
  schemaErrors,
  hitIds: sc.hits.map((h) => h.id),
  seed: sc.audit.seed,
  resultKey: sc.result_key,
  mode: sc.metadata.mode,
  progress,
  bogus: { isError: bogus.isError, text: bogus.content[0].text },
  unknownTool,
  capabilities: client.getServerCapabilities(),
  templates,
  listed,
  corpusLines: corpus.contents[0].text.trim().split("\n").length,
}));
await client.close();
