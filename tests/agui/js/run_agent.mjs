// Runs AG-UI runs on one thread with the official client, @ag-ui/client's HttpAgent, and prints
// what the client saw as JSON: each run's events, and the messages and state it ends with.
// The client verifies every event sequence itself: an invalid one rejects runAgent.
// Usage: node run_agent.mjs SPEC, SPEC being JSON:
//   {url, threadId, initialMessages, initialState?, runs: [{runId, tools?, answer?, results?, resume?, state?}]}
// `answer`: after the run, the content of a tool result for each call it left pending (a
// frontend tool the client "ran"), sent with the next run. `results`: {toolCallId: content}, tool
// results this run sends (the client ran those calls). `resume`: this run answers the
// interrupts the one before ended with, {interruptId: {status, payload?}}, through the client's
// own buildResumeArray (which refuses to leave one unanswered). `state`: the client's state before
// this run (a shared-state front end whose user changed a setting), sent with it.
import { buildResumeArray, HttpAgent } from "@ag-ui/client";

const spec = JSON.parse(process.argv[2]);
const agent = new HttpAgent({
  url: spec.url,
  threadId: spec.threadId,
  initialMessages: spec.initialMessages,
  initialState: spec.initialState ?? {},
});
const runs = [];
const report = (extra) =>
  console.log(JSON.stringify({ runs, messages: agent.messages, state: agent.state, ...extra }));
try {
  for (const run of spec.runs) {
    const events = [];
    if (run.state !== undefined) agent.setState(run.state);
    let pending = [];
    let interrupts = [];
    for (const [toolCallId, content] of Object.entries(run.results ?? {})) {
      agent.addMessage({ id: `result-${toolCallId}`, role: "tool", toolCallId, content });
    }
    const resume = run.resume === undefined ? undefined : buildResumeArray(agent.pendingInterrupts, run.resume);
    await agent.runAgent(
      { runId: run.runId, tools: run.tools ?? [], resume },
      {
        onEvent: ({ event }) => void events.push(event),
        onRunFinishedEvent: (finished) => {
          pending = finished.pendingToolCallIds ?? [];
          interrupts = finished.interrupts ?? [];
        },
      },
    );
    runs.push({ events, pending, interrupts });
    for (const toolCallId of run.answer === undefined ? [] : pending) {
      agent.addMessage({ id: `result-${toolCallId}`, role: "tool", toolCallId, content: run.answer });
    }
  }
  report({});
} catch (error) {
  report({ error: String(error?.message ?? error) });
  process.exitCode = 1;
}
