// A client built on the official TypeScript SDK (@agentclientprotocol/sdk) that sends the
// prompts it is given to `elelem-kernel acp`, one session, in order. Run by
// tests/acp/test_ts_client.py:
//
//   node ts_prompts.mjs SDK_DIR AGENT WORKSPACE OUT_DIR < PROMPTS_JSON
//
// PROMPTS_JSON is a list of prompts (each a list of content blocks). Every line the agent
// sends is kept raw in OUT_DIR/received-prompts.jsonl; stdout gets the `initialize`
// result, each prompt's result or error, and the updates.
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, agentCommand, workspace, outDir] = process.argv.slice(2);
const prompts = JSON.parse(readFileSync(0, "utf8"));
const acp = await import(pathToFileURL(join(sdkDir, "dist/v1/stable/acp.js")).href);

const child = spawn(agentCommand, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
child.stdout.on("data", (chunk) => appendFileSync(join(outDir, "received-prompts.jsonl"), chunk));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const result = { answers: [], updates: [] };

await acp
  .client()
  .onNotification("session/update", async ({ params }) => {
    result.updates.push(params.update);
  })
  .connectWith(stream, async (cx) => {
    result.initialize = await cx.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { session: {} },
    });
    const session = await cx.request("session/new", { cwd: workspace, mcpServers: [] });
    for (const prompt of prompts) {
      try {
        result.answers.push({ result: await cx.request("session/prompt", { sessionId: session.sessionId, prompt }) });
      } catch (error) {
        result.answers.push({ error: { code: error.code, message: error.message, data: error.data ?? null } });
      }
    }
  });
child.stdin.end();
await new Promise((resolve) => child.on("exit", resolve));
process.stdout.write(JSON.stringify(result) + "\n");
