"""The worked scenarios T01-T48 of docs/rules.md §6, driven through the rules engine and through the public
PettingZoo environment.

Every scenario is data: a `Case` (preset, overrides, dealer, start score, deal, vira, actions, and what must
hold at given steps and at the end). One generic test plays each case; a few card-level tables (T01, T02,
T31, T32) have their own small parametrised tests. Every test that plays actions runs twice, with the same
data and the same checks: `engine` drives `TrucoState` directly; `env` drives `truco_env.env(...)` (forced
deal through `reset` options, actions by name through `action_id`, the legal set read from the action mask)
via the `EnvDriver` adapter below, which also checks the mask against the engine at every step.

docs/rules.md §6 conventions: dealer seat 1 (mano/mao seat 0), start [0, 0], default options, "legal" is
the complete legal set of the actor at that moment.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import truco_env
from truco_env.cards import envido_points, flor_points, manilha_rank
from truco_env.config import make_config
from truco_env.engine import TIE, TrucoState

T = TIE  # short alias for tied tricks in the tables below


# ------------------------------------------------------------ notation
def deal(*hands: str) -> list[list[str]]:
    """deal("7c 6c 3e", "2o 1b 4b") -> one card list per seat."""
    return [h.split() for h in hands]


def acts(text: str) -> list[tuple[int, str]]:
    """acts("0:envido 1:quiero 0:play:3e") -> [(0, "envido"), (1, "quiero"), (0, "play:3e")]."""
    out = []
    for token in text.split():
        seat, name = token.split(":", 1)
        out.append((int(seat), name))
    return out


def L(text: str) -> set[str]:
    return set(text.split())


SLOTS = L("play_slot:0 play_slot:1 play_slot:2")
LADDER = L("truco retruco vale_cuatro seis nove doze")


def card_legal_at(hands, actions, start=0, extra=(), blind=False) -> dict[int, dict]:
    """Expected legal set before every card play from step `start` on, when only card plays (plus `extra`)
    are legal: the unplayed cards (`play:<card>`) or unplayed slots (`play_slot:<i>`) of the actor."""
    played: dict[int, set] = {seat: set() for seat in range(len(hands))}
    out = {}
    for i, (seat, name) in enumerate(actions):
        kind, _, arg = name.partition(":")
        if kind not in ("play", "play_slot"):
            continue
        if i >= start:
            if blind:
                cards = {f"play_slot:{k}" for k in range(3) if k not in played[seat]}
            else:
                cards = {f"play:{c}" for c in hands[seat] if c not in played[seat]}
            out[i] = {"legal": cards | set(extra)}
        played[seat].add(int(arg) if kind == "play_slot" else arg)
    return out


# ------------------------------------------------------------ the case type
@dataclass
class Case:
    id: str
    hands: list[list[str]]
    actions: list[tuple[int, str]]
    preset: str = "argentine"
    opts: dict[str, Any] = field(default_factory=dict)
    dealer: int = 1
    start: tuple[int, int] = (0, 0)
    vira: str | None = None
    at: dict[int, dict] = field(default_factory=dict)  # step i -> checks before action i (after i actions)
    score: tuple[int, int] | None = None  # final score
    actor: int | None = None  # final actor (hand continues)
    legal: set[str] | None = None  # final complete legal set
    includes: set[str] | None = None  # final legal set must contain these
    tricks: list[int] | None = None  # final trick_results of the current hand
    turn: int | None = None
    announce: list[tuple[int, int | None]] | None = None
    illegal: str | None = None  # after the actions, this action raises ValueError, state unchanged
    hand_over: bool = False  # the first hand ended with exactly these actions (next hand dealt)
    winner: int | None = None  # the match is over and this team won
    next_hand: dict[str, Any] | None = None  # dealer / mano / actor / legal of the next hand


def C(id: str, hands, actions: str, **kw) -> Any:
    case = Case(id=id, hands=hands, actions=acts(actions), **kw)
    return pytest.param(case, id=id)


def P(id: str, hands, actions: str, vira: str = "4d", preset: str = "paulista", **kw) -> Any:
    """A Paulista case (preset `paulista`, vira 4d unless said otherwise)."""
    return C(id, hands, actions, vira=vira, preset=preset, **kw)


# ------------------------------------------------------------ drivers
DRIVERS = ("engine", "env")
with_driver = pytest.mark.parametrize("driver", DRIVERS)  # the innermost parametrize: ids read "env-T10-d"


class EnvDriver:
    """Plays a match through the public AEC environment, offering the attributes of `TrucoState` that the
    checks below read. Actions and the legal set go through the environment (`step`, `action_mask`); the score,
    winner and hand records come from `match_record()`; engine-internal details (turn, trick results, envido
    announcements, dealer, mano) are read from `env.unwrapped.game`. After the reset and after every step it
    checks that the environment agrees with the engine underneath (`_check_env`)."""

    def __init__(self, preset: str, hands, vira, dealer: int, start, **opts) -> None:
        self.env = truco_env.env(preset, **opts)
        self.env.reset(seed=0, options={
            "deal": {"hands": [list(h) for h in hands], "vira": vira, "dealer": dealer},
            "score": list(start),
        })
        self.names = self.env.unwrapped.action_names
        self._check_env("after reset")

    # -- actions
    @property
    def game(self) -> TrucoState:
        return self.env.unwrapped.game

    @property
    def terminated(self) -> bool:
        return bool(self.env.terminations[self.env.agent_selection])

    @property
    def actor(self) -> int | None:
        if self.terminated:
            return None
        return self.env.unwrapped.possible_agents.index(self.env.agent_selection)

    def legal_actions(self) -> list[str]:
        """The names the action mask of the agent to act marks legal (none once the match is over)."""
        if self.terminated:
            return []
        mask = self.env.observe(self.env.agent_selection)["action_mask"]
        return [self.names[i] for i in np.flatnonzero(mask)]

    def apply(self, name: str) -> None:
        if self.terminated:
            # the environment refuses any action after the end (PettingZoo: only None for a dead agent)
            with pytest.raises(ValueError):
                self.env.step(self.env.unwrapped.action_id(name))
            raise ValueError(f"illegal action {name!r}: the match is over, no action is legal")
        try:
            self.env.step(self.env.unwrapped.action_id(name))
        finally:
            self._check_env(f"after step {name!r}")

    # -- what the checks read
    @property
    def hand_records(self) -> list[dict]:
        return self.env.unwrapped.match_record()["hands"]

    @property
    def hand_index(self) -> int:
        return len(self.hand_records) - 1

    @property
    def score(self) -> tuple[int, int]:
        return tuple(self.hand_records[-1]["score_after"])

    @property
    def is_over(self) -> bool:
        return self.terminated

    @property
    def winner(self) -> int | None:
        return self.env.unwrapped.match_record()["winner"]

    turn = property(lambda self: self.game.turn)
    trick_results = property(lambda self: self.game.trick_results)
    envido_announcements = property(lambda self: self.game.envido_announcements)
    dealer = property(lambda self: self.game.dealer)
    mano = property(lambda self: self.game.mano)

    def observations(self) -> list[tuple[bytes, bytes]]:
        """Every agent's observation and mask (part of the state an illegal action must leave unchanged)."""
        out = []
        for agent in self.env.unwrapped.possible_agents:
            obs = self.env.observe(agent)
            out.append((obs["observation"].tobytes(), obs["action_mask"].tobytes()))
        return out

    def _check_env(self, where: str) -> None:
        """The environment agrees with the engine: mask fidelity (the actor's mask is exactly the engine's legal
        set, every other agent's mask is all zero), agent selection, termination, records and rewards."""
        env, game = self.env, self.game
        agents = env.unwrapped.possible_agents
        engine_legal = game.legal_actions()
        assert all(env.terminations[a] == game.is_over for a in agents), (
            f"{where}: terminations {env.terminations}, engine is_over {game.is_over}")
        if not game.is_over:
            assert env.agent_selection == agents[game.actor], (
                f"{where}: agent_selection {env.agent_selection}, engine actor {game.actor}")
        for agent in agents:
            mask = env.observe(agent)["action_mask"]
            assert mask.dtype == np.int8 and set(np.unique(mask)) <= {0, 1}, f"{where}: mask of {agent}"
            marked = [self.names[i] for i in np.flatnonzero(mask)]
            if agent == env.agent_selection and not game.is_over:
                assert set(marked) == set(engine_legal), (
                    f"{where}: mask of {agent} {sorted(marked)} != engine legal {sorted(engine_legal)}")
                assert len(marked) == len(engine_legal)
            else:
                assert not marked, f"{where}: {agent} does not act, its mask marks {marked}"
        record = env.unwrapped.match_record()
        assert record["winner"] == game.winner
        assert len(record["hands"]) == game.hand_index + 1
        assert tuple(record["hands"][-1]["score_after"]) == tuple(game.score)
        if game.is_over:  # reward "match": +1 to the winning team's agents, -1 to the others
            for i, agent in enumerate(agents):
                expected = 1.0 if i % 2 == game.winner else -1.0
                assert env.rewards[agent] == expected, f"{where}: reward of {agent} {env.rewards[agent]}"


