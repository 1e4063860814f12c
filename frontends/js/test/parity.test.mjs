// The JavaScript encoder against truco_env: node --test frontends/js/test/parity.test.mjs
//
// The parity test reads the triples that frontends/js/export_parity.py writes, from the file named by
// TRUCO_PARITY_TRIPLES (tests/test_js_encoder.py sets it); without it that test is skipped. The other tests
// need nothing but this folder.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { SeatViewError, TrucoEncoder } from "../truco_encoder.mjs";

const tables = JSON.parse(readFileSync(new URL("../truco_tables.json", import.meta.url), "utf8"));
const encoder = new TrucoEncoder(tables);
const triplesPath = process.env.TRUCO_PARITY_TRIPLES;

function describe(observation, index, uruguayan) {
  const block = uruguayan ? tables.observation.uruguayan_fields : tables.observation.senas_fields;
  const fields = [...tables.observation.fields, ...block];
  const field = fields.find(([, offset, size]) => index >= offset && index < offset + size);
  return `${field[0]}[${index - field[1]}] = ${observation[index]}`;
}

test("reproduces the observation and mask of every exported state exactly", { skip: !triplesPath && "TRUCO_PARITY_TRIPLES is not set (python frontends/js/export_parity.py --out FILE writes the triples)" }, () => {
  const data = JSON.parse(readFileSync(triplesPath, "utf8"));
  assert.equal(data.observation_version, encoder.observationVersion, "triples of another observation version");
  assert.ok(data.triples.length > 0, "no triples in the file");
  const perConfig = {};
  for (const [i, triple] of data.triples.entries()) {
    const view = { ...triple.view, rules: data.rules[triple.config] };
    const where = `triple ${i} (${triple.config}, match ${triple.match}, seat ${view.seat})`;
    let got;
    try {
      got = encoder.encode(view);
    } catch (err) {
      assert.fail(`${where}: ${err.message}\nview: ${JSON.stringify(triple.view)}`);
    }
    const senas = Boolean(view.rules.senas); // a game with señas appends their block and their actions
    const uruguayan = view.rules.family === "uruguayan"; // ... and Uruguayan Truco its own block
    const size = encoder.observationSize + (senas ? encoder.tables.observation.senas_size : 0)
      + (uruguayan ? encoder.tables.observation.uruguayan_size : 0);
    assert.equal(got.observation.length, size, `${where}: observation length`);
    const expected = new Float64Array(size);
    for (const index of triple.ones) expected[index] = 1;
    for (const [index, value] of triple.values) expected[index] = value;
    for (let k = 0; k < expected.length; k++) {
      if (got.observation[k] !== expected[k]) {
        assert.fail(`${where}: observation ${describe(got.observation, k, uruguayan)}, Python has ${expected[k]}\n` +
                    `view: ${JSON.stringify(triple.view)}`);
      }
    }
    const mask = new Int8Array(senas ? encoder.tables.actions.count_with_senas : encoder.numActions);
    assert.equal(got.actionMask.length, mask.length, `${where}: mask length`);
    for (const id of triple.mask) mask[id] = 1;
    const family = view.rules.family;
    const names = (m) => [...m.keys()].filter((a) => m[a]).map((a) => encoder.actionName(a, family));
    assert.deepEqual(names(got.actionMask), names(mask), `${where}: legal actions differ\nview: ${JSON.stringify(triple.view)}`);
    perConfig[triple.config] = (perConfig[triple.config] ?? 0) + 1;
  }
  for (const name of Object.keys(tables.config.presets)) assert.ok(perConfig[name] > 0, `no triple of preset ${name}`);
  console.log(`parity: ${data.triples.length} states reproduced exactly (${Object.entries(perConfig).map(([k, v]) => `${k} ${v}`).join(", ")})`);
});

// The first hand of docs/records.md (worked scenario T03 of docs/rules.md) from seat 1's side, before its last card.
const T03 = {
  rules: "argentine",
  seat: 0,
  hands: [{
    dealer: 1, deal: { hands: [["7c", "6c", "3e"], null], vira: null }, score_before: [0, 0],
    envido_shown: [[0, 33], [1, null]],
    actions: [[0, "envido"], [1, "quiero"], [0, "play:3e"], [1, "play:2o"], [0, "play:7c"], [1, "truco"],
              [0, "quiero"], [1, "play:1b"], [1, "play:4b"]],
  }],
};

function field(observation, name) {
  const [, offset, size] = tables.observation.fields.find(([n]) => n === name);
  return [...observation.slice(offset, offset + size)];
}

test("a hand from the records doc: score, ladder, envido and the last card", () => {
  const { observation, actionMask, legalActions } = encoder.encode(T03);
  assert.deepEqual(legalActions, ["play:6c", "retruco", "mazo"]); // seat 0 accepted the truco: it may raise
  assert.equal(actionMask.reduce((a, b) => a + b, 0), 3);
  assert.equal(actionMask[encoder.actionId("play:6c", "argentine")], 1);
  assert.equal(observation.length, tables.observation.size);
  assert.deepEqual(field(observation, "score"), [Math.fround(2 / 30), 0]); // the envido's 2 points
  assert.deepEqual(field(observation, "truco_level"), [0, 1, 0, 0, 0]);
  assert.deepEqual(field(observation, "envido_status"), [0, 0, 1, 0, 0]);
  assert.deepEqual(field(observation, "trick_results"), [1, 0, 0, 0, 1, 0, 0, 0, 0]); // won, lost
  assert.deepEqual(field(observation, "phase").slice(0, 1), [1]);
});

test("action names and ids go both ways in both decks", () => {
  for (const family of tables.cards.families) {
    for (let id = 0; id < encoder.numActions; id++) assert.equal(encoder.actionId(encoder.actionName(id, family), family), id);
  }
  assert.equal(encoder.actionName(0, "argentine"), "play:1e");
  assert.equal(encoder.actionName(0, "paulista"), "play:As");
  assert.equal(encoder.actionId("truco", "paulista"), tables.actions.call_base);
  assert.throws(() => encoder.actionId("play:1e", "paulista"), SeatViewError);
});

test("a view that is not the seat's turn, or hides what the rules need, is refused", () => {
  assert.throws(() => encoder.encode({ ...T03, seat: 1, hands: [{ ...T03.hands[0], deal: { hands: [null, ["2o", "1b", "4b"]], vira: null } }] }),
                /not seat 1's turn/);
  const noShowdown = { ...T03, hands: [{ ...T03.hands[0], envido_shown: undefined }] };
  assert.throws(() => encoder.encode(noShowdown), /envido_shown/);
  const ownMissing = { ...T03, hands: [{ ...T03.hands[0], deal: { hands: [null, null], vira: null } }] };
  assert.throws(() => encoder.encode(ownMissing), /own cards/);
  assert.throws(() => encoder.encode({ ...T03, rules: { ...tables.config.presets.argentine, house_rule: 1 } }), /unknown config field/);
});
