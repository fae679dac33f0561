// Seed 000 in plain JavaScript: a tool call streaming state machine.
// toolCallStreamingStateMachine() returns { apply(event), get(id), list() }.
// Calls move pending -> running -> done, with error as the escape hatch; every event the
// seed does not allow in a call's status is ignored, and so is an event for an unknown id.

// A number too large for a double parses to Infinity, which JSON cannot write back: such
// arguments do not parse (the spec's T13), like NaN.
function finiteNumbers(key, value) {
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new SyntaxError(`number out of range at key ${JSON.stringify(key)}`);
  }
  return value;
}

export function toolCallStreamingStateMachine() {
  const calls = new Map(); // id -> call, in start order (a Map keeps insertion order)

  function snapshot(call) {
    const out = { id: call.id, name: call.name, argsText: call.argsText };
    if ("args" in call) out.args = structuredClone(call.args);
    out.status = call.status;
    if ("result" in call) out.result = structuredClone(call.result);
    if ("error" in call) out.error = structuredClone(call.error);
    return out;
  }

  return {
    apply(event) {
      const call = calls.get(event.id);
      switch (event.type) {
        case "start":
          if (!call) {
            calls.set(event.id, { id: event.id, name: event.name, argsText: "", status: "pending" });
          }
          return;
        case "delta":
          if (call && call.status === "pending") call.argsText += event.argsTextDelta;
          return;
        case "ready":
          if (call && call.status === "pending") {
            try {
              call.args = JSON.parse(call.argsText, finiteNumbers);
              call.status = "running";
            } catch (failure) {
              call.status = "error";
              call.error = `arguments are not valid JSON: ${failure.message}`;
            }
          }
          return;
        case "result":
          if (call && call.status === "running") {
            call.result = structuredClone(event.result);
            call.status = "done";
          }
          return;
        case "error":
          if (call && (call.status === "pending" || call.status === "running")) {
            call.error = structuredClone(event.error);
            call.status = "error";
          }
          return;
        default:
          return; // not an event of the seed: ignored
      }
    },
    get(id) {
      const call = calls.get(id);
      return call ? snapshot(call) : undefined;
    },
    list() {
      return [...calls.values()].map(snapshot);
    },
  };
}
