// Speaks the toolcalls conformance protocol on stdin/stdout (one JSON request per line,
// exactly one JSON response line each) for the implementation in tool-calls.mjs:
//   node examples/seed000/conformance-server.mjs
// and check it with: toolcalls conformance --cmd "node examples/seed000/conformance-server.mjs"
import { createInterface } from "node:readline";
import { toolCallStreamingStateMachine } from "./tool-calls.mjs";

let machine = toolCallStreamingStateMachine();

function handle(request) {
  switch (request.op) {
    case "reset":
      machine = toolCallStreamingStateMachine();
      return { ok: true };
    case "apply":
      machine.apply(request.event);
      return { ok: true };
    case "get":
      return { ok: true, value: machine.get(request.id) ?? null };
    case "list":
      return { ok: true, value: machine.list() };
    default:
      return { ok: false, error: `unknown op ${JSON.stringify(request.op)}` };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let response;
  try {
    response = handle(JSON.parse(line));
  } catch (failure) {
    response = { ok: false, error: String(failure?.message ?? failure) };
  }
  process.stdout.write(JSON.stringify(response) + "\n");
}
