// The observation and legal-action mask of truco-rl (truco_env/encoding.py) for the seat to act, computed from
// what that seat may know: its cards, the vira, the public actions, the scores and the rules (docs/frontends.md).
//
// No dependencies and no build step: an ES module for browsers and Node.js. The data tables (card index, strength,
// action names, observation offsets, rule defaults) come from truco_tables.json, which Python generates
// (frontends/js/make_tables.py), so nothing here repeats them by hand.
//
//   const encoder = new TrucoEncoder(tables);            // tables = the parsed truco_tables.json
//   const { observation, actionMask, legalActions } = encoder.encode(view);
//
// The rules below port truco_env/engine.py for one hand; the names of its methods are kept (onTruco is
// TrucoState._on_truco) so that a change there is easy to follow here.

const PLAY = "play", TRUCO = "truco", ENVIDO = "envido", FLOR_DECLARE = "flor_declare",
  FLOR_CONTEST = "flor_contest", ONZE = "onze", OVER = "over";
const MAO_DE_ONZE = "mao_de_onze", MAO_DE_FERRO = "mao_de_ferro";
const ENVIDO_CALLS = ["envido", "real_envido", "falta_envido"];

/** A seat view the encoder cannot replay (malformed, inconsistent, or not this seat's turn). */
export class SeatViewError extends Error {
  constructor(message) {
    super(message);
    this.name = "SeatViewError";
  }
}

function fail(message) {
  throw new SeatViewError(message);
}

export class TrucoEncoder {
  /** @param {object} tables the parsed truco_tables.json */
  constructor(tables) {
    if (!tables || tables.format !== "truco-rl-js-tables") fail("not the truco-rl tables (truco_tables.json)");
    this.tables = tables;
    this.observationSize = tables.observation.size;
    this.observationVersion = tables.observation.version;
    this.numActions = tables.actions.count;
    this.offsets = {};
    for (const [name, offset, size] of tables.observation.fields) this.offsets[name] = [offset, size];
    for (const [name, offset, size] of tables.observation.senas_fields) this.offsets[name] = [offset, size];
    for (const [name, offset, size] of tables.observation.uruguayan_fields) this.offsets[name] = [offset, size];
    this._ids = {};
    this._cards = {};
    for (const family of Object.keys(tables.actions.names)) {
      const names = [...tables.actions.names[family], ...tables.actions.senas];
      this._ids[family] = new Map(names.map((name, id) => [name, id]));
      const cards = new Map();
      tables.cards.ranks[family].forEach((rank, r) => tables.cards.suits[family].forEach((suit, s) => {
        cards.set(rank + suit, r * tables.cards.suits[family].length + s);
      }));
      this._cards[family] = cards;
    }
  }

  /** The name of action ``id`` in the deck text of ``family`` ("play:1e", "truco", ...). */
  actionName(id, family) {
    const base = this.tables.actions.names[family];
    if (!base) fail(`unknown family ${JSON.stringify(family)}`);
    const names = [...base, ...this.tables.actions.senas];
    if (!Number.isInteger(id) || id < 0 || id >= names.length) fail(`action id ${id} is out of range 0..${names.length - 1}`);
    return names[id];
  }

  /** The id of an action name of ``family``. */
  actionId(name, family) {
    const ids = this._ids[family];
    if (!ids) fail(`unknown family ${JSON.stringify(family)}`);
    const id = ids.get(name);
    if (id === undefined) fail(`unknown action ${JSON.stringify(name)} for the ${family} family`);
    return id;
  }

  /** The card index (rank_index * 4 + suit_index) of a card text of ``family``. */
  cardIndex(text, family) {
    const card = this._cards[family]?.get(text);
    if (card === undefined) fail(`unknown card ${JSON.stringify(text)} for the ${family} family`);
    return card;
  }

  /** The full rules object: ``rules`` (a record's rules, or a subset of fields) with the defaults filled in. */
  resolveRules(rules) {
    const cfg = this.tables.config;
    if (typeof rules === "string") {
      if (!cfg.presets[rules]) fail(`unknown preset ${JSON.stringify(rules)}; choose one of ${Object.keys(cfg.presets)}`);
      return { ...cfg.presets[rules], flor_values: { ...cfg.presets[rules].flor_values } };
    }
    if (!rules || typeof rules !== "object") fail("view.rules must be the record's rules object or a preset name");
    for (const key of Object.keys(rules)) if (!(key in cfg.defaults)) fail(`unknown config field ${JSON.stringify(key)}`);
    const out = { ...cfg.defaults, ...rules, flor_values: { ...cfg.defaults.flor_values, ...(rules.flor_values || {}) } };
    for (const [name, byFamily] of Object.entries(cfg.family_defaults)) {
      if (out[name] == null && out.family in byFamily) out[name] = byFamily[out.family];
    }
    for (const [name, allowed] of Object.entries(cfg.choices)) {
      if (!allowed.includes(out[name])) fail(`config field ${name} = ${JSON.stringify(out[name])}; choose one of ${allowed}`);
    }
    if (out.malas_buenas == null) out.malas_buenas = out.target_score % 2 === 0;
    return out;
  }