State = TrucoState | EnvDriver  # what the checks below accept


def new_state(preset="argentine", hands=None, vira=None, dealer=1, start=(0, 0), *, driver="engine",
              **opts) -> State:
    if driver == "env":
        return EnvDriver(preset, hands, vira, dealer, start, **opts)
    assert driver == "engine", driver
    cfg = make_config(preset, **opts)
    return TrucoState.new(
        cfg,
        seed=0,
        deal={"hands": [list(h) for h in hands], "vira": vira, "dealer": dealer},
        score=list(start),
    )


def assert_legal(s: State, expected) -> None:
    got = s.legal_actions()
    assert set(got) == set(expected), (
        f"legal actions of seat {s.actor}: got {sorted(got)}, expected {sorted(expected)}; "
        f"missing {sorted(set(expected) - set(got))}, extra {sorted(set(got) - set(expected))}"
    )
    assert len(got) == len(set(got)), f"duplicate legal actions: {got}"


def check_point(s: State, exp: dict, where: str) -> None:
    if "score" in exp:
        assert tuple(s.score) == tuple(exp["score"]), f"{where}: score {tuple(s.score)} != {exp['score']}"
    if "actor" in exp:
        assert s.actor == exp["actor"], f"{where}: actor {s.actor} != {exp['actor']}"
    if "legal" in exp:
        assert_legal(s, exp["legal"])
    if "includes" in exp:
        missing = set(exp["includes"]) - set(s.legal_actions())
        assert not missing, f"{where}: {sorted(missing)} not legal; legal {sorted(s.legal_actions())}"
    if "tricks" in exp:
        assert list(s.trick_results) == list(exp["tricks"]), f"{where}: tricks {list(s.trick_results)}"
    if "turn" in exp:
        assert s.turn == exp["turn"], f"{where}: turn {s.turn} != {exp['turn']}"
    if "announce" in exp:
        got = [tuple(a) for a in s.envido_announcements]
        assert got == [tuple(a) for a in exp["announce"]], f"{where}: announcements {got}"


def run(s: State, actions, at=None) -> State:
    """Apply [(seat, name), ...], checking that each listed seat is the actor, and the `at` checks."""
    at = at or {}
    for i, (seat, name) in enumerate(actions):
        where = f"before step {i} [{seat}, {name!r}]"
        if i in at:
            check_point(s, at[i], where)
        assert s.actor == seat, f"{where}: actor is {s.actor}; legal {sorted(s.legal_actions())}"
        s.apply(name)
    if len(actions) in at:
        check_point(s, at[len(actions)], "after the last action")
    return s


def snapshot(s: State):
    return (
        tuple(s.score), s.actor, sorted(s.legal_actions()), copy.deepcopy(s.hand_records), s.hand_index,
        s.turn, list(s.trick_results), s.is_over, s.winner, [tuple(a) for a in s.envido_announcements],
        s.observations() if isinstance(s, EnvDriver) else None,
    )


def assert_illegal(s: State, name: str, legal=None) -> None:
    before = snapshot(s)
    assert name not in s.legal_actions()
    with pytest.raises(ValueError) as exc:
        s.apply(name)
    msg = str(exc.value)
    assert name in msg, f"error message does not name {name!r}: {msg!r}"
    for a in before[2]:  # the message names the legal actions too (truco_env/aec.py)
        assert a in msg, f"error message does not name legal action {a!r}: {msg!r}"
    assert snapshot(s) == before, "state changed by an illegal action"
    if legal is not None:
        assert_legal(s, legal)


def assert_match_over(s: State, winner: int) -> None:
    assert s.is_over, f"match not over at {tuple(s.score)}"
    assert s.winner == winner
    assert s.actor is None
    assert s.legal_actions() == []


def check_records(s: State, case: Case) -> None:
    rec = s.hand_records[0]
    assert rec["dealer"] == case.dealer
    assert [list(h) for h in rec["deal"]["hands"]] == case.hands
    assert rec["deal"]["vira"] == case.vira
    assert list(rec["score_before"]) == list(case.start)
    assert [(int(a[0]), a[1]) for a in rec["actions"]] == case.actions, "recorded actions differ"
    final = tuple(s.score)
    assert list(rec["score_after"]) == list(final)
    assert list(rec["points"]) == [final[0] - case.start[0], final[1] - case.start[1]]


