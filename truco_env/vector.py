"""A batched environment: N matches stepped at once on the compiled fast engine (:mod:`truco_env._kernel`).

Usage::

    from truco_env.vector import VectorEnv

    venv = VectorEnv("argentine", num_envs=1024, seed=0)          # num_workers=2: two worker processes
    obs, mask, actor = venv.reset()
    for _ in range(1000):
        actions = venv.random_actions()                         # or your policy, one legal id per env
        obs, mask, reward, actor, done = venv.step(actions)
    venv.close()

Every call returns stacked arrays, one row per match: ``obs`` (N, 1086) float32, the observation of the seat to
act in exactly the layout of the AEC environment (``truco_env.encoding``); ``mask`` (N, 98) int8, its legal
actions (with señas (N, 1141) and (N, 106), and who would catch each seat's signal drawn from the same stream); ``actor`` (N,) int32, that seat; ``reward`` (N, num_players) float32 for every seat of the match
(``reward="match"``: +1/-1 when a match ends; ``"points"``: each hand's point difference when it ends); ``done``
(N,) bool, a match ended at this step. Finished matches restart at once (auto-reset): ``obs``, ``mask`` and
``actor`` of a done row already belong to the new match, and ``venv.info`` keeps the result of the finished one
(columns ``truco_env._kernel.INFO_*``: hand closed, hand points, score, winner, done).

The arrays are buffers that the next ``step`` overwrites: copy what you keep. Illegal actions raise ValueError
naming the first offending env, and no env moves; ``SKIP`` (-1) leaves an env as it is for one step.

Why a separate generator for deals: the reference engine deals hand ``k`` of a match from
``random.Random(f"{seed}:{k}")``, which costs more than a whole decision here; the vector env shuffles with a
per-match splitmix64 stream instead. The rules are the same: with ``record=True`` every finished match is kept
as a match record (``venv.finished_records``, format in docs/records.md) that ``truco replay`` re-simulates
through the reference engine (``tests/test_vector.py`` does so for thousands of matches).

Why processes, not threads: the kernel is plain compiled code per match, so N matches split into independent
slices; ``num_workers`` processes each step one slice into shared memory, and the parent only hands out actions.
"""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing import shared_memory
from typing import Any

import numpy as np

import truco_env.actions

from . import _kernel, cards
from .actions import action_names
from .config import TrucoConfig, make_config
from .encoding import PRIVILEGED_SIZE, observation_size
from .fast import config_array, options_array
from .inputs import as_action_batch, as_seed
from .limits import clip

REWARDS = ("match", "points")
SKIP = _kernel.SKIP  # an action that leaves its env as it is (see VectorEnv.step)


def _seed_streams(seed: int | None, num_envs: int) -> np.ndarray:
    """Independent generator states per env (splitmix64 needs only distinct, well-mixed starting points)."""
    seq = np.random.SeedSequence(seed)
    return seq.generate_state(num_envs, dtype=np.uint64)


class _Buffers:
    """The arrays shared by the parent and the workers, laid out in one block (shared memory when workers>0)."""

    def __init__(self, num_envs: int, config: TrucoConfig, shm_name: str | None = None, create: bool = False):
        num_players = config.num_players
        specs = [("states", (num_envs, _kernel.STATE_SIZE), np.int32),
                 ("obs", (num_envs, observation_size(config)), np.float32),
                 ("masks", (num_envs, truco_env.actions.num_actions(config)), np.int8), ("actions", (num_envs,), np.int32),
                 ("actors", (num_envs,), np.int32), ("rewards", (num_envs, num_players), np.float32),
                 ("info", (num_envs, _kernel.INFO_SIZE), np.int32), ("rng", (num_envs,), np.uint64)]
        offsets, total = [], 0
        for _, shape, dtype in specs:
            total = (total + 63) // 64 * 64
            offsets.append(total)
            total += int(np.prod(shape)) * np.dtype(dtype).itemsize
        self.shm = None
        if shm_name is None and not create:
            block = np.zeros(total, dtype=np.uint8)
            buf = block.data
            self._block = block
        else:
            if create:
                self.shm = shared_memory.SharedMemory(create=True, size=total)
            else:
                self.shm = shared_memory.SharedMemory(name=shm_name)
            buf = self.shm.buf
        for (name, shape, dtype), offset in zip(specs, offsets):
            setattr(self, name, np.ndarray(shape, dtype=dtype, buffer=buf, offset=offset))

    def close(self, unlink: bool = False) -> None:
        if self.shm is not None:
            for name in ("states", "obs", "masks", "actions", "actors", "rewards", "info", "rng"):
                setattr(self, name, None)
            self.shm.close()
            if unlink:
                self.shm.unlink()
            self.shm = None