  /**
   * Replay a seat view and return the hand's state (for a user interface or for ``encode``).
   * @param {object} view {rules, seat, hands: [...], tally_before?} (docs/frontends.md)
   */
  replay(view) {
    if (!view || typeof view !== "object") fail("a seat view must be an object {rules, seat, hands}");
    const rules = this.resolveRules(view.rules);
    const n = rules.num_players;
    if (!Number.isInteger(view.seat) || view.seat < 0 || view.seat >= n) fail(`view.seat must be a seat 0..${n - 1}`);
    if (!Array.isArray(view.hands) || view.hands.length === 0) fail("view.hands must list the current hand (last)");
    const tally = [0, 1].map((team) => {
      const row = view.tally_before?.[team] ?? new Array(this.tables.actions.tally_classes.length).fill(0);
      if (!Array.isArray(row) || row.length !== this.tables.actions.tally_classes.length) {
        fail(`view.tally_before must be two rows of ${this.tables.actions.tally_classes.length} counts`);
      }
      return row.slice();
    });
    const last = view.hands.length - 1;
    view.hands.slice(0, last).forEach((hand, i) => {
      if (!Array.isArray(hand?.actions)) fail(`view.hands[${i}].actions must be a list`);
      hand.actions.forEach((entry, j) => {
        if (!Array.isArray(entry) || !Number.isInteger(entry[0])) fail(`view.hands[${i}].actions[${j}]: expected [seat, name]`);
        const k = this._tallyClass(entry[1], `view.hands[${i}].actions[${j}]`);
        if (k !== null) tally[entry[0] % 2][k] += 1;
      });
    });
    const state = new HandState(this, rules, view.seat, view.hands[last], last, tally);
    state.run();
    return state;
  }

  /**
   * The observation (Float32Array), the action mask (Int8Array, 1 = legal) and the legal action names of the seat
   * to act, with the decision's phase and the rules' family. Throws SeatViewError when the view is inconsistent
   * or it is not ``view.seat``'s turn.
   */
  encode(view) {
    const state = this.replay(view);
    if (state.phase === OVER) fail("the match is over: no seat is to act");
    if (state.actor !== view.seat) {
      fail(`it is not seat ${view.seat}'s turn: the replayed actor is seat ${state.actor} (${state.phase} phase)`);
    }
    const legalActions = state.legal();
    const actionMask = new Int8Array(state.rules.senas ? this.tables.actions.count_with_senas : this.numActions);
    for (const name of legalActions) actionMask[this.actionId(name, state.family)] = 1;
    return { observation: state.observe(), actionMask, legalActions, phase: state.phase, family: state.family };
  }

  _tallyClass(name, where) {
    const t = this.tables.actions;
    if (typeof name !== "string") fail(`${where}: action names must be strings`);
    if (name === "cover" || name.startsWith("play:") || name.startsWith("cover:") || name.startsWith("play_slot:")) return 0;
    if (t.senas.includes(name)) return null; // a signal is no public decision: it stays out of the tally
    const call = t.calls.indexOf(name);
    if (call < 0) fail(`${where}: unknown action ${JSON.stringify(name)}`);
    return t.tally_class_of[t.call_base + call];
  }
}

/** Uruguayan envido (truco_env.cards.uruguayan_envido_of): the best pair that goes together (one suit, or a pieza
 * in it), else the best single value, a lone pieza's with the 20. */
function uruguayanEnvidoOf(cards, values, isPieza) {
  let best = 0;
  cards.forEach((c, i) => {
    best = Math.max(best, values[i] + (isPieza[i] ? 20 : 0));
    for (let j = i + 1; j < cards.length; j++) {
      if (c % 4 === cards[j] % 4 || isPieza[i] || isPieza[j]) best = Math.max(best, 20 + values[i] + values[j]);
    }
  });
  return best;
}

function envidoOf(values, suits) {
  let best = 0;
  const bySuit = new Map();
  values.forEach((value, i) => {
    best = Math.max(best, value);
    if (!bySuit.has(suits[i])) bySuit.set(suits[i], []);
    bySuit.get(suits[i]).push(value);
  });
  for (const list of bySuit.values()) {
    if (list.length >= 2) {
      list.sort((a, b) => b - a);
      best = Math.max(best, 20 + list[0] + list[1]);
    }
  }
  return best;
}

/** One hand replayed from the public actions, for the viewer (truco_env/engine.py TrucoState, one hand). */
class HandState {
  constructor(encoder, rules, viewer, hand, where, tally) {
    this.enc = encoder;
    this.t = encoder.tables;
    this.rules = rules;
    this.viewer = viewer;
    this.hand = hand;
    this.where = `view.hands[${where}]`;
    this.tally = tally;
    this.family = rules.family;
    this.n = rules.num_players;
    this.target = rules.target_score;
    this.ladderCalls = this.t.rules.ladder_calls[this.family];
    this.ladderValues = this.t.rules.ladder_values[this.family];
    this.suits = this.t.cards.suits[this.family].length;
    if (!hand || typeof hand !== "object") fail(`${this.where} must be a hand object`);
    const before = hand.score_before;
    if (!Array.isArray(before) || before.length !== 2 || !before.every((x) => Number.isInteger(x) && x >= 0)) {
      fail(`${this.where}.score_before must be [team0, team1]`);
    }
    if (!Number.isInteger(hand.dealer) || hand.dealer < 0 || hand.dealer >= this.n) fail(`${this.where}.dealer must be a seat`);
    if (!Array.isArray(hand.actions)) fail(`${this.where}.actions must be a list`);
    this.score = before.slice();
    this.dealer = hand.dealer;
    this.firstToTarget = null;
    for (const team of [0, 1]) if (this.score[team] >= this.target) fail(`${this.where}.score_before: the match is over`);
  }

  teamOf(seat) {
    return seat % 2;
  }

  card(text) {
    return this.enc.cardIndex(text, this.family);
  }

  cardText(card) {
    const t = this.t.cards;
    return t.ranks[this.family][Math.floor(card / this.suits)] + t.suits[this.family][card % this.suits];
  }

  // ---------------------------------------------------------------------------------------------------------
  // the hand's start (TrucoState._deal and _start_hand)