# ------------------------------------------------------------ deals
D03 = deal("7c 6c 3e", "2o 1b 4b")
D04 = deal("7e 6e 3c", "1b 2o 5o")
D10 = deal("7c 4c 1e", "6o 3o 1b")  # 31 / 29
D12 = deal("6o 3o 1b", "7c 4c 1e")  # 29 / 31
D13 = deal("7c 11c 4o", "5b 2b 1e")  # 27 / 27
D14 = deal("7c 3c 1e", "7o 4o 2e")  # 30 / 31
D22 = deal("4c 1c 12o", "7e 4e 10o", "7o 6o 3b", "6b 5b 2e")  # 25 / 31 / 33 / 31
D23 = deal("12c 11c 3e", "6e 4e 12b", "7o 3o 1b", "7b 5c 12e")  # 20 / 30 / 30 / 7
D24 = deal("3e 4o 5c", "2o 5b 6e", "3c 6o 7b", "12b 3o 4e")
D27 = deal("7c 6c 1c", "5e 4e 12e")  # flor 34 / flor 29
D30 = deal("4e 7c 1o", "7o 6b 1c", "3b 5e 12o", "1b 2e 4c", "2c 6c 11b", "12e 3o 5o")
D33 = deal("5c 3h Ks", "2c Qd 6h")  # vira 4d: 5c is the zap
D39 = deal("3c 2h Jd", "3h 2d Js")
D41 = deal("3c 6c 7h", "2h Kh Qs", "3d Js Ac", "Kc 3s 6d")
D42 = deal("5c 3h Ks", "2c Qd 6h", "7d Js 4h", "Ad 6s Qc")
D43 = deal("4h 6s Qc", "5c 3h Ks", "7d Js Qd", "2c Ad 6h")

AFTER_ENVIDO_T10 = L("play:7c play:4c play:1e truco mazo")  # seat 0's turn, envido closed (§3.3, §5.1)

# ------------------------------------------------------------ 6.1 Argentine
CASES: list = []

# T03 - the worked example of docs/rules.md §6.
CASES.append(C(
    "T03", D03,
    "0:envido 1:quiero 0:play:3e 1:play:2o 0:play:7c 1:truco 0:quiero 1:play:1b 1:play:4b 0:play:6c",
    at={2: {"score": (2, 0)}, 4: {"tricks": [0]}, 8: {"tricks": [0, 1], "actor": 1}},
    score=(4, 0), hand_over=True,
))

# T04 - envido, then a truco won by the envido's loser.
CASES.append(C(
    "T04", D04,
    "0:envido 1:quiero 0:play:3c 1:play:1b 1:truco 0:quiero 1:play:5o 0:play:7e 0:play:6e 1:play:2o",
    at={2: {"score": (2, 0)}, 4: {"tricks": [1]}, 8: {"tricks": [1, 0]}},
    score=(2, 2), hand_over=True,
))

# T05-T09 - trick outcomes.
CASES += [
    C("T05", deal("3e 4c 5o", "3b 6e 7b"), "0:play:3e 1:play:3b 0:play:4c 1:play:6e",
      at={2: {"tricks": [T], "actor": 0}}, score=(0, 1), hand_over=True),
    C("T06", deal("1e 2c 4o", "4b 2e 5c"), "0:play:1e 1:play:4b 0:play:2c 1:play:2e",
      at={2: {"tricks": [0]}}, score=(1, 0), hand_over=True),
    C("T07", deal("4e 1e 7c", "5c 4o 7b"), "0:play:4e 1:play:5c 1:play:4o 0:play:1e 0:play:7c 1:play:7b",
      at={2: {"tricks": [1]}, 4: {"tricks": [1, 0]}}, score=(0, 1), hand_over=True),
    C("T08", deal("3e 2e 4o", "3o 2o 5b"), "0:play:3e 1:play:3o 0:play:2e 1:play:2o 0:play:4o 1:play:5b",
      at={4: {"tricks": [T, T]}}, score=(0, 1), hand_over=True),
    C("T09", deal("3e 2o 12c", "3b 2c 12e"), "0:play:3e 1:play:3b 0:play:2o 1:play:2c 0:play:12c 1:play:12e",
      at={4: {"tricks": [T, T]}}, score=(1, 0), hand_over=True),
    C("T09-dealer0", deal("3e 2o 12c", "3b 2c 12e"),
      "1:play:3b 0:play:3e 1:play:2c 0:play:2o 1:play:12e 0:play:12c",
      dealer=0, at={4: {"tricks": [T, T]}}, score=(0, 1), hand_over=True),
]

# T10 - envido chains, accepted and refused (seat 0 31, seat 1 29); the hand continues with seat 0.
T10_ROWS = [
    ("a", "0:envido 1:no_quiero", (1, 0), (0, 0)),
    ("b", "0:real_envido 1:no_quiero", (1, 0), (0, 0)),
    ("c", "0:falta_envido 1:no_quiero", (1, 0), (0, 0)),
    ("d", "0:envido 1:envido 0:quiero", (4, 0), (0, 0)),
    ("e", "0:envido 1:envido 0:no_quiero", (0, 2), (0, 0)),
    ("f", "0:envido 1:real_envido 0:quiero", (5, 0), (0, 0)),
    ("g", "0:envido 1:real_envido 0:no_quiero", (0, 2), (0, 0)),
    ("h", "0:envido 1:envido 0:real_envido 1:quiero", (7, 0), (0, 0)),
    ("i", "0:envido 1:envido 0:real_envido 1:no_quiero", (4, 0), (0, 0)),
    ("j", "0:real_envido 1:falta_envido 0:no_quiero", (0, 3), (0, 0)),
    ("k", "0:envido 1:falta_envido 0:no_quiero", (0, 2), (0, 0)),
    ("l", "0:envido 1:envido 0:falta_envido 1:no_quiero", (4, 0), (0, 0)),
    ("m", "0:envido 1:real_envido 0:falta_envido 1:no_quiero", (5, 0), (0, 0)),
    ("n", "0:envido 1:envido 0:real_envido 1:falta_envido 0:no_quiero", (0, 7), (0, 0)),
    ("o", "0:envido 1:falta_envido 0:quiero", (22, 20), (12, 20)),  # falta = 30 - 20 = 10
]
CASES += [
    C(f"T10-{row}", D10, actions, start=start, score=score, actor=0, turn=0, legal=AFTER_ENVIDO_T10)
    for row, actions, score, start in T10_ROWS
]

# T11 - illegal envido calls (ValueError, state unchanged).
CASES += [
    C("T11-a", D10, "0:real_envido", illegal="envido", actor=1, legal=L("quiero no_quiero falta_envido")),
    C("T11-b", D10, "0:envido 1:envido", illegal="envido", actor=0,
      legal=L("quiero no_quiero real_envido falta_envido")),
    C("T11-c", D10, "0:falta_envido", illegal="real_envido", actor=1, legal=L("quiero no_quiero")),
    C("T11-d", D10, "0:envido 1:no_quiero 0:play:1e", illegal="envido", actor=1, score=(1, 0),
      legal=L("play:6o play:3o play:1b truco mazo")),
    C("T11-e", D10, "0:play:1e 1:play:1b", illegal="envido", actor=0, tricks=[0]),
]

