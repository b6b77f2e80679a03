// Callback decisions in words, as the command line tells them; each with its icon's name.

/** A decision's icon (its kind) and one line, as the command line shows it. */
export function describe(d) {
  const who = d.by.replace(/^callback:/, "");
  const [kind, name] = d.target.split(/:(.*)/s);
  const target = `${kind} ${name}`;
  const failed = `${target} failed (${d.error}: ${d.message})`;
  switch (d.kind) {
    case "halted":
      return ["halted", `${who} halted ${target}; ${kind === "model" ? "the model was not called" : "it did not run"}`];
    case "replaced":
      return ["replaced", `${who} replaced the output of ${target}`];
    case "retried":
      return ["retried", `${failed}; ${who} retries in ${d.wait.toFixed(2)} s (attempt ${d.attempt})`];
    case "fell_back":
      return ["fell_back", `${failed}; ${who} falls back to ${d.to === null ? "a fallback result" : d.to.replace(":", " ")}`];
    case "deferred": // by a callback, or by a tool marked as needing approval; with a schema, a server's question
      if (d.schema) return ["deferred", `${d.by} asks the person, during ${target}: ${d.reason}`];
      return ["deferred", d.by === d.target ? `${target} waits for approval: ${d.reason}` : `${who} deferred ${target} for approval: ${d.reason}`];
    case "approved":
      return ["approved", `${target} approved (${d.call_id}); it runs`];
    case "rejected":
      return ["rejected", `${target} rejected (${d.call_id})${d.reason ? `: ${d.reason}` : ""}; it does not run`];
    case "refused":
      return ["rejected", `${who} refused the answer of ${target}: ${d.reason}`];
    case "paced":
      return ["retried", `${who} held ${target} back ${d.wait.toFixed(2)} s for capacity`];
    case "compacted":
      return ["replaced", `${who} folded ${d.folded} message(s) before ${target}, ${d.tokens_saved} tokens saved`];
    default:
      return ["error", JSON.stringify(d)];
  }
}