  run() {
    const { n, hand, rules } = this;
    const dealMano = (this.dealer + 1) % n;
    if (hand.pair != null) {
      if (!Array.isArray(hand.pair) || hand.pair.length !== 2) fail(`${this.where}.pair must be two seats`);
      this.seats = hand.pair.slice().sort((a, b) => a - b);
    } else {
      this.seats = [...Array(n).keys()];
    }
    if (!this.seats.includes(this.viewer)) fail(`seat ${this.viewer} does not play this pica-pica duel`);
    this.handOrder = [...Array(n).keys()].map((k) => (dealMano + k) % n).filter((s) => this.seats.includes(s));
    this.mano = this.handOrder[0];
    const deal = hand.deal || {};
    if (this.family === "paulista") {
      if (typeof deal.vira !== "string") fail(`${this.where}.deal.vira: Paulista needs the vira`);
      this.vira = this.card(deal.vira);
      this.strength = this.t.cards.paulista_strength[this.manilhaRank(this.vira)];
    } else if (this.family === "uruguayan") {
      if (typeof deal.vira !== "string") fail(`${this.where}.deal.vira: Uruguayan Truco needs the muestra`);
      this.vira = this.card(deal.vira);
      this.strength = this.t.cards.uruguayan_strength[this.vira];
    } else {
      this.vira = null;
      this.strength = this.t.cards.argentine_strength;
    }
    [this.special, this.baseValue, this.onzeDeciders] = this.specialHand();
    this.blind = this.special === MAO_DE_FERRO && rules.mao_de_ferro_blind;
    // dealt cards where the viewer knows them (own, partners' in a visible mão de onze); slots not yet played
    const hands = Array.isArray(deal.hands) ? deal.hands : [];
    this.dealt = [];
    this.slotsLeft = [];
    for (let s = 0; s < n; s++) {
      const cards = hands[s];
      this.dealt.push(Array.isArray(cards) ? cards.map((c) => this.card(c)) : null);
      if (this.dealt[s] && this.dealt[s].length !== rules.hand_size) fail(`${this.where}.deal.hands[${s}] must hold ${rules.hand_size} cards`);
      this.slotsLeft.push(this.seats.includes(s) ? [...Array(rules.hand_size).keys()] : []);
    }
    if (!this.dealt[this.viewer] && !this.blind) fail(`${this.where}.deal.hands[${this.viewer}]: the seat's own cards are missing`);
    if (this.partnerCardsVisible()) {
      for (const s of this.partners()) if (!this.dealt[s]) fail(`${this.where}.deal.hands[${s}]: a mão de onze shows the partner's cards; give them`);
    }
    this.turn = this.trickLeader = this.mano;
    this.trick = [];
    this.tricks = [];
    this.trickIndex = 0;
    this.trickResults = [];
    this.level = 0;
    this.holder = null;
    this.pending = 0;
    this.proposerTeam = this.trucoResponder = null;
    this.envidoChain = [];
    this.envidoOpened = this.envidoDone = false;
    this.envidoCaller = null;
    this.envidoAnnouncements = [];
    this.florAnnouncements = [];
    this.envidoCalls = [];
    this.envidoStatus = "none";
    this.florCalls = [];
    this.florStatus = "none";
    this.florHolders = this.initialFlorHolders();
    this.florDeclared = false;
    this.florChain = [];
    this.florCaller = null;
    this.signals = new Map(); // seat -> gesture, the signals the viewer saw
    this.handOver = false;
    if (this.onzeDeciders.length) {
      this.phase = ONZE;
      this.actor = this.onzeDeciders[0];
    } else {
      this.resume();
    }
    hand.actions.forEach((entry, i) => this.step(entry, i));
    if (this.handOver && this.phase !== OVER) fail(`${this.where}: the hand is over; the view must end with the next hand`);
  }

  manilhaRank(vira) {
    const { rules } = this;
    const ranks = this.t.cards.ranks.paulista;
    let cycle = this.t.cards.paulista_deck_ranks[rules.deck];
    if (rules.deck_ranks != null) cycle = cycle.filter((r) => rules.deck_ranks.includes(r));
    const at = cycle.indexOf(ranks[Math.floor(vira / this.suits)]);
    if (at < 0) fail(`the vira ${this.cardText(vira)} is not in the ${rules.deck} deck`);
    return ranks.indexOf(cycle[(at + 1) % cycle.length]);
  }

  specialHand() {
    const { rules } = this;
    if (this.family !== "paulista") return [null, 1, []];
    const eleven = this.target - 1;
    const atEleven = [0, 1].filter((t) => this.score[t] === eleven);
    if (rules.mao_de_ferro && atEleven.length === 2) return [MAO_DE_FERRO, 1, []];
    if (rules.mao_de_onze && atEleven.length === 1 && this.score[1 - atEleven[0]] < eleven) {
      const members = this.handOrder.filter((s) => this.teamOf(s) === atEleven[0]);
      return [MAO_DE_ONZE, 3, rules.mao_de_onze_decider === "any_accepts" ? members : members.slice(0, 1)];
    }
    return [null, 1, []];
  }

  florOf(cards) {
    // flor points (20 + the three envido values) when all cards share a suit, else null
    if (this.family === "uruguayan") return this.uruguayanFlorOf(cards);
    if (cards.length !== 3 || new Set(cards.map((c) => c % this.suits)).size !== 1) return null;
    return 20 + cards.reduce((sum, c) => sum + this.t.cards.envido_rank_value[Math.floor(c / this.suits)], 0);
  }

  uruguayanFlorOf(cards) {
    // truco_env.cards.uruguayan_flor_of: the cards that are not piezas all of one suit; 20 (plain_flor_base with no
    // pieza) plus the three values
    if (cards.length !== 3) return null;
    const pieces = this.t.cards.piezas[this.vira];
    const others = cards.filter((c) => !pieces.includes(c));
    if (new Set(others.map((c) => c % this.suits)).size > 1) return null;
    const values = this.t.cards.uruguayan_value[this.vira];
    return (others.length === 3 ? this.rules.plain_flor_base : 20) + cards.reduce((sum, c) => sum + values[c], 0);
  }

  ownEnvido(own) {
    if (this.family === "uruguayan") {
      const pieces = this.t.cards.piezas[this.vira];
      return uruguayanEnvidoOf(own, own.map((c) => this.t.cards.uruguayan_value[this.vira][c]), own.map((c) => pieces.includes(c)));
    }
    const values = own.map((c) => this.t.cards.envido_rank_value[Math.floor(c / this.suits)]);
    return envidoOf(values, own.map((c) => c % this.suits));
  }