# T12 - falta envido in the malas and the buenas; seat 1 (31) wins the falta against seat 0 (29).
# (start, target_score, team-1 score after: leader_needs, malas_match, whole_match)
T12_ROWS = [
    ((10, 8), 30, (28, 30, 30)),
    ((20, 12), 30, (22, 22, 30)),  # leader in the buenas
    ((15, 3), 30, (18, 30, 30)),  # 15 is still malas
    ((16, 3), 30, (17, 17, 30)),  # 16 = "1 buena"
    ((10, 8), 15, (13, 13, 15)),  # target 15: malas_buenas off by default (odd target)
]
FALTA_MODES = ("leader_needs", "malas_match", "whole_match")
for start, target, results in T12_ROWS:
    # the target-15 row is run with malas_buenas left at its default (off for an odd target) and set off
    variants = [("", {})]
    if target != 30:
        variants = [("", {"target_score": target}),
                    ("-malas_buenas-off", {"target_score": target, "malas_buenas": False})]
    for suffix, extra in variants:
        for mode, team1 in zip(FALTA_MODES, results):
            done = team1 >= target
            CASES.append(C(
                f"T12-{start[0]}-{start[1]}-to{target}{suffix}-{mode}", D12, "0:falta_envido 1:quiero",
                opts={"falta_envido": mode, **extra}, start=start, score=(start[0], team1),
                winner=1 if done else None, actor=None if done else 0,
            ))
    if target == 30 and start == (10, 8):
        for mode in FALTA_MODES:
            CASES.append(C(
                f"T12-refused-{mode}", D12, "0:falta_envido 1:no_quiero",
                opts={"falta_envido": mode}, start=start, score=(11, 8), actor=0,
            ))

# T13 - envido tie in 1v1: the mano wins.
CASES += [
    C("T13", D13, "0:envido 1:quiero", score=(2, 0), actor=0),
    C("T13-dealer0", D13, "1:envido 0:quiero", dealer=0, score=(0, 2), actor=1),
]

# T14 / T15 - envido va primero.
T14_STEPS = {
    1: {"actor": 1, "legal": L("quiero no_quiero retruco envido real_envido falta_envido")},
    2: {"actor": 0, "legal": L("quiero no_quiero envido real_envido falta_envido")},
    3: {"score": (0, 2), "actor": 1, "legal": L("quiero no_quiero retruco")},
}
CASES += [
    C("T14", D14, "0:truco 1:envido 0:quiero 1:no_quiero", at=T14_STEPS, score=(1, 2), hand_over=True),
    C("T15", D14,
      "0:truco 1:envido 0:quiero 1:quiero 0:play:1e 1:play:2e 0:play:3c 1:play:7o 1:play:4o 0:play:7c",
      at={**T14_STEPS, 6: {"tricks": [0]}, 8: {"tricks": [0, 1]}}, score=(2, 2), hand_over=True),
]

# T16 - the envido closes.
CASES.append(C("T16-a", D14, "0:truco 1:quiero 0:play:1e", illegal="envido", actor=1,
               legal=L("play:7o play:4o play:2e retruco mazo")))
ANSWER_WITH_ENVIDO = "quiero no_quiero retruco envido real_envido falta_envido"
for name, opts, legal in [
    ("default", {}, ANSWER_WITH_ENVIDO),
    ("after_played-true", {"envido_primero_after_played": True}, ANSWER_WITH_ENVIDO),
    ("after_played-false", {"envido_primero_after_played": False}, "quiero no_quiero retruco"),
]:
    CASES.append(C(f"T16-b-{name}", D14, "0:play:1e 1:truco", opts=opts, actor=0, legal=L(legal)))

# T17 - truco ladder refusals.
CASES += [
    C("T17-a", D03, "0:truco 1:no_quiero", score=(1, 0), hand_over=True),
    C("T17-b", D03, "0:truco 1:retruco 0:no_quiero", score=(0, 2), hand_over=True),
    C("T17-c", D03, "0:truco 1:retruco 0:vale_cuatro 1:no_quiero", score=(3, 0), hand_over=True),
]

# T18 - vale cuatro accepted and played out; afterwards no raise exists (only cards and mazo).
T18_ACTIONS = ("0:truco 1:retruco 0:vale_cuatro 1:quiero "
               "0:play:3e 1:play:2o 0:play:7c 1:play:1b 1:play:4b 0:play:6c")
CASES.append(C("T18", D03, T18_ACTIONS,
               at={**card_legal_at(D03, acts(T18_ACTIONS), start=4, extra={"mazo"}),
                   4: {"actor": 0, "legal": L("play:7c play:6c play:3e mazo")}},
               score=(4, 0), hand_over=True))

# T19 - who may raise.
CASES.append(C("T19", D03, "0:truco 1:quiero 0:play:3e 1:retruco 0:no_quiero",
               at={2: {"actor": 0, "legal": L("play:7c play:6c play:3e mazo")},
                   3: {"actor": 1, "legal": L("play:2o play:1b play:4b retruco mazo")}},
               score=(0, 2), hand_over=True))

# T20 - me voy al mazo, with mazo_first_trick_bonus off / on.
T20_ROWS = [
    ("a", "0:play:3e 1:play:2o 0:mazo", (0, 1), (0, 1)),
    ("b", "0:play:3e 1:play:2o 0:truco 1:quiero 0:play:7c 1:mazo", (2, 0), (2, 0)),
    ("c", "0:mazo", (0, 1), (0, 2)),
    ("d", "0:envido 1:no_quiero 0:play:3e 1:mazo", (2, 0), (2, 0)),
    ("e", "0:truco 1:quiero 0:play:3e 1:mazo", (2, 0), (2, 0)),
    ("f", "0:truco 1:retruco 0:quiero 0:play:3e 1:mazo", (3, 0), (3, 0)),
]
for row, actions, off, on in T20_ROWS:
    for bonus, score in ((False, off), (True, on)):
        CASES.append(C(f"T20-{row}-bonus-{str(bonus).lower()}", D03, actions,
                       opts={"mazo_first_trick_bonus": bonus}, score=score, hand_over=True))

# T21 - the match ends at once.
CASES += [
    C("T21", D03, "0:envido 1:quiero", start=(28, 10), score=(30, 10), winner=0),
    C("T21-refused", D03, "0:envido 1:no_quiero", start=(28, 10), score=(29, 10), actor=0),
]

ENVIDO_ANSWERS = L("quiero no_quiero envido real_envido falta_envido")  # §3.4, pending "envido"

# T22 - 2v2 envido: best hand of each team; announcing order; responder.
for name, opts, responder in [("default", {}, 1), ("next_opponent", {"responder": "next_opponent"}, 1),
                              ("team_pie", {"responder": "team_pie"}, 3)]:
    CASES.append(C(f"T22-{name}", D22, f"0:envido {responder}:quiero", preset="argentine-2v2", dealer=3,
                   opts=opts,
                   at={1: {"actor": responder, "legal": ENVIDO_ANSWERS}},
                   score=(2, 0), actor=0, announce=[(0, 25), (1, 31), (2, 33), (3, None)]))

