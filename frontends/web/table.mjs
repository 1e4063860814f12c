// The page of `truco serve` (training/people/serve.py): draws the person's seat from the view the server sends and runs
// the bot's policy in the browser. The server holds the match and checks every action; this page only shows the
// person's view, offers the legal actions the server lists, and, when a bot seat is to act, feeds that seat's view
// to the JavaScript encoder and the policy (onnxruntime-web, served by the server from frontends/web/node_modules)
// and posts the action it chooses.
//
// URL options: ?botDelay=MS waits that long before each bot move (default 700, so that a person sees it happen).
// For tests, <body> carries data-state (loading, human, bot, sending, over, error), data-position (actions played)
// and data-last-bot (the bot's last choice: seat, position, action id and name).

import * as ort from "/ort/ort.wasm.min.mjs";
import { TrucoEncoder } from "/js/truco_encoder.mjs";

const params = new URLSearchParams(location.search);
const BOT_DELAY = Math.max(0, Number(params.get("botDelay") ?? 700) || 0);

ort.env.wasm.wasmPaths = "/ort/";
ort.env.wasm.numThreads = 1; // more threads need a cross-origin isolated page; one is plenty for this network

const SPANISH_SUITS = { e: "espadas", b: "bastos", o: "oros", c: "copas" };
const SUIT_NAMES = { argentine: SPANISH_SUITS, uruguayan: SPANISH_SUITS, paulista: { s: "♠", c: "♣", d: "♦", h: "♥" } };
/** Whether the family plays the Spanish deck and speaks Spanish (Argentine and Uruguayan Truco). */
const spanish = (family) => family !== "paulista";
// The page speaks the family's language: Spanish at an Argentine or Uruguayan table, Portuguese at a Paulista one
// (the calls and cards come from the server in the same words as `truco play`).
const WORDS = {
  argentine: {
    lang: "es", you: "Vos", bot: "Bot", partner: "Compañero", us: "Nosotros", them: "Ellos",
    youLower: "vos", theBot: "el bot", yourTeam: "tu equipo", theBots: "los bots",
    plays: "juega", faceDown: "boca abajo", aFaceDownCard: "una carta boca abajo", trick: "Baza", tied: "parda",
    hand: "Mano", dealer: "reparte", worth: "vale", noCard: "Todavía no se jugó ninguna carta",
    nothingYet: "Nada todavía", holds: "tiene", unseen: "sin ver", card: "carta", yourTurn: "te toca",
    thinking: "está pensando…", over: "Terminó el partido", youWin: "ganaste", teamWins: "ganó tu equipo",
    win: "ganan", wins: "gana", pressN: "N para un partido nuevo.", leave: "¿Dejar este partido y empezar otro?",
    loading: "Cargando la política…", yourHand: "Tu mano", thisHand: "Esta mano", newMatch: "Partido nuevo",
    keys: "Teclas: 1–9 eligen (el número de cada opción), N partido nuevo.", sources: { truco: "mano" },
    about: (preset, spec, mode) => `${preset}: el bot es ${spec} (${mode}), corre en este navegador con `
      + "onnxruntime-web; el servidor controla cada jugada.", record: "Registro del partido",
    turned: "vira",
  },
  paulista: {
    lang: "pt-BR", you: "Você", bot: "Bot", partner: "Parceiro", us: "Nós", them: "Eles",
    youLower: "você", theBot: "o bot", yourTeam: "sua dupla", theBots: "os bots",
    plays: "joga", faceDown: "coberta", aFaceDownCard: "uma carta coberta", trick: "Rodada", tied: "empatou",
    hand: "Mão", dealer: "embaralha", worth: "vale", noCard: "Nenhuma carta na mesa ainda",
    nothingYet: "Nada ainda", holds: "tem", unseen: "sem ver", card: "carta", yourTurn: "sua vez",
    thinking: "está pensando…", over: "Fim da partida", youWin: "você ganhou", teamWins: "sua dupla ganhou",
    win: "ganham", wins: "ganha", pressN: "N para uma nova partida.", leave: "Sair desta partida e começar outra?",
    loading: "Carregando a política…", yourHand: "Sua mão", thisHand: "Esta mão", newMatch: "Nova partida",
    keys: "Teclas: 1–9 escolhem (o número de cada opção), N nova partida.", sources: { truco: "mão" },
    about: (preset, spec, mode) => `${preset}: o bot é ${spec} (${mode}), roda neste navegador com `
      + "onnxruntime-web; o servidor confere cada jogada.", record: "Registro da partida",
    turned: "vira",
  },
};
// Uruguay speaks the same Spanish at the table; the turned card is the muestra, and its suit's best cards piezas.
WORDS.uruguayan = { ...WORDS.argentine, turned: "muestra" };
const w = () => WORDS[game?.family ?? table?.family ?? "argentine"] ?? WORDS.argentine;