  initialFlorHolders() {
    // Every flor is public once one is declared (the view then lists the holders); before that the seat knows only
    // its own. That is enough: a hidden flor forced to declare would make its holder the seat to act, not the viewer.
    if (!this.rules.flor) return [];
    const declared = this.hand.actions.some((a) => a[1] === "flor");
    if (this.hand.flor_holders != null) {
      if (!Array.isArray(this.hand.flor_holders)) fail(`${this.where}.flor_holders must be a list of seats`);
      return this.handOrder.filter((s) => this.hand.flor_holders.includes(s));
    }
    if (declared) fail(`${this.where}.flor_holders: a flor was declared, so the view must list every flor holder`);
    const own = this.dealt[this.viewer];
    return own && this.florOf(own) !== null ? [this.viewer] : [];
  }

  cardsKnown(seat) {
    // the viewer knows which cards (or, in a blind mão de ferro, which slots) this seat may play
    return this.dealt[seat] !== null || (this.blind && seat === this.viewer);
  }

  partners() {
    return [...Array(this.n).keys()].filter((s) => s !== this.viewer && this.teamOf(s) === this.teamOf(this.viewer));
  }

  partnerCardsVisible() {
    // docs/rules.md §4.7: in a mão de onze each player of the team at 11 sees his partners' cards
    return this.special === MAO_DE_ONZE && this.n > 2 && this.score[this.teamOf(this.viewer)] === this.target - 1;
  }

  get handValue() {
    return this.level === 0 ? this.baseValue : this.ladderValues[this.level];
  }

  // ---------------------------------------------------------------------------------------------------------
  // applying the public actions

  step(entry, i) {
    const at = `${this.where}.actions[${i}]`;
    if (!Array.isArray(entry) || entry.length < 2) fail(`${at}: expected [seat, name]`);
    const [seat, name] = entry;
    if (this.handOver) fail(`${at}: the hand was already over`);
    if (seat !== this.actor) fail(`${at}: seat ${seat} acted, but the replay has seat ${this.actor} to act (${this.phase} phase)`);
    if (typeof name !== "string") fail(`${at}: the action name must be a string`);
    this.checkLegal(seat, name, at);
    const k = this.enc._tallyClass(name, at);
    if (k !== null) this.tally[this.teamOf(seat)][k] += 1;
    const handler = {
      [PLAY]: this.onPlay, [TRUCO]: this.onTruco, [ENVIDO]: this.onEnvido, [FLOR_DECLARE]: this.onFlorDeclare,
      [FLOR_CONTEST]: this.onFlorContest, [ONZE]: this.onOnze,
    }[this.phase];
    handler.call(this, seat, name, at);
  }

  checkLegal(seat, name, at) {
    const kind = name.split(":")[0];
    const isCard = kind === "play" || kind === "cover" || kind === "play_slot";
    if (isCard && !this.cardsKnown(seat)) {
      // another seat's card: its legality rests on cards the viewer does not know, so only its kind is checked
      const ok = this.phase === PLAY && (kind === "play_slot" ? this.blind
        : !this.blind && (kind === "play" || this.coverAllowed()));
      if (!ok) fail(`${at}: ${JSON.stringify(name)} is not legal here (${this.phase} phase)`);
      const text = kind === "play" ? name.slice(5) : kind === "play_slot" ? name.split("=")[1] : null;
      if (text !== undefined && text !== null && this.seenCard(this.card(text))) {
        fail(`${at}: ${text} cannot be in seat ${seat}'s hand (the seat holds it, it is the vira or it was played)`);
      }
      return;
    }
    const legal = this.legal(seat);
    const plain = kind === "play_slot" ? name.split("=")[0] : name;
    if (!legal.includes(plain)) fail(`${at}: ${JSON.stringify(name)} is not legal here; legal: ${legal.join(" ")}`);
  }

  seenCard(card) {
    const own = this.dealt[this.viewer] ?? [];
    return card === this.vira || own.includes(card)
      || [...this.tricks.flat(), ...this.trick].some((p) => p.card === card);
  }

  onPlay(seat, name, at) {
    const [kind, arg] = [name.split(":")[0], name.slice(name.indexOf(":") + 1)];
    if (kind === "play") {
      this.playCard(seat, this.card(arg), false, this.slotOf(seat, this.card(arg)));
    } else if (kind === "play_slot") {
      const [slot, text] = arg.split("=");
      if (text === undefined) fail(`${at}: a blind card is written play_slot:<slot>=<card> (the card it showed)`);
      this.playCard(seat, this.card(text), false, Number(slot));
    } else if (kind === "cover") {
      const card = name === "cover" ? null : this.card(arg);
      this.playCard(seat, card, true, card === null ? null : this.slotOf(seat, card));
    } else if (ENVIDO_CALLS.includes(name)) {
      this.openEnvido(seat, name);
    } else if (name === "mazo") {
      this.fold(seat);
    } else if (kind === "sena") {
      this.signals.set(seat, arg); // the seat acts again: a signal does not pass the turn
    } else {
      this.propose(seat, this.level + 1);
    }
  }

  slotOf(seat, card) {
    return this.dealt[seat] ? this.dealt[seat].indexOf(card) : null;
  }

  onTruco(seat, name) {
    if (name === "quiero") {
      this.level = this.pending;
      this.holder = this.teamOf(seat);
      this.pending = 0;
      this.resume();
    } else if (name === "no_quiero") {
      this.credit(this.proposerTeam, this.ladderValues[this.pending - 1]);
      this.endHand();
    } else if (ENVIDO_CALLS.includes(name)) { // envido va primero: the truco stays pending
      this.openEnvido(seat, name);
    } else { // a raise answers: it accepts the pending level and proposes the next
      this.level = this.pending;
      this.holder = this.teamOf(seat);
      this.propose(seat, this.pending + 1);
    }
  }