# T23 - 2v2 envido tie: the player closest to the mano.
CASES += [
    C("T23-default", D23, "0:envido 1:quiero", preset="argentine-2v2", dealer=3, score=(0, 2), actor=0,
      announce=[(0, 20), (1, 30), (2, None)]),
    C("T23-closest_to_mano", D23, "0:envido 1:quiero", preset="argentine-2v2", dealer=3,
      opts={"envido_tie": "closest_to_mano"}, score=(0, 2), actor=0, announce=[(0, 20), (1, 30), (2, None)]),
    # Announcements for mano_team are not given in §6; derived from §3.6: with mano_team an equal value of
    # the mano's team beats one of the other team, so seat 2 says "30" and seat 3 (7) says "son buenas".
    C("T23-mano_team", D23, "0:envido 1:quiero", preset="argentine-2v2", dealer=3,
      opts={"envido_tie": "mano_team"}, score=(2, 0), actor=0,
      announce=[(0, 20), (1, 30), (2, 30), (3, None)]),
]

# T24 - 2v2 tricks: partners' tie and the leader after a parda.
CASES.append(C("T24-a", D24, "0:play:3e 1:play:2o 2:play:3c 3:play:12b", preset="argentine-2v2", dealer=3,
               tricks=[0], turn=0, actor=0))
for name, opts, leader in [("default", {}, 0), ("same_leader", {"lead_after_tie": "same_leader"}, 0),
                           ("first_tied_card", {"lead_after_tie": "first_tied_card"}, 2),
                           ("next_after_leader", {"lead_after_tie": "next_after_leader"}, 1)]:
    CASES.append(C(f"T24-b-{name}", D24, "0:play:4o 1:play:5b 2:play:3c 3:play:3o", preset="argentine-2v2",
                   dealer=3, opts=opts, tricks=[T], turn=leader, actor=leader))

# T25 - 2v2 truco chain and responders.
CASES += [
    C("T25-default", D24, "0:truco 1:retruco 2:vale_cuatro 3:no_quiero", preset="argentine-2v2", dealer=3,
      score=(3, 0), hand_over=True),
    C("T25-next_opponent", D24, "0:truco 1:retruco 2:vale_cuatro 3:no_quiero", preset="argentine-2v2",
      dealer=3, opts={"responder": "next_opponent"}, score=(3, 0), hand_over=True),
    C("T25-team_pie", D24, "0:truco 3:retruco 2:vale_cuatro 3:no_quiero", preset="argentine-2v2", dealer=3,
      opts={"responder": "team_pie"}, score=(3, 0), hand_over=True),
]

# T26 - flor without contest; flor voids the envido.
D26a = deal("7c 5c 2c", "3e 4o 6b")
D26b = deal("7e 6e 1b", "4o 5o 6o")
CASES += [
    C("T26-a", D26a, "0:flor", preset="argentine-flor", at={0: {"legal": {"flor"}}},
      score=(3, 0), actor=0, legal=L("play:7c play:5c play:2c truco mazo")),
    C("T26-b", D26b, "0:envido 1:flor", preset="argentine-flor", at={1: {"actor": 1, "legal": {"flor"}}},
      score=(0, 3), actor=0, legal=L("play:7e play:6e play:1b truco mazo")),
    # After the flor phase the envido is closed and the turn holder (seat 1) continues (§3.8).
    C("T26-c", D26b, "0:play:1b 1:flor", preset="argentine-flor", at={1: {"actor": 1, "legal": {"flor"}}},
      score=(0, 3), actor=1, legal=L("play:4o play:5o play:6o truco mazo")),
]

# T27 - flor against flor (34 vs 29).
FLOR_ANSWER = {1: {"actor": 1, "legal": L("quiero no_quiero contraflor contraflor_al_resto")}}
AFTER_CONTRAFLOR = {2: {"actor": 0, "legal": L("quiero no_quiero contraflor_al_resto")}}  # §3.8 table
AFTER_RESTO = {3: {"actor": 1, "legal": L("quiero no_quiero")}}
CASES += [
    C("T27-a", D27, "0:flor 1:quiero", preset="argentine-flor", at=FLOR_ANSWER, score=(6, 0), actor=0),
    C("T27-b", D27, "0:flor 1:no_quiero", preset="argentine-flor", at=FLOR_ANSWER, score=(4, 0), actor=0),
    C("T27-c", D27, "0:flor 1:contraflor 0:quiero", preset="argentine-flor",
      at={**FLOR_ANSWER, **AFTER_CONTRAFLOR}, score=(6, 0), actor=0),
    C("T27-d", D27, "0:flor 1:contraflor 0:no_quiero", preset="argentine-flor",
      at={**FLOR_ANSWER, **AFTER_CONTRAFLOR}, score=(0, 4), actor=0),
    C("T27-e", D27, "0:flor 1:contraflor 0:contraflor_al_resto 1:no_quiero", preset="argentine-flor",
      at={**FLOR_ANSWER, **AFTER_CONTRAFLOR, **AFTER_RESTO}, score=(6, 0), actor=0),
    C("T27-f", D27, "0:flor 1:contraflor 0:contraflor_al_resto 1:quiero", preset="argentine-flor",
      at={**FLOR_ANSWER, **AFTER_CONTRAFLOR, **AFTER_RESTO}, score=(36, 0), winner=0),
]

# T28 - contraflor al resto from [12, 20].
CASES += [
    C("T28-quiero", D27, "0:flor 1:contraflor_al_resto 0:quiero", preset="argentine-flor", start=(12, 20),
      at={2: {"actor": 0, "legal": L("quiero no_quiero")}}, score=(28, 20), actor=0),
    C("T28-no_quiero", D27, "0:flor 1:contraflor_al_resto 0:no_quiero", preset="argentine-flor",
      start=(12, 20), score=(12, 24), actor=0),
    C("T28-swapped", [D27[1], D27[0]], "0:flor 1:contraflor_al_resto 0:quiero", preset="argentine-flor",
      start=(12, 20), score=(12, 36), winner=1),
]

# T29 - flor tie: the mano.
CASES.append(C("T29", deal("7c 6c 12c", "7o 6o 10o"), "0:flor 1:quiero", preset="argentine-flor",
               score=(6, 0), actor=0))

# T30 - three against three.
CASES.append(C("T30", D30, "0:envido 1:quiero 0:play:4e 1:play:7o 2:play:3b 3:play:1b 4:play:2c 5:play:12e",
               preset="argentine-3v3", dealer=5,
               at={1: {"actor": 1}, 2: {"score": (2, 0), "actor": 0}},
               score=(2, 0), tricks=[1], turn=3, actor=3))