let table = null;   // GET /api/table
let encoder = null;
let session = null;
let game = null;    // the last view the server sent
let busy = false;

const $ = (id) => document.getElementById(id);

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "class") node.className = value;
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function setState(state) {
  document.body.dataset.state = state;
}

// ------------------------------------------------------------------ cards and seats

function cardParts(text, family) {
  const suit = text.slice(-1);
  return { rank: text.slice(0, -1), suit, suitName: SUIT_NAMES[family][suit] ?? suit };
}

function cardName(text, family) {
  if (!text) return w().aFaceDownCard;
  const { rank, suitName } = cardParts(text, family);
  return spanish(family) ? `${rank} de ${suitName}` : `${rank}${suitName}`;
}

function cardEl(text, { small = false, vira = false, label = null } = {}) {
  const family = game.family;
  const classes = ["card"];
  if (small) classes.push("small");
  if (vira) classes.push("vira");
  if (!text) {
    classes.push("down");
    return el("span", { class: classes.join(" "), role: "img", "aria-label": label ?? w().aFaceDownCard },
      el("span", { class: "rank" }, "?"));
  }
  const { rank, suit, suitName } = cardParts(text, family);
  classes.push(`${spanish(family) ? "es" : "fr"}-${suit}`);
  const a11y = label === "" ? { "aria-hidden": "true" } : { role: "img", "aria-label": label ?? cardName(text, family) };
  return el("span", { class: classes.join(" "), ...a11y },
    el("span", { class: "rank" }, rank), el("span", { class: "suit" }, suitName));
}

function seatName(seat) {
  if (seat === game.seat) return w().you;
  if (game.players === 2) return w().bot;
  return `${seat % 2 === game.team ? w().partner : w().bot} ${seat}`;
}

function teamName(team) {
  if (game.players === 2) return team === game.team ? w().youLower : w().theBot;
  return team === game.team ? w().yourTeam : w().theBots;
}

function saidText(entry) {
  if (!entry.card) return entry.text;
  return entry.text ? `${w().plays} ${cardName(entry.text, game.family)}${entry.name.startsWith("cover") ? ` ${w().faceDown}` : ""}`
    : `${w().plays} ${w().aFaceDownCard}`;
}

// ------------------------------------------------------------------ drawing

function trickList(tricks) {
  return tricks.map((trick, i) => el("li", {},
    el("span", { class: "trick-name" }, `${w().trick} ${i + 1}`),
    trick.plays.map((play) => el("span", { class: "play" },
      cardEl(play.card, { small: true }), seatName(play.seat))),
    el("span", { class: "winner" }, trick.winner === null ? ""
      : trick.winner === "tie" ? `→ ${w().tied}` : `→ ${teamName(trick.winner)}`)));
}

function showdown(shown) {
  const parts = [];
  for (const [kind, list] of Object.entries(shown ?? {})) {
    if (list && list.length) {
      parts.push(`${kind}: ` + list.map(([seat, points]) =>
        `${seatName(seat)} ${points === null ? (spanish(game.family) ? "son buenas" : "—") : points}`).join(", "));
    }
  }
  return parts;
}