  propose(seat, level) {
    if (this.special !== null) { // only legal under mao_de_onze_truco = "caller_loses_match"
      const loser = this.teamOf(seat);
      this.credit(1 - loser, Math.max(0, this.target - this.score[1 - loser]));
      this.finishMatch();
      return;
    }
    this.pending = level;
    this.proposerTeam = this.teamOf(seat);
    this.trucoResponder = this.responderFor(1 - this.proposerTeam, seat);
    this.phase = TRUCO;
    this.actor = this.trucoResponder;
    if (this.trickIndex === 0) { // docs/rules.md §3.8 moment 3: the challenged team's flor comes first
      this.forceFlor(this.undeclaredFlor().filter((s) => this.teamOf(s) !== this.proposerTeam));
    }
  }

  openEnvido(seat, call) {
    this.envidoOpened = true;
    this.envidoCalls.push([seat, call]);
    if (this.forceFlor(this.undeclaredFlor())) { // docs/rules.md §3.8 moment 2: flor voids the envido
      this.envidoStatus = "void";
      return;
    }
    this.envidoStatus = "pending";
    this.envidoChain = [call];
    this.envidoCall(seat);
  }

  envidoCall(seat) {
    this.envidoCaller = seat;
    this.phase = ENVIDO;
    this.actor = this.responderFor(1 - this.teamOf(seat), seat);
  }

  shown(key) {
    // the points announced at a showdown: public, but they come from the other seats' cards, so the view gives them
    const list = this.hand[key];
    if (!Array.isArray(list) || list.length === 0) fail(`${this.where}.${key}: the announcements of the accepted call are missing`);
    const out = list.map((a) => {
      if (!Array.isArray(a) || a.length !== 2 || !this.seats.includes(a[0]) || !(a[1] === null || Number.isInteger(a[1]))) {
        fail(`${this.where}.${key}: expected [[seat, points or null], ...]`);
      }
      return [a[0], a[1]];
    });
    const best = out.filter((a) => a[1] !== null).at(-1);
    if (!best) fail(`${this.where}.${key}: nobody announced points`);
    return [out, best[0]];
  }

  onEnvido(seat, name) {
    const chain = this.envidoChain;
    // truco_env.engine.envido_chain_points: the calls before the last; a refusal pays them (1 for a lone call) or
    // them plus one (envido_refusal), an accepted falta pays itself and, with falta_adds_chain, them too
    const before = chain.slice(0, -1).reduce((sum, c) => sum + (this.t.rules.envido_value[c] ?? 0), 0);
    const falta = chain.includes("falta_envido");
    if (name === "quiero") {
      const [announced, winnerSeat] = this.shown("envido_shown");
      this.envidoAnnouncements = announced;
      const winner = this.teamOf(winnerSeat);
      const points = falta ? this.falta(winner) + (this.rules.falta_adds_chain ? before : 0)
        : before + this.t.rules.envido_value[chain.at(-1)];
      this.closeEnvido();
      this.envidoStatus = "accepted";
      this.credit(winner, points);
    } else if (name === "no_quiero") {
      const points = this.rules.envido_refusal === "previous_sum_plus_one" ? before + 1
        : chain.length === 1 ? 1 : before;
      this.closeEnvido();
      this.envidoStatus = "refused";
      this.credit(this.teamOf(this.envidoCaller), points);
    } else {
      chain.push(name);
      this.envidoCalls.push([seat, name]);
      this.envidoCall(seat);
      return;
    }
    if (!this.checkMatchEnd()) this.resume();
  }

  closeEnvido() {
    this.envidoChain = [];
    this.envidoDone = true;
  }

  envidoRaises() {
    const chain = this.envidoChain;
    const raises = [];
    if (chain.at(-1) === "envido" && chain.filter((c) => c === "envido").length < 2) raises.push("envido");
    if (!chain.includes("real_envido") && !chain.includes("falta_envido")) raises.push("real_envido");
    if (!chain.includes("falta_envido")) raises.push("falta_envido");
    return raises;
  }

  falta(winner) {
    // falta envido value (docs/rules.md §3.5), also used by contraflor al resto
    const { rules } = this;
    const leader = Math.max(...this.score);
    const mode = rules.falta_envido;
    if (mode === "whole_match" || (mode === "malas_match" && rules.malas_buenas && leader <= this.target / 2)) {
      return this.target - this.score[winner];
    }
    const half = Math.floor(this.target / 2); // the Uruguayan readings (§8.5): to the end of the malas
    if ((mode === "winner_to_buenas" || mode === "leader_to_buenas") && rules.malas_buenas && leader < half) {
      return half - (mode === "winner_to_buenas" ? this.score[winner] : leader);
    }
    return this.target - leader;
  }

  canOpenEnvido(seat) {
    const { rules } = this;
    if (this.family === "paulista" || this.envidoOpened || this.envidoDone || this.florDeclared || this.trickIndex !== 0) return false;
    if (this.level > 0 && !rules.envido_after_truco_accepted) return false;
    if (rules.envido_openers === "pie_only" && seat !== this.teamPie(this.teamOf(seat))) return false;
    if (this.phase === PLAY) return !this.hasPlayed(seat);
    if (this.phase === TRUCO) {
      return rules.envido_primero && this.pending === 1 && (rules.envido_primero_after_played || !this.hasPlayed(seat));
    }
    return false;
  }

  undeclaredFlor() {
    return this.florDeclared ? [] : this.florHolders;
  }

  forceFlor(holders) {
    if (!holders.length) return false;
    this.phase = FLOR_DECLARE;
    this.actor = holders[0];
    return true;
  }

  onFlorDeclare(seat, name) {
    if (name === "no_quiero") { // flor_before_answer = "refuse_unsung": the truco refused, the flor never scored
      this.onTruco(seat, name);
      return;
    }
    this.florDeclared = true;
    this.envidoDone = true;
    this.envidoChain = [];
    this.florCalls.push([seat, "flor"]);
    const teams = new Set(this.florHolders.map((s) => this.teamOf(s)));
    if (!this.florHolders.includes(seat)) fail(`${this.where}.flor_holders: seat ${seat} declared a flor but is not listed`);
    if (teams.size === 1) {
      this.florStatus = "uncontested";
      this.credit(this.teamOf(seat), this.uncontestedPoints(this.florHolders.length));
      if (!this.checkMatchEnd()) this.resume();
      return;
    }
    this.florChain = ["flor"];
    this.florStatus = "pending";
    this.florCall(seat);
  }

