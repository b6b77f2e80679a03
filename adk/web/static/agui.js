// A minimal AG-UI client: POST a RunAgentInput, read the server-sent events it streams back.

/** A fresh id for a thread, run or message. */
export function newId() {
  return crypto.randomUUID ? crypto.randomUUID().replaceAll("-", "") : String(Math.random()).slice(2);
}

/**
 * Run the agent on `messages` (a user message) in thread `threadId`, or answer the interrupts a
 * paused run ended with (`resume`: AG-UI resume entries); `onEvent` gets each AG-UI event, in
 * order. Resolves when the stream ends; a refused request (4xx/5xx) rejects with the server's detail.
 */
export async function runAgent(url, threadId, messages, onEvent, resume) {
  const input = {
    threadId,
    runId: newId(),
    state: {},
    messages,
    tools: [],
    context: [],
    forwardedProps: {},
  };
  if (resume) input.resume = resume;
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(input),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error(`${response.status}: ${body.detail ?? response.statusText}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      if (data) onEvent(JSON.parse(data));
    }
  }
}
