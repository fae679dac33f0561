// The AI SDK's UI message stream processing (npm package `ai`) behind the toolcalls
// conformance protocol, so seed 000 event sequences can be run through a real peer:
//   toolcalls conformance --cmd "node examples/ai-sdk/peer.mjs"
//
// Seed events become UI message chunks: start -> tool-input-start, delta ->
// tool-input-delta, ready -> tool-input-available (with the arguments parsed here, as a
// provider would) or tool-input-error when they do not parse, result ->
// tool-output-available, error -> tool-output-error. After each event the whole chunk stream
// so far is read again with readUIMessageStream, and the message's tool parts are reported
// as seed calls. A chunk the SDK rejects (it throws) is answered with {"ok": false} and left
// out of the stream.
import { createInterface } from "node:readline";
import { readUIMessageStream } from "ai";

const STATUS = {
  "input-streaming": "pending",
  "input-available": "running",
  "output-available": "done",
  "output-error": "error",
};

let chunks = [];
let texts = new Map(); // toolCallId -> argument text accumulated by this driver
let names = new Map();
let calls = [];

function toChunk(event) {
  const id = event.id;
  switch (event.type) {
    case "start":
      names.set(id, event.name);
      texts.set(id, "");
      return { type: "tool-input-start", toolCallId: id, toolName: event.name };
    case "delta":
      if (texts.has(id)) texts.set(id, texts.get(id) + event.argsTextDelta);
      return { type: "tool-input-delta", toolCallId: id, inputTextDelta: event.argsTextDelta };
    case "ready": {
      const text = texts.get(id) ?? "";
      const toolName = names.get(id) ?? "unknown";
      try {
        return { type: "tool-input-available", toolCallId: id, toolName, input: JSON.parse(text) };
      } catch (failure) {
        return { type: "tool-input-error", toolCallId: id, toolName, input: text, errorText: failure.message };
      }
    }
    case "result":
      return { type: "tool-output-available", toolCallId: id, output: event.result };
    case "error":
      return {
        type: "tool-output-error",
        toolCallId: id,
        errorText: typeof event.error === "string" ? event.error : JSON.stringify(event.error),
      };
    default:
      throw new Error(`not a seed event type: ${event.type}`);
  }
}

async function read(stream) {
  const source = new ReadableStream({
    start(controller) {
      for (const chunk of [{ type: "start" }, { type: "start-step" }, ...stream]) {
        controller.enqueue(chunk);
      }
      controller.close();
    },
  });
  let last;
  let failure;
  const messages = readUIMessageStream({
    stream: source,
    terminateOnError: true,
    onError: (error) => {
      failure = error;
    },
  });
  for await (const message of messages) last = message;
  if (failure) throw failure;
  return last;
}

function toCall(part) {
  const call = {
    id: part.toolCallId,
    name: part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length),
    argsText: texts.get(part.toolCallId) ?? "",
  };
  const parsed = part.state === "input-available" || part.state === "output-available";
  if (parsed && part.input !== undefined) call.args = part.input;
  call.status = STATUS[part.state] ?? part.state;
  if (part.state === "output-available") call.result = part.output;
  if (part.state === "output-error") call.error = part.errorText;
  return call;
}

async function apply(event) {
  const chunk = toChunk(event);
  const candidate = [...chunks, chunk];
  const message = await read(candidate); // throws when the SDK rejects the chunk
  chunks = candidate;
  calls = (message?.parts ?? [])
    .filter((part) => part.type === "dynamic-tool" || part.type.startsWith("tool-"))
    .map(toCall);
}

async function handle(request) {
  switch (request.op) {
    case "reset":
      chunks = [];
      texts = new Map();
      names = new Map();
      calls = [];
      return { ok: true };
    case "apply":
      await apply(request.event);
      return { ok: true };
    case "get":
      return { ok: true, value: calls.find((call) => call.id === request.id) ?? null };
    case "list":
      return { ok: true, value: calls };
    default:
      return { ok: false, error: `unknown op ${JSON.stringify(request.op)}` };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let response;
  try {
    response = await handle(JSON.parse(line));
  } catch (failure) {
    response = { ok: false, error: String(failure?.message ?? failure) };
  }
  process.stdout.write(JSON.stringify(response) + "\n");
}