  florCall(seat) {
    this.florCaller = seat;
    const other = 1 - this.teamOf(seat);
    this.phase = FLOR_CONTEST;
    this.actor = this.orderAfter(seat).find((s) => this.florHolders.includes(s) && this.teamOf(s) === other);
  }

  onFlorContest(seat, name) {
    if (name === "quiero") {
      const [announced, winnerSeat] = this.shown("flor_shown");
      this.florAnnouncements = announced;
      const winner = this.teamOf(winnerSeat);
      this.florStatus = "accepted";
      this.credit(winner, this.contestPoints(name, winner));
    } else if (name === "no_quiero") {
      const team = this.teamOf(this.florCaller);
      this.florStatus = "refused";
      this.credit(team, this.contestPoints(name, team));
    } else {
      this.florChain.push(name);
      this.florCalls.push([seat, name]);
      this.florCall(seat);
      return;
    }
    this.florChain = [];
    if (!this.checkMatchEnd()) this.resume();
  }

  contestPoints(answer, team) {
    // engine.TrucoState._contest_points: the flor_values table, or pytruco's reading (flor_scoring)
    const chain = this.florChain;
    const count = this.florHolders.length;
    if (this.rules.flor_scoring === "per_flor_refusals") {
      if (answer === "no_quiero") return 3 * count + (chain.at(-1) !== "flor" ? 1 : 0);
      if (chain.includes("contraflor_al_resto")) return this.falta(team);
      return chain.includes("contraflor") ? 4 : 3 * count;
    }
    const values = this.rules.flor_values;
    if (answer === "quiero") {
      if (chain.includes("contraflor_al_resto")) return this.falta(team) + values.resto_bonus_per_flor * count;
      return chain.includes("contraflor") ? values.contraflor_quiero : values.contested_per_flor * count;
    }
    const last = chain.at(-1);
    if (last === "flor") return values.achico;
    if (last === "contraflor") return values.contraflor_no_quiero;
    return chain.includes("contraflor") ? values.resto_no_quiero_after_contraflor : values.resto_no_quiero_direct;
  }

  uncontestedPoints(flors) {
    return (this.rules.flor_scoring === "per_flor_refusals" ? 3 : this.rules.flor_values.uncontested_per_flor) * flors;
  }

  onOnze(seat, name) {
    this.onzeDeciders.shift();
    if (name === "quiero") {
      this.onzeDeciders = [];
      this.resume();
    } else if (this.onzeDeciders.length) { // "any_accepts": the next member decides
      this.actor = this.onzeDeciders[0];
    } else {
      this.credit(1 - this.teamOf(seat), 1);
      this.endHand();
    }
  }

  hasPlayed(seat) {
    return this.trickIndex > 0 || this.trick.some((p) => p.seat === seat);
  }

  playCard(seat, card, covered, slot) {
    if (slot !== null) {
      const left = this.slotsLeft[seat];
      if (!left.includes(slot)) fail(`${this.where}: seat ${seat} has no card left in slot ${slot}`);
      left.splice(left.indexOf(slot), 1);
    }
    this.trick.push({ seat, card, covered });
    if (this.trick.length < this.seats.length) {
      this.turn = this.nextSeat(seat);
      this.resume();
      return;
    }
    this.finishTrick();
  }

  finishTrick() {
    const trick = this.trick;
    const faceUp = trick.filter((p) => !p.covered);
    const top = Math.max(...faceUp.map((p) => this.strength[p.card]));
    const tops = faceUp.filter((p) => this.strength[p.card] === top).map((p) => p.seat);
    const teams = new Set(tops.map((s) => this.teamOf(s)));
    const leader = this.trickLeader;
    let result, nextLeader;
    const manoTeam = this.teamOf(this.mano);
    if (teams.size === 1 && (tops.length === 1 || this.rules.partner_tie_wins_trick)) {
      result = this.teamOf(tops[0]);
      nextLeader = tops[0];
    } else if (this.rules.trick_tie_to_mano && teams.has(manoTeam)) { // rules.md §8.10 row 16: the mano's team
      result = manoTeam;
      nextLeader = tops.find((s) => this.teamOf(s) === manoTeam);
    } else {
      result = this.t.rules.tie;
      const rule = this.rules.lead_after_tie;
      nextLeader = rule === "same_leader" ? leader : rule === "first_tied_card" ? tops[0] : this.nextSeat(leader);
    }
    this.tricks.push(trick);
    this.trick = [];
    this.trickResults.push(result);
    const winner = this.t.rules.decided[String(this.rules.hand_size)][this.trickResults.join(",")];
    if (winner === null) {
      this.trickIndex += 1;
      this.trickLeader = this.turn = nextLeader;
      this.resume();
    } else if (winner === this.t.rules.all_tied) {
      this.allTricksTied();
    } else {
      this.credit(winner, this.handValue);
      this.endHand();
    }
  }

  allTricksTied() {
    let winner = null;
    if (this.family !== "paulista") winner = this.teamOf(this.mano);
    else if (this.rules.all_tricks_tied === "dealer_team") winner = this.teamOf(this.dealer);
    else if (this.rules.all_tricks_tied === "mao_team") winner = this.teamOf(this.mano);
    if (winner !== null) this.credit(winner, this.handValue);
    this.endHand();
  }

  fold(seat) {
    if (this.rules.mazo_scope === "player" && this.seats.some((s) => s !== seat && this.teamOf(s) === this.teamOf(seat))) {
      this.leaveHand(seat);
      return;
    }
    // mazo ends the hand; what it scores (with any flor bonus) only matters to the next hand's score_before,
    // which the view gives, or to the end of the match, which leaves no seat to act either way
    this.handOver = true;
    this.phase = null;
    this.actor = null;
  }

