// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk), driving
// `elelem-kernel acp` as an editor would. Run by tests/acp/test_ts_client.py:
//
//   node ts_client.mjs SDK_DIR AGENT WORKSPACE OUT_DIR
//
// Phase one: a session with a write (its permission allowed), then a slow turn cancelled
// and a new prompt sent at once. Phase two, in a new agent process: session/load, then a
// prompt. Every line the agent sends is kept raw in OUT_DIR/received-N.jsonl (the test
// validates each against the SDK's JSON schema); what the client saw goes to stdout.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, agentCommand, workspace, outDir] = process.argv.slice(2);
const acp = await import(pathToFileURL(join(sdkDir, "dist/v1/stable/acp.js")).href);

function start(phase) {
  const child = spawn(agentCommand, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
  const raw = join(outDir, `received-${phase}.jsonl`);
  child.stdout.on("data", (chunk) => appendFileSync(raw, chunk));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, stream };
}

function clientApp(seen, waiters) {
  return acp
    .client()
    .onRequest("session/request_permission", async ({ params }) => {
      seen.asked.push(params.toolCall.toolCallId);
      seen.order.push(["ask", params.toolCall.toolCallId]);
      return { outcome: { outcome: "selected", optionId: "allow" } };
    })
    .onNotification("session/update", async ({ params }) => {
      const update = params.update;
      seen.updates.push(update);
      seen.order.push(["update", update.sessionUpdate, update.toolCallId ?? null]);
      for (const waiter of waiters.splice(0)) {
        if (!waiter.test(update)) {
          waiters.push(waiter);
        } else {
          waiter.resolve();
        }
      }
    });
}

function until(waiters, test) {
  return new Promise((resolve) => waiters.push({ test, resolve }));
}

async function stopped(child) {
  child.stdin.end();
  await new Promise((resolve) => child.on("exit", resolve));
}

const capabilities = { protocolVersion: 1, clientCapabilities: { session: {} } };
const result = {};

{
  const seen = { updates: [], asked: [], order: [] };
  const waiters = [];
  const { child, stream } = start(1);
  await clientApp(seen, waiters).connectWith(stream, async (cx) => {
    result.initialize = await cx.request("initialize", capabilities);
    const session = await cx.request("session/new", { cwd: workspace, mcpServers: [] });
    result.sessionId = session.sessionId;
    const prompt = (text) =>
      cx.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text }],
      });
    result.first = await prompt("write a.txt");
    const streaming = until(waiters, (u) => u.sessionUpdate === "agent_message_chunk" && u.content.text.includes("long"));
    const cancelled = prompt("a long answer please");
    await streaming;
    await cx.notify("session/cancel", { sessionId: session.sessionId });
    const next = prompt("and now?");
    result.cancelled = await cancelled;
    result.next = await next;
  });
  await stopped(child);
  result.phase1 = seen;
}

{
  const seen = { updates: [], asked: [], order: [] };
  const { child, stream } = start(2);
  await clientApp(seen, []).connectWith(stream, async (cx) => {
    await cx.request("initialize", capabilities);
    result.load = await cx.request("session/load", {
      sessionId: result.sessionId,
      cwd: workspace,
      mcpServers: [],
    });
    result.afterLoad = await cx.request("session/prompt", {
      sessionId: result.sessionId,
      prompt: [{ type: "text", text: "still there?" }],
    });
  });
  await stopped(child);
  result.phase2 = seen;
}

process.stdout.write(JSON.stringify(result) + "\n");
