// What a JavaScript front end does with @langchain/langgraph-sdk against a LangGraph-shaped
// server: stream a chat run's tokens (`messages-tuple`), run the credit demo to its interrupt,
// answer it with a resume command, and read the thread's final state.
//
//     node client.mjs URL CHAT_GRAPH CREDIT_GRAPH
//
// Prints one JSON document: {"chat": {...}, "credit": {...}}; a part that threw carries
// "error" (its message) beside what it saw before, so one broken part does not hide the other.
import { Client } from "@langchain/langgraph-sdk";

const [url, chatGraph, creditGraph] = process.argv.slice(2);
if (!url || !chatGraph || !creditGraph) {
  console.error("usage: node client.mjs URL CHAT_GRAPH CREDIT_GRAPH");
  process.exit(2);
}
const client = new Client({ apiUrl: url });

/** Run `body(seen)`; whatever it threw is kept as seen.error instead of ending the script. */
async function part(body) {
  const seen = {};
  try {
    await body(seen);
  } catch (error) {
    seen.error = String(error?.message ?? error);
  }
  return seen;
}

/** A chat run streamed in `messages-tuple` mode: the events, and the tokens of the AI reply. */
async function chat(seen) {
  const thread = await client.threads.create({ graphId: chatGraph });
  seen.thread_id = thread.thread_id;
  seen.events = [];
  seen.tokens = [];
  const stream = client.runs.stream(thread.thread_id, chatGraph, {
    input: { messages: [{ type: "human", content: "Where is my loan?" }] },
    streamMode: "messages-tuple",
  });
  for await (const { event, data } of stream) {
    seen.events.push(event);
    if (event === "messages") {
      const [message, metadata] = data;
      if (message.type === "AIMessageChunk" || message.type === "ai") {
        seen.tokens.push(message.content);
        seen.node = metadata?.langgraph_node;
      }
    }
  }
  seen.text = seen.tokens.join("");
}

/** The credit demo streamed to its interrupt, resumed with the credit desk's decision, read back. */
async function credit(seen) {
  const thread = await client.threads.create({ graphId: creditGraph });
  seen.thread_id = thread.thread_id;
  const stream = client.runs.stream(thread.thread_id, creditGraph, {
    input: { application_id: "LN-7310" },
    streamMode: "updates",
  });
  for await (const { event, data } of stream) {
    if (event === "updates" && data.__interrupt__) {
      seen.interrupt = data.__interrupt__[0];
    }
  }
  seen.status_at_interrupt = (await client.threads.get(thread.thread_id)).status;
  const final = await client.runs.wait(thread.thread_id, creditGraph, {
    command: { resume: { decision: "approved", decider: "credit-desk" } },
  });
  seen.final_released = final.released;
  const state = await client.threads.getState(thread.thread_id);
  seen.state = { next: state.next, released: state.values.released, notes: state.values.notes };
  seen.status_at_end = (await client.threads.get(thread.thread_id)).status;
}

const report = { chat: await part(chat), credit: await part(credit) };
console.log(JSON.stringify(report, null, 2));