  leaveHand(seat) {
    // mazo_scope="player" (rules.md §8.10 row 12): the folder alone leaves the hand, its partners play on
    this.seats = this.seats.filter((s) => s !== seat);
    if (this.trick.length === 0 && this.trickLeader === seat) this.trickLeader = this.nextSeat(seat);
    if (this.trick.length < this.seats.length) {
      this.turn = this.nextSeat(seat);
      this.resume();
    } else {
      this.finishTrick();
    }
  }

  // ---------------------------------------------------------------------------------------------------------
  // flow

  resume() {
    if (this.pending) {
      this.phase = TRUCO;
      this.actor = this.trucoResponder;
      return;
    }
    this.phase = PLAY;
    this.actor = this.turn;
    if (this.trickIndex === 0 && this.undeclaredFlor().includes(this.turn) && !this.hasPlayed(this.turn)) {
      this.phase = FLOR_DECLARE;
    }
  }

  credit(team, points) {
    this.score[team] += points;
    if (this.firstToTarget === null && this.score[team] >= this.target) this.firstToTarget = team;
  }

  checkMatchEnd() {
    if (this.firstToTarget !== null && this.rules.end_match_immediately) {
      this.finishMatch();
      return true;
    }
    return false;
  }

  finishMatch() {
    this.phase = OVER;
    this.actor = null;
    this.handOver = true;
  }

  endHand() {
    if (this.firstToTarget !== null || this.rules.single_hand) {
      this.finishMatch();
      return;
    }
    this.handOver = true;
    this.phase = null;
    this.actor = null;
  }

  // ---------------------------------------------------------------------------------------------------------
  // legal actions (TrucoState._compute_legal)

  legal(seat = this.actor) {
    const phase = this.phase;
    if (phase === OVER || phase === null) return [];
    if (phase === PLAY) return [...(this.cardsKnown(seat) ? this.legalCards(seat) : []), ...this.legalCalls(seat)];
    if (phase === FLOR_DECLARE) {
      const refuse = this.rules.flor_before_answer === "refuse_unsung" && this.pending > 0
        && this.teamOf(seat) !== this.proposerTeam;
      return refuse ? ["flor", "no_quiero"] : ["flor"];
    }
    if (phase === ONZE) return ["quiero", "no_quiero"];
    const legal = ["quiero", "no_quiero"];
    if (phase === TRUCO) {
      if (this.pending < this.ladderCalls.length && this.mayRaise(this.teamOf(seat), this.pending)) {
        legal.push(this.ladderCalls[this.pending]);
      }
      if (this.canOpenEnvido(seat)) legal.push(...ENVIDO_CALLS);
    } else if (phase === ENVIDO) {
      legal.push(...this.envidoRaises());
    } else if (phase === FLOR_CONTEST) {
      const first = this.florChain.length === 1 && this.florChain[0] === "flor";
      if (first) legal.push("contraflor");
      // flor_raise_by = "unsung_holder" (rules.md §8.10 row 9): only the first answer raises
      if (!this.florChain.includes("contraflor_al_resto") && (first || this.rules.flor_raise_by !== "unsung_holder")) {
        legal.push("contraflor_al_resto");
      }
    }
    return legal;
  }

  coverAllowed() {
    return this.rules.covered_card && this.family === "paulista" && this.trick.length > 0
      && this.trickResults.length > 0 && this.trickResults.at(-1) !== this.t.rules.tie;
  }

  legalCards(seat) {
    const left = this.slotsLeft[seat];
    if (this.blind) return left.map((i) => `play_slot:${i}`);
    const cards = left.map((i) => this.cardText(this.dealt[seat][i]));
    const legal = cards.map((c) => `play:${c}`);
    if (this.coverAllowed()) legal.push(...cards.map((c) => `cover:${c}`));
    return legal;
  }

  legalCalls(seat) {
    // the play phase's calls, which do not depend on anybody's cards
    if (this.phase !== PLAY) return [];
    const { rules } = this;
    const legal = [];
    const team = this.teamOf(seat);
    if (this.level < this.ladderCalls.length && (this.level === 0 || this.holder === team)) {
      const specialOk = this.special === null || rules.mao_de_onze_truco === "caller_loses_match";
      if (specialOk && this.mayRaise(team, null)) legal.push(this.ladderCalls[this.level]);
    }
    if (this.canOpenEnvido(seat)) legal.push(...ENVIDO_CALLS);
    if (this.family !== "paulista" || (rules.paulista_mazo && this.special !== MAO_DE_FERRO)) legal.push("mazo");
    // señas: once a hand, before the seat's first card, in a hand with partners in it (not a pica-pica duel)
    if (rules.senas && this.seats.length > 2 && !this.signals.has(seat) && !this.hasPlayed(seat)) {
      legal.push(...this.t.actions.senas);
    }
    return legal;
  }

  mayRaise(team, pending) {
    // forbid_useless_raise (Paulista): no raise when accepting (or the current value) already wins
    if (!this.rules.forbid_useless_raise || this.family !== "paulista") return true;
    const value = pending === null ? this.handValue : this.ladderValues[pending];
    return this.score[team] + value < this.target;
  }

  // ---------------------------------------------------------------------------------------------------------
  // seats and order

  nextSeat(seat) {
    return this.seats.find((s) => s > seat) ?? this.seats[0];
  }

  orderAfter(seat) {
    return [...this.seats.filter((s) => s > seat), ...this.seats.filter((s) => s <= seat)];
  }

  teamPie(team) {
    return this.handOrder.filter((s) => this.teamOf(s) === team && this.seats.includes(s)).at(-1);
  }

  responderFor(team, after) {
    if (this.rules.responder === "team_pie") return this.teamPie(team);
    return this.orderAfter(after).find((s) => this.teamOf(s) === team);
  }

  // ---------------------------------------------------------------------------------------------------------
  // the observation (truco_env/encoding.py encode_observation)

