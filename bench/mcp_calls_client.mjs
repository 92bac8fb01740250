// The TypeScript SDK's client for bench/mcp_calls.py (--client typescript): N sequential
// `retrieve` calls over stdio or streamable HTTP, as the issue measured them; prints one JSON
// line {"calls", "rate"}. It lists the tools first, as a client does, so the SDK checks every
// structured result against the tool's output schema (compiled by Ajv).
// Before the timed calls it calls for WARM seconds (environment; default 0): a new server
// ranks on its reference paths until its compiled kernels are loaded (ADR 0026).
//   node mcp_calls_client.mjs stdio CALLS COMMAND [ARGS...]
//   node mcp_calls_client.mjs http CALLS URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const WORDS = ["crane", "berth", "tide", "pilot", "reefer", "fault", "delay", "window",
  "schedule", "night", "power"];
const [mode, count, ...target] = process.argv.slice(2);
const transport = mode === "http"
  ? new StreamableHTTPClientTransport(new URL(target[0]))
  : new StdioClientTransport({ command: target[0], args: target.slice(1), env: process.env,
    stderr: "ignore" });
const client = new Client({ name: "rookhaven-bench", version: "1" });
await client.connect(transport);
await client.listTools();

const call = async (args) => {
  const out = await client.callTool({ name: "retrieve", arguments: args });
  if (out.isError) throw new Error(JSON.stringify(out.content));
};
await call({ query: "crane", recallBudget: 10 });
const warm = performance.now() + 1000 * Number(process.env.WARM || 0);
for (let i = 0; performance.now() < warm; i++) {
  await call({ query: "tide", recallBudget: 10, seed: `w${i}` });
}
const calls = Number(count);
const started = performance.now();
for (let i = 0; i < calls; i++) {
  const query = `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`;
  await call({ query, recallBudget: 10, seed: String(i) });
}
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ calls, rate: calls / seconds }));
await client.close();