def _worker(conn: Any, shm_name: str, num_envs: int, preset: str, overrides: dict, lo: int, hi: int,
            points: bool) -> None:
    config = make_config(preset, **overrides)
    cfg = config_array(config)
    bufs = _Buffers(num_envs, config, shm_name=shm_name)
    views = [getattr(bufs, name)[lo:hi] for name in ("states", "obs", "masks", "actions", "actors", "rewards",
                                                       "info", "rng")]
    states, obs, masks, actions, actors, rewards, info, rng = views
    try:
        while True:
            command = conn.recv()
            if command == "step":
                _kernel.vec_step(states, cfg, rng, actions, obs, masks, actors, rewards, info, points)
            elif command == "reset":
                _kernel.vec_reset(states, cfg, rng, obs, masks, actors, rewards, info)
            elif command == "close":
                break
            conn.send(True)
    finally:
        del states, obs, masks, actions, actors, rewards, info, rng, views
        bufs.close()
        conn.close()


class VectorEnv:
    """N matches of one config stepped together; see the module docstring."""

    def __init__(self, preset: str = "argentine", num_envs: int = 1024, num_workers: int = 1,
                 seed: int | None = None, reward: str = "match", record: bool = False, **overrides: Any):
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {clip(repr(num_envs))}")
        if not isinstance(num_workers, int) or isinstance(num_workers, bool) or not 1 <= num_workers <= num_envs:
            raise ValueError(f"num_workers must be an integer 1..num_envs, got {clip(repr(num_workers))}")
        if reward not in REWARDS:
            raise ValueError(f"reward={clip(repr(reward))} is not allowed; choose one of {list(REWARDS)}")
        seed = as_seed(seed)
        self.config = make_config(preset, **overrides)
        self.preset = preset
        self.num_envs = num_envs
        self.num_workers = num_workers
        self.num_players = self.config.num_players
        self.reward_mode = reward
        self.record = record
        self.action_names = action_names(self.config.family, self.config.senas)
        self._cfg = config_array(self.config)
        self._points = reward == "points"
        self._closed = False
        self._conns: list[Any] = []
        self._procs: list[Any] = []
        self._bufs = _Buffers(num_envs, self.config, create=num_workers > 1)
        for row in self._bufs.obs:
            _kernel.encode_static(self._cfg, options_array(self.config), row)
        self._sample_rng = np.zeros(1, dtype=np.uint64)
        self._records: list[dict | None] = [None] * num_envs
        self.finished_records: list[dict] = []
        if num_workers > 1:
            # fork where the platform has it: the workers inherit the compiled kernel and need no main guard
            ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
            bounds = np.linspace(0, num_envs, num_workers + 1).astype(int)
            for w in range(num_workers):
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=_worker, daemon=True,
                                   args=(child, self._bufs.shm.name, num_envs, preset, overrides,
                                         int(bounds[w]), int(bounds[w + 1]), self._points))
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
        self._seed = seed
        self._has_reset = False

    # -- the batched cycle ------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start a new match in every env; returns ``(obs, mask, actor)``."""
        self._check_open()
        seed = as_seed(seed)
        if seed is None and not self._has_reset:
            seed = self._seed
        b = self._bufs
        b.rng[:] = _seed_streams(seed, self.num_envs)
        self._sample_rng[:] = _seed_streams(None if seed is None else seed + 1, 1)
        if self._conns:
            self._broadcast("reset")
        else:
            _kernel.vec_reset(b.states, self._cfg, b.rng, b.obs, b.masks, b.actors, b.rewards, b.info)
        self._has_reset = True
        if self.record:
            self.finished_records = []
            self._records = [self._new_record(i) for i in range(self.num_envs)]
        return b.obs, b.masks, b.actors

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action id per env; returns ``(obs, mask, reward, actor, done)``. An env given ``SKIP`` (-1) does
        not move (zero reward, not done): a batch where only some envs act, as when opponents answer in between
        the learner's turns (:mod:`truco_env.gym_vector`)."""
        self._check_open()
        if not self._has_reset:
            raise RuntimeError("call reset() before step()")
        b = self._bufs
        acts = as_action_batch(actions, self.num_envs, skip=SKIP, kernel_checks=True,
                               num_actions=self._bufs.masks.shape[1])
        bad = _kernel.vec_check(b.masks, acts)  # on the uncast ids (int32 or int64): 2**32 + k cannot pass as k
        if bad >= 0:
            legal = [self.action_names[a] for a in np.flatnonzero(b.masks[bad])]
            raise ValueError(f"illegal action {int(acts[bad])} for env {bad} (seat {int(b.actors[bad])}); "
                             f"legal actions: {legal}")
        b.actions[:] = acts  # every id is now SKIP or legal, so the cast to int32 is exact
        if self.record:
            before = b.actors.copy()
        if self._conns:
            self._broadcast("step")
        else:
            _kernel.vec_step(b.states, self._cfg, b.rng, b.actions, b.obs, b.masks, b.actors, b.rewards, b.info,
                       self._points)
        if self.record:
            self._log_step(before)
        return b.obs, b.masks, b.rewards, b.actors, b.info[:, _kernel.INFO_DONE].astype(bool)

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal action per env (a new array)."""
        out = np.empty(self.num_envs, dtype=np.int32)
        _kernel.random_legal(self._bufs.masks, self._sample_rng, out)
        return out

    @property
    def info(self) -> np.ndarray:
        return self._bufs.info

    @property
    def states(self) -> np.ndarray:
        """The raw kernel states, one row per env (read them, do not write them)."""
        return self._bufs.states

    def privileged(self, rows: Any = None) -> np.ndarray:
        """float32 [rows, ``encoding.PRIVILEGED_SIZE``]: what the actor of each row cannot see (the other seats'
        unplayed cards, as ``encoding.encode_privileged`` writes them), for a training critic only."""
        self._check_open()
        rows = np.arange(self.num_envs) if rows is None else np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(rows), PRIVILEGED_SIZE), dtype=np.float32)
        _kernel.encode_privileged_rows(self._bufs.states, self._cfg, self._bufs.actors, rows, out)
        return out

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for conn in self._conns:
            try:
                conn.send("close")
            except (BrokenPipeError, OSError):
                pass
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
        for conn in self._conns:
            conn.close()
        self._bufs.close(unlink=True)

    def __enter__(self) -> VectorEnv:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110  # interpreter shutdown
            pass

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the vector environment is closed")

    def _broadcast(self, command: str) -> None:
        for conn in self._conns:
            conn.send(command)
        for conn in self._conns:
            if not conn.recv():
                raise RuntimeError(f"a worker failed on {clip(repr(command))}")

    # -- records ----------------------------------------------------------------------------------------------

    def _hand_record(self, i: int) -> dict:
        st = self._bufs.states[i]
        n, hs, family = self.num_players, self.config.hand_size, self.config.family
        dealt = st[_kernel.S_DEALT:_kernel.S_DEALT + 3 * n].reshape(n, 3)[:, :hs]
        vira = int(st[_kernel.S_VIRA])
        record = {"dealer": int(st[_kernel.S_DEALER]),
                  "deal": {"hands": [[cards.card_text(int(c), family) for c in row] for row in dealt],
                           "vira": None if vira < 0 else cards.card_text(vira, family)},
                  "score_before": [int(st[_kernel.S_SCORE]), int(st[_kernel.S_SCORE + 1])], "actions": [],
                  "points": [0, 0], "score_after": [int(st[_kernel.S_SCORE]), int(st[_kernel.S_SCORE + 1])]}
        if self.config.senas:
            record["deal"]["catches"] = [[o for o in range(n) if (st[_kernel.S_CATCH + seat] >> o) & 1] for seat in range(n)]
        if st[_kernel.S_NSEATS] != n:
            record["pair"] = [int(st[_kernel.S_SEATS]), int(st[_kernel.S_SEATS + 1])]
        return record

    def _new_record(self, i: int) -> dict:
        return {"rules": self.config.to_dict(), "hands": [self._hand_record(i)], "winner": None}

    def _log_step(self, before: np.ndarray) -> None:
        b = self._bufs
        for i in range(self.num_envs):
            if b.actions[i] == _kernel.SKIP:
                continue
            record = self._records[i]
            hand = record["hands"][-1]
            hand["actions"].append([int(before[i]), self.action_names[int(b.actions[i])]])
            info = b.info[i]
            if info[_kernel.INFO_CLOSED]:
                hand["points"] = [int(info[_kernel.INFO_HP]), int(info[_kernel.INFO_HP + 1])]
                hand["score_after"] = [int(info[_kernel.INFO_SCORE]), int(info[_kernel.INFO_SCORE + 1])]
                if info[_kernel.INFO_DONE]:
                    record["winner"] = None if info[_kernel.INFO_WINNER] < 0 else int(info[_kernel.INFO_WINNER])
                    self.finished_records.append(record)
                    self._records[i] = self._new_record(i)
                else:
                    record["hands"].append(self._hand_record(i))
            else:
                hand["score_after"] = [int(b.states[i, _kernel.S_SCORE]), int(b.states[i, _kernel.S_SCORE + 1])]
                hand["points"] = [int(b.states[i, _kernel.S_HP]), int(b.states[i, _kernel.S_HP + 1])]

    def current_records(self) -> list[dict]:
        """The records of the matches in progress (``record=True``)."""
        if not self.record:
            raise ValueError("records are kept only with VectorEnv(..., record=True)")
        return list(self._records)



class EngineVectorEnv:
    """:class:`VectorEnv`'s batched cycle (``reset``, ``step``, ``info``) over reference-engine states.

    Why: an agent that needs more than the observation (a tabular CFR policy reads its seat's information-state
    string, :func:`truco_env.turns.observation_for`) cannot be served from the compiled kernel's int32 states. This class
    keeps one :class:`~truco_env.engine.TrucoState` per row, so ``state(i)`` can be shown to such an agent, at
    the reference engine's speed. Rewards, ``info`` columns and auto-reset follow :class:`VectorEnv`; match ``k``
    of row ``i`` is dealt from the seeds of a numpy generator seeded with ``seed``."""

    def __init__(self, preset: str = "argentine", num_envs: int = 64, seed: int | None = None,
                 reward: str = "match", **overrides: Any):
        from .engine import TrucoState

        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {clip(repr(num_envs))}")
        if reward not in REWARDS:
            raise ValueError(f"reward={clip(repr(reward))} is not allowed; choose one of {list(REWARDS)}")
        seed = as_seed(seed)
        self.config = make_config(preset, **overrides)
        self.preset, self.num_envs, self.num_players = preset, num_envs, self.config.num_players
        self.reward_mode = reward
        self.action_names = action_names(self.config.family, self.config.senas)
        self._new = TrucoState.new
        self._rng = np.random.default_rng(seed)
        self._states: list[Any] = []
        self._hand_start: list[tuple[int, ...]] = []  # each row's score when its current hand was dealt
        self.obs = np.zeros((num_envs, observation_size(self.config)), dtype=np.float32)
        self.masks = np.zeros((num_envs, truco_env.actions.num_actions(self.config)), dtype=np.int8)
        self.actors = np.zeros(num_envs, dtype=np.int32)
        self.rewards = np.zeros((num_envs, self.num_players), dtype=np.float32)
        self.info = np.zeros((num_envs, _kernel.INFO_SIZE), dtype=np.int32)

    def state(self, i: int) -> Any:
        """The engine state of row ``i`` (read it, do not change it)."""
        return self._states[i]

    def privileged(self, rows: Any = None) -> np.ndarray:
        """As :meth:`VectorEnv.privileged`: what the actor of each row cannot see, for a training critic only."""
        from .encoding import encode_privileged

        rows = np.arange(self.num_envs) if rows is None else np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(rows), PRIVILEGED_SIZE), dtype=np.float32)
        for k, i in enumerate(rows):
            encode_privileged(self._states[i], int(self.actors[i]), out[k])
        return out

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        seed = as_seed(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._states = [self._new(self.config, seed=int(self._rng.integers(2 ** 62))) for _ in range(self.num_envs)]
        self._hand_start = [state.score for state in self._states]
        for i in range(self.num_envs):
            self._encode(i)
        return self.obs, self.masks, self.actors

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        acts = as_action_batch(actions, self.num_envs, num_actions=self.masks.shape[1])
        for i, action in enumerate(acts):
            if not self.masks[i, action]:
                legal = [self.action_names[a] for a in np.flatnonzero(self.masks[i])]
                raise ValueError(f"illegal action {int(action)} for env {i}; legal actions: {legal}")
        self.rewards[:] = 0.0
        self.info[:, _kernel.INFO_CLOSED] = 0
        self.info[:, _kernel.INFO_DONE] = 0
        for i, action in enumerate(acts):
            state = self._states[i]
            hand, before = state.hand_index, self._hand_start[i]  # an envido is scored mid-hand: count from the deal
            state.apply(self.action_names[int(action)])
            if state.is_over or state.hand_index != hand:
                after = state.score
                self._hand_start[i] = after
                points = (after[0] - before[0], after[1] - before[1])
                self.info[i, _kernel.INFO_CLOSED] = 1
                self.info[i, _kernel.INFO_HP:_kernel.INFO_HP + 2] = points
                self.info[i, _kernel.INFO_SCORE:_kernel.INFO_SCORE + 2] = after
                if self.reward_mode == "points":
                    for s in range(self.num_players):
                        self.rewards[i, s] = points[s % 2] - points[1 - s % 2]
                if state.is_over:
                    winner = -1 if state.winner is None else int(state.winner)
                    self.info[i, _kernel.INFO_WINNER] = winner
                    self.info[i, _kernel.INFO_DONE] = 1
                    if self.reward_mode == "match" and winner >= 0:
                        for s in range(self.num_players):
                            self.rewards[i, s] = 1.0 if s % 2 == winner else -1.0
                    self._states[i] = self._new(self.config, seed=int(self._rng.integers(2 ** 62)))
                    self._hand_start[i] = self._states[i].score
            self._encode(i)
        return self.obs, self.masks, self.rewards, self.actors, self.info[:, _kernel.INFO_DONE].astype(bool)

    def _encode(self, i: int) -> None:
        from .encoding import encode_action_mask, encode_observation

        state = self._states[i]
        self.actors[i] = state.actor
        encode_observation(state, state.actor, self.obs[i])
        self.masks[i] = encode_action_mask(state)

    def close(self) -> None:
        """Nothing to release (no worker processes); for symmetry with :class:`VectorEnv`."""
