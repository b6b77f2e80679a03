// Runs one AG-UI run against URL with the official client, @ag-ui/client's HttpAgent, and prints
// what the client saw as JSON: every event, and the messages and state it ends with.
// The client verifies the event sequence itself: an invalid one rejects runAgent.
// Usage: node run_agent.mjs URL THREAD_ID RUN_ID MESSAGE
import { HttpAgent } from "@ag-ui/client";

const [url, threadId, runId, text] = process.argv.slice(2);
const agent = new HttpAgent({
  url,
  threadId,
  initialMessages: [{ id: "u1", role: "user", content: text }],
});
const events = [];
const report = (extra) => console.log(JSON.stringify({ events, messages: agent.messages, state: agent.state, ...extra }));
try {
  const result = await agent.runAgent({ runId }, { onEvent: ({ event }) => void events.push(event) });
  report({ newMessages: result.newMessages });
} catch (error) {
  report({ error: String(error?.message ?? error) });
  process.exitCode = 1;
}
