// A truco-bot/1 program in plain Node.js (no dependencies): it plays a uniformly random legal action, drawn from
// its own generator seeded by each match's seed, so that the same deals give the same match. The protocol is in
// docs/protocol.md; run it with: truco eval --agents "exec:node examples/bots/random.mjs" heuristic --matches 20
import { createInterface } from "node:readline";

let state = 1;
function seed(value) {
  state = (Number(value ?? 1) >>> 0) || 1;
}
function next() {
  // xorshift32: small, deterministic, good enough to pick among a few legal actions
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state;
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "match") {
    seed(message.seed);
  } else if (message.type === "act") {
    const choice = message.legal[next() % message.legal.length];
    process.stdout.write(JSON.stringify({ action: choice.name }) + "\n");
  }
  // every other message is information and needs no answer
});