# ------------------------------------------------------------ 6.2 Paulista
# T33 - hand value ladder.
T33_E = "0:truco 1:seis 0:nove 1:doze 0:quiero 0:play:5c 1:play:2c 0:play:3h 1:play:Qd"
CASES += [
    P("T33-a", D33, "0:truco 1:no_quiero", score=(1, 0), hand_over=True),
    P("T33-b", D33, "0:truco 1:seis 0:no_quiero", score=(0, 3), hand_over=True),
    P("T33-c", D33, "0:truco 1:seis 0:nove 1:no_quiero", score=(6, 0), hand_over=True),
    P("T33-d", D33, "0:truco 1:seis 0:nove 1:doze 0:no_quiero", score=(0, 9), hand_over=True),
    P("T33-e", D33, T33_E,
      at={**card_legal_at(D33, acts(T33_E), start=5), 5: {"actor": 0, "legal": L("play:5c play:3h play:Ks")}},
      score=(12, 0), winner=0),
]

# T34 - who may raise; responders in 2v2.
CASES += [
    P("T34-a", D33, "0:truco 1:quiero", illegal="seis", actor=0, legal=L("play:5c play:3h play:Ks")),
    P("T34-a-after-play", D33, "0:truco 1:quiero 0:play:5c", actor=1, includes={"seis"}),
    P("T34-b", D42, "0:truco 1:seis 2:nove 3:doze 0:no_quiero", preset="paulista-2v2", dealer=3,
      score=(0, 9), hand_over=True),
]

# T35-T38 - tricks and ties.
CASES += [
    P("T35", deal("3c 6h 7s", "3d Kc Qh"), "0:play:3c 1:play:3d 0:play:6h 1:play:Kc",
      at={2: {"tricks": [T], "actor": 0}}, score=(0, 1), hand_over=True),
    P("T36", deal("5c 2h 7c", "Kd 2s 6d"), "0:play:5c 1:play:Kd 0:play:2h 1:play:2s",
      at={2: {"tricks": [0]}}, score=(1, 0), hand_over=True),
    P("T37", deal("Ac Qd 7h", "Kd 2c 7s"), "0:play:Ac 1:play:Kd 0:play:Qd 1:play:2c 1:play:7s 0:play:7h",
      at={2: {"tricks": [0]}, 4: {"tricks": [0, 1]}}, score=(1, 0), hand_over=True),
    P("T38", deal("3c 2h 6s", "3h 2d 7c"), "0:play:3c 1:play:3h 0:play:2h 1:play:2d 0:play:6s 1:play:7c",
      at={4: {"tricks": [T, T]}}, score=(0, 1), hand_over=True),
]

# T39 - all three tricks tied; all_tricks_tied modes, with and without an accepted truco.
T39_PLAYS = "0:play:3c 1:play:3h 0:play:2h 1:play:2d 0:play:Jd 1:play:Js"
for name, opts, plain, with_truco in [
    ("default", {}, (0, 0), (0, 0)),
    ("no_points", {"all_tricks_tied": "no_points"}, (0, 0), (0, 0)),
    ("dealer_team", {"all_tricks_tied": "dealer_team"}, (0, 1), (0, 3)),
    ("mao_team", {"all_tricks_tied": "mao_team"}, (1, 0), (3, 0)),
]:
    CASES.append(P(f"T39-{name}", D39, T39_PLAYS, opts=opts, at={4: {"tricks": [T, T]}},
                   score=plain, hand_over=True))
    CASES.append(P(f"T39-{name}-truco", D39, "0:truco 1:quiero " + T39_PLAYS, opts=opts,
                   at={6: {"tricks": [T, T]}}, score=with_truco, hand_over=True))

# T40 - clean deck, vira 3 wraps to Q.
CASES.append(P("T40", deal("Qd 3h Kc", "2c Ad Js"), "0:play:Qd 1:play:2c 0:play:3h 1:play:Ad",
               vira="3c", preset="paulista-clean", at={2: {"tricks": [0]}}, score=(1, 0), hand_over=True))

# T41 - 2v2: partners' tie, cangou, leader after a tie.
CASES.append(P("T41-a", D41, "0:play:3c 1:play:2h 2:play:3d 3:play:Kc", preset="paulista-2v2", dealer=3,
               tricks=[0], turn=0, actor=0))
for name, opts, leader in [("default", {}, 0), ("same_leader", {"lead_after_tie": "same_leader"}, 0),
                           ("first_tied_card", {"lead_after_tie": "first_tied_card"}, 2),
                           ("next_after_leader", {"lead_after_tie": "next_after_leader"}, 1)]:
    CASES.append(P(f"T41-b-{name}", D41, "0:play:6c 1:play:Kh 2:play:3d 3:play:3s", preset="paulista-2v2",
                   dealer=3, opts=opts, tricks=[T], turn=leader, actor=leader))

# T42 - mao de onze: play and win. No truco-ladder action is legal during the hand (cards only).
T42_PLAYS = "0:play:5c 1:play:2c 2:play:4h 3:play:Ad 0:play:3h 1:play:6h 2:play:7d 3:play:6s"
T42_ACTIONS = "0:quiero " + T42_PLAYS
DECIDE = L("quiero no_quiero")
CASES.append(P("T42", D42, T42_ACTIONS, preset="paulista-2v2", dealer=3, start=(11, 7),
               at={**card_legal_at(D42, acts(T42_ACTIONS)), 0: {"actor": 0, "legal": DECIDE},
                   5: {"tricks": [0]}},
               score=(14, 7), winner=0))

# T43 - mao de onze: run, and play and lose.
T43_B = "0:quiero 0:play:4h 1:play:5c 2:play:7d 3:play:2c 1:play:3h 2:play:Js 3:play:Ad 0:play:6s"
T43_D = "0:no_quiero 2:quiero " + T42_PLAYS
CASES += [
    P("T43-a", D42, "0:no_quiero", preset="paulista-2v2", dealer=3, start=(11, 7), score=(11, 8),
      hand_over=True, next_hand={"dealer": 0, "mano": 1, "actor": 2, "legal": DECIDE}),
    # [11, 10] is still a mao de onze for team 0: next decider seat 2 (first of team 0 from mao seat 1).
    P("T43-b", D43, T43_B, preset="paulista-2v2", dealer=3, start=(11, 7),
      at={**card_legal_at(D43, acts(T43_B)), 0: {"actor": 0, "legal": DECIDE}, 5: {"tricks": [1]}},
      score=(11, 10), hand_over=True, next_hand={"dealer": 0, "mano": 1, "actor": 2, "legal": DECIDE}),
    # §6 does not name the deal of this bullet; the deal of T42 is used.
    P("T43-c", D42, "0:no_quiero", preset="paulista-2v2", dealer=3, start=(11, 10), score=(11, 11),
      hand_over=True, next_hand={"dealer": 0, "mano": 1, "actor": 1, "legal": SLOTS}),
    P("T43-d-any_accepts", D42, T43_D, preset="paulista-2v2", dealer=3, start=(11, 7),
      opts={"mao_de_onze_decider": "any_accepts"},
      at={**card_legal_at(D42, acts(T43_D)), 0: {"actor": 0, "legal": DECIDE},
          1: {"actor": 2, "score": (11, 7), "legal": DECIDE}},
      score=(14, 7), winner=0),
]