  observe() {
    const T = this.t.observation;
    const uruguayan = this.family === "uruguayan";
    const obs = new Float32Array(T.size + (this.rules.senas ? T.senas_size : 0) + (uruguayan ? T.uruguayan_size : 0));
    const envidoScale = T.envido_scale[this.family];
    const florScale = T.flor_scale[this.family];
    const off = this.enc.offsets;
    const set = (field, index, value = 1) => {
      const [start, size] = off[field];
      if (index < 0 || index >= size) fail(`internal: ${field}[${index}] is outside the field`);
      obs[start + index] = value; // Float32Array rounds to nearest, as numpy's float64 -> float32 cast does
    };
    const n = this.n;
    const viewer = this.viewer;
    const rel = (seat) => (seat - viewer + n) % n;
    const team = this.teamOf(viewer);
    const numCards = this.t.cards.count;
    const maxSeats = T.max_seats;

    const own = this.dealt[viewer];
    for (const slot of this.slotsLeft[viewer]) {
      set("hand_slots", slot);
      if (!this.blind) set("hand", own[slot]);
    }
    if (this.partnerCardsVisible()) {
      for (const s of this.partners()) for (const slot of this.slotsLeft[s]) set("partner_cards", this.dealt[s][slot]);
    }
    [...this.tricks, this.trick].forEach((trick, t) => {
      for (const { seat, card, covered } of trick) {
        if (covered) set("covered", t * maxSeats + rel(seat));
        else set("table", (t * maxSeats + rel(seat)) * numCards + card);
      }
    });
    this.trickResults.forEach((result, t) => {
      set("trick_results", t * 3 + (result === this.t.rules.tie ? 2 : result === team ? 0 : 1));
    });
    if (this.phase !== OVER) {
      set("trick_index", Math.min(this.trickIndex, T.max_tricks - 1));
      set("trick_leader", rel(this.trickLeader));
    }
    if (this.vira !== null) {
      set("vira", this.vira);
      if (this.family === "paulista") set("manilha_rank", this.manilhaRank(this.vira));
    }
    set("truco_level", this.level);
    set("hand_value", 0, this.handValue / 12);
    set("raise_holder", this.holder === null ? 0 : this.holder === team ? 1 : 2);
    if (this.pending) {
      set("pending_truco", this.pending);
      set("pending_truco_by", this.proposerTeam === team ? 0 : 1);
    } else {
      set("pending_truco", 0);
    }
    const calls = (field, list, names, slots) => list.slice(0, slots).forEach(([seat, call], i) => {
      set(field, i * 5 + names.indexOf(call));
      set(field, i * 5 + (this.teamOf(seat) === team ? 3 : 4));
    });
    const shown = (field, list, scale) => list.forEach(([seat, value]) => {
      if (value === null) {
        set(field, rel(seat) * 3 + 2);
      } else {
        set(field, rel(seat) * 3);
        set(field, rel(seat) * 3 + 1, value / scale);
      }
    });
    calls("envido_calls", this.envidoCalls, ENVIDO_CALLS, T.envido_call_slots);
    set("envido_status", T.envido_status.indexOf(this.envidoStatus));
    shown("envido_shown", this.envidoAnnouncements, envidoScale);
    calls("flor_calls", this.florCalls, T.flor_call_names, T.flor_call_slots);
    set("flor_status", T.flor_status.indexOf(this.florStatus));
    for (const seat of this.florHolders) if (seat === viewer || this.florStatus !== "none") set("flor_holders", rel(seat));
    shown("flor_shown", this.florAnnouncements, florScale);
    if (this.family !== "paulista") {
      set("own_points", 0, this.ownEnvido(own) / envidoScale);
      const flor = this.rules.flor ? this.florOf(own) : null;
      set("own_points", 1, flor === null ? 0 : flor / florScale);
    }
    set("score", 0, Math.min(this.score[team] / this.target, 1));
    set("score", 1, Math.min(this.score[1 - team] / this.target, 1));
    set("target", 0, Math.min(this.target / 30, 1));
    set("mano", rel(this.mano));
    set("dealer", rel(this.dealer));
    if (this.actor !== null) set("actor", rel(this.actor));
    for (const seat of this.seats) set("participants", rel(seat));
    set("phase", T.phases.indexOf(this.phase));
    set("special_hand", 0, Number(this.special === MAO_DE_ONZE));
    set("special_hand", 1, Number(this.special === MAO_DE_FERRO));
    set("special_hand", 2, Number(this.blind));
    if (!uruguayan) set("family", this.t.cards.families.indexOf(this.family));
    set("num_players", [2, 4, 6].indexOf(n));
    set("hand_size", this.rules.hand_size - 1);
    T.option_bits.forEach(([name, value], i) => set("options", i, Number(this.rules[name] === value)));
    const width = this.t.actions.tally_classes.length + 1;
    [this.tally[team], this.tally[1 - team]].forEach((counts, row) => {
      const total = counts.reduce((a, b) => a + b, 0);
      if (!total) return;
      counts.forEach((count, k) => set("match_tally", row * width + k, count / total));
      set("match_tally", row * width + width - 1, total / (total + T.tally_scale));
    });
    if (this.rules.senas) {
      const gestures = this.t.actions.senas;
      for (const [seat, gesture] of this.signals) set("senas_seen", rel(seat) * gestures.length + gestures.indexOf(`sena:${gesture}`));
      if (this.signals.has(viewer)) for (const seat of this.hand.sena_caught_by ?? []) set("sena_caught_by", rel(seat));
      set("sena_code", 0, Number(this.rules.sena_code === "table"));
    }
    if (uruguayan) {
      set("uruguayan", 0);
      for (const card of this.t.cards.piezas[this.vira]) set("piezas", card);
      T.uruguayan_option_bits.forEach(([name, value], i) => set("uruguayan_options", i, Number(this.rules[name] === value)));
      set("uruguayan_target", 0, Math.min(this.target / 40, 1));
    }
    return obs;
  }
}