function render(g) {
  game = g;
  document.body.dataset.position = String(g.position);
  document.body.dataset.game = g.game;
  if (location.hash !== `#game=${g.game}`) history.replaceState(null, "", `#game=${g.game}`);

  const [mine, theirs] = g.team === 0 ? g.score : [g.score[1], g.score[0]];
  $("score").replaceChildren(
    el("span", { class: "us" }, `${g.players === 2 ? w().you : w().us} ${mine}`), " · ",
    el("span", {}, `${g.players === 2 ? w().bot : w().them} ${theirs}`), el("small", {}, ` / ${g.target}`));

  const info = [`${w().hand} ${g.hand}`, `${w().dealer}: ${seatName(g.dealer)}`, `${w().worth} ${g.worth}`];
  if (g.special) info.push(g.special.replaceAll("_", " "));
  const infoNodes = [el("span", {}, info.join(" · "))];
  if (g.vira) {
    const follows = g.piezas ? ["piezas:", ...g.piezas.map((c) => cardEl(c, { small: true }))] : [`manilhas: ${g.manilha}`];
    infoNodes.push(el("span", { class: "vira-box" }, w().turned, cardEl(g.vira, { small: true, vira: true }),
      ...follows));
  }
  $("info").replaceChildren(...infoNodes);

  $("tricks").replaceChildren(...(g.tricks.length ? trickList(g.tricks) : [el("li", {}, w().noCard)]));

  const playable = new Map(g.legal.filter((a) => a.name.startsWith("play:")).map((a) => [a.name.slice(5), a]));
  $("hand").replaceChildren(...g.cards.map((c) => {
    const face = cardEl(c.card, { label: c.card ? null : `${w().card} ${c.slot + 1}, ${w().unseen}` });
    const action = c.card ? playable.get(c.card) : null;
    if (!action) return face;
    const button = el("button", { type: "button", class: "card-button", tabindex: "-1",
      "aria-label": action.label, dataset: { handAction: String(action.id) } }, face);
    button.addEventListener("click", () => choose(action.id));
    return button;
  }));
  $("partners").replaceChildren(...g.partners.map((p) => el("p", {}, `${seatName(p.seat)} ${w().holds}: `,
    p.cards.map((c) => cardEl(c, { small: true })))));

  $("actions").replaceChildren(...g.legal.map((a, i) => {
    const key = i < 9 ? String(i + 1) : i === 9 ? "0" : null;
    const isCard = /^(play|cover|play_slot):/.test(a.name); // a signal (sena:<gesture>) is said, not played
    const button = el("button", { type: "button", class: isCard ? "card-play" : "call",
      dataset: { action: String(a.id), name: a.name, key: key ?? "" } },
      key ? el("kbd", {}, key) : null,
      isCard && !a.name.startsWith("play_slot") ? cardEl(a.name.split(":")[1], { label: "" }) : null,
      el("span", { lang: spanish(game.family) ? "es" : "pt" }, a.label));
    button.addEventListener("click", () => choose(a.id));
    return button;
  }));

  const said = g.said.map((entry) => el("li", { class: entry.seat === g.seat ? "me" : "" },
    `${seatName(entry.seat)}: `, el("span", { lang: spanish(g.family) ? "es" : "pt" }, saidText(entry))));
  for (const line of showdown(g.shown)) said.push(el("li", {}, line));
  $("said").replaceChildren(...(said.length ? said : [el("li", {}, w().nothingYet)]));

  const previous = $("previous");
  previous.hidden = !g.previous;
  if (g.previous) {
    const p = g.previous;
    const [a, b] = g.team === 0 ? p.points : [p.points[1], p.points[0]];
    const sources = Object.entries(p.sources).filter(([, pts]) => pts[0] || pts[1])
      .map(([name, pts]) => `${w().sources[name] ?? name} ${g.team === 0 ? pts[0] : pts[1]}–${g.team === 0 ? pts[1] : pts[0]}`);
    previous.replaceChildren(
      el("h2", {}, `${w().hand} ${p.hand}: ${teamName(g.team)} +${a}, ${teamName(1 - g.team)} +${b}`
        + (sources.length ? ` (${sources.join(", ")})` : "")),
      el("ol", {}, trickList(p.tricks)),
      el("p", {}, [...p.said.filter((e) => !e.card).map((e) => `${seatName(e.seat)}: ${e.text}`),
        ...showdown(p.shown)].join(" · ")));
  }

  let status;
  if (g.over) {
    const won = g.winner === g.team;
    status = `${w().over}: ${won ? (g.players === 2 ? w().youWin : w().teamWins) : `${teamName(g.winner)} ${g.players === 2 ? w().wins : w().win}`} `
      + `${Math.max(...g.score)}–${Math.min(...g.score)}. ${w().pressN}`;
  } else if (g.to_act === g.seat) {
    const last = g.said[g.said.length - 1];
    status = (last && last.seat !== g.seat && !last.card ? `${seatName(last.seat)}: ${last.text} — ` : "") + w().yourTurn;
  } else {
    status = `${seatName(g.to_act)} ${w().thinking}`;
  }
  $("status").textContent = status;
  $("about").textContent = w().about(table.preset, table.policy.spec, table.policy.mode)
    + (g.record ? ` ${w().record}: ${g.record} (truco replay ${g.record}).` : "");
  document.documentElement.lang = w().lang;
  for (const node of document.querySelectorAll("[data-word]")) node.textContent = w()[node.dataset.word];
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
}