# T44 - a truco call in the mao de onze.
CASES += [
    P("T44-default", D42, "0:quiero 0:play:5c", preset="paulista-2v2", dealer=3, start=(11, 7),
      illegal="truco", actor=1, legal=L("play:2c play:Qd play:6h")),
    P("T44-illegal", D42, "0:quiero 0:play:5c", preset="paulista-2v2", dealer=3, start=(11, 7),
      opts={"mao_de_onze_truco": "illegal"}, illegal="truco", actor=1, legal=L("play:2c play:Qd play:6h")),
    P("T44-caller_loses_match-seat1", D42, "0:quiero 0:play:5c 1:truco", preset="paulista-2v2", dealer=3,
      start=(11, 7), opts={"mao_de_onze_truco": "caller_loses_match"}, at={2: {"includes": {"truco"}}},
      score=(12, 7), winner=0),
    P("T44-caller_loses_match-seat0", D42, "0:quiero 0:truco", preset="paulista-2v2", dealer=3,
      start=(11, 7), opts={"mao_de_onze_truco": "caller_loses_match"}, at={1: {"includes": {"truco"}}},
      score=(11, 12), winner=1),
]

# T45 - mao de ferro, blind (play_slot) and not blind (play:<card>); no decision, no truco.
T45_SLOTS = ("0:play_slot:0 1:play_slot:0 2:play_slot:2 3:play_slot:0 "
             "0:play_slot:1 1:play_slot:2 2:play_slot:0 3:play_slot:1")
for name, opts, actions, blind in [
    ("blind-default", {}, T45_SLOTS, True),
    ("blind-true", {"mao_de_ferro_blind": True}, T45_SLOTS, True),
    ("blind-false", {"mao_de_ferro_blind": False}, T42_PLAYS, False),
]:
    CASES.append(P(f"T45-{name}", D42, actions, preset="paulista-2v2", dealer=3, start=(11, 11), opts=opts,
                   at={**card_legal_at(D42, acts(actions), blind=blind), 4: {"tricks": [0]}},
                   score=(12, 11), winner=0))

# T46 - mao de ferro with every trick tied (cards in slot order 0, 1, 2).
T46_ACTIONS = "0:play_slot:0 1:play_slot:0 0:play_slot:1 1:play_slot:1 0:play_slot:2 1:play_slot:2"
T46_AT = {**card_legal_at(D39, acts(T46_ACTIONS), blind=True), 4: {"tricks": [T, T]}}
CASES += [
    P("T46-default", D39, T46_ACTIONS, start=(11, 11), at=T46_AT, score=(11, 11), hand_over=True,
      next_hand={"dealer": 0, "mano": 1, "actor": 1, "legal": SLOTS}),
    P("T46-no_points", D39, T46_ACTIONS, start=(11, 11), opts={"all_tricks_tied": "no_points"}, at=T46_AT,
      score=(11, 11), hand_over=True, next_hand={"dealer": 0, "mano": 1, "actor": 1, "legal": SLOTS}),
    P("T46-dealer_team", D39, T46_ACTIONS, start=(11, 11), opts={"all_tricks_tied": "dealer_team"}, at=T46_AT,
      score=(11, 12), winner=1),
    P("T46-mao_team", D39, T46_ACTIONS, start=(11, 11), opts={"all_tricks_tied": "mao_team"}, at=T46_AT,
      score=(12, 11), winner=0),
]

# T47 - forbid_useless_raise.
for name, opts, legal in [("default", {}, "quiero no_quiero seis"),
                          ("false", {"forbid_useless_raise": False}, "quiero no_quiero seis"),
                          ("true", {"forbid_useless_raise": True}, "quiero no_quiero")]:
    CASES.append(P(f"T47-{name}", D33, "0:play:5c 1:truco", start=(9, 5), opts=opts, actor=0, legal=L(legal)))

# T48 - the hand stops when decided; reaching 12 (Ks and 6h are never played).
CASES.append(P("T48", D33, "0:truco 1:quiero 0:play:5c 1:play:2c 0:play:3h 1:play:Qd", start=(9, 0),
               at={4: {"tricks": [0]}}, score=(12, 0), winner=0))


# ------------------------------------------------------------ generic test
@pytest.mark.parametrize("case", CASES)
@with_driver
def test_scenario(case: Case, driver: str) -> None:
    s = new_state(case.preset, case.hands, case.vira, case.dealer, case.start, driver=driver, **case.opts)
    n = len(case.hands)
    run(s, case.actions, case.at)

    final = {k: v for k, v in (("score", case.score), ("tricks", case.tricks), ("turn", case.turn),
                               ("announce", case.announce), ("includes", case.includes)) if v is not None}
    if case.illegal is None and case.legal is not None:
        final["legal"] = case.legal
    if case.actor is not None:
        final["actor"] = case.actor
    check_point(s, final, "end")

    if case.illegal is not None:
        assert_illegal(s, case.illegal, case.legal)

    if case.winner is not None:
        assert_match_over(s, case.winner)
        assert s.hand_index == 0 and len(s.hand_records) == 1
    else:
        assert not s.is_over and s.winner is None
    if case.hand_over:
        # the hand ended with exactly the listed actions; the next hand is dealt (rotation "with_play")
        assert s.hand_index == 1 and len(s.hand_records) == 2
        assert s.dealer == (case.dealer + 1) % n
        assert s.mano == (case.dealer + 2) % n
        assert list(s.hand_records[1]["score_before"]) == list(s.score)
    elif case.winner is None:
        assert s.hand_index == 0 and len(s.hand_records) == 1, "the hand should still be in progress"
    check_records(s, case)

    if case.next_hand is not None:
        nh = case.next_hand
        assert (s.dealer, s.mano, s.actor) == (nh["dealer"], nh["mano"], nh["actor"])
        assert_legal(s, nh["legal"])


# ------------------------------------------------------------ card tables
SPANISH_RANKS = ("1", "2", "3", "4", "5", "6", "7", "10", "11", "12")
FRENCH_RANKS = ("4", "5", "6", "7", "Q", "J", "K", "A", "2", "3")
SPANISH = [r + s for s in "eboc" for r in SPANISH_RANKS]
FRENCH_DIRTY = [r + s for s in "dshc" for r in FRENCH_RANKS]
FRENCH_CLEAN = [r + s for s in "dshc" for r in FRENCH_RANKS[4:]]  # Q J K A 2 3
PRESET_DECK = {"argentine": SPANISH, "paulista": FRENCH_DIRTY, "paulista-clean": FRENCH_CLEAN}


def first_trick(driver: str, preset: str, a: str, b: str, vira: str | None = None) -> int:
    """Seat 0 (mano) plays a, seat 1 plays b in trick 1; returns trick_results[0]."""
    fill = [c for c in PRESET_DECK[preset] if c not in (a, b, vira)]
    s = new_state(preset, [[a, fill[0], fill[1]], [b, fill[2], fill[3]]], vira, driver=driver)
    run(s, [(0, f"play:{a}"), (1, f"play:{b}")])
    assert len(s.trick_results) == 1
    return s.trick_results[0]


def other(result: int) -> int:
    return result if result == TIE else 1 - result


# T01 - Argentine card strength (0: seat 0's card wins, 1: seat 1's, T: parda); also checked with the
# seats swapped.
T01_ROWS = [
    ("1e", "1b", 0), ("1b", "7e", 0), ("7e", "7o", 0), ("7o", "3c", 0), ("3e", "3b", T), ("2c", "1o", 0),
    ("1o", "1c", T), ("1c", "12e", 0), ("12o", "11o", 0), ("11b", "10e", 0), ("10c", "7b", 0),
    ("7b", "7c", T), ("7c", "6e", 0), ("5b", "4e", 0),
]


@pytest.mark.parametrize("a,b,expected", [pytest.param(*r, id=f"T01-{r[0]}-{r[1]}") for r in T01_ROWS])
@with_driver
def test_t01_card_strength(a, b, expected, driver):
    assert first_trick(driver, "argentine", a, b) == expected
    assert first_trick(driver, "argentine", b, a) == other(expected)


# T02 - envido and flor points.
T02_ROWS = [  # hand, envido (flor=false), flor value (None: not a flor)
    ("7c 6c 3e", 33, None), ("7c 6c 5c", 33, 38), ("7b 5b 4b", 32, 36), ("12o 11o 10o", 20, 20),
    ("12e 11e 4o", 20, None), ("12e 4e 5o", 24, None), ("1c 2c 3o", 23, None), ("1e 1b 7o", 7, None),
    ("5o 4b 1e", 5, None), ("10b 11o 12c", 0, None),
]


@pytest.mark.parametrize("hand,envido,flor", [pytest.param(*r, id=f"T02-{r[0].replace(' ', '-')}")
                                              for r in T02_ROWS])
def test_t02_points(hand, envido, flor):
    assert envido_points(hand.split()) == envido
    assert flor_points(hand.split()) == flor


# Played out (preset `argentine`, flor off): against an opponent with exactly the same envido, an
# accepted envido goes to the mano; so the hand wins as mano and loses as pie iff its value is `envido`.
T02_OPPONENT = {  # hand -> a disjoint opponent hand of the same envido value
    "7c 6c 3e": "7o 6o 4e", "7c 6c 5c": "7o 6o 4e", "7b 5b 4b": "7o 5o 1e", "12o 11o 10o": "12e 11e 4c",
    "12e 11e 4o": "12b 11b 4c", "12e 4e 5o": "4b 12b 5c", "1c 2c 3o": "1b 2b 3e", "1e 1b 7o": "7c 1o 2e",
    "5o 4b 1e": "5c 4e 1b", "10b 11o 12c": "10e 11c 12o",
}


@pytest.mark.parametrize("hand,envido,flor", [pytest.param(*r, id=f"T02-played-{r[0].replace(' ', '-')}")
                                              for r in T02_ROWS])
@with_driver
def test_t02_envido_played(hand, envido, flor, driver):
    opponent = T02_OPPONENT[hand]
    assert envido_points(opponent.split()) == envido
    as_mano = run(new_state("argentine", deal(hand, opponent), dealer=1, driver=driver),
                  acts("0:envido 1:quiero"))
    assert tuple(as_mano.score) == (2, 0)
    as_pie = run(new_state("argentine", deal(hand, opponent), dealer=0, driver=driver),
                 acts("1:envido 0:quiero"))
    assert tuple(as_pie.score) == (0, 2)


# T31 - manilha from the vira, with both wraps; the whole order is checked pairwise through tricks.
T31_ROWS = [  # deck, vira, manilhas high -> low, ordinary ranks high -> low
    ("dirty", "3d", "4c 4h 4s 4d", "3 2 A K J Q 7 6 5"),
    ("dirty", "Kc", "Ac Ah As Ad", "3 2 K J Q 7 6 5 4"),
    ("dirty", "7s", "Qc Qh Qs Qd", "3 2 A K J 7 6 5 4"),
    ("dirty", "Qh", "Jc Jh Js Jd", "3 2 A K Q 7 6 5 4"),
    ("dirty", "4d", "5c 5h 5s 5d", "3 2 A K J Q 7 6 4"),
    ("clean", "3h", "Qc Qh Qs Qd", "3 2 A K J"),
    ("clean", "Kd", "Ac Ah As Ad", "3 2 K J Q"),
    ("clean", "2c", "3c 3h 3s 3d", "2 A K J Q"),
]
DECK_PRESET = {"dirty": "paulista", "clean": "paulista-clean"}


@pytest.mark.parametrize("deck,vira,manilhas,_ordinary",
                         [pytest.param(*r, id=f"T31-rank-{r[0]}-{r[1]}") for r in T31_ROWS])
def test_t31_manilha_rank(deck, vira, manilhas, _ordinary):
    assert manilha_rank(vira, deck=deck) == manilhas.split()[0][:-1]


def _t31_pairs():
    for deck, vira, manilhas, ordinary in T31_ROWS:
        # one card per ordinary rank, any suit but the vira's card itself
        cards = [next(r + s for s in "dshc" if r + s != vira) for r in ordinary.split()]
        order = manilhas.split() + cards
        for a, b in itertools.pairwise(order):
            yield pytest.param(deck, vira, a, b, id=f"T31-{deck}-{vira}-{a}>{b}")


@pytest.mark.parametrize("deck,vira,a,b", list(_t31_pairs()))
@with_driver
def test_t31_order(deck, vira, a, b, driver):
    assert first_trick(driver, DECK_PRESET[deck], a, b, vira) == 0
    assert first_trick(driver, DECK_PRESET[deck], b, a, vira) == 1


# T32 - strength comparisons (dirty deck): 0 card a wins, 1 card b wins, T tie.
T32_ROWS = [
    ("3d", "4d", "3c", 0), ("3d", "4c", "4h", 0), ("3d", "4s", "4d", 0), ("3d", "3s", "3h", T),
    ("3d", "Kc", "Jd", 0), ("3d", "Jh", "Qs", 0), ("3d", "Qd", "7c", 0), ("3d", "2c", "Ad", 0),
    ("7s", "Qd", "3c", 0), ("7s", "Jc", "Kd", 1), ("7s", "7h", "6c", 0), ("Qh", "Jd", "Ac", 0),
    ("Qh", "Qc", "Kd", 1),
]


@pytest.mark.parametrize("vira,a,b,expected", [pytest.param(*r, id=f"T32-{r[0]}-{r[1]}-{r[2]}")
                                               for r in T32_ROWS])
@with_driver
def test_t32_strength(vira, a, b, expected, driver):
    assert first_trick(driver, "paulista", a, b, vira) == expected
    assert first_trick(driver, "paulista", b, a, vira) == other(expected)


# T40 - a card outside the clean deck is rejected (by the engine, and by the environment's reset).
@with_driver
def test_t40_clean_deck_rejects_5c(driver):
    with pytest.raises(ValueError, match="5c"):
        new_state("paulista-clean", deal("5c 3h Kc", "2c Ad Js"), vira="3c", driver=driver)