// ------------------------------------------------------------------ the server and the bot

class ApiError extends Error {}

async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(data?.error ?? `${response.status} ${response.statusText}`);
  return data;
}

/** The bot's action id for the seat view ``view``: the policy's most probable legal action (greedy), or a draw. */
async function botChoice(bot) {
  const { observation, actionMask, family } = encoder.encode(bot.view);
  const width = table.policy.observation_size; // an older layout's policy reads a prefix
  const obs = observation.length > width ? observation.slice(0, width) : observation;
  const count = table.policy.actions; // a model made without señas answers for the actions before the signals
  const mask = actionMask.length > count ? actionMask.slice(0, count) : actionMask;
  const out = await session.run({
    observation: new ort.Tensor("float32", obs, [1, width]),
    action_mask: new ort.Tensor("int8", mask, [1, mask.length]),
  });
  const p = out.probabilities.data;
  let id = -1;
  if (table.policy.mode === "sample") {
    let r = Math.random();
    for (let a = 0; a < p.length; a++) {
      if (!actionMask[a]) continue;
      id = a; // the last legal one, should rounding leave r above 0
      if ((r -= p[a]) < 0) break;
    }
  } else {
    for (let a = 0; a < p.length; a++) if (actionMask[a] && (id < 0 || p[a] > p[id])) id = a;
  }
  document.body.dataset.lastBot = JSON.stringify({ seat: bot.seat, position: game.position, action: id,
    name: encoder.actionName(id, family) });
  return id;
}

/** Show ``g``, then play the bot's moves until the person is to act or the match is over. */
async function advance(g) {
  busy = true;
  try {
    render(g);
    while (g.bot) {
      setState("bot");
      if (BOT_DELAY) await sleep(BOT_DELAY);
      const action = await botChoice(g.bot);
      g = await api("POST", `/api/games/${g.game}/actions`, { seat: g.bot.seat, action, position: g.position });
      render(g);
    }
  } finally {
    busy = false;
  }
  setState(g.over ? "over" : "human");
}

async function choose(id) {
  if (busy || !game || game.over) return;
  $("error").hidden = true;
  busy = true;
  for (const b of document.querySelectorAll("#actions button, #hand button")) b.disabled = true;
  setState("sending");
  let next;
  try {
    next = await api("POST", `/api/games/${game.game}/actions`, { seat: game.seat, action: id, position: game.position });
  } catch (err) {
    showError(err.message);
    next = await api("GET", `/api/games/${game.game}`).catch(() => game);
  } finally {
    busy = false;
  }
  await run(() => advance(next));
}

async function newGame() {
  if (busy) return;
  if (game && !game.over && game.position > 0 && !confirm(w().leave)) return;
  $("error").hidden = true;
  await run(async () => advance(await api("POST", "/api/games", {})));
}

async function run(step) {
  try {
    await step();
  } catch (err) {
    showError(err.message);
    setState("error");
  }
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.altKey || event.metaKey || !game) return;
  if (event.key === "n" || event.key === "N") {
    if (game.over) newGame();
    return;
  }
  const button = document.querySelector(`#actions button[data-key="${CSS.escape(event.key)}"]`);
  if (button && !button.disabled) {
    event.preventDefault();
    button.click();
  }
});

$("new-game").addEventListener("click", newGame);

run(async () => {
  table = await api("GET", "/api/table");
  document.documentElement.lang = w().lang;
  $("status").textContent = w().loading;
  for (const node of document.querySelectorAll("[data-word]")) node.textContent = w()[node.dataset.word];
  encoder = new TrucoEncoder(await api("GET", "/js/truco_tables.json"));
  if (table.policy.observation_version > encoder.observationVersion) {
    throw new Error("the policy reads a newer observation layout than this encoder computes");
  }
  session = await ort.InferenceSession.create(table.policy.model, { executionProviders: ["wasm"] });
  const wanted = new URLSearchParams(location.hash.slice(1)).get("game");
  let g = null;
  if (wanted) g = await api("GET", `/api/games/${encodeURIComponent(wanted)}`).catch(() => null);
  await advance(g ?? await api("POST", "/api/games", {}));
});
